"""The undo/redo rule: own actions of the current turn, never across hidden information."""

from __future__ import annotations

import pytest

from projections.fold import Game, decide_action, decide_system, fold
from projections.history import redo_event, undo_event
from projections.ruleset import IllegalAction
from projections.simulate import MemoryLog, new_game, step
from tests.rulesets.tally import TALLY


def bidding_done(sandbox: bool = False) -> tuple[Game, MemoryLog]:
    game, log = new_game(TALLY, ["Ann", "Bob"], seed="undo-seed")
    game.meta["sandbox"] = sandbox
    for seat in (0, 1):
        step(game, log, decide_action(game, seat, {"type": "bid", "amount": 2})[0])
    step(game, log, decide_system(game)[0])
    return game, log


def play_first_card(game: Game, log: MemoryLog) -> None:
    seat = game.state["turn"]
    card = game.state["hands"][seat][0]
    step(game, log, decide_action(game, seat, {"type": "play", "card": card})[0])


def last(log: MemoryLog) -> dict:
    return log.envelopes[-1]


def test_a_seat_may_undo_its_own_last_action_that_revealed_nothing() -> None:
    game, log = bidding_done()
    before = game.copy().state
    play_first_card(game, log)
    step(game, log, undo_event(game, last(log), seat=0))
    assert game.state == before
    assert fold(log.envelopes).state == before


def test_undo_is_refused_for_another_seats_action() -> None:
    game, log = bidding_done()
    play_first_card(game, log)
    with pytest.raises(IllegalAction) as refused:
        undo_event(game, last(log), seat=1)
    assert refused.value.code == "not_your_action"


def test_undo_never_crosses_a_card_draw() -> None:
    game, log = bidding_done()
    step(game, log, decide_action(game, 0, {"type": "draw"})[0])
    with pytest.raises(IllegalAction) as refused:
        undo_event(game, last(log), seat=0)
    assert refused.value.code == "hidden_information_revealed"


def test_undo_is_refused_once_an_automatic_step_has_happened() -> None:
    game, log = bidding_done()
    with pytest.raises(IllegalAction) as refused:
        undo_event(game, last(log), seat=0)
    assert refused.value.code == "turn_over"


def test_nothing_to_undo_at_the_start() -> None:
    game, _ = new_game(TALLY, ["Ann"], seed="s")
    with pytest.raises(IllegalAction) as refused:
        undo_event(game, None, seat=0)
    assert refused.value.code == "nothing_to_undo"


def test_redo_puts_back_exactly_the_undone_action() -> None:
    game, log = bidding_done()
    play_first_card(game, log)
    after = game.copy().state
    played = last(log)
    step(game, log, undo_event(game, played, seat=0))
    with pytest.raises(IllegalAction) as refused:
        redo_event(game, played, seat=1)
    assert refused.value.code == "not_your_action"
    step(game, log, redo_event(game, played, seat=0))
    assert game.state == after


def test_nothing_to_redo_without_an_undo() -> None:
    game, _ = bidding_done()
    with pytest.raises(IllegalAction) as refused:
        redo_event(game, None, seat=0)
    assert refused.value.code == "nothing_to_redo"


def test_a_sandbox_may_undo_anything_even_automatic_steps_and_draws() -> None:
    game, log = bidding_done(sandbox=True)
    step(game, log, decide_action(game, 0, {"type": "draw"})[0])
    for _ in range(3):  # the draw, the reveal, Bob's bid
        step(game, log, undo_event(game, log.envelopes[game.effective[-1] - 1], seat=None))
    assert game.state["phase"] == "bid" and game.state["bids"] == [2, None]
