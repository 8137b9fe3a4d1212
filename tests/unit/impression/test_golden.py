"""Golden tests: every worked example and table of the Impression rulebook, quoted."""

from __future__ import annotations

import pytest

from projections.games.impression import data, effects, scoring
from tests.unit.impression.support import RULES, act, new_game, prompt


def test_two_lead_one_paper_and_nine_marks_are_worth_two_victory_points() -> None:
    # Scoring: "2 lead + 1 paper + 9 marks = 12, worth 2 victory points."
    seat = {"paper": 1, "lead": 2, "ink": 0, "marks": 9}
    assert scoring.resources_and_cash(seat) == 2


def test_five_workforce_costs_two_marks_in_wages() -> None:
    # Production Phase: "for every 2 workforce you must pay 1 mark, rounded down
    # (e.g. 5 workforce costs 2 marks)."
    state = new_game()
    ann = state["seats"][0]
    ann.update(workforce=5, marks=7)
    state["phase"] = "wages"
    act(state, None, type="pay_wages")
    assert ann["marks"] == 5


def test_unpaid_wages_cost_one_workforce_and_capacity_per_mark() -> None:
    # "If you cannot pay in full, your workforce drops by 1 step for each unpaid mark."
    state = new_game()
    ann = state["seats"][0]
    ann.update(workforce=6, capacity=6, marks=1)
    state["phase"] = "wages"
    act(state, None, type="pay_wages")
    assert (ann["marks"], ann["workforce"], ann["capacity"]) == (0, 4, 4)


def test_a_b_letter_with_city_tile_a_becomes_ab_and_earns_the_space() -> None:
    # Pair icon: "a spot "A" with lead letter "B" and city tile "A" becomes "AB"".
    state = new_game()
    seat = state["order"][0]
    p = state["seats"][seat]
    p["pairing"] = True
    p["discs"].append({"id": "D1", "used": False})  # city tile with letter A
    assert data.DISCS["D1"]["letter"] == "A" and data.STICKS[0][0]["letter"] == "A"
    effects.place_on_stick(p, "LB1", 0, always_bonus=False)  # lead letter B on spot A
    ink = p["ink"]
    assert p["board"][0]["bonus_taken"] is False
    act(state, seat, type="pair_city_tile", disc="D1", cell=0)
    assert p["board"][0]["paired"] == "D1"
    assert p["ink"] == ink + 1  # spot A's bonus: 1 ink
    assert effects.letters_on_board(p, "A") == 1 and effects.letters_on_board(p, "B") == 1


@pytest.mark.parametrize(("players", "removed"), [(2, 5), (3, 3), (4, 1)])
@pytest.mark.parametrize("seed", range(8))
def test_orders_removed_per_level_then_five_type_one_orders_on_display(
    players: int, removed: int, seed: int
) -> None:
    """Setup 5: "Remove some from the game based on player count: in a 2-player game remove
    5 of each type; in a 3-player game remove 3 of each type; in a 4-player game remove 1 of
    each type. Form 4 draw piles from what remains, then draw 5 tiles from the type I deck"
    - at every player count, whatever the shuffle."""
    state = new_game(players, seed=seed)
    for level in data.LEVELS:
        assert len(state["orders"]["removed"][level]) == removed
    in_play = sum(len(p) for p in state["orders"]["piles"].values()) + 5
    assert in_play == len(data.ORDERS) - 4 * removed
    assert [data.ORDERS[o]["level"] for o in state["orders"]["display"]] == ["I"] * 5


@pytest.mark.parametrize(
    ("section", "slot", "expected"),
    [(0, 0, 1), (0, 4, 5), (1, 4, 4), (2, 2, 1), (3, 1, 0), (3, 4, 2), (4, 4, 0)],
)
def test_order_and_contract_prices_by_position_and_sections_advanced(
    section: int, slot: int, expected: int
) -> None:
    # "each order or contract costs 1-5 marks depending on its position. Each section you've
    # advanced on the order track during the round reduces the cost by 1; on the rightmost
    # section, tiles are free."
    state = new_game()
    state["track"][0]["section"] = section
    assert effects.price(state, 0, slot, "order", free=False) == expected
    assert effects.price(state, 0, slot, "contract", free=False) == expected


@pytest.mark.parametrize("reached", [3, 6])
def test_workforce_three_and_six_each_place_an_assistant(reached: int) -> None:
    # "If your workforce reaches 3, place 1 assistant ...; the 6th workforce point gains you
    # another assistant."
    state = new_game()
    seat = state["order"][0]
    p = state["seats"][seat]
    p.update(workforce=reached - 1, capacity=reached - 1)
    effects.start_effects(state, seat, [{"icon": "workforce"}], __import__("random").Random(1))
    assert p["workforce"] == reached and p["capacity"] == reached
    assert prompt(state, seat) == "assistant"
    street = state["street_names"][0]
    act(state, seat, type="place_assistant", street=street, reward="ink")
    assert state["streets"][street] == {"owner": seat, "reward": "ink"}
    assert p["assistants"] == 4


def test_a_chain_technology_is_followed_to_a_lead_letter() -> None:
    # Technology: "follow the trail left ... until you reach one of your lead letters on the
    # left — the resource gain on that letter is the chain's final action."
    state = new_game()
    seat = state["order"][0]
    p = state["seats"][seat]
    p["workshop"]["W1"]["up"] = {"kind": "tech", "id": "BI1"}  # gain 1 paper + 1 lead
    p["stacks"][0].append("LA3")  # a letter giving 1 ink
    state["tech"]["II"]["display"][0] = "BII9"  # city tile icon as the new technology
    p["capacity"] = 3  # W4's capacity gain then steps onto a space without a reward
    before = (p["paper"], p["lead"], p["ink"])
    effects.start_effects(
        state, seat, [{"icon": "technology", "no_resources": True, "no_money": True}], _rng()
    )
    act(state, seat, type="buy_technology", level="II", row=0, space="W4", mode="up", relocate=None)
    # W4's covered action (capacity gain) resolved; the new tile's city-tile choice waits
    assert prompt(state, seat) == "city_tile"
    city = next(c for c, d in state["map_discs"].items() if d is not None)
    act(state, seat, type="take_city_tile", city=city)
    assert (p["paper"], p["lead"], p["ink"]) == (before[0] + 1, before[1] + 1, before[2] + 1)
    assert state["pending"][seat] == []


def test_a_chain_without_lead_letters_ends_at_column_one() -> None:
    # "If there is no lead letter to the left of your board, the chain ends at column 1."
    state = new_game()
    p = state["seats"][0]
    p["workshop"]["W1"]["up"] = {"kind": "tech", "id": "BI9"}  # gain 2 marks
    p["workshop"]["W4"]["up"] = {"kind": "tech", "id": "BII8"}
    # The lead letter is asked for when the chain gets there: with none, it fizzles then.
    assert effects.chain(p, "W7") == [
        {"icon": "gain_choice", "count": 2},
        {"icon": "gain", "gain": {"mark": 2}},
        {"icon": "use_letter"},
    ]


def _rng():  # type: ignore[no-untyped-def]
    import random

    return random.Random(3)


def test_the_rules_are_registered_for_two_to_four_players() -> None:
    assert (RULES.min_players, RULES.max_players) == (2, 4)
