"""Iconography: one handler per icon, each effect and each way its choice is refused."""

from __future__ import annotations

from typing import Any

import pytest

from projections.games.impression import data, effects
from tests.unit.impression.support import (
    RULES,
    SEAT,
    act,
    me,
    prompt,
    queue,
    refused,
    turn_game,
)


def give_factory(state: dict[str, Any], factory: str, space: str = "W1") -> None:
    me(state)["workshop"][space]["up"] = {"kind": "factory", "id": factory}


def factory_with(trigger: dict[str, Any]) -> str:
    return next(f for f, tile in data.FACTORIES.items() if tile["trigger"] == trigger)


# -- automatic icons ---------------------------------------------------------------


def test_resource_icons_gain_from_the_supply() -> None:
    state = turn_game()
    queue(state, {"icon": "gain", "gain": {"paper": 2, "mark": 1, "vp": 3}})
    assert (me(state)["paper"], me(state)["marks"], me(state)["vp"]) == (3, 4, 3)


def test_capacity_past_the_end_of_its_track_is_one_mark_each() -> None:
    state = turn_game()
    me(state)["capacity"] = data.CAPACITY_MAX
    queue(state, {"icon": "capacity"}, {"icon": "capacity"})
    assert (me(state)["capacity"], me(state)["marks"]) == (data.CAPACITY_MAX, 5)
    queue(state, {"icon": "capacity_down"})
    assert me(state)["capacity"] == data.CAPACITY_MAX - 1


def test_the_capacity_gain_icon_earns_the_space_it_steps_onto() -> None:
    state = turn_game()
    queue(state, {"icon": "capacity_gain"})  # 2 -> 3: the space shows 1 paper
    assert (me(state)["capacity"], me(state)["paper"]) == (3, 2)


def test_workforce_moves_capacity_with_it_and_past_the_end_is_a_victory_point() -> None:
    state = turn_game()
    queue(state, {"icon": "workforce"})
    assert (me(state)["workforce"], me(state)["capacity"]) == (3, 3)
    act(state, SEAT, type="decline")  # the assistant workforce 3 brings
    queue(state, {"icon": "workforce_down"})
    assert (me(state)["workforce"], me(state)["capacity"]) == (2, 2)
    me(state)["workforce"] = data.WORKFORCE_MAX
    queue(state, {"icon": "workforce"})
    assert (me(state)["workforce"], me(state)["vp"]) == (data.WORKFORCE_MAX, 1)


def test_a_workforce_factory_pays_a_mark_for_every_gain() -> None:
    state = turn_game()
    give_factory(state, factory_with({"on": "workforce_gained"}))
    me(state)["assistant_levels"] = [3]  # the assistant at 3 is already placed
    queue(state, {"icon": "workforce"})
    assert me(state)["marks"] == 4


def test_the_pair_icon_teaches_pairing() -> None:
    state = turn_game()
    queue(state, {"icon": "pair"})
    assert me(state)["pairing"] is True


# -- resources of your choice and lead letters --------------------------------------


def test_a_generic_resource_icon_lets_you_choose_each_resource() -> None:
    state = turn_game()
    queue(state, {"icon": "gain_choice", "count": 2})
    act(state, SEAT, type="choose_resource", resource="ink")
    assert prompt(state, SEAT) == "gain_choice"
    refused(state, SEAT, "unknown_resource", type="choose_resource", resource="gold")
    act(state, SEAT, type="choose_resource", resource="lead")
    assert (me(state)["ink"], me(state)["lead"], prompt(state, SEAT)) == (2, 2, None)


def test_a_lead_letter_action_takes_the_top_letters_resources() -> None:
    state = turn_game()
    me(state)["stacks"] = [["LA1", "LA3"], []]  # top gives 1 ink; the covered one is unusable
    queue(state, {"icon": "use_letter"})
    assert (me(state)["ink"], me(state)["paper"], prompt(state, SEAT)) == (2, 1, None)


def test_with_two_stacks_you_choose_which_top_letter_to_use() -> None:
    state = turn_game()
    me(state)["stacks"] = [["LA1"], ["LA2"]]
    queue(state, {"icon": "use_letter"})
    refused(state, SEAT, "no_letter_there", type="use_letter", stack=4)
    act(state, SEAT, type="use_letter", stack=1)
    assert me(state)["lead"] == 2


def test_without_letters_the_lead_letter_action_fizzles() -> None:
    state = turn_game()
    queue(state, {"icon": "use_letter"})
    assert prompt(state, SEAT) is None


# -- trade ---------------------------------------------------------------------------


def trade_game(tiles: list[str]) -> dict[str, Any]:
    state = turn_game()
    state["trading"]["draw_pile"] = [
        t for t in state["trading"]["draw_pile"] + state["trading"]["display"] if t not in tiles
    ]
    state["trading"]["display"] = list(tiles)
    queue(state, {"icon": "trade"})
    return state


def test_the_one_to_two_conversion() -> None:
    state = trade_game(["T1", "T2", "T3"])
    act(state, SEAT, type="trade_convert", give="paper", take=["ink", "lead"])
    assert (me(state)["paper"], me(state)["lead"], me(state)["ink"]) == (0, 2, 2)
    assert prompt(state, SEAT) is None


def test_a_two_way_tile_repeats_and_goes_to_the_discard_pile() -> None:
    state = trade_game(["T1", "T2", "T3"])  # T1: 1 paper <-> 1 lead, up to 3 times
    me(state)["lead"] = 3
    act(state, SEAT, type="trade_tile", tile="T1", reverse=True, times=3)
    assert (me(state)["paper"], me(state)["lead"]) == (4, 0)
    assert state["trading"]["discard_pile"] == ["T1"]
    assert "T1" not in state["trading"]["display"] and None not in state["trading"]["display"]


def test_refreshing_the_trading_tiles_costs_a_mark_once() -> None:
    state = trade_game(["T1", "T2", "T3"])
    act(state, SEAT, type="refresh_trading_tiles")
    assert me(state)["marks"] == 2 and prompt(state, SEAT) == "trade"
    assert state["trading"]["discard_pile"] == ["T1", "T2", "T3"]
    refused(state, SEAT, "already_refreshed", type="refresh_trading_tiles")


def test_a_trade_factory_pays_for_every_trade() -> None:
    state = trade_game(["T1", "T2", "T3"])
    give_factory(state, factory_with({"on": "trade"}))
    act(state, SEAT, type="trade_convert", give="ink", take=["paper", "paper"])
    assert me(state)["marks"] == 4


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "trade_convert", "give": "gold", "take": ["ink", "ink"]}, "unknown_resource"),
        ({"type": "trade_convert", "give": "ink", "take": ["ink", "lead"]}, "same_resource_type"),
        ({"type": "trade_tile", "tile": "T9", "reverse": False, "times": 1}, "tile_not_displayed"),
        ({"type": "trade_tile", "tile": "T2", "reverse": True, "times": 1}, "one_way_tile"),
        ({"type": "trade_tile", "tile": "T1", "reverse": False, "times": 4}, "repeat_limit"),
        (
            {"type": "trade_tile", "tile": "T2", "reverse": False, "times": 1},
            "insufficient_resources",
        ),
    ],
)
def test_a_trade_is_refused(action: dict[str, Any], code: str) -> None:
    refused(trade_game(["T1", "T2", "T3"]), SEAT, code, **action)


def test_a_conversion_needs_the_resource_given() -> None:
    state = trade_game(["T1", "T2", "T3"])
    me(state)["ink"] = 0
    refused(
        state,
        SEAT,
        "insufficient_resources",
        type="trade_convert",
        give="ink",
        take=["lead", "lead"],
    )


def test_a_refresh_needs_a_mark() -> None:
    state = trade_game(["T1", "T2", "T3"])
    me(state)["marks"] = 0
    refused(state, SEAT, "insufficient_marks", type="refresh_trading_tiles")


def test_a_free_trade_from_a_factory_keeps_the_tile() -> None:
    state = turn_game()
    state["trading"]["display"][0] = "T1"
    queue(state, {"icon": "trade", "keep_tile": True})
    refused(state, SEAT, "already_refreshed", type="refresh_trading_tiles")
    act(state, SEAT, type="trade_tile", tile="T1", reverse=False, times=1)
    assert state["trading"]["display"][0] == "T1"


# -- typesetting -----------------------------------------------------------------------


def test_a_matching_letter_on_a_composing_stick_earns_the_space_bonus() -> None:
    state = turn_game()
    me(state)["stacks"] = [["LA3"], []]  # an A
    queue(state, {"icon": "typeset"})
    act(state, SEAT, type="typeset_on_stick", stack=0, cell=0)  # space A: 1 ink
    assert me(state)["ink"] == 2 and me(state)["board"][0]["letter"] == "LA3"


def test_a_letter_that_does_not_match_earns_nothing() -> None:
    state = turn_game()
    me(state)["stacks"] = [["LA3"], []]
    queue(state, {"icon": "typeset"})
    act(state, SEAT, type="typeset_on_stick", stack=0, cell=5)  # space F: 2 marks
    assert me(state)["marks"] == 3 and me(state)["board"][5]["bonus_taken"] is False


def test_a_completed_formation_activates_its_contract_slot() -> None:
    state = turn_game()
    effects.place_on_stick(me(state), "LD1", 4, always_bonus=False)
    me(state)["stacks"] = [["LF1"], []]
    queue(state, {"icon": "typeset"})
    act(state, SEAT, type="typeset_on_stick", stack=0, cell=5)  # D and F side by side
    assert [slot["active"] for slot in me(state)["slots"]] == [True, False, False, False]


def test_a_letter_under_an_active_contract_doubles_it_and_fires_typeset_factories() -> None:
    state = turn_game()
    give_factory(state, factory_with({"on": "typeset"}))
    me(state)["contracts"] = ["K1"]
    me(state)["slots"][0].update(active=True, contract="K1")
    me(state)["stacks"] = [["LB2"], ["LC2"]]
    queue(state, {"icon": "typeset"})
    act(state, SEAT, type="typeset_under_contract", stack=1, contract="K1")
    assert me(state)["letters_under"] == {"K1": "LC2"} and me(state)["vp"] == 1
    queue(state, {"icon": "typeset"})
    refused(
        state, SEAT, "letter_already_under", type="typeset_under_contract", stack=0, contract="K1"
    )
    refused(
        state, SEAT, "contract_not_active", type="typeset_under_contract", stack=0, contract="K2"
    )


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "typeset_on_stick", "stack": 1, "cell": 0}, "no_letter_there"),
        ({"type": "typeset_on_stick", "stack": 0, "cell": 9}, "unknown_space"),
        ({"type": "typeset_on_stick", "stack": 0, "cell": 4}, "space_occupied"),
    ],
)
def test_typesetting_is_refused(action: dict[str, Any], code: str) -> None:
    state = turn_game()
    effects.place_on_stick(me(state), "LD1", 4, always_bonus=False)
    me(state)["stacks"] = [["LA1"], []]
    queue(state, {"icon": "typeset"})
    refused(state, SEAT, code, **action)


def test_repositioning_a_letter_earns_the_space_even_without_a_match() -> None:
    state = turn_game()
    me(state)["stacks"] = [["LA1"], []]
    queue(state, {"icon": "reposition_letter"})
    refused(state, SEAT, "illegal_reposition", type="reposition_letter", stack=1, cell=5)
    act(state, SEAT, type="reposition_letter", stack=0, cell=5)  # F space: 2 marks
    assert me(state)["marks"] == 5


# -- assistants, signboards, city tiles ------------------------------------------------


def test_placing_an_assistant_is_refused_on_a_taken_or_unknown_street() -> None:
    state = turn_game()
    taken = state["street_names"][0]
    state["streets"][taken] = {"owner": 1, "reward": "mark"}
    queue(state, {"icon": "assistant"})
    refused(state, SEAT, "street_taken", type="place_assistant", street=taken, reward="ink")
    refused(state, SEAT, "unknown_street", type="place_assistant", street="S1-S16", reward="ink")
    refused(
        state,
        SEAT,
        "unknown_reward",
        type="place_assistant",
        street=state["street_names"][1],
        reward="vp",
    )


def placeable(state: dict[str, Any]) -> set[str]:
    """The rewards of the assistants the seat may place now."""
    listed = RULES.legal_actions(state, SEAT)
    return {action["reward"] for action in listed if action["type"] == "place_assistant"}


def test_each_assistant_has_its_own_reward_and_is_placed_once() -> None:
    # "place an assistant of your choice"; others receive "the reward marked on that
    # assistant (1 paper / 1 lead / 1 ink / 1 mark / 1 capacity)": 5 assistants, 5 rewards.
    state = turn_game()
    first, second = state["street_names"][:2]
    queue(state, {"icon": "assistant"})
    act(state, SEAT, type="place_assistant", street=first, reward="mark")
    assert state["streets"][first] == {"owner": SEAT, "reward": "mark"}
    queue(state, {"icon": "assistant"})
    assert placeable(state) == {"paper", "lead", "ink", "capacity"}
    refused(state, SEAT, "assistant_placed", type="place_assistant", street=second, reward="mark")
    act(state, SEAT, type="place_assistant", street=second, reward="ink")
    assert me(state)["assistants"] == 3
    # Another seat's mark assistant does not use up this seat's.
    state["streets"][first]["owner"] = 1
    queue(state, {"icon": "assistant"})
    assert "mark" in placeable(state)


def test_without_assistants_left_the_assistant_icon_fizzles() -> None:
    state = turn_game()
    me(state)["assistants"] = 0
    queue(state, {"icon": "assistant"})
    assert prompt(state, SEAT) is None


def test_the_signboard_icon_offers_the_three_signboard_actions() -> None:
    state = turn_game()
    queue(state, {"icon": "signboard_action"})
    refused(state, SEAT, "unknown_signboard_action", type="choose_signboard_action", action="fly")
    act(state, SEAT, type="choose_signboard_action", action="travel")
    assert state["pending"][SEAT][0] == {"icon": "travel", "free": True}


def test_the_city_tile_icon_takes_any_citys_disc_without_moving_the_director() -> None:
    state = turn_game()
    give_factory(state, factory_with({"on": "city_disc_gained"}))
    city = "Basel"
    disc = state["map_discs"][city]
    queue(state, {"icon": "city_tile"})
    act(state, SEAT, type="take_city_tile", city=city)
    assert state["map_discs"][city] is None and me(state)["discs"][0]["id"] == disc
    assert me(state)["director"] == 0
    assert prompt(state, SEAT) == "gain_choice"  # the factory's resource of your choice
    act(state, SEAT, type="decline")
    queue(state, {"icon": "city_tile"})
    refused(state, SEAT, "no_city_tile_there", type="take_city_tile", city=city)


def test_moving_down_twice_takes_the_room_two_action_twice() -> None:
    state = turn_game()
    me(state)["tradesmen"][0] = {"shop": "S15", "room": "I", "upright": False}  # II: 3 marks
    me(state)["tradesmen"][1]["room"] = "II"
    queue(state, {"icon": "move_down", "times": 2})
    refused(state, SEAT, "not_in_room_one", type="move_down", tradesman=1)
    act(state, SEAT, type="move_down", tradesman=0)
    assert me(state)["marks"] == 9 and me(state)["tradesmen"][0]["room"] == "II"


def test_discarding_a_desk_letter_gains_it_and_refills_the_desk() -> None:
    state = turn_game()
    letter = state["letters"]["desk"][1]
    queue(state, {"icon": "discard_letter"})
    act(state, SEAT, type="discard_desk_letter", slot=1)
    assert state["letters"]["discard_pile"] == [letter] and state["letters"]["desk"][1]
    state["letters"]["desk"][3] = None
    state["letters"]["draw_pile"].append(state["letters"]["desk"][3] or "LA9")
    queue(state, {"icon": "discard_letter"})
    refused(state, SEAT, "empty_desk_space", type="discard_desk_letter", slot=3)


def test_gaining_a_letter_with_resources_fires_the_letter_factories() -> None:
    state = turn_game()
    give_factory(state, factory_with({"on": "letter_taken"}))
    state["letters"]["desk"][0] = "LE7"  # 2 marks
    queue(state, {"icon": "gain_letter", "with_resources": True})
    act(state, SEAT, type="gain_letter", slot=0, stack=1)
    assert me(state)["stacks"][1] == ["LE7"] and me(state)["marks"] == 6


# -- orders: advance and buy -------------------------------------------------------------


def test_the_advance_icon_moves_an_order_without_capacity() -> None:
    state = turn_game()
    me(state)["orders_waiting"] = ["OI1"]
    queue(state, {"icon": "advance_order"})
    act(state, SEAT, type="advance_order", order="OI1")
    assert me(state)["line"][0] == "OI1" and me(state)["capacity"] == 2


def test_the_free_advance_icon_waives_the_stage_cost_and_completes_orders() -> None:
    state = turn_game()
    order = "OI1"
    me(state)["line"][3] = order
    me(state)["paper"] = me(state)["lead"] = me(state)["ink"] = 0
    queue(state, {"icon": "advance_order", "free": True})
    act(state, SEAT, type="advance_order", order=order)
    assert me(state)["completed"] == [order] and me(state)["vp"] == data.ORDERS[order]["vp"]
    assert me(state)["signboards"][0]["colour"] == data.ORDERS[order]["signboard"]


def test_an_advance_is_refused_for_a_foreign_order_a_blocked_stage_or_missing_resources() -> None:
    state = turn_game()
    me(state)["line"][0] = "OI2"
    me(state)["line"][1] = "OI1"
    me(state)["line"][3] = "OI4"
    me(state)["paper"] = me(state)["lead"] = me(state)["ink"] = 0
    queue(state, {"icon": "advance_order"})
    refused(state, SEAT, "order_not_yours", type="advance_order", order="OII1")
    refused(state, SEAT, "stage_occupied", type="advance_order", order="OI2")
    refused(state, SEAT, "insufficient_resources", type="advance_order", order="OI4")


def test_the_buy_icon_buys_and_refills_at_once() -> None:
    state = turn_game()
    next_order = state["orders"]["piles"]["II"][0]
    bought = state["orders"]["display"][0]
    queue(state, {"icon": "buy"})
    act(state, SEAT, type="buy_order", slot=0)
    assert me(state)["orders_waiting"] == [bought] and me(state)["marks"] == 2
    assert state["orders"]["display"][0] == next_order  # 2 players: level I is used up


def test_the_buy_icon_is_refused_when_two_orders_wait_or_marks_lack() -> None:
    state = turn_game()
    queue(state, {"icon": "buy"})
    me(state)["marks"] = 1
    refused(state, SEAT, "insufficient_marks", type="buy_contract", slot=4)
    refused(state, SEAT, "empty_display_space", type="buy_contract", slot=7)
    me(state)["orders_waiting"] = ["OIV1", "OIV2"]
    refused(state, SEAT, "two_orders_waiting", type="buy_order", slot=0)
