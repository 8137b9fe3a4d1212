"""Time travel: the state after any event N, from the nearest snapshot, for plain games and
branches alike, equals the reference fold of the first N events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from events.config import open_store
from events.envelope import Envelope, NewEvent, canonical_json
from events.store import EventStore
from projections.fold import (
    Folder,
    Game,
    decide_action,
    decide_system,
    fold,
    game_created_event,
    refold,
    start,
)
from projections.history import branch_events, redo_event, timeline, undo_event
from projections.simulate import MemoryLog, play_random, step
from tests.rulesets.tally import TALLY


class CountingStore:
    """A store that counts the events it hands out (to see how far a load folds)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.events_read = 0

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        found = self.store.read(game_id, after, limit)
        self.events_read += len(found)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


@pytest.fixture
def store(tmp_path: Path) -> EventStore:
    opened = open_store(f"sqlite:///{tmp_path / 'events.db'}")
    yield opened  # type: ignore[misc]
    opened.close()


def put(store: EventStore, envelopes: list[Envelope]) -> None:
    for envelope in envelopes:
        event = NewEvent(
            envelope["type"],
            envelope["data"],
            envelope["actor"],
            envelope["secret"],
            envelope["schema_version"],
            envelope["recorded_at"],
        )
        stored = store.append(envelope["game_id"], [event], envelope["seq"] - 1)
        assert stored.envelopes[0]["hash"] == envelope["hash"]


def drive(game: Game, log: MemoryLog, steps: int, undo_every: int = 0) -> None:
    """Play ``steps`` more events: legal actions and automatic steps, and (in a sandbox)
    an undo every ``undo_every`` events, every other one redone at once."""
    for turn in range(1, steps + 1):
        status = TALLY.status(game.state)
        if status["finished"]:
            return
        if undo_every and turn % undo_every == 0 and game.effective:
            step(game, log, undo_event(game, log.envelopes[game.effective[-1] - 1], seat=None))
            if turn % (2 * undo_every) == 0:
                step(game, log, redo_event(game, log.envelopes[game.redo[-1] - 1], seat=None))
        elif status["awaiting_system"]:
            step(game, log, decide_system(game)[0])  # type: ignore[index]
        else:
            seat = status["to_act"][0]
            actions = TALLY.legal_actions(game.state, seat)
            step(game, log, decide_action(game, seat, actions[turn % len(actions)])[0])


def sandbox_with_undos() -> MemoryLog:
    """A sandbox game of Tally with undo and redo sprinkled through it."""
    log = MemoryLog("travel")
    game = start(log.append(game_created_event(TALLY, ["Ann", "Bob"], {}, "s", sandbox=True)))
    drive(game, log, 60, undo_every=5)
    return log


def test_the_state_at_every_event_equals_the_fold_of_the_first_n(store: EventStore) -> None:
    envelopes = sandbox_with_undos().envelopes
    put(store, envelopes)
    Folder(store, snapshot_interval=4).load("travel")  # writes the snapshots
    for n in range(1, len(envelopes) + 1):
        loaded = Folder(store, snapshot_interval=4).load("travel", at=n)
        reference = fold(envelopes, upto=n)
        assert (loaded.version, loaded.state) == (n, reference.state), n
        assert loaded.effective == reference.effective and loaded.redo == reference.redo


def test_the_state_at_every_event_of_a_branch_equals_its_fold(store: EventStore) -> None:
    _, source = play_random(TALLY, ["Ann", "Bob", "Cy"], seed="travel-src", game_id="src")
    plan = branch_events(
        source.envelopes,
        30,
        new_seed="other",
        sandbox_token_hash="0" * 64,
        source_finished=True,
        reseed=True,
        resample_for=2,
    )
    branch = MemoryLog("br")
    for event in plan.events:
        branch.append(event)
    game = fold(branch.envelopes)
    drive(game, branch, 12, undo_every=4)
    step(game, branch, undo_event(game, branch.envelopes[game.effective[-1] - 1], seat=None))
    put(store, branch.envelopes)
    Folder(store, snapshot_interval=5).load("br")
    for n in range(31, len(branch.envelopes) + 1):
        loaded = Folder(store, snapshot_interval=5).load("br", at=n)
        assert loaded.state == fold(branch.envelopes, upto=n).state, n


def test_answering_at_n_folds_at_most_one_snapshot_interval(store: EventStore) -> None:
    _, log = play_random(TALLY, ["A", "B", "C", "D"], seed="long", options={"rounds": 12})
    put(store, log.envelopes)
    Folder(store, snapshot_interval=10).load("sim")
    for n in (15, len(log.envelopes) // 2, len(log.envelopes) - 3):
        counting = CountingStore(store)
        Folder(counting, snapshot_interval=10).load("sim", at=n)  # type: ignore[arg-type]
        assert counting.events_read <= 10 + 1, n


def test_the_timeline_has_a_line_round_phase_and_scores_for_every_event() -> None:
    _, log = play_random(TALLY, ["Ann", "Bob"], seed="timeline")
    by_seq = {envelope["seq"]: envelope for envelope in log.envelopes}
    game = start(log.envelopes[0])
    entries = list(
        timeline(game, log.envelopes, by_seq.__getitem__, lambda e, s: refold(by_seq, e, s))
    )
    assert [entry["seq"] for entry in entries] == list(range(1, len(log.envelopes) + 1))
    assert entries[0]["summary"] == "Tally (test only) set up for Ann, Bob"
    assert all(entry["summary"] for entry in entries)
    assert entries[-1]["scores"] == game.state["scores"]
    assert entries[1]["summary"].endswith("made a secret bid")


def test_a_snapshot_keeps_the_effective_history_as_runs_and_gives_it_back() -> None:
    envelopes = sandbox_with_undos().envelopes
    game = fold(envelopes)
    payload = json.loads(canonical_json(game.to_snapshot()))
    assert len(payload["effective_runs"]) < len(game.effective) / 3
    again = Game.from_snapshot(game.version, payload)
    assert (again.effective, again.redo, again.state) == (game.effective, game.redo, game.state)


def test_the_timeline_summarizes_a_secret_action_from_its_public_part_until_revealed() -> None:
    _, log = play_random(TALLY, ["Ann", "Bob"], seed="secret-lines")
    by_seq = {envelope["seq"]: envelope for envelope in log.envelopes}
    calls: list[dict] = []

    class Spy(type(TALLY)):  # type: ignore[misc]
        def summarize(self, state: dict, action: dict) -> str:
            calls.append(action)
            return super().summarize(state, action)

    for reveal in (False, True):
        calls.clear()
        game = start(log.envelopes[0])
        game.ruleset = Spy()
        list(
            timeline(
                game,
                log.envelopes[1:3],
                by_seq.__getitem__,
                lambda e, s: refold(by_seq, e, s),
                reveal_secrets=reveal,
            )
        )
        assert ("amount" in calls[0]) is reveal
