"""A snapshot is an optimisation only: a Folder that loads games from snapshots taken every
K events in a real SQLite store agrees with projections.fold.fold from the first event, at
every event of a 2,000+ event Tally game that undoes and redoes steps along the way."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from events.envelope import Envelope, NewEvent
from events.sqlite_store import SQLiteEventStore
from projections.fold import (
    Folder,
    Game,
    advance,
    decide_action,
    decide_system,
    fold,
    game_created_event,
    refold,
    start,
)
from projections.simulate import choose_random_action
from tests.rulesets.tally import TALLY

GAME_ID = "long-tally"
ROUNDS = 260
SNAPSHOT_EVERY = 50
UNDO_CHANCE = 0.05
REDO_CHANCE = 0.5
#: Where the first Folder loads the game mid-play, to check its cache catches up later.
MIDWAY = 1_200


def comparable(game: Game) -> dict[str, Any]:
    """What two folds of the same events must agree on."""
    return {
        "version": game.version,
        "state": game.state,
        "effective": game.effective,
        "redo": game.redo,
        "meta": game.meta,
    }


@dataclass
class Played:
    path: Path
    log: list[Envelope]
    undone: list[int]
    redone: list[int]
    midway: dict[str, Any]
    final: dict[str, Any]
    scratch: dict[str, Any]


class Table:
    """Plays Tally into a store: random legal steps, sometimes an undo, sometimes a redo."""

    def __init__(self, store: SQLiteEventStore) -> None:
        self.store = store
        self.log: list[Envelope] = []
        self.by_seq: dict[int, Envelope] = {}
        self.chooser = random.Random("fold-snapshots")
        created = self._append(
            game_created_event(TALLY, ["Ann", "Bob"], {"rounds": ROUNDS}, seed="snapshot-seed")
        )
        self.game = start(created)

    def play(self, until: int | None = None) -> None:
        while not self.game.state["finished"] and (until is None or self.game.version < until):
            envelope = self._append(self._next_event())
            advance(
                self.game,
                envelope,
                self.by_seq.__getitem__,
                lambda effective, seq: refold(self.by_seq, effective, seq),
            )

    def _next_event(self) -> NewEvent:
        game, draw = self.game, self.chooser.random()
        if game.effective and draw < UNDO_CHANCE:
            return NewEvent(type="undone", data={"seq": game.effective[-1]}, actor={"seat": 0})
        if game.redo and draw < REDO_CHANCE:
            return NewEvent(type="redone", data={"seq": game.redo[-1]}, actor={"seat": 0})
        decided = decide_system(game)
        if decided is not None:
            return decided[0]
        choice = choose_random_action(game, self.chooser)
        assert choice is not None, "Tally always has a seat that can act"
        return decide_action(game, *choice)[0]

    def _append(self, event: NewEvent) -> Envelope:
        result = self.store.append(GAME_ID, [event], expected_version=len(self.log))
        (envelope,) = result.envelopes
        self.log.append(envelope)
        self.by_seq[envelope["seq"]] = envelope
        return envelope


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    """One long game, loaded by a Folder midway (cached) and again at the end."""
    path = tmp_path_factory.mktemp("fold-snapshots") / "events.db"
    store = SQLiteEventStore(path)
    folder = Folder(store, snapshot_interval=SNAPSHOT_EVERY)
    table = Table(store)
    table.play(until=MIDWAY)
    midway = comparable(folder.load(GAME_ID))
    table.play()
    final = comparable(folder.load(GAME_ID))
    store.close()
    kinds = [(envelope["type"], envelope["seq"]) for envelope in table.log]
    yield Played(
        path,
        table.log,
        undone=[seq for kind, seq in kinds if kind == "undone"],
        redone=[seq for kind, seq in kinds if kind == "redone"],
        midway=midway,
        final=final,
        scratch=comparable(fold(table.log)),
    )


@pytest.fixture
def store(played: Played) -> Iterator[SQLiteEventStore]:
    """A new connection to the game's store: snapshots come back from their stored JSON."""
    opened = SQLiteEventStore(played.path)
    yield opened
    opened.close()


def test_the_game_is_long_and_undoes_and_redoes_along_the_way(played: Played) -> None:
    assert len(played.log) >= 2_000
    assert played.scratch["state"]["finished"]
    assert len(played.undone) >= 40
    assert len(played.redone) >= 20


def test_a_cached_game_catches_up_through_undone_and_redone_events(played: Played) -> None:
    assert played.midway == comparable(fold(played.log, upto=MIDWAY))
    assert played.final == played.scratch


def test_snapshots_are_taken_every_k_events(played: Played, store: SQLiteEventStore) -> None:
    latest = len(played.log)

    for seq in range(SNAPSHOT_EVERY, latest + 1, SNAPSHOT_EVERY):
        snapshot = store.load_snapshot(GAME_ID, seq)
        assert snapshot is not None and snapshot[0] == seq
    assert store.load_snapshot(GAME_ID, SNAPSHOT_EVERY - 1) is None


def test_a_game_loaded_from_its_latest_snapshot_equals_the_fold_from_scratch(
    played: Played, store: SQLiteEventStore
) -> None:
    assert comparable(Folder(store, SNAPSHOT_EVERY).load(GAME_ID)) == played.scratch


def test_a_game_loaded_at_any_event_from_snapshots_equals_the_fold_from_scratch(
    played: Played, store: SQLiteEventStore
) -> None:
    folder = Folder(store, snapshot_interval=SNAPSHOT_EVERY)
    # One pass of the reference fold, kept after every event (fold(log, upto=N) for every
    # N would fold the same prefix thousands of times over).
    scratch = start(played.log[0])
    by_seq = {envelope["seq"]: envelope for envelope in played.log}
    expected = {1: comparable(scratch.copy())}
    for envelope in played.log[1:]:
        advance(scratch, envelope, by_seq.__getitem__, lambda eff, seq: refold(by_seq, eff, seq))
        expected[envelope["seq"]] = comparable(scratch.copy())

    mismatches = [
        seq for seq in expected if comparable(folder.load(GAME_ID, at=seq)) != expected[seq]
    ]

    assert mismatches == []
    for seq in (1, *played.undone[:5], *played.redone[:5], len(played.log) // 2):
        assert expected[seq] == comparable(fold(played.log, upto=seq))
