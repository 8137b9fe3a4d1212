"""What undo, the timeline and audits cost, counted (never timed): how many steps the rules
apply. A run of k ``undone`` events costs one rebuild from the nearest snapshot (fewer than
a snapshot interval of steps), not k, and one more where the run crosses a multiple of the
interval (the snapshot saved there needs its state); an in-memory fold rebuilds from its
own checkpoints; a timeline page folds once; an audit is computed once per version, however
many ask at once. The states and entries are the same as the reference fold's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from events.config import open_store
from events.envelope import Envelope, NewEvent
from events.store import EventStore
from projections.audit import AuditCache, audit
from projections.fold import Folder, fold
from projections.history import public_scores, timeline
from projections.simulate import MemoryLog, play_random
from tests.rulesets.tally import TALLY

INTERVAL = 100


class Applies:
    """Counts the steps the Tally rules apply (a spy on ``apply``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = TALLY.apply

        def counted(state: Any, action: Any, rng: Any) -> None:
            self.count += 1
            original(state, action, rng)

        monkeypatch.setattr(TALLY, "apply", counted)

    def during(self, call: Any) -> tuple[Any, int]:
        before = self.count
        result = call()
        return result, self.count - before


@pytest.fixture
def applies(monkeypatch: pytest.MonkeyPatch) -> Applies:
    return Applies(monkeypatch)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EventStore]:
    opened = open_store(f"sqlite:///{tmp_path}/costs.db")
    yield opened
    opened.close()


def played(rounds: int = 60) -> MemoryLog:
    """A finished random Tally game of about 8 events a round, in memory."""
    _, log = play_random(TALLY, ["Ann", "Bob"], "costs", {"rounds": rounds})
    return log


def undo_redo(log: MemoryLog, runs: list[tuple[str, int]]) -> None:
    """Append runs of ``undone`` / ``redone`` events (("undone", 100), ...) to ``log``, as a
    sandbox's holder would, each taking back (or putting back) the last step."""
    game = fold(log.envelopes)
    for kind, count in runs:
        for _ in range(count):
            taken, put = (
                (game.effective, game.redo) if kind == "undone" else (game.redo, game.effective)
            )
            seq = taken.pop()
            put.append(seq)
            log.append(NewEvent(type=kind, data={"seq": seq}, actor={"system": "sandbox"}))


def stored(store: EventStore, log: MemoryLog, upto: int | None = None) -> None:
    version = store.version(log.game_id)
    events = [NewEvent.copy_of(e) for e in log.envelopes[version:upto]]
    store.append(log.game_id, events, version)


# -- undo ---------------------------------------------------------------------------------


def test_folding_a_hundred_undone_events_rebuilds_the_state_at_most_twice(
    store: EventStore, applies: Applies
) -> None:
    log = played()
    before_undo = len(log.envelopes)
    undo_redo(log, [("undone", 100)])
    stored(store, log, upto=before_undo)
    folder = Folder(store, INTERVAL)
    folder.load(log.game_id)  # the game as it was: cached, snapshots written
    stored(store, log)

    game, count = applies.during(lambda: folder.load(log.game_id))

    assert count <= 2 * INTERVAL
    reference = fold(log.envelopes)
    assert game.state == reference.state and game.effective == reference.effective


def test_undo_and_redo_runs_on_a_grown_log_each_cost_at_most_an_interval(
    store: EventStore, applies: Applies
) -> None:
    log = played()
    undo_redo(log, [("undone", 100), ("redone", 100)] * 5)
    stored(store, log)
    folder = Folder(store, INTERVAL)
    folder.load(log.game_id)
    for kind in ("undone", "redone"):
        undo_redo(log, [(kind, 100)])
        stored(store, log)
        game, count = applies.during(lambda: folder.load(log.game_id))
        # an undo run: a rebuild (two if it crosses a multiple of the interval); a redo
        # run: its 100 steps applied again
        assert count <= 2 * INTERVAL, kind
        assert game.state == fold(log.envelopes).state


def test_an_in_memory_fold_rebuilds_each_undo_run_from_its_checkpoints(
    applies: Applies,
) -> None:
    log = played()
    steps = len(log.envelopes) - 1
    runs = [("undone", 100), ("redone", 100)] * 5
    undo_redo(log, runs)

    _, count = applies.during(lambda: fold(log.envelopes))

    # every step once, every redone once, and at most an interval per run of undos
    assert count <= steps + 5 * 100 + 5 * INTERVAL


def test_a_tampered_log_still_fails_its_audit_at_the_undo_it_breaks() -> None:
    log = played(rounds=20)
    undo_redo(log, [("undone", 30), ("redone", 30)])
    envelopes = log.envelopes
    assert audit(envelopes).ok
    broken = MemoryLog(log.game_id)
    for envelope in envelopes:
        event = NewEvent.copy_of(envelope)
        if envelope["seq"] == len(envelopes) - 40:  # an undone naming the wrong step
            event = NewEvent(type="undone", data={"seq": 2}, actor=envelope["actor"])
        broken.append(event)
    report = audit(broken.envelopes)
    assert not report.ok and report.seq == len(envelopes) - 40


# -- the timeline -------------------------------------------------------------------------


def entries_by_folding_each(envelopes: list[Envelope], seqs: list[int]) -> list[tuple[Any, ...]]:
    """The reference: the round, phase and scores after each event, folded from scratch."""
    rows = []
    for seq in seqs:
        game = fold(envelopes, upto=seq)
        status = TALLY.status(game.state)
        rows.append((status.get("round"), status.get("phase"), public_scores(TALLY, game.state)))
    return rows


def test_a_timeline_page_folds_once_and_says_what_folding_each_event_says(
    store: EventStore, applies: Applies
) -> None:
    log = played(rounds=20)
    undo_redo(log, [("undone", 40), ("redone", 25), ("undone", 60), ("redone", 50)])
    stored(store, log)
    folder = Folder(store, 10)
    folder.load(log.game_id)
    after = len(log.envelopes) - 160  # in the middle of the first run of undos
    page = store.read(log.game_id, after=after, limit=160)

    def entries() -> list[dict[str, Any]]:
        game = folder.load(log.game_id, at=after)
        fetch, rebuild = folder.stepper(log.game_id)
        return list(timeline(game, page, fetch, rebuild))

    listed, count = applies.during(entries)

    # the page's 75 steps put back, the 40 steps its undos reach below where it starts, and
    # a few rebuilds of at most an interval (10) each
    assert count <= 75 + 40 + 6 * 10
    got = [(entry["round"], entry["phase"], entry["scores"]) for entry in listed]
    assert got == entries_by_folding_each(log.envelopes, [e["seq"] for e in page])


# -- audits -------------------------------------------------------------------------------


def test_an_audit_asked_for_by_many_at_once_is_computed_once() -> None:
    cache = AuditCache(size=8)
    asking = 8
    everyone_asked = threading.Barrier(asking)
    release = threading.Event()
    computed: list[int] = []

    def compute() -> dict[str, Any]:
        computed.append(1)
        release.wait(timeout=30)
        return {"ok": True}

    def ask() -> dict[str, Any]:
        everyone_asked.wait(timeout=30)
        return cache.get(("game", 7), compute)

    outcomes: list[dict[str, Any]] = []
    threads = [threading.Thread(target=lambda: outcomes.append(ask())) for _ in range(asking)]
    for thread in threads:
        thread.start()
    threading.Timer(0.5, release.set).start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == [{"ok": True}] * asking
    assert len(computed) == 1 and cache.computed == 1


def test_an_audit_is_kept_per_version_and_the_oldest_is_dropped() -> None:
    cache = AuditCache(size=2)
    for version in (1, 2, 1, 3, 1):
        cache.get(("game", version), lambda: {"ok": True})
    # 1 and 2 computed; 1 again from the cache; 3 drops 2 (used least lately); 1 kept
    assert cache.computed == 3


def test_a_failed_audit_is_computed_again_by_the_next_request() -> None:
    cache = AuditCache()

    def failing() -> dict[str, Any]:
        raise RuntimeError("the store went away")

    with pytest.raises(RuntimeError):
        cache.get("key", failing)
    assert cache.get("key", lambda: {"ok": True}) == {"ok": True}
