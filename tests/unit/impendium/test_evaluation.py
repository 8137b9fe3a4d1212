"""How agents value an Impendium position (projections/games/impendium/evaluation.py): the
round's end changes no seat's value, so no agent gains by putting it off (docs/analysis.md), and
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
from projections.games.impendium.board import FEDERATION, adjacent_positions, coords
from projections.games.impendium.data import HARBINGERS, STARS
from projections.games.impendium.evaluation import HORIZON, RESOURCE, income
from projections.games.impendium.state import END_VP
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


# -- progress towards points (greedy seats once never scored at default options) -------


def at_the_federation(seed: str) -> tuple[State, int]:
    """Round 1's action turns, seat 0 to act with its Ark on the federation card and plenty
    of every resource (what a slot costs is not what these tests are about)."""
    state = started(seed=seed)
    seat = state["turn"]["seat"]
    state["arks"][seat] = FEDERATION
    for mine in state["seats"]:
        mine["resources"] = {resource: 20 for resource in mine["resources"]}
    return state, seat


def lead(values: list[float], seat: int) -> float:
    return values[seat] - max(value for other, value in enumerate(values) if other != seat)


def symbol_slots(card: str) -> list[int]:
    return [index for index, slot in enumerate(STARS[card]["slots"]) if "cost" in slot]


def test_a_disc_on_a_federation_project_raises_its_seats_value_and_lead() -> None:
    """The slot's resources buy a point still to come: worth more than they cost."""
    state, seat = at_the_federation("pledge")
    project = state["projects"][0]
    before = evaluate(IMPENDIUM, state)
    act(state, seat, "construct_federation_star", project=project["card"], slot=0)
    after = evaluate(IMPENDIUM, state)
    assert after[seat] > before[seat]
    assert lead(after, seat) > lead(before, seat)


def test_a_disc_counts_more_on_a_fuller_project_and_most_once_it_completes() -> None:
    state, seat = at_the_federation("fill")
    project = state["projects"][0]
    card, slots = project["card"], symbol_slots(project["card"])
    gains = []
    for slot in slots:
        before = evaluate(IMPENDIUM, state)[seat]
        act(state, seat, "construct_federation_star", project=card, slot=slot)
        gains.append(evaluate(IMPENDIUM, state)[seat] - before)
        state["turn"]["used"] = []  # one project action a turn: the test plays several
    assert all(gain > 0 for gain in gains)
    assert gains == sorted(gains), "each disc raises the value of those already there"
    assert card not in [p["card"] for p in state["projects"]], "the last disc completed it"
    assert state["seats"][seat]["vp"] == len(slots)


def test_a_harbingers_majority_counts_for_its_reward() -> None:
    """Battling a harbinger: 1 VP a disc and the card's VP to the single majority (2 each
    when tied), when all its slots are full (Battle a Harbinger)."""
    state, seat = at_the_federation("harbinger")
    rival = 1 - seat
    star = next(pos for pos, entry in sorted(state["board"].items()) if entry["kind"] == "star")
    beside = next(pos for pos in adjacent_positions(star) if pos not in state["board"])
    card = sorted(HARBINGERS)[0]
    slots = len(HARBINGERS[card]["slots"])
    state["board"][beside] = {"kind": "harbinger", "card": card, "discs": [None] * slots}
    state["arks"] = [star, star]
    before = evaluate(IMPENDIUM, state)
    act(state, seat, "battle_harbinger", position=beside, slot=0)
    alone = evaluate(IMPENDIUM, state)
    assert alone[seat] > before[seat]
    assert lead(alone, seat) - lead(before, seat) > 1, "a disc and a share of the majority"
    state["turn"] = {"seat": rival, "used": [], "moving": False, "met": []}
    act(state, rival, "battle_harbinger", position=beside, slot=1)
    shared = evaluate(IMPENDIUM, state)
    assert shared[seat] < alone[seat], "the majority, and its reward, is now shared"


def test_a_greedy_seat_with_the_hydrogen_moves_towards_the_federation_card() -> None:
    state = started(seed="reach")
    seat = state["turn"]["seat"]
    star = next(
        pos
        for pos in adjacent_positions(FEDERATION)
        if state["board"].get(pos, {}).get("kind") == "star"
    )
    state["arks"][seat] = star
    state["seats"][seat]["resources"]["hydrogen"] = 5
    greedy, table = GreedyAgent(), random.Random(2)
    for step in range(20):  # its turn: at most four actions, a trade, abilities, cards
        if state["phase"] != "actions" or state["turn"]["seat"] != seat:
            break
        play(
            IMPENDIUM,
            state,
            seat,
            greedy.choose(IMPENDIUM, state, seat, random.Random(step)),
            table,
        )
    ark = state["arks"][seat]
    assert steps_between(ark, FEDERATION) < steps_between(star, FEDERATION), ark


def steps_between(one: str, other: str) -> int:
    (x, y), (u, v) = coords(one), coords(other)
    return abs(x - u) + abs(y - v)


def test_the_end_triggered_changes_no_seats_value() -> None:
    """Reaching 25 VP (or a galaxy of each colour) leads to one more turn each, then the
    end; were the income and the discs on unfinished cards no longer counted from the
    trigger, a seat with more of them would put the trigger off for ever (docs/analysis.md)."""
    state, seat = at_the_federation("trigger")
    act(state, seat, "construct_federation_star", project=state["projects"][0]["card"], slot=0)
    before = evaluate(IMPENDIUM, state)
    state["end_trigger"] = {"reason": "victory_points", "seat": seat}
    state["final_turns"] = [1 - seat]
    assert evaluate(IMPENDIUM, state) == pytest.approx(before)


@pytest.mark.parametrize(
    ("seats", "seed"),
    [
        pytest.param(lambda: [GreedyAgent(), GreedyAgent()], "eval:0", id="greedy-greedy"),
        pytest.param(
            lambda: [MctsAgent(Budget(iterations=4)), GreedyAgent()], "eval:1", id="mcts-greedy"
        ),
    ],
)
def test_a_bots_only_game_at_default_options_ends_by_itself(seats, seed) -> None:  # type: ignore[no-untyped-def]
    """No round limit: before progress counted, greedy seats stayed at 0 VP for thousands of
    seat actions (the cap below is generous: these games end in a few hundred)."""
    played = play_out(IMPENDIUM, seats(), seed, {}, max_steps=1500)
    assert played.finished, f"cut after {played.steps} seat actions"
    assert max(outcome.score for outcome in played.outcomes) >= END_VP
