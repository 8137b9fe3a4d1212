"""A branch's states up to its branch point are its source's: a Folder loads them from the
source's snapshots (a seq later a level) and writes none of its own there, and agrees with the
reference fold at every event of a branch, a branch of a branch, and a redrawn branch, each
kept by reference in a real SQLite store (docs/history.md, "How a branch is stored")."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from events.envelope import Envelope, NewEvent
from events.sqlite_store import SQLiteEventStore
from events.store import CopiedPrefix
from projections import fold as fold_module
from projections.fold import (
    Folder,
    Game,
    advance,
    decide_action,
    decide_system,
    game_created_event,
    refold,
    start,
)
from projections.history import branch_events
from projections.simulate import choose_random_action
from tests.rulesets.tally import TALLY

INTERVAL = 25
ROUNDS = 40


def comparable(game: Game) -> dict[str, Any]:
    return {
        "version": game.version,
        "state": game.state,
        "effective": game.effective,
        "redo": game.redo,
        "meta": game.meta,
    }


def every_state(log: list[Envelope]) -> dict[int, dict[str, Any]]:
    """The reference fold after every event of a log, in one pass."""
    by_seq = {envelope["seq"]: envelope for envelope in log}
    game = start(log[0], by_seq.__getitem__)
    states = {game.version: comparable(game.copy())}
    for envelope in log[game.version :]:
        advance(game, envelope, by_seq.__getitem__, lambda eff, seq: refold(by_seq, eff, seq))
        states[envelope["seq"]] = comparable(game.copy())
    return states


def play(store: SQLiteEventStore, game_id: str, game: Game, chooser: random.Random) -> None:
    """Random Tally steps, with undos and redos along the way, to the end of the game."""
    by_seq = {envelope["seq"]: envelope for envelope in store.read(game_id)}
    while not game.state["finished"]:
        draw = chooser.random()
        if game.effective and draw < 0.08 and game.effective[-1] > game.floor:
            event = NewEvent("undone", {"seq": game.effective[-1]}, {"seat": 0})
        elif game.redo and draw < 0.5:
            event = NewEvent("redone", {"seq": game.redo[-1]}, {"seat": 0})
        elif (decided := decide_system(game)) is not None:
            event = decided[0]
        else:
            choice = choose_random_action(game, chooser)
            assert choice is not None
            event = decide_action(game, *choice)[0]
        (envelope,) = store.append(game_id, [event], game.version).envelopes
        by_seq[envelope["seq"]] = envelope
        advance(game, envelope, by_seq.__getitem__, lambda eff, seq: refold(by_seq, eff, seq))


def branch(store: SQLiteEventStore, source: str, at: int, game_id: str, **options: Any) -> None:
    """Branch ``source`` at ``at`` as the service does: ``branched_from``, then the source's
    first ``at`` events by reference."""
    plan = branch_events(
        store.read(source),
        at,
        new_seed=f"seed-{game_id}",
        sandbox_token_hash="0" * 64,
        source_finished=True,
        **options,
    )
    store.append(game_id, [plan.events[0], CopiedPrefix(source, at)], 0)


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A long Tally game, a branch of it grown on, a branch of that, and a redrawn branch,
    each folded to its end by a Folder (which writes the snapshots it writes)."""
    path = tmp_path_factory.mktemp("branch-snapshots") / "events.db"
    store = SQLiteEventStore(path)
    chooser = random.Random("branch-snapshots")
    created = game_created_event(TALLY, ["Ann", "Bob"], {"rounds": ROUNDS}, seed="src-seed")
    store.append("src", [created], 0)
    play(store, "src", start(store.read("src")[0]), chooser)
    folder = Folder(store, snapshot_interval=INTERVAL)
    folder.load("src")
    at = store.version("src") * 2 // 3
    branch(store, "src", at, "b1")
    play(store, "b1", folder.load("b1"), chooser)
    branch(store, "b1", store.version("b1") - 3, "b2")
    branch(store, "src", at, "redrawn", reseed=True, resample_for=1)
    for game_id in ("b1", "b2", "redrawn"):
        folder.load(game_id)
    store.close()
    return path


@pytest.fixture
def store(path: Path) -> Iterator[SQLiteEventStore]:
    opened = SQLiteEventStore(path)
    yield opened
    opened.close()


def branch_point(store: SQLiteEventStore, game_id: str) -> int:
    """The seq of the branch's last copied event (its lineage's ``until``)."""
    return int(store.read(game_id, limit=1)[0]["data"]["at"]) + 1


@pytest.mark.parametrize("game_id", ["b1", "b2", "redrawn"])
def test_a_branch_loaded_at_any_event_equals_the_fold_from_scratch(
    store: SQLiteEventStore, game_id: str
) -> None:
    expected = every_state(store.read(game_id))
    folder = Folder(store, snapshot_interval=INTERVAL)

    mismatches = [
        seq for seq in expected if comparable(folder.load(game_id, at=seq)) != expected[seq]
    ]

    assert mismatches == []
    assert comparable(Folder(store, INTERVAL).load(game_id)) == expected[max(expected)]


@pytest.mark.parametrize("game_id", ["b1", "b2", "redrawn"])
def test_a_branch_writes_no_snapshot_of_its_copied_past_but_before_its_sources_first(
    store: SQLiteEventStore, game_id: str
) -> None:
    until = branch_point(store, game_id)
    Folder(store, snapshot_interval=INTERVAL).load(game_id, at=until - 1)
    for seq in range(1, until):  # every state of the copied past, each folded from scratch
        Folder(store, snapshot_interval=INTERVAL).load(game_id, at=seq)

    copied_past = store._query(
        "SELECT seq FROM snapshots WHERE game_id = ? AND seq < ?", (game_id, until)
    )
    # Where the source has no snapshot yet, one interval from the start: that one only.
    assert [seq for (seq,) in copied_past] in ([], [INTERVAL])
    at_branch_point = store.load_snapshot(game_id, until)
    assert at_branch_point is not None and at_branch_point[0] == until


def test_time_travel_in_a_branch_folds_at_most_one_interval_of_events(
    store: SQLiteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    folded = 0
    original = fold_module.advance

    def counted(*args: Any) -> None:
        nonlocal folded
        folded += 1
        original(*args)

    monkeypatch.setattr(fold_module, "advance", counted)
    for game_id in ("b1", "b2", "redrawn"):
        for seq in range(INTERVAL * 2, store.version(game_id) + 1):
            folded = 0
            Folder(store, snapshot_interval=INTERVAL).load(game_id, at=seq)
            # From the branch's snapshot or its source's, at most one interval back.
            assert folded <= INTERVAL, (game_id, seq)
