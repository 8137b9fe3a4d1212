"""Undo of 100 steps against a single undo, on a branch grown to 5,000 events (docs/history.md,
"What undo and redo cost").

The scenario of the issue: a branch of a finished Gutenberg game grown by alternating
``undo?steps=100`` / ``redo?steps=100`` until its log holds ``MEEPLE_BENCH_UNDO_EVENTS``
(default 5,000) events. Then, through the Flask test client on the embedded SQLite store,
``POST /undo?steps=100`` is timed against ``POST /undo`` (one step), each followed by the redo
that puts the branch back (not timed), best of a few runs. The line's ratio is the time of
100 steps over the time of one (goal <= 5: undoing k steps folds about one snapshot interval,
not k refolds).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from events.envelope import NewEvent
from projections.fold import fold
from projections.history import redo_event, undo_event
from projections.ruleset import get_ruleset
from projections.simulate import play_random

ADMIN_KEY = "bench-admin-key-0123456789abcdef"
EVENTS = int(os.environ.get("MEEPLE_BENCH_UNDO_EVENTS", "5000"))
STEPS = 100
REPEATS = 3


def run(report: Callable[..., None]) -> None:
    from service.app import create_app
    from service.config import load_config

    with tempfile.TemporaryDirectory() as folder:
        # What one undo costs is measured, not how often a client may ask for one, nor how
        # far undo may grow a game (the branch is grown past the default undo allowance).
        config = load_config(
            {},
            store_url=f"sqlite:///{folder}/bench.db",
            admin_key=ADMIN_KEY,
            rate_limits=False,
            undo_allowance=10 * EVENTS,
        )
        app = create_app(config)
        services = app.extensions["meeple"]
        try:
            client = app.test_client()
            branch, token = _grown_branch(client, services)
            headers = {"Authorization": f"Bearer {token}"}
            client.get(f"/games/{branch}/state")  # folds the grown branch into the cache
            many = _best(client, services, branch, headers, STEPS)
            one = _best(client, services, branch, headers, 1)
            report(
                f"undo?steps={STEPS} vs undo, {services.store.version(branch):,}-event branch",
                many * 1000,
                "ms",
                one * 1000,
                "undo (ms)",
            )
        finally:
            services.close()


def _best(client: Any, services: Any, branch: str, headers: dict[str, str], steps: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        began = time.perf_counter()
        answer = client.post(f"/games/{branch}/undo?steps={steps}", headers=headers)
        took = time.perf_counter() - began
        assert answer.status_code == 201, answer.json
        back = client.post(f"/games/{branch}/redo?steps={steps}", headers=headers)
        assert back.status_code == 201, back.json
        services.jobs.wait_idle(timeout=60)
        best = min(best, took)
    return best


def _grown_branch(client: Any, services: Any) -> tuple[str, str]:
    """A branch of a finished game whose log has been grown to ``EVENTS`` events by
    alternating undo/redo of ``STEPS`` steps (appended straight to the store: growing it
    through the API is what is being measured)."""
    ruleset = get_ruleset("gutenberg")
    _, log = play_random(ruleset, ["Ann", "Bob"], "bench-undo", game_id="bench")
    source = "benchundosource"
    services.store.append(source, [NewEvent.copy_of(e) for e in log.envelopes], 0)
    at = _branch_point(log.envelopes)
    made = client.post(f"/games/{source}/branches", json={"at": at})
    assert made.status_code == 201, made.json
    branch, token = made.json["id"], made.json["token"]
    game = services.folder.load(branch)
    version = game.version
    while version < EVENTS:
        batch = []
        for _ in range(STEPS):
            last = _fetch(services, branch, game.effective[-1])
            batch.append(undo_event(game, last, None))
            game.redo.append(game.effective.pop())
        for _ in range(STEPS):
            top = _fetch(services, branch, game.redo[-1])
            batch.append(redo_event(game, top, None))
            game.effective.append(game.redo.pop())
        services.store.append(branch, batch, version)
        version += len(batch)
    return branch, token


def _branch_point(envelopes: list[dict[str, Any]]) -> int:
    """The last event after which neither the branch nor one undo nor ``STEPS`` undos land
    on a state awaiting an automatic step (the jobs would run it at once and end the redo)."""
    game = fold(envelopes)
    ruleset = game.ruleset
    for at in range(len(envelopes), STEPS + 2, -1):
        # Undoing k steps leaves the state after the effective step k + 1 from the end (the
        # log may hold events that are no steps, so this is not event at - k).
        effective = fold(envelopes, upto=at).effective
        if len(effective) <= STEPS:
            break
        if all(
            not ruleset.status(fold(envelopes, upto=effective[-back - 1]).state).get(
                "awaiting_system"
            )
            for back in (0, 1, STEPS)
        ):
            return at
    raise RuntimeError("no branch point fits")


def _fetch(services: Any, game_id: str, seq: int) -> dict[str, Any]:
    found: dict[str, Any] = services.store.read(game_id, after=seq - 1, limit=1)[0]
    return found
