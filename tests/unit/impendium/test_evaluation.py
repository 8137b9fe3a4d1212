"""How agents value an Impendium position (projections/games/impendium/evaluation.py): the
round's end changes no seat's value, so no agent gains by putting it off (issue 13), and
bots-only games end."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.agents import Budget, GreedyAgent, MctsAgent
from projections.agents.evaluation import evaluate
from projections.agents.playout import mover, play, run_system_steps
from projections.agents.tournament import play_out
from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import STARS
from projections.games.impendium.evaluation import HORIZON, RESOURCE, income
from tests.unit.impendium.helpers import act, started

State = dict[str, Any]


def alone_in_the_round(seed: str) -> tuple[State, int]:
    """Round 1's action turns, seat 0 to act, its rival passed, both Arks on one space, and
    the rival's colonies yielding more (one more colony): passing, seat 0 loses ground."""
    state = started(seed=seed)
    seat, rival = 0, 1
    state["arks"][rival] = state["arks"][seat]
    position, entry = next(
        (position, entry)
        for position, entry in sorted(state["board"].items())
        if entry["kind"] == "star" and None in entry["colonies"]
    )
    entry["colonies"][entry["colonies"].index(None)] = rival
    assert income(state)[seat][0] < income(state)[rival][0], position
    state["passed"][rival] = True
    state["turn"] = {"seat": seat, "used": [], "moving": False, "met": []}
    return state, seat


def test_the_rounds_end_changes_no_seats_value() -> None:
    state, seat = alone_in_the_round("end")
    before = evaluate(IMPENDIUM, state)
    act(state, seat, "pass")
    run_system_steps(IMPENDIUM, state, random.Random(1))
    assert state["phase"] == "federation_resource" and state["round"] == 2
    assert evaluate(IMPENDIUM, state) == pytest.approx(before)


def test_a_colony_is_worth_its_income_for_the_generations_counted() -> None:
    state = started(seed="colony")
    before = evaluate(IMPENDIUM, state)
    entry = next(
        entry
        for _, entry in sorted(state["board"].items())
        if entry["kind"] == "star" and None in entry["colonies"]
    )
    entry["colonies"][entry["colonies"].index(None)] = 0
    gained = HORIZON * RESOURCE * sum(STARS[entry["card"]]["production"].values())
    assert evaluate(IMPENDIUM, state) == pytest.approx([before[0] + gained, before[1]])


def test_no_income_counts_once_the_round_limit_is_reached() -> None:
    state = started(seed="limit", round_limit=1)
    values = evaluate(IMPENDIUM, state)
    for seat, mine in enumerate(state["seats"]):
        assert values[seat] == pytest.approx(
            mine["vp"] + RESOURCE * sum(mine["resources"].values())
        )


def test_greedy_alone_in_a_round_ends_it_rather_than_trade_for_ever() -> None:
    """Trades offered and declined could end its turns for ever (docs/rules/impendium.md,
    "Ending a turn"); passing costs it ground only if the round's income is not counted."""
    state, _ = alone_in_the_round("stall")
    greedy, table = GreedyAgent(), random.Random(2)
    for step in range(100):
        if state["phase"] != "actions":
            break
        turn = mover(IMPENDIUM, state, table)
        assert turn is not None
        actor = turn[0]
        play(
            IMPENDIUM,
            state,
            actor,
            greedy.choose(IMPENDIUM, state, actor, random.Random(step)),
            table,
        )
    assert state["phase"] != "actions", "the round did not end"


@pytest.mark.parametrize(
    "seats",
    [
        pytest.param(lambda: [GreedyAgent(), GreedyAgent()], id="greedy-greedy"),
        pytest.param(lambda: [MctsAgent(Budget(iterations=4)), GreedyAgent()], id="mcts-greedy"),
    ],
)
def test_a_bots_only_game_ends_by_its_round_limit(seats) -> None:  # type: ignore[no-untyped-def]
    # With points and resources alone valued, both stalled in this game: cut at 300.
    played = play_out(IMPENDIUM, seats(), "bots-only:5", {"round_limit": 3}, max_steps=300)
    assert played.finished, f"cut after {played.steps} seat actions"
