"""The Turmoil Expansion (option ``turmoil``): markers entering and moving by dice, and what
each marker does to an Ark on its star (docs/rules/impendium.md, "Turmoil Expansion")."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.games.impendium import IMPENDIUM
from projections.ruleset import IllegalAction
from tests.unit.impendium.helpers import Dice, act, auto, fresh, put_star, refused, star_ids, table

State = dict[str, Any]

#: Eight star cards round the federation: rows (north to south) y=-2: x 0, 2; y=0: x -2, 0,
#: 2, 4; y=2: x -2, 0, 2.
EIGHT = ["2,0", "4,0", "-2,0", "0,2", "0,-2", "2,2", "2,-2", "-2,2"]


def turmoil_table(players: int = 2, stars: list[str] = EIGHT, **markers: str) -> State:
    """Seat 0's turn with eight stars on the map and the markers where a test puts them."""
    state = table(players, turmoil=True)
    cards = star_ids("red") + star_ids("blue")
    for position, card in zip(stars, cards, strict=False):
        put_star(state, position, card)
    if markers:
        state["turmoil"]["entered"] = True
        state["turmoil"]["markers"].update(markers)
    return state


def before_turns(state: State) -> State:
    """Back to the moment before the starting player's turn, when the markers move."""
    state["phase"] = "turmoil"
    state["turn"] = None
    return state


def test_turmoil_is_off_by_default_and_a_game_without_it_carries_no_markers() -> None:
    state = fresh()
    assert state["options"]["turmoil"] is False
    assert "turmoil" not in state
    assert "turmoil" not in IMPENDIUM.view(state, 0)


def test_turmoil_must_be_true_or_false() -> None:
    with pytest.raises(IllegalAction) as caught:
        fresh(turmoil="yes")
    assert caught.value.code == "bad_options"


def test_the_markers_wait_until_the_map_holds_eight_star_cards() -> None:
    state = before_turns(turmoil_table(stars=EIGHT[:7]))
    assert auto(state, Dice()) == "move_turmoil"
    assert state["turmoil"]["entered"] is False
    assert state["phase"] == "actions"


def test_with_eight_star_cards_each_marker_enters_by_a_row_die_and_a_column_die() -> None:
    state = before_turns(turmoil_table())
    state["arks"] = ["1,0", "1,0"]
    auto(state, Dice(2, 3, 1, 1, 6, 4, 4, 5))
    assert state["turmoil"]["markers"] == {
        "raiders": "2,0",
        "neutron_storm": "0,-2",
        "merchants": "-2,2",
        "mercenaries": "0,-2",
    }
    assert state["turmoil"]["last_rolls"]["merchants"] == [6, 4]
    assert state["turn"]["seat"] == 0


def test_each_marker_moves_one_card_in_its_die_direction_and_five_or_six_stays() -> None:
    state = before_turns(
        turmoil_table(raiders="0,0", neutron_storm="0,0", merchants="0,0", mercenaries="0,0")
    )
    state["arks"] = ["1,0", "1,0"]
    auto(state, Dice(1, 2, 3, 5))
    assert state["turmoil"]["markers"] == {
        "raiders": "0,-2",
        "neutron_storm": "2,0",
        "merchants": "0,2",
        "mercenaries": "0,0",
    }


def test_a_marker_leaving_the_map_enters_back_on_the_far_side() -> None:
    state = before_turns(
        turmoil_table(raiders="4,0", neutron_storm="0,2", merchants="-2,0", mercenaries="0,-2")
    )
    state["arks"] = ["1,0", "1,0"]
    auto(state, Dice(2, 3, 4, 1))
    assert state["turmoil"]["markers"] == {
        "raiders": "-2,0",
        "neutron_storm": "0,-2",
        "merchants": "4,0",
        "mercenaries": "0,2",
    }


def test_a_marker_passes_over_empty_places_to_the_next_card() -> None:
    state = before_turns(
        turmoil_table(raiders="-4,-2", neutron_storm="0,0", merchants="0,0", mercenaries="0,0")
    )
    put_star(state, "-4,-2", star_ids("green")[0])
    state["arks"] = ["1,0", "1,0"]
    auto(state, Dice(2, 5, 5, 5))
    assert state["turmoil"]["markers"]["raiders"] == "0,-2"


def test_a_neutron_storm_arriving_costs_every_ark_on_the_star_three_life_forms() -> None:
    state = before_turns(
        turmoil_table(raiders="0,0", neutron_storm="0,0", merchants="0,0", mercenaries="0,0")
    )
    state["arks"] = ["2,0", "2,0"]
    state["seats"][1]["resources"]["life_forms"] = 1
    auto(state, Dice(5, 2, 5, 5))
    assert state["seats"][0]["resources"]["life_forms"] == 2
    assert state["seats"][1]["resources"]["life_forms"] == 0


def test_an_ark_entering_the_storms_star_loses_three_life_forms() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="2,0", merchants="0,-2", mercenaries="0,-2")
    state["arks"][0] = "1,0"
    act(state, 0, "move", to="2,0")
    assert state["seats"][0]["resources"]["life_forms"] == 2
    assert state["seats"][0]["resources"]["hydrogen"] == 4


def test_raiders_arriving_beat_a_player_who_rolls_lower_and_take_one_of_each() -> None:
    state = before_turns(
        turmoil_table(raiders="0,0", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,-2")
    )
    state["arks"] = ["2,0", "1,0"]
    state["seats"][0]["resources"]["water"] = 0
    # Dice: raiders east, the others stay; then the player's die 2 (+0) against the raiders' 5.
    auto(state, Dice(2, 5, 5, 5, 2, 5))
    assert state["seats"][0]["resources"] == {
        "life_forms": 4,
        "water": 0,
        "artifacts": 4,
        "hydrogen": 4,
    }
    assert state["turmoil"]["markers"]["raiders"] == "2,0"
    assert state["turmoil"]["last_battle"]["winner"] == "raiders"


def test_a_player_who_beats_the_raiders_drives_them_off_the_map_until_their_next_move() -> None:
    state = before_turns(
        turmoil_table(raiders="0,0", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,-2")
    )
    state["arks"] = ["2,0", "1,0"]
    auto(state, Dice(2, 5, 5, 5, 3, 6))  # 3 + lowest resource 5 beats 6
    assert state["turmoil"]["markers"]["raiders"] is None
    assert state["seats"][0]["resources"]["life_forms"] == 5
    # Next round they reestablish with a row die and a column die.
    before_turns(state)
    auto(state, Dice(1, 2, 5, 5, 5))
    assert state["turmoil"]["markers"]["raiders"] == "2,-2"


def test_a_tie_with_the_raiders_changes_nothing() -> None:
    state = before_turns(
        turmoil_table(raiders="0,0", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,-2")
    )
    state["arks"] = ["2,0", "1,0"]
    auto(state, Dice(2, 5, 5, 5, 1, 6))
    assert state["turmoil"]["markers"]["raiders"] == "2,0"
    assert state["seats"][0]["resources"]["life_forms"] == 5
    assert state["turmoil"]["last_battle"]["winner"] is None


def test_an_ark_entering_the_raiders_star_waits_for_the_automatic_battle() -> None:
    state = turmoil_table(raiders="2,0", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,-2")
    state["arks"][0] = "1,0"
    state["seats"][0]["resources"]["artifacts"] = 0
    act(state, 0, "move", to="2,0")
    assert IMPENDIUM.system_action(state) == {"type": "raiders_battle"}
    assert IMPENDIUM.status(state)["to_act"] == []
    assert IMPENDIUM.legal_actions(state, 0) == []
    assert IMPENDIUM.reveals_hidden(state, {"type": "raiders_battle", "seat": None})
    refused(state, 0, {"type": "end_turn"}, "awaiting_choice")
    auto(state, Dice(1, 4))
    assert state["seats"][0]["resources"]["life_forms"] == 4
    assert state["pending"] == []
    act(state, 0, "end_turn")


def test_merchants_trade_two_of_one_kind_for_one_of_another() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,0", mercenaries="0,-2")
    act(state, 0, "trade_with_merchants", give={"water": 4}, get={"hydrogen": 1, "artifacts": 1})
    act(state, 0, "trade_with_merchants", give={"life_forms": 1, "water": 1}, get={"hydrogen": 1})
    assert state["seats"][0]["resources"] == {
        "life_forms": 4,
        "water": 0,
        "artifacts": 6,
        "hydrogen": 7,
    }
    assert state["turn"]["used"] == []


def test_the_merchants_are_listed_as_two_for_one_trades_on_their_star() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,0", mercenaries="0,-2")
    trades = [a for a in IMPENDIUM.legal_actions(state, 0) if a["type"] == "trade_with_merchants"]
    assert len(trades) == 12
    assert {"type": "trade_with_merchants", "give": {"water": 2}, "get": {"hydrogen": 1}} in trades
    assert not [a for a in IMPENDIUM.legal_actions(state, 1) if a["type"].endswith("merchants")]


def test_trading_with_merchants_needs_them_on_your_star() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="2,0", mercenaries="0,-2")
    refused(
        state,
        0,
        {"type": "trade_with_merchants", "give": {"water": 2}, "get": {"hydrogen": 1}},
        "no_merchants_here",
    )


@pytest.mark.parametrize(
    ("give", "get"),
    [
        ({"water": 3}, {"hydrogen": 1}),
        ({"water": 2}, {"water": 1}),
        ({"water": 2}, {}),
        ({"water": 2}, {"hydrogen": 0}),
    ],
)
def test_a_merchant_trade_that_is_not_two_for_one_of_other_kinds_is_refused(
    give: dict[str, int], get: dict[str, int]
) -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,0", mercenaries="0,-2")
    refused(
        state, 0, {"type": "trade_with_merchants", "give": give, "get": get}, "bad_merchant_trade"
    )


def test_a_merchant_trade_beyond_your_stock_is_refused() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,0", mercenaries="0,-2")
    refused(
        state,
        0,
        {"type": "trade_with_merchants", "give": {"water": 6}, "get": {"hydrogen": 3}},
        "insufficient_resources",
    )


def test_merchants_and_mercenaries_do_not_exist_without_the_turmoil_option() -> None:
    state = table()
    refused(
        state,
        0,
        {"type": "trade_with_merchants", "give": {"water": 2}, "get": {"hydrogen": 1}},
        "turmoil_not_in_play",
    )
    refused(
        state,
        0,
        {"type": "hire_mercenaries", "pay": "hydrogen", "target": 1},
        "turmoil_not_in_play",
    )


def test_hiring_the_mercenaries_costs_three_and_their_dice_only_attack_comes_next() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    state["arks"][1] = "4,0"
    state["seats"][1]["resources"] = {"life_forms": 1, "water": 3, "artifacts": 2, "hydrogen": 3}
    act(state, 0, "hire_mercenaries", pay="artifacts", target=1)
    assert state["seats"][0]["resources"]["artifacts"] == 2
    assert IMPENDIUM.system_action(state) == {"type": "mercenary_battle"}
    assert auto(state, Dice(6, 2)) == "mercenary_battle"
    assert state["turmoil"]["last_battle"]["winner"] == "mercenaries"
    assert state["turmoil"]["last_battle"]["spoils"] == 4


def test_mercenaries_who_win_take_the_difference_of_the_dice_for_their_hirer() -> None:
    """ "Mercenaries = if on a star with the player, this player can pay 3 artifacts or
    hydrogen to hire them for an immediate attack on another player (mercenary battles are
    executed ONLY with the dice, no resource amount added)"; in an attack "The winner then
    takes resources from the losing player equal to THE DIFFERENCE OF THE DICE ROLL" (Move).
    The hired attack is the hirer's: the hirer takes the spoils, and chooses them."""
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    state["arks"][1] = "4,0"  # "an immediate attack on another player", wherever they are
    state["seats"][1]["resources"] = {"life_forms": 1, "water": 3, "artifacts": 2, "hydrogen": 3}
    act(state, 0, "hire_mercenaries", pay="artifacts", target=1)
    auto(state, Dice(6, 2))
    assert state["pending"] == [{"kind": "spoils", "seat": 0, "from": 1, "amount": 4}]
    spoils = {"type": "take_spoils", "resources": {"water": 3, "artifacts": 1}}
    assert spoils in IMPENDIUM.legal_actions(state, 0)
    act(state, 0, "take_spoils", resources={"water": 3, "artifacts": 1})
    assert state["seats"][0]["resources"] == {
        "life_forms": 5,
        "water": 8,
        "artifacts": 3,
        "hydrogen": 5,
    }
    assert state["seats"][1]["resources"] == {
        "life_forms": 1,
        "water": 0,
        "artifacts": 1,
        "hydrogen": 3,
    }
    assert state["pending"] == []


def test_mercenaries_take_for_their_hirer_no_more_than_the_target_holds() -> None:
    """ "the most you could possibly take is 5" (Move), and never more than the loser has."""
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    state["seats"][1]["resources"] = {"life_forms": 0, "water": 1, "artifacts": 0, "hydrogen": 1}
    act(state, 0, "hire_mercenaries", pay="hydrogen", target=1)
    auto(state, Dice(6, 1))
    assert state["pending"] == [{"kind": "spoils", "seat": 0, "from": 1, "amount": 2}]
    assert state["turmoil"]["last_battle"]["spoils"] == 2


def test_a_target_who_beats_the_mercenaries_gains_nothing() -> None:
    """ "No resources will be gained if the" (cut off): the one outcome the attack's rule
    cannot settle is the mercenaries losing - "The winner then takes resources from the
    losing player", and the mercenaries hold none - so the target who wins gains nothing
    and the hirer loses only the fee (docs/rules/impendium.md, "Held-out rules review")."""
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    act(state, 0, "hire_mercenaries", pay="hydrogen", target=1)
    auto(state, Dice(2, 6))
    assert state["pending"] == []
    assert state["seats"][1]["resources"] == {r: 5 for r in state["seats"][1]["resources"]}
    assert state["seats"][0]["resources"] == {
        "life_forms": 5,
        "water": 5,
        "artifacts": 5,
        "hydrogen": 2,
    }
    assert state["turmoil"]["last_battle"]["winner"] == "target"


def test_mercenaries_who_roll_no_higher_than_the_target_do_nothing() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    act(state, 0, "hire_mercenaries", pay="hydrogen", target=1)
    auto(state, Dice(3, 3))
    assert state["seats"][1]["resources"] == {r: 5 for r in state["seats"][1]["resources"]}
    assert state["seats"][0]["resources"]["hydrogen"] == 2


def test_the_mercenaries_are_hired_once_a_turn() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    act(state, 0, "hire_mercenaries", pay="hydrogen", target=1)
    auto(state, Dice(1, 1))
    refused(
        state,
        0,
        {"type": "hire_mercenaries", "pay": "artifacts", "target": 1},
        "mercenaries_already_hired",
    )
    assert not [a for a in IMPENDIUM.legal_actions(state, 0) if a["type"] == "hire_mercenaries"]


def test_hiring_mercenaries_needs_them_on_your_star() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="2,0")
    refused(
        state,
        0,
        {"type": "hire_mercenaries", "pay": "hydrogen", "target": 1},
        "no_mercenaries_here",
    )


def test_mercenaries_are_paid_in_artifacts_or_hydrogen_only() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    refused(
        state, 0, {"type": "hire_mercenaries", "pay": "water", "target": 1}, "bad_mercenary_payment"
    )


def test_mercenaries_attack_another_player_never_their_employer() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    refused(state, 0, {"type": "hire_mercenaries", "pay": "hydrogen", "target": 0}, "bad_target")
    refused(state, 0, {"type": "hire_mercenaries", "pay": "hydrogen", "target": 4}, "bad_target")


def test_hiring_mercenaries_without_three_of_the_payment_is_refused() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    state["seats"][0]["resources"]["hydrogen"] = 2
    refused(
        state,
        0,
        {"type": "hire_mercenaries", "pay": "hydrogen", "target": 1},
        "insufficient_resources",
    )
    hires = [a for a in IMPENDIUM.legal_actions(state, 0) if a["type"] == "hire_mercenaries"]
    assert hires == [{"type": "hire_mercenaries", "pay": "artifacts", "target": 1}]


def test_the_turmoil_choices_have_schemas_and_timeline_lines() -> None:
    schemas = IMPENDIUM.action_schemas()
    assert (
        schemas["trade_with_merchants"]().validate(
            {"type": "trade_with_merchants", "give": {"water": 2}, "get": {"hydrogen": 1}}
        )
        == {}
    )
    assert schemas["hire_mercenaries"]().validate(
        {"type": "hire_mercenaries", "pay": "gold", "target": 1}
    )
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    line = IMPENDIUM.summarize(
        state, {"type": "hire_mercenaries", "pay": "hydrogen", "target": 1, "seat": 0}
    )
    assert line == "Ann paid 3 hydrogen to hire the mercenaries against Ben"
    assert IMPENDIUM.summarize(state, {"type": "move_turmoil", "seat": None}) == (
        "The turmoil markers move"
    )


def test_every_turmoil_step_that_rolls_dice_reveals_hidden_information() -> None:
    state = turmoil_table(raiders="0,-2", neutron_storm="0,-2", merchants="0,-2", mercenaries="0,0")
    for step in ("move_turmoil", "raiders_battle", "mercenary_battle"):
        assert IMPENDIUM.reveals_hidden(state, {"type": step, "seat": None})
    assert IMPENDIUM.view(state, 1)["turmoil"]["markers"]["mercenaries"] == "0,0"


def test_a_seeded_turmoil_round_brings_the_markers_in_and_plays_on() -> None:
    """Scenario: eight star cards, the markers roll in, a storm strikes, the player trades
    with the merchants, hires the mercenaries, takes the spoils they win and ends the turn;
    the next player moves."""
    state = before_turns(turmoil_table(players=3))
    state["arks"] = ["0,-2", "2,0", "1,0"]
    # Raiders row 1 col 4 (4,0); storm row 2 col 3 (2,0, where Ben's Ark is); merchants and
    # mercenaries row 1 col 1 (0,-2, where Ann's Ark is).
    auto(state, Dice(2, 4, 2, 3, 1, 1, 1, 1))
    assert state["seats"][1]["resources"]["life_forms"] == 2
    act(state, 0, "trade_with_merchants", give={"water": 2}, get={"artifacts": 1})
    act(state, 0, "hire_mercenaries", pay="artifacts", target=2)
    auto(state, Dice(5, 1))
    act(state, 0, "take_spoils", resources={"life_forms": 4})
    assert sum(state["seats"][2]["resources"].values()) == 16
    assert state["seats"][0]["resources"]["life_forms"] == 9
    act(state, 0, "pass", rng=random.Random(3))
    assert state["turn"]["seat"] == 1
    assert state["turn"]["hired"] is False
    act(state, 1, "move", to="3,0")
    assert state["arks"][1] == "3,0"


def test_a_recall_onto_the_federation_meets_the_markers_waiting_there() -> None:
    state = turmoil_table(raiders="0,0", neutron_storm="0,0", merchants="0,-2", mercenaries="0,-2")
    state["arks"][1] = "1,0"
    state["seats"][1]["hand"] = ["D33"]
    act(state, 1, "play_diplomacy", card="D33")
    assert state["seats"][1]["resources"]["life_forms"] == 2
    assert IMPENDIUM.system_action(state) == {"type": "raiders_battle"}
    auto(state, Dice(6, 1))
    assert state["turmoil"]["markers"]["raiders"] is None


def test_markers_stand_and_strike_on_space_dust_as_on_a_star() -> None:
    state = before_turns(
        turmoil_table(raiders="0,-2", neutron_storm="0,0", merchants="0,-2", mercenaries="0,-2")
    )
    state["board"]["2,0"] = {"kind": "dust"}
    state["arks"] = ["2,0", "1,0"]
    auto(state, Dice(5, 2, 5, 5))
    assert state["turmoil"]["markers"]["neutron_storm"] == "2,0"
    assert state["seats"][0]["resources"]["life_forms"] == 2


def test_a_harbinger_is_no_place_for_a_marker_which_passes_over_it() -> None:
    state = before_turns(
        turmoil_table(raiders="0,-2", neutron_storm="0,0", merchants="0,-2", mercenaries="0,-2")
    )
    state["board"]["2,0"] = {"kind": "harbinger", "card": "H01", "discs": [None, None, None]}
    state["arks"] = ["1,0", "1,0"]
    auto(state, Dice(5, 2, 5, 5))
    assert state["turmoil"]["markers"]["neutron_storm"] == "4,0"
