"""The generic fold: effective history, undo and redo, rng positions, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from events.envelope import NewEvent
from events.sqlite_store import SQLiteEventStore
from projections.fold import (
    Folder,
    ReplayError,
    RulesVersionMismatch,
    copy_state,
    decide_action,
    decide_system,
    fold,
    game_created_event,
    start,
)
from projections.rng import seed_commitment
from projections.ruleset import IllegalAction
from projections.simulate import MemoryLog, new_game, play_random, step
from tests.rulesets.tally import TALLY


def played(actions_to_take: int = 6) -> tuple[object, MemoryLog]:
    game, log = new_game(TALLY, ["Ann", "Bob"], seed="fold-seed")
    for seat in (0, 1):
        step(game, log, decide_action(game, seat, {"type": "bid", "amount": 3})[0])
    step(game, log, decide_system(game)[0])  # reveal the bids
    for _ in range(actions_to_take):
        seat = game.state["turn"]
        step(game, log, decide_action(game, seat, {"type": "draw"})[0])
    return game, log


def undo(log: MemoryLog, game: object, seq: int) -> None:
    step(game, log, NewEvent("undone", {"seq": seq}, {"seat": 0}))  # type: ignore[arg-type]


def redo(log: MemoryLog, game: object, seq: int) -> None:
    step(game, log, NewEvent("redone", {"seq": seq}, {"seat": 0}))  # type: ignore[arg-type]


def test_the_seed_stays_secret_and_only_its_commitment_is_public() -> None:
    event = game_created_event(TALLY, ["Ann"], {}, "s3cret")
    assert "s3cret" not in str(event.data)
    assert event.data["seed_commitment"] == seed_commitment("s3cret")
    assert event.secret == {"visible_to": [], "seed": "s3cret", "seat_token_hashes": []}


def test_options_are_stored_merged_with_their_defaults() -> None:
    event = game_created_event(TALLY, ["Ann"], {"rounds": 5}, "s")
    assert event.data["options"] == {"rounds": 5, "turns_per_round": 2}


def test_an_illegal_action_raises_and_leaves_the_game_untouched() -> None:
    game, _ = played(0)
    before = game.copy()
    with pytest.raises(IllegalAction) as refused:
        decide_action(game, 1 - game.state["turn"], {"type": "draw"})
    assert refused.value.code == "not_your_turn"
    assert game.state == before.state and game.version == before.version


def test_secret_choices_are_stored_as_secrets_of_their_seat() -> None:
    game, _ = new_game(TALLY, ["Ann", "Bob"], seed="s")
    event, _ = decide_action(game, 1, {"type": "bid", "amount": 7})
    assert event.data == {"action": {"type": "bid"}, "reveals_hidden": False}
    assert event.secret == {"visible_to": [1], "action": {"type": "bid", "amount": 7}}


def test_undo_gives_the_state_before_the_undone_step() -> None:
    game, log = played(4)
    before_last = fold(log.envelopes[:-1]).state
    undo(log, game, log.envelopes[-1]["seq"])
    assert game.state == before_last
    assert fold(log.envelopes).state == before_last


def test_redo_draws_exactly_the_same_cards_again() -> None:
    game, log = played(4)
    after = game.copy().state
    last = log.envelopes[-1]["seq"]
    undo(log, game, last)
    redo(log, game, last)
    assert game.state == after
    assert fold(log.envelopes).state == after


def test_the_same_action_again_after_undo_draws_the_same_card() -> None:
    game, log = played(4)
    last = log.envelopes[-1]
    hands_after = [list(hand) for hand in game.state["hands"]]
    undo(log, game, last["seq"])
    seat = last["actor"]["seat"]
    step(game, log, decide_action(game, seat, {"type": "draw"})[0])
    # same position in the effective history -> same rng -> same card: no rerolls by undo
    assert game.state["hands"] == hands_after


def test_a_new_step_empties_the_redo_stack() -> None:
    game, log = played(4)
    last = log.envelopes[-1]
    undo(log, game, last["seq"])
    step(game, log, decide_action(game, last["actor"]["seat"], {"type": "draw"})[0])
    with pytest.raises(ReplayError):
        redo(log, game, last["seq"])


def test_undo_must_name_the_last_effective_step() -> None:
    game, log = played(4)
    with pytest.raises(ReplayError):
        undo(log, game, 2)


def test_a_log_must_begin_with_game_created() -> None:
    _, log = played(1)
    with pytest.raises(ReplayError):
        fold(log.envelopes[1:])


def test_folding_under_other_rules_is_refused_not_silently_done() -> None:
    _, log = played(1)
    first = dict(log.envelopes[0])
    first["data"] = {**first["data"], "rules_version": "0-old"}
    with pytest.raises(RulesVersionMismatch):
        start(first)


def test_a_random_game_replays_to_the_identical_state() -> None:
    game, log = play_random(TALLY, ["A", "B", "C"], seed="replay")
    assert fold(log.envelopes).state == game.state
    assert fold(log.envelopes, upto=10).version == 10


def test_a_shared_load_copies_only_to_fold_on_and_never_changes_a_state_handed_out(
    tmp_path: Path,
) -> None:
    """``Folder.load(shared=True)`` hands out the cache's state while it is the latest, and
    folds later events on a copy, so whoever holds an earlier share keeps its state as it
    was; an owned load (the default) is a copy the caller may change."""
    store = SQLiteEventStore(tmp_path / "events.db")
    created = game_created_event(TALLY, ["Ann", "Bob"], {}, seed="fold-seed")
    log = list(store.append("g1", [created], expected_version=0).envelopes)

    def another_process_bids(seat: int, amount: int) -> None:
        event, _ = decide_action(fold(log), seat, {"type": "bid", "amount": amount})
        log.extend(store.append("g1", [event], expected_version=len(log)).envelopes)

    another_process_bids(0, 3)
    folder = Folder(store)
    first = folder.load("g1", shared=True)
    assert first.state is folder.cached("g1").state  # the latest: nothing copied
    assert first.version == 2 and first.state == fold(log).state
    held = copy_state(first.state)

    another_process_bids(1, 2)
    second = folder.load("g1", shared=True)
    assert second.version == 3 and second.state == fold(log).state
    assert first.state == held and first.version == 2  # folded on a copy
    assert second.state is folder.cached("g1").state

    owned = folder.load("g1")
    assert owned.state is not folder.cached("g1").state
    owned.state["bids"] = "changed by its owner"
    assert folder.load("g1", shared=True).state == fold(log).state
    store.close()
