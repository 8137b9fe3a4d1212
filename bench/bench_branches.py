"""What one branch of a long game adds to the store, and what making it costs (docs/history.md,
"How a branch is stored").

The scenario of issue 36: a branch of a finished Gutenberg game grown by alternating
``undo?steps=100`` / ``redo?steps=100`` (appended straight to the store: growing it through
the API is not what is measured) until its log holds ``MEEPLE_BENCH_BRANCH_EVENTS`` (default
20,000) events. Then, through the Flask test client, ``POST /games/{grown}/branches`` at its
last event is measured against ``POST /games/{root}/branches {"at": 1}`` (a one-event
branch) in the same run, on the embedded SQLite store and on a throwaway redis-server:

- the events the store holds for the new branch (SQLite rows, Redis stream entries);
- the bytes it added: to the SQLite file (its pages in use, after a WAL checkpoint) and to
  Redis ``INFO memory`` ``used_memory``, once the jobs the branch started (its first fold,
  which writes its snapshots; the game index) have settled;
- the time of the ``POST`` (best of a few).

Each line's ratio is the long branch over the one-event branch, or over a branch a tenth of
the way (goal: about 1 for the events and the bytes, however long the source; the time
still grows: the copies' hash chain is computed when the branch is made).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from events.envelope import NewEvent
from projections.history import redo_event, undo_event
from projections.ruleset import get_ruleset
from projections.simulate import play_random
from tests.redis_servers import RedisServer, free_port

ADMIN_KEY = "bench-admin-key-0123456789abcdef"
EVENTS = int(os.environ.get("MEEPLE_BENCH_BRANCH_EVENTS", "20000"))
STEPS = 100
REPEATS = 3
#: one-event branches measured (their bytes averaged: each adds less than a SQLite page)
SMALL_BRANCHES = 30

Report = Callable[..., None]


def run(report: Report) -> None:
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder)
        database = directory / "bench.db"
        with _service(f"sqlite:///{database}") as (client, services):
            _measure(report, "sqlite", client, services, lambda: _sqlite_bytes(database))
        server = RedisServer(free_port(), directory / "redis")
        server.start()
        try:
            with _service(server.url) as (client, services):
                _measure(report, "redis", client, services, lambda: _redis_bytes(services))
        finally:
            server.stop()


@contextmanager
def _service(store_url: str) -> Iterator[tuple[Any, Any]]:
    from service.app import create_app
    from service.config import load_config

    config = load_config({}, store_url=store_url, admin_key=ADMIN_KEY, rate_limits=False)
    app = create_app(config)
    services = app.extensions["meeple"]
    try:
        yield app.test_client(), services
    finally:
        services.close()


def _measure(
    report: Report, label: str, client: Any, services: Any, used: Callable[[], int]
) -> None:
    root, grown, start = _grown_branch(client, services)
    long_at = services.store.version(grown)
    # The end of an undo/redo cycle a tenth of the way: nothing falls due in its branches.
    tenth = start + 2 * STEPS * ((long_at - start) // (2 * STEPS) // 10)
    one = _branches(client, services, root, 1, used, SMALL_BRANCHES)
    some = _branches(client, services, grown, tenth, used, REPEATS)
    many = _branches(client, services, grown, long_at, used, REPEATS)
    report(
        f"{label}: events stored for a branch at {long_at:,}",
        many["stored"],
        "events",
        one["stored"],
        "at 1",
    )
    report(
        f"{label}: snapshots stored for a branch at {long_at:,}",
        many["snapshots"],
        "snapshots",
        one["snapshots"],
        "at 1",
    )
    report(
        f"{label}: bytes added by a branch at {long_at:,}",
        many["bytes"],
        "bytes",
        one["bytes"],
        "at 1",
    )
    report(
        f"{label}: bytes added by a branch at {long_at:,}",
        many["bytes"],
        "bytes",
        some["bytes"],
        f"at {tenth:,}",
    )
    report(
        f"{label}: POST /branches at {long_at:,}",
        many["seconds"] * 1000,
        "ms",
        one["seconds"] * 1000,
        "at 1 (ms)",
    )
    report(
        f"{label}: POST /branches at {long_at:,}",
        many["seconds"] * 1000,
        "ms",
        some["seconds"] * 1000,
        f"at {tenth:,} (ms)",
    )


def _branches(
    client: Any, services: Any, source: str, at: int, used: Callable[[], int], count: int
) -> dict[str, float]:
    """Per branch of ``source`` at ``at``, over ``count`` of them: the events the store holds
    for it, the snapshots it wrote and the bytes it added (averages: a small branch may fit
    in a page SQLite has already), and the best time of its POST."""
    headers = {"Authorization": f"Bearer {ADMIN_KEY}"}
    stored = snapshots = 0
    seconds = float("inf")
    services.jobs.wait_idle(timeout=600)
    before = used()
    for _ in range(count):
        began = time.perf_counter()
        made = client.post(f"/games/{source}/branches", json={"at": at}, headers=headers)
        seconds = min(seconds, time.perf_counter() - began)
        assert made.status_code == 201, made.json
        services.jobs.wait_idle(timeout=600)
        stored += _stored_events(services, made.json["id"])
        snapshots += _stored_snapshots(services, made.json["id"])
    return {
        "stored": stored / count,
        "snapshots": snapshots / count,
        "bytes": (used() - before) / count,
        "seconds": seconds,
    }


def _stored_events(services: Any, game_id: str) -> int:
    """How many entries the store itself holds for a game's events (not the log it reads)."""
    store = services.store
    if hasattr(store, "client"):
        return int(store.client.xlen(store._key(game_id, "events")))
    rows = store._pool.query("SELECT count(*) FROM events WHERE game_id = ?", (game_id,))
    return int(rows[0][0])


def _stored_snapshots(services: Any, game_id: str) -> int:
    store = services.store
    if hasattr(store, "client"):
        return int(store.client.zcard(store._key(game_id, "snapshots")))
    rows = store._pool.query("SELECT count(*) FROM snapshots WHERE game_id = ?", (game_id,))
    return int(rows[0][0])


def _sqlite_bytes(database: Path) -> int:
    """The bytes of the SQLite file's pages in use, its WAL written back first."""
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        free = connection.execute("PRAGMA freelist_count").fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
    connection.close()
    return int((pages - free) * size)


def _redis_bytes(services: Any) -> int:
    return int(services.store.client.info("memory")["used_memory"])


def _grown_branch(client: Any, services: Any) -> tuple[str, str, int]:
    """(a finished game, a branch of it grown to ``EVENTS`` events by alternating undo/redo
    of ``STEPS`` steps, the branch's version before), the branch's events appended straight
    to the store."""
    ruleset = get_ruleset("gutenberg")
    _, log = play_random(ruleset, ["Ann", "Bob"], "bench-branches", game_id="bench")
    root = "benchbranchesroot"
    services.store.append(root, [NewEvent.copy_of(e) for e in log.envelopes], 0)
    made = client.post(
        f"/games/{root}/branches",
        json={"at": len(log.envelopes) - 1},
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
    )
    assert made.status_code == 201, made.json
    branch = made.json["id"]
    services.jobs.wait_idle(timeout=600)
    game = services.folder.load(branch)
    version = start = game.version
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
    # Folded and indexed now (its snapshots written), not by the jobs of the branches measured.
    services.folder.load(branch)
    services.game_index.catch_up(services.store, services.folder.load)
    services.jobs.wait_idle(timeout=600)
    return root, branch, start


def _fetch(services: Any, game_id: str, seq: int) -> dict[str, Any]:
    found: dict[str, Any] = services.store.read(game_id, after=seq - 1, limit=1)[0]
    return found
