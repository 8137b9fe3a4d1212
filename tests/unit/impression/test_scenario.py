"""A whole round of two players from a fixed seed, with chosen actions, then round 2."""

from __future__ import annotations

from typing import Any

from projections.games.impression import data
from tests.unit.impression.support import RULES, act, new_game, set_up

ANN, BOB = 0, 1


def play_round_one() -> dict[str, Any]:
    # seed 7: Ann moves first (2 steps), Bob second (3 steps); Ann places her tradesmen in
    # S5 and S7, Bob his in S10 and S7; the desk shows LD9 (2 ink), LB6, LD6, LA5, LA1 next
    state = new_game(2, seed=7, tradesmen=[["S5", "S7"], ["S10", "S7"]])
    assert state["order"] == [ANN, BOB]
    assert state["letters"]["desk"][0] == "LD9" and state["letters"]["draw_pile"][0] == "LA1"
    act(state, ANN, type="shop", tradesman=0, path=["S1", "S2"], room="I")  # Foundry: 2 lead
    act(state, ANN, type="end_turn")
    act(state, BOB, type="reset", slot=0, keep=None, lay_down=0)  # discards LD9: 2 ink
    act(state, BOB, type="end_turn")
    act(state, ANN, type="shop", tradesman=1, path=["S11", "S10"], room="II")  # workforce
    act(state, ANN, type="place_assistant", street="S1-S2", reward="mark")  # workforce 3
    act(state, ANN, type="end_turn")
    act(state, BOB, type="reset", slot=0, keep=0, lay_down=1)  # keeps LA1
    act(state, BOB, type="end_turn")
    assert RULES.status(state)["phase"] == "orders"
    act(state, BOB, type="buy_order", slot=0)  # OI6 for 1 mark
    act(state, BOB, type="pass_buying")
    act(state, ANN, type="buy_order", slot=1)  # OI10 for 2 marks
    act(state, ANN, type="pass_buying")
    assert RULES.status(state)["to_act"] == [ANN, BOB]  # production is simultaneous
    act(state, BOB, type="advance_order", order="OI6")  # capacity 2 -> 1: 1 mark
    act(state, BOB, type="advance_order", order="OI6")  # stage 1 costs nothing
    act(state, ANN, type="advance_order", order="OI10")
    act(state, ANN, type="end_production")
    assert RULES.status(state)["awaiting_system"] == "pay_wages"
    act(state, None, type="pay_wages")
    act(state, None, type="preparation")
    return state


def test_round_one_leaves_each_player_where_their_choices_took_them() -> None:
    state = play_round_one()
    ann, bob = state["seats"]
    assert (ann["marks"], ann["lead"], ann["workforce"], ann["capacity"]) == (0, 3, 3, 3)
    assert ann["line"] == ["OI10", None, None, None] and ann["assistants"] == 4
    assert state["streets"] == {"S1-S2": {"owner": ANN, "reward": "mark"}}
    # Bob: 3 marks, +1 when Ann joined his room, -1 order, +1 capacity track, -1 wages
    assert (bob["marks"], bob["ink"], bob["paper"], bob["capacity"]) == (3, 3, 1, 2)
    assert bob["line"] == [None, "OI6", None, None] and bob["stacks"] == [["LA1"], []]


def test_round_two_starts_with_the_new_order_and_refilled_displays() -> None:
    state = play_round_one()
    assert RULES.status(state) == {
        "round": 2,
        "phase": "action",
        "to_act": [BOB],
        "awaiting_system": None,
        "finished": False,
    }
    assert state["order"] == [BOB, ANN]  # the front player moved to the last position
    # two orders were bought: none discarded, the rest pushed to the cheapest spaces
    # the 5 type I orders left at 2 players were all displayed: type II refills
    display = state["orders"]["display"]
    assert display[:3] == ["OI9", "OI3", "OI2"]
    assert [data.ORDERS[order]["level"] for order in display[3:]] == ["II", "II"]
    # no contract was bought: the two cheapest were discarded
    assert state["contracts"]["discard_pile"] == ["K20", "K8"]
    assert state["contracts"]["display"][:3] == ["K23", "K16", "K3"]
    assert all(man["upright"] for p in state["seats"] for man in p["tradesmen"])


def test_ann_s_assistant_pays_her_when_bob_stops_next_to_it() -> None:
    state = play_round_one()
    before = state["seats"][ANN]["marks"]
    # Bob's order marker now gives 2 steps; his tradesman in S10 goes to S1 via S9, S5
    bob = state["seats"][BOB]
    bob["capacity"] = 2
    marks = bob["marks"]
    act(state, BOB, type="shop", tradesman=0, path=["S9", "S5", "S1"], room="I")
    assert state["seats"][ANN]["marks"] == before + 1
    assert bob["capacity"] == 1 and bob["marks"] == marks + 2  # S1 room I: 2 marks


#: a plain policy: the first legal action of the most preferred type
PREFERENCE = [
    "place_tradesman",
    "act_first",
    "return_technologies",
    "advance_order",
    "buy_order",
    "buy_contract",
    "shop",
    "reset",
    "trade_convert",
    "typeset_on_stick",
    "place_assistant",
    "activate_contract",
    "choose_resource",
    "use_letter",
    "travel",
    "buy_technology",
    "keep_factory",
    "draw_factories",
    "stop_action",
    "end_production",
    "pass_buying",
    "end_turn",
    "decline",
]


def _preference(action: dict[str, Any]) -> int:
    kind = action["type"]
    return PREFERENCE.index(kind) if kind in PREFERENCE else len(PREFERENCE)


def play_by_preference(state: dict[str, Any]) -> int:
    steps = 0
    while not RULES.status(state)["finished"]:
        status = RULES.status(state)
        steps += 1
        if status["awaiting_system"]:
            act(state, None, type=status["awaiting_system"])
            continue
        seat = status["to_act"][0]
        legal = RULES.legal_actions(state, seat)
        action = min(legal, key=_preference)
        act(state, seat, **action)
    return steps


def test_a_seeded_three_player_game_played_by_a_plain_policy_ends_after_eight_rounds() -> None:
    state = set_up(3, seed=21)
    assert play_by_preference(state) == 276
    assert state["round"] == 8
    result = RULES.result(state)
    assert result is not None
    assert [score["total"] for score in result["scores"]] == [10, 11, 7]
    assert result["ranking"] == [[1], [0], [2]]
    for score in result["scores"]:
        assert score["total"] == sum(score["breakdown"].values())
    assert [len(p["completed"]) for p in state["seats"]] == [3, 3, 3]
    assert all(slot is None for slot in state["orders"]["display"])
