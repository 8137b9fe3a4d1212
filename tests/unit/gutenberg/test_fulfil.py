"""Fulfilling orders ("Fulfill Orders": Orders, Printing, Refinements)."""

import pytest

from projections.games.gutenberg import data
from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    give_inks,
    give_order,
    in_round,
    refused,
    run_system,
)


def _fulfil_state(orders, types=None, inks=None, seat=0):
    state = at_row(in_round(4), "fulfill", [seat, (seat + 1) % 4])
    player = state["seats"][seat]
    for other in state["seats"]:
        for order in other["orders"]:
            state["decks"]["printing"]["discard_pile"].append(order["printing"])
            state["decks"]["refinement"]["discard_pile"].append(order["refinement"])
        other["orders"] = []
    for printing, refinement in orders:
        give_order(state, seat, printing, refinement)
    player["types"] = dict(types or {"A": 3, "I": 3, "O": 3, "U": 3})
    give_inks(state, seat, inks or {})
    return state, player


def _batch(*parts, ignore=None):
    return {
        "type": "fulfill_orders",
        "orders": [{"slot": s, "colours": c, "decorations": d} for s, c, d in parts],
        "ignore": ignore,
    }


def test_the_printing_part_alone_pays_its_guilders_and_both_cards_are_discarded():
    # "When the order is fulfilled, both cards are discarded, regardless of how much of the
    # refinement card was fulfilled."
    state, player = _fulfil_state([("P02", "R01")])
    act(state, 0, _batch((0, False, False)))
    assert player["guilders"] == 10 + data.PRINTING["P02"]["guilders"]
    assert player["fame"] == 0 and player["orders"] == []
    assert "P02" in state["decks"]["printing"]["discard_pile"]
    assert "R01" in state["decks"]["refinement"]["discard_pile"]


def test_types_are_kept_and_inks_go_back_to_the_bag():
    # "Types and specialties are never discarded." "Colors require discarding (to the bag)."
    state, player = _fulfil_state([("P02", "R01")], inks={"black": 1})
    bag_black = state["bag"]["contents"]["black"]
    act(state, 0, _batch((0, True, False)))
    assert player["types"] == {"A": 3, "I": 3, "O": 3, "U": 3}
    assert player["inks"] == {} and state["bag"]["contents"]["black"] == bag_black + 1
    assert player["fame"] == data.REFINEMENT["R01"]["colour_fame"]


def test_both_refinement_parts_give_the_bonus_reward():
    # "Fulfilling both of the requirements gives an additional bonus."
    state, player = _fulfil_state([("P02", "R06")], inks={"black": 1, "blue": 1})
    refinement = data.REFINEMENT["R06"]
    player["specialties"].update(refinement["decorations"])
    act(state, 0, _batch((0, True, True)))
    bonus = refinement["bonus"]
    assert bonus == {"kind": "guilders", "amount": 2}
    assert player["fame"] == refinement["colour_fame"] + refinement["decoration_fame"]
    assert player["guilders"] == 10 + data.PRINTING["P02"]["guilders"] + 2


def test_one_part_of_a_refinement_gives_no_bonus():
    state, player = _fulfil_state([("P02", "R06")], inks={"black": 1, "blue": 1})
    act(state, 0, _batch((0, True, False)))
    assert player["guilders"] == 10 + data.PRINTING["P02"]["guilders"]


def test_a_type_serves_only_one_order_in_a_round():
    # "A given type can be assigned to only 1 order in a round."
    state, _ = _fulfil_state([("P01", "R01"), ("P02", "R02")], types={"A": 2, "I": 1})
    assert refused(state, 0, _batch((0, False, False), (1, False, False))) == "types_missing"
    legal = [a for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "fulfill_orders"]
    assert {tuple(p["slot"] for p in a["orders"]) for a in legal} == {(0,), (1,)}


def test_rewards_of_one_order_cannot_pay_for_another():
    # "Orders are fulfilled simultaneously. You cannot use rewards from 1 order to fulfill
    # other orders." R01's bonus is an ink; it cannot pay R02's colour in the same batch.
    state, player = _fulfil_state([("P02", "R01"), ("P03", "R02")], inks={"black": 1})
    player["specialties"]["typesetting"] = 2
    assert refused(state, 0, _batch((0, True, True), (1, True, False))) == "inks_missing"


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "fulfill_orders", "orders": [], "ignore": None}, "no_orders_named"),
        (_batch((3, False, False)), "no_such_order"),
        (_batch((0, False, False), (0, False, False)), "order_named_twice"),
        (_batch((0, False, True)), "specialty_too_low"),
        (_batch((0, True, False)), "inks_missing"),
        (
            _batch((0, False, False), (1, False, False), ignore={"slot": 0, "letter": "A"}),
            "cannot_ignore_type",
        ),
    ],
)
def test_a_batch_is_checked_before_anything_is_paid(action, code):
    state, _ = _fulfil_state([("P02", "R01"), ("P03", "R02")])
    assert refused(state, 0, action) == code


def test_a_refinement_card_without_colours_has_no_colour_part(monkeypatch):
    card = {**data.REFINEMENT["R01"], "colours": {}}
    monkeypatch.setitem(data.REFINEMENT, "R01", card)
    state, _ = _fulfil_state([("P02", "R01")])
    assert refused(state, 0, _batch((0, True, False))) == "no_colour_part"


def test_unfulfilled_orders_stay_and_fulfilling_is_optional():
    state, player = _fulfil_state([("P02", "R01")])
    act(state, 0, {"type": "pass"})
    assert len(player["orders"]) == 1 and GUTENBERG.status(state)["to_act"] == [1]


def test_orders_are_fulfilled_clockwise_from_the_first_player():
    state = in_round(3)
    state["first_player"] = 2
    state["phase"], state["queue"], state["turn"] = "patronage", [], 0
    run_system(state)
    assert state["phase"] == "fulfill" and state["queue"] == [2, 0, 1]


def test_the_gear_type_bonus_counts_each_order_showing_the_type_once():
    # "If an order requires more than 1 of the indicated type, only 2 points are gained."
    from tests.unit.gutenberg.helpers import put_gear

    state, player = _fulfil_state([("P01", "R01"), ("P02", "R02")])
    put_gear(state, 0, 0, "G05", 1)  # 2 fame per fulfilled order showing type A
    act(state, 0, _batch((0, False, False), (1, False, False)))
    assert player["fame"] == 4 and player["gear_uses"][0] == 1


def test_the_gear_specialty_bonus_counts_orders_fulfilled_with_that_decoration():
    from tests.unit.gutenberg.helpers import put_gear

    state, player = _fulfil_state([("P02", "R01"), ("P03", "R02")])
    player["specialties"].update(typesetting=6, woodcutting=6)
    put_gear(state, 0, 0, "G09", 1)  # 2 fame per order fulfilled with typesetting
    act(state, 0, _batch((0, False, True), (1, False, True)))
    decoration = (
        data.REFINEMENT["R01"]["decoration_fame"] + data.REFINEMENT["R02"]["decoration_fame"]
    )
    assert player["fame"] == decoration + 2
