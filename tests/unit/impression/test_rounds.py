"""Order and Contract Phase, Production Phase, Preparation Phase and Game End."""

from __future__ import annotations

from typing import Any

from projections.games.impression import data
from projections.games.impression.rules import next_player_order
from tests.unit.impression.support import RULES, act, new_game, refused


def buying_game() -> dict[str, Any]:
    state = new_game(2)
    state["order"] = [0, 1]
    state["phase"] = "orders"
    state["buying"] = {"queue": [1, 0], "index": 0, "order_bought": False, "contract_bought": False}
    return state


def production_game() -> dict[str, Any]:
    state = new_game(2)
    state["phase"] = "production"
    for p in state["seats"]:
        p["budget"] = p["capacity"]
    return state


# -- Order and Contract Phase --------------------------------------------------------------


def test_buying_an_order_and_a_contract_passes_the_turn_on() -> None:
    state = buying_game()
    bob = state["seats"][1]
    state["track"][1]["section"] = 1
    bob["marks"] = 7
    order, contract = state["orders"]["display"][2], state["contracts"]["display"][4]
    act(state, 1, type="buy_order", slot=2)  # 3 marks, 1 section advanced: 2
    refused(state, 1, "order_already_bought", type="buy_order", slot=0)
    act(state, 1, type="buy_contract", slot=4)  # 5 - 1 = 4
    assert bob["orders_waiting"] == [order] and bob["contracts"] == [contract]
    assert bob["marks"] == 1
    assert state["orders"]["display"][2] is None  # refilled only in preparation
    assert RULES.status(state)["to_act"] == [0]


def test_an_order_is_refused_beyond_your_marks_or_with_two_waiting() -> None:
    state = buying_game()
    bob = state["seats"][1]
    bob["marks"] = 2
    refused(state, 1, "insufficient_marks", type="buy_order", slot=4)
    bob["orders_waiting"] = ["OIV1", "OIV2"]
    refused(state, 1, "two_orders_waiting", type="buy_order", slot=0)
    refused(state, 1, "wrong_phase", type="end_turn")


def test_when_all_have_passed_production_begins_with_the_capacity_as_budget() -> None:
    state = buying_game()
    state["seats"][0]["orders_waiting"] = ["OI1"]
    act(state, 1, type="pass_buying")
    act(state, 0, type="pass_buying")
    assert state["phase"] == "production"
    assert state["production_done"] == [False, True]  # Bob has no order to advance
    assert state["seats"][0]["budget"] == 2
    assert RULES.status(state)["to_act"] == [0]


# -- Production Phase -----------------------------------------------------------------------


def test_entering_stage_one_costs_no_resources_but_one_capacity_and_earns_the_track() -> None:
    state = production_game()
    ann = state["seats"][0]
    ann["orders_waiting"] = ["OI1"]
    ann["capacity"] = ann["budget"] = 4
    act(state, 0, type="advance_order", order="OI1")
    assert ann["line"][0] == "OI1" and ann["capacity"] == 3
    assert ann["paper"] == 2  # the capacity marker entered space 3: 1 paper


def test_each_stage_pays_the_resources_on_the_stage_it_leaves() -> None:
    state = production_game()
    ann = state["seats"][0]
    ann["line"][0] = "OIII1"
    cost = data.ORDERS["OIII1"]["stage_costs"][0]
    ann.update(paper=5, lead=5, ink=5, capacity=2, budget=2)
    act(state, 0, type="advance_order", order="OIII1")
    assert ann["line"][1] == "OIII1"
    for resource, amount in cost.items():
        assert ann[resource] == 5 - amount


def test_an_order_leaving_stage_four_completes_with_its_points_and_signboard() -> None:
    state = production_game()
    ann = state["seats"][0]
    ann["line"][3] = "OI1"
    ann.update(paper=5, lead=5, ink=5, capacity=2, budget=2)
    factory = next(
        f
        for f, t in data.FACTORIES.items()
        if t["trigger"] == {"on": "stage_completed", "stage": 4}
        and t["bonus"] == [{"icon": "gain", "gain": {"vp": 1}}]
    )
    ann["workshop"]["W1"]["up"] = {"kind": "factory", "id": factory}
    act(state, 0, type="advance_order", order="OI1")
    assert ann["completed"] == ["OI1"]
    assert ann["vp"] == data.ORDERS["OI1"]["vp"] + 1
    assert ann["signboards"] == [
        {"colour": "white", "source": "OI1", "used": False, "usable": False}
    ]


def test_production_stops_at_the_capacity_held_when_it_began() -> None:
    state = production_game()
    ann = state["seats"][0]
    ann["orders_waiting"] = ["OI1"]
    ann.update(budget=0)
    refused(state, 0, "no_capacity_left", type="advance_order", order="OI1")


def test_an_order_never_overtakes_the_one_ahead() -> None:
    state = production_game()
    ann = state["seats"][0]
    ann["line"][0], ann["line"][1] = "OI1", "OI2"
    ann["paper"] = ann["lead"] = ann["ink"] = 0
    refused(state, 0, "stage_occupied", type="advance_order", order="OI1")
    refused(state, 0, "wrong_phase", type="buy_order", slot=0)


def test_when_every_seat_ends_production_the_wages_are_due() -> None:
    state = production_game()
    act(state, 0, type="end_production")
    assert RULES.status(state)["to_act"] == [1]
    act(state, 1, type="end_production")
    assert RULES.status(state)["awaiting_system"] == "pay_wages"
    assert RULES.legal_actions(state, 0) == []


# -- Preparation Phase ----------------------------------------------------------------------


def test_the_front_player_moves_last_and_advanced_agents_come_first() -> None:
    state = new_game(4)
    state["order"] = [2, 0, 3, 1]
    assert next_player_order(state) == [0, 3, 1, 2]
    state["track"][1].update(section=2, arrival=1)
    state["track"][3].update(section=2, arrival=2)
    state["track"][0].update(section=3, arrival=3)
    # furthest first; in a section the earlier arrival holds the rightmost slot
    assert next_player_order(state) == [0, 1, 3, 2]


def test_preparation_discards_refills_stands_tradesmen_and_lets_capacity_catch_up() -> None:
    state = new_game(3)
    state["phase"] = "preparation"
    orders = state["orders"]
    display = list(orders["display"])
    orders["display"][3] = None  # one order was bought this round
    orders["taken"] = 1
    ann = state["seats"][0]
    ann.update(capacity=1, workforce=3)
    ann["tradesmen"][0]["upright"] = False
    ann["signboards"] = [{"colour": "red", "source": "OI1", "used": False, "usable": False}]
    act(state, None, type="preparation")
    # 3 players, 1 taken: the 2 cheapest are discarded, the rest pushed to the cheapest
    assert orders["discard_pile"] == display[:2]
    assert orders["display"][:2] == [display[2], display[4]]
    assert None not in orders["display"]
    assert ann["capacity"] == 3 and ann["tradesmen"][0]["upright"] is True
    assert ann["signboards"][0]["usable"] is True
    assert (state["round"], state["phase"]) == (2, "action")
    assert orders["taken"] == 0


def test_with_no_order_left_the_game_ends_with_last_optional_actions_then_scoring() -> None:
    state = new_game(2)
    state["order"] = [1, 0]
    state["phase"] = "preparation"
    for pile in state["orders"]["piles"].values():
        pile.clear()
    state["orders"]["display"] = [None] * 5
    act(state, None, type="preparation")
    assert state["phase"] == "final_optionals"
    first = RULES.status(state)["to_act"][0]
    assert RULES.legal_actions(state, first) == [{"type": "end_turn"}]
    refused(state, first, "only_optional_actions", type="reset", slot=0, keep=None, lay_down=0)
    act(state, first, type="end_turn")
    act(state, RULES.status(state)["to_act"][0], type="end_turn")
    assert RULES.status(state)["awaiting_system"] == "final_scoring"
    act(state, None, type="final_scoring")
    assert RULES.status(state)["finished"] is True
    result = RULES.result(state)
    assert result is not None and sorted(s for place in result["ranking"] for s in place) == [0, 1]
