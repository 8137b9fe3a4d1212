"""Properties of undo, redo, branches, time travel and audits over random playouts of every
registered ruleset (a few games each, bounded; ``MEEPLE_SOAK_GAMES`` plays more).

- undo right after any undoable action gives the identical state before it, and redo the
  identical state after it;
- undo is refused in every case the rule forbids (another seat's action, after an automatic
  step, across a step that revealed hidden information), and an action that claims to reveal
  nothing draws no luck anyone sees: with other luck every view after it is unchanged;
- a branch at any N without reseed, replayed with the source's remaining events, ends in the
  source's final state;
- the state after event N loaded through snapshots equals the fold of the first N events;
- the audit passes on every untouched log and fails, naming the seq, on a log with any one
  event changed, removed or reordered.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from events.config import open_store
from events.envelope import Envelope, NewEvent
from projections.audit import audit
from projections.fold import (
    Folder,
    Game,
    advance,
    copy_state,
    decide_action,
    decide_system,
    game_created_event,
    refold_steps,
    replay,
    start,
    step_action,
)
from projections.history import branch_events, redo_event, undo_event
from projections.rng import derive_rng
from projections.ruleset import IllegalAction, Ruleset, all_rulesets
from projections.simulate import EPOCH, MemoryLog, choose_random_action

#: random games per ruleset: one at the fewest players, one at the most (more when soaking)
GAMES = max(2, int(os.environ.get("MEEPLE_SOAK_GAMES", "2")) // 25)
#: bounds per game, so a long game costs a few seconds at most
UNDO_CHECKS = 6
REVEAL_CHECKS = 25
BRANCHES = 3
TIME_TRAVEL_SAMPLES = 12
TAMPERS = 3
#: a random game longer than this stops there (the properties hold of unfinished games too)
MAX_EVENTS = 2500


class Playout:
    """A game being played into an in-memory log, folded as it goes, with in-memory
    snapshots so an undo refolds at most a few dozen events (as the store-backed Folder)."""

    SNAPSHOT_EVERY = 50

    def __init__(self, log: MemoryLog, game: Game) -> None:
        self.log = log
        self.game = game
        self.snapshots: list[Game] = []

    @classmethod
    def new(cls, ruleset: Ruleset, players: list[str], seed: str) -> Playout:
        log = MemoryLog("prop")
        first = log.append(game_created_event(ruleset, players, {}, seed))
        return cls(log, start(first))

    @classmethod
    def of(cls, game_id: str, events: list[NewEvent]) -> Playout:
        log = MemoryLog(game_id)
        for event in events:
            log.append(event)
        game = start(log.envelopes[0], lambda seq: log.envelopes[seq - 1])
        playout = cls(log, game)
        for envelope in log.envelopes[game.version :]:
            advance(game, envelope, playout.fetch, playout.rebuild)
        return playout

    def append(self, event: NewEvent) -> Envelope:
        envelope = self.log.append(event)
        advance(self.game, envelope, self.fetch, self.rebuild)
        if envelope["seq"] % self.SNAPSHOT_EVERY == 0:
            self.snapshots.append(self.game.copy())
        return envelope

    def fetch(self, seq: int) -> Envelope:
        return self.log.envelopes[seq - 1]

    def rebuild(self, effective: list[int], before: int) -> Any:
        for snapshot in reversed(self.snapshots):
            prefix = snapshot.effective
            if snapshot.version < before and effective[: len(prefix)] == prefix:
                return refold_steps(snapshot.copy(), effective, self.fetch, before)
        base = start(self.log.envelopes[0], self.fetch)
        return refold_steps(base, effective, self.fetch, before)

    def last_step(self) -> Envelope | None:
        return self.fetch(self.game.effective[-1]) if self.game.effective else None


def played_games(ruleset: Ruleset) -> Iterator[tuple[str, Playout]]:
    """Finished random games of ``ruleset`` whose logs hold undo and redo, every undo and
    reveal rule checked on the way (see ``play_checking_undo``)."""
    counts = [ruleset.min_players, ruleset.max_players]
    for index in range(GAMES):
        seed = f"history-{ruleset.id}-{index}"
        players = [f"P{n + 1}" for n in range(counts[index % 2])]
        yield seed, play_checking_undo(ruleset, players, seed)


def play_checking_undo(ruleset: Ruleset, players: list[str], seed: str) -> Playout:
    playout = Playout.new(ruleset, players, seed)
    chooser = random.Random(f"choices:{seed}")
    budget = {"undo": UNDO_CHECKS, "reveal": REVEAL_CHECKS}
    check_undo_rule(playout)
    while len(playout.log.envelopes) < MAX_EVENTS:
        game = playout.game
        status = ruleset.status(game.state)
        if status["finished"]:
            return playout
        before = copy_state(game.state)
        if status.get("awaiting_system"):
            decided = decide_system(game)
            assert decided is not None, "a pending automatic step can be decided"
            playout.append(decided[0])
            check_undo_rule(playout)
            continue
        choice = choose_random_action(game, chooser)
        assert choice is not None, f"nobody can act at version {game.version}"
        seat, action = choice
        position = game.position + 1
        envelope = playout.append(decide_action(game, seat, action)[0])
        check_undo_rule(playout)
        if envelope["data"]["reveals_hidden"]:
            continue
        if budget["reveal"] > 0 and chooser.random() < 0.3:
            budget["reveal"] -= 1
            check_reveals_nothing(ruleset, before, playout, {**action, "seat": seat}, position)
        if budget["undo"] > 0 and chooser.random() < 0.2:
            budget["undo"] -= 1
            check_undo_then_redo(playout, seat, before)
    return playout


def check_undo_rule(playout: Playout) -> None:
    """Every seat's undo now is allowed or refused exactly as the rule says."""
    game, last = playout.game, playout.last_step()
    for seat in range(len(game.meta["players"])):
        expected = _expected_refusal(last, seat)
        try:
            undo_event(game, last, seat)
        except IllegalAction as refused:
            assert refused.code == expected, (seat, last, refused)
        else:
            assert expected is None, f"seat {seat} could undo {last}"


def _expected_refusal(last: Envelope | None, seat: int) -> str | None:
    if last is None:
        return "nothing_to_undo"
    if last["type"] == "system":
        return "turn_over"
    if last["actor"]["seat"] != seat:
        return "not_your_action"
    return "hidden_information_revealed" if last["data"]["reveals_hidden"] else None


def check_undo_then_redo(playout: Playout, seat: int, before: Any) -> None:
    game = playout.game
    after = copy_state(game.state)
    step = playout.last_step()
    playout.append(undo_event(game, step, seat))
    assert game.state == before, "undo gives back the state before the action"
    for other in range(len(game.meta["players"])):
        if other != seat:
            with pytest.raises(IllegalAction, match="own"):
                redo_event(game, step, other)
    playout.append(redo_event(game, step, seat))
    assert game.state == after, "redo gives back the state after the action"


def check_reveals_nothing(
    ruleset: Ruleset, before: Any, playout: Playout, action: dict[str, Any], position: int
) -> None:
    """An action that may be undone draws no luck anyone sees: applied with other luck, it
    leaves every seat's view after it unchanged (undo then redo could not reroll it)."""
    game = playout.game
    other_luck = copy_state(before)
    ruleset.apply(other_luck, action, derive_rng("other luck", position))
    for seat in range(len(game.meta["players"])):
        assert ruleset.view(other_luck, seat) == ruleset.view(game.state, seat), (
            f"{action} is undoable but draws luck seat {seat} sees"
        )
        # Nor does it show a seat anything it could not see before: applied to a state where
        # that seat's unknowns are redrawn, it leaves that seat's view the same.
        redrawn = ruleset.resample_hidden(copy_state(before), seat, random.Random(position))
        try:
            ruleset.apply(redrawn, action, derive_rng(game.seed_for(game.version), position))
        except IllegalAction:
            continue  # legal only because of something the seat could not see
        assert ruleset.view(redrawn, seat) == ruleset.view(game.state, seat), (
            f"{action} is undoable but shows seat {seat} something hidden"
        )


RULESETS = all_rulesets()


@pytest.fixture(scope="module", params=RULESETS, ids=[ruleset.id for ruleset in RULESETS])
def games(request: pytest.FixtureRequest) -> list[tuple[str, Playout]]:
    """The random games of one ruleset; playing them checks undo, redo and their refusals."""
    return list(played_games(request.param))


def test_undo_and_redo_follow_the_rule_in_random_games(games: list[tuple[str, Playout]]) -> None:
    for _, playout in games:
        kinds = {envelope["type"] for envelope in playout.log.envelopes}
        assert "action" in kinds


def test_a_branch_replayed_with_the_sources_remaining_events_ends_in_its_final_state(
    games: list[tuple[str, Playout]],
) -> None:
    for seed, playout in games:
        source = playout.log.envelopes
        picker = random.Random(f"branch:{seed}")
        for at in sorted(picker.sample(range(1, len(source) + 1), BRANCHES)):
            plan = branch_events(
                source, at, new_seed="unused", sandbox_token_hash="0" * 64, source_finished=True
            )
            branch = Playout.of(f"branch-{at}", plan.events)
            for envelope in source[at:]:
                branch.append(_same_event_one_seq_later(envelope))
            assert branch.game.state == playout.game.state, f"branch at {at}"


def _same_event_one_seq_later(envelope: Envelope) -> NewEvent:
    """The source's event as the branch's own (its log has one more event in front)."""
    data = envelope["data"]
    if envelope["type"] in ("undone", "redone"):
        data = {**data, "seq": data["seq"] + 1}
    return NewEvent(envelope["type"], data, envelope["actor"], envelope["secret"])


def test_the_state_at_n_through_snapshots_equals_the_fold_of_the_first_n(
    games: list[tuple[str, Playout]], tmp_path: Path
) -> None:
    for seed, playout in games:
        envelopes = playout.log.envelopes
        picker = random.Random(f"travel:{seed}")
        wanted = set(picker.sample(range(1, len(envelopes) + 1), TIME_TRAVEL_SAMPLES))
        expected = {}
        game = start(envelopes[0])
        if 1 in wanted:
            expected[1] = copy_state(game.state)
        for folded, envelope in replay(envelopes, game):
            del folded
            if envelope["seq"] - 1 in wanted:
                expected[envelope["seq"] - 1] = copy_state(game.state)
        if len(envelopes) in wanted:
            expected[len(envelopes)] = copy_state(game.state)
        store = open_store(f"sqlite:///{tmp_path / f'{seed}.db'}")
        try:
            _put(store, envelopes)
            interval = max(17, len(envelopes) // 25)  # each snapshot is a durable write
            Folder(store, snapshot_interval=interval).load("prop")
            for n, state in sorted(expected.items()):
                loaded = Folder(store, snapshot_interval=interval).load("prop", at=n)
                assert loaded.state == state, n
        finally:
            store.close()


def _put(store: Any, envelopes: list[Envelope]) -> None:
    batch = [
        NewEvent(e["type"], e["data"], e["actor"], e["secret"], e["schema_version"], EPOCH)
        for e in envelopes
    ]
    store.append("prop", batch, 0)


def test_the_audit_passes_untouched_logs_and_names_the_seq_of_any_one_tampered_event(
    games: list[tuple[str, Playout]],
) -> None:
    for seed, playout in games:
        envelopes = playout.log.envelopes
        report = audit(envelopes)
        assert report.ok and report.seed_checked == report.finished, report
        picker = random.Random(f"tamper:{seed}")
        for k in picker.sample(range(1, len(envelopes)), TAMPERS):
            changed = [dict(e) for e in envelopes]
            changed[k - 1]["data"] = {**changed[k - 1]["data"], "tampered": True}
            assert audit(changed).seq == k, "a changed event"
            removed = envelopes[: k - 1] + envelopes[k:]
            assert audit(removed).seq == k, "a removed event"
            reordered = list(envelopes)
            reordered[k - 1], reordered[k] = reordered[k], reordered[k - 1]
            assert audit(reordered).seq == k, "two events swapped"
            assert not audit(changed).ok


def test_a_random_step_action_survives_the_branch_copy(games: list[tuple[str, Playout]]) -> None:
    for _, playout in games:
        source = playout.log.envelopes
        plan = branch_events(
            source, len(source), new_seed="s", sandbox_token_hash="0" * 64, source_finished=True
        )
        copied = Playout.of("copy", plan.events).log.envelopes[1:]
        assert [step_action(e) for e in copied if e["type"] == "action"] == [
            step_action(e) for e in source if e["type"] == "action"
        ]
