"""Gears: turning ("Turn Gears") and every one of the thirteen sector symbols ("Gear Rewards")."""

import pytest

from projections.games.gutenberg import data, gears
from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    give_inks,
    in_round,
    put_gear,
    refused,
    run_system,
)


def _with_gear(gear, rotation, seat=0):
    state = in_round(4)
    put_gear(state, seat, 0, gear, rotation)
    return state


def _sector(gear, rotation):
    return data.GEARS[gear]["sectors"][rotation]["symbol"]


def test_the_top_gear_turns_clockwise_and_meshed_gears_turn_the_other_way():
    # "Each player must turn the top gear on their printing house board clockwise 1 sector."
    state = in_round(2)
    for axle, gear in enumerate(("G01", "G02", "G03")):
        put_gear(state, 0, axle, gear, 0)
    state["phase"] = "round_end"
    state["queue"] = []
    assert run_system(state)[:2] == ["end_of_round", "turn_gears"]
    assert [a["rotation"] for a in state["seats"][0]["gears"]] == [1, 3, 1]


def test_gears_do_not_turn_in_the_first_round():
    state = in_round(2)
    assert state["phase"] == "plan" and state["round"] == 1


def test_exchange_an_ink_for_another_from_the_bag():
    state = _with_gear("G01", 0)  # swap_ink
    give_inks(state, 0, {"red": 1})
    act(state, 0, {"type": "activate_gear", "axle": 0, "give": "red", "take": ["blue"]})
    assert state["seats"][0]["inks"] == {"blue": 1}
    assert state["seats"][0]["gear_uses"] == [1, 0, 0]


def test_exchange_a_type_for_another_from_the_pool():
    state = _with_gear("G02", 0)  # swap_type
    act(state, 0, {"type": "activate_gear", "axle": 0, "give": "A", "take": ["U"]})
    assert state["seats"][0]["types"] == {"I": 1, "O": 1, "U": 1}


def test_raise_the_lowest_specialty_choosing_among_ties():
    state = _with_gear("G03", 0)  # lowest_specialty
    state["seats"][0]["specialties"].update(typesetting=2, woodcutting=1, binding=1, illuminating=3)
    choices = [
        a["specialty"] for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "activate_gear"
    ]
    assert choices == ["woodcutting", "binding"]
    assert refused(state, 0, {"type": "activate_gear", "axle": 0, "specialty": "typesetting"}) == (
        "gear_reward_unavailable"
    )
    act(state, 0, {"type": "activate_gear", "axle": 0, "specialty": "binding"})
    assert state["seats"][0]["specialties"]["binding"] == 2


def test_fame_equal_to_the_current_round():
    state = _with_gear("G01", 2)  # fame_round
    state["round"] = 4
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert state["seats"][0]["fame"] == 4


def test_a_gear_takes_an_order():
    state = _with_gear("G02", 2)  # take_order
    act(state, 0, {"type": "activate_gear", "axle": 0}, seed=5)
    assert state["pending"][0]["kind"] == "order" and state["pending"][0]["seat"] == 0


@pytest.mark.parametrize(("choice", "fame", "guilders"), [("fame", 3, 10), ("guilders", 0, 15)])
def test_discard_a_type_for_three_fame_or_five_guilders(choice, fame, guilders):
    state = _with_gear("G03", 2)  # discard_type
    act(state, 0, {"type": "activate_gear", "axle": 0, "give": "O", "choice": choice})
    player = state["seats"][0]
    assert (player["fame"], player["guilders"], player["types"]) == (
        fame,
        guilders,
        {"A": 1, "I": 1},
    )


def test_gain_an_ink_of_the_indicated_colour():
    state = _with_gear("G01", 1)  # gain_ink black
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert state["seats"][0]["inks"] == {"black": 1}


def test_exchange_one_ink_for_any_two_and_the_same_colour_may_come_back():
    # "The player can re-take the color they put in the bag."
    state = _with_gear("G04", 2)  # ink_for_two
    give_inks(state, 0, {"gold": 1})
    act(state, 0, {"type": "activate_gear", "axle": 0, "give": "gold", "take": ["gold", "red"]})
    assert state["seats"][0]["inks"] == {"gold": 1, "red": 1}


def test_buy_the_indicated_type_three_guilders_cheaper():
    state = _with_gear("G01", 3)  # buy_type_discount O
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert state["seats"][0]["guilders"] == 9  # the 4th type costs 4, less 3
    assert state["seats"][0]["types"]["O"] == 2


def test_advance_the_indicated_specialty():
    state = _with_gear("G03", 3)  # specialty typesetting
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert state["seats"][0]["specialties"]["typesetting"] == 1


@pytest.mark.parametrize(
    ("gear", "rotation", "shows"),
    [("G05", 1, "type A"), ("G09", 1, "specialty typesetting"), ("G09", 3, "ink blue")],
)
def test_fulfilment_sectors_are_not_activated_by_hand(gear, rotation, shows):
    state = _with_gear(gear, rotation)
    assert _sector(gear, rotation).startswith("fame_per_")
    assert not [a for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "activate_gear"]
    assert refused(state, 0, {"type": "activate_gear", "axle": 0}) == "gear_reward_unavailable"


def test_a_gear_gives_its_reward_once_per_round():
    # "Rewards can only be gained once per round."
    state = _with_gear("G01", 2)
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert refused(state, 0, {"type": "activate_gear", "axle": 0}) == "gear_already_used"
    assert refused(state, 0, {"type": "activate_gear", "axle": 1}) == "no_gear_there"


def test_used_gear_markers_come_off_at_the_end_of_the_round():
    state = _with_gear("G01", 2)
    act(state, 0, {"type": "activate_gear", "axle": 0})
    state["phase"], state["queue"] = "round_end", []
    run_system(state)
    assert state["seats"][0]["gear_uses"] == [0, 0, 0]


def test_schoyffer_uses_one_gear_twice_but_still_three_gear_actions_at_most():
    # "This player may use the active sector of 1 gear 2 times in a round. They may still
    # only do 3 gear actions in a round."
    state = _with_gear("G01", 2)
    player = state["seats"][0]
    player["character"] = "schoyffer"
    put_gear(state, 0, 1, "G04", 0)  # fame_round
    put_gear(state, 0, 2, "G18", 0)  # fame_round
    act(state, 0, {"type": "activate_gear", "axle": 0})
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert refused(state, 0, {"type": "activate_gear", "axle": 0}) == "gear_already_used"
    act(state, 0, {"type": "activate_gear", "axle": 1})
    assert refused(state, 0, {"type": "activate_gear", "axle": 2}) == "gear_already_used"
    assert player["fame"] == 3 and sum(player["gear_uses"]) == gears.MAX_GEAR_USES


def test_without_schoyffer_no_gear_is_used_twice():
    state = _with_gear("G01", 2)
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert not gears.uses_left(state["seats"][0], 0)


def test_a_gear_can_be_used_during_another_players_turn():
    # "Players can gain the bonus from these sectors at any time."
    state = at_row(_with_gear("G01", 2), "inks", [1])
    assert {"type": "activate_gear", "axle": 0} in GUTENBERG.legal_actions(state, 0)
    act(state, 0, {"type": "activate_gear", "axle": 0})
    assert GUTENBERG.status(state)["to_act"] == [1]
