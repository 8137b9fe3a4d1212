"""Action Phase: A. Shop, B. Reset, turns and the general refusals."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.games.impression import data
from projections.ruleset import IllegalAction
from tests.unit.impression.support import RULES, act, new_game, prompt, refused


def two_player_game() -> dict[str, Any]:
    """Ann (seat 0) first; her tradesmen stand in S1 and S9, Bob's in S5 and S11."""
    state = new_game(2)
    state["order"] = [0, 1]
    ann, bob = state["seats"]
    ann["tradesmen"] = [
        {"shop": "S1", "room": "II", "upright": True},
        {"shop": "S9", "room": "II", "upright": True},
    ]
    bob["tradesmen"] = [
        {"shop": "S5", "room": "II", "upright": True},
        {"shop": "S11", "room": "II", "upright": True},
    ]
    return state


def test_a_shop_move_of_exactly_the_marker_steps_takes_the_room_action() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    # Ann's order marker (first) gives 2 steps; S3's room I gives 2 ink
    act(state, 0, type="shop", tradesman=0, path=["S2", "S3"], room="I")
    assert ann["ink"] == 3 and ann["capacity"] == 2
    assert ann["tradesmen"][0] == {"shop": "S3", "room": "I", "upright": False}
    assert state["turn"]["main_done"] is True


def test_each_step_of_difference_costs_one_capacity() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    act(state, 0, type="shop", tradesman=0, path=["S2"], room="I")  # 1 step instead of 2
    assert ann["capacity"] == 1 and ann["lead"] == 3


def test_own_assistants_streets_may_be_crossed_for_free() -> None:
    state = two_player_game()
    state["streets"]["S1-S2"] = {"owner": 0, "reward": "ink"}
    ann = state["seats"][0]
    act(state, 0, type="shop", tradesman=0, path=["S2", "S3", "S7"], room="II")
    assert ann["capacity"] == 2  # 3 steps, 1 of them free: exactly the marker's 2


def test_the_earlier_arrival_in_a_room_earns_one_mark() -> None:
    state = two_player_game()
    state["seats"][1]["tradesmen"][0] = {"shop": "S3", "room": "I", "upright": False}
    act(state, 0, type="shop", tradesman=0, path=["S2", "S3"], room="I")
    assert state["seats"][1]["marks"] == 4 and state["seats"][0]["marks"] == 3


def test_another_players_assistant_next_to_the_shop_pays_its_owner() -> None:
    state = two_player_game()
    state["streets"]["S3-S7"] = {"owner": 1, "reward": "capacity"}
    state["streets"]["S2-S3"] = {"owner": 1, "reward": "paper"}
    act(state, 0, type="shop", tradesman=0, path=["S2", "S3"], room="I")
    bob = state["seats"][1]
    assert (bob["capacity"], bob["paper"]) == (3, 2)


def test_the_legal_shop_moves_are_the_cheapest_routes_to_each_shop() -> None:
    state = two_player_game()
    moves = [a for a in RULES.legal_actions(state, 0) if a["type"] == "shop"]
    ends = {(a["tradesman"], a["path"][-1]) for a in moves}
    assert (0, "S3") in ends and (0, "S1") not in ends and (0, "S9") not in ends
    to_s3 = [a["path"] for a in moves if a["tradesman"] == 0 and a["path"][-1] == "S3"]
    assert to_s3 == [["S2", "S3"], ["S2", "S3"]]  # rooms I and II, no capacity spent


@pytest.mark.parametrize(
    ("change", "action", "code"),
    [
        ({}, {"tradesman": 5, "path": ["S2"], "room": "I"}, "unknown_tradesman"),
        ({"upright": False}, {"tradesman": 0, "path": ["S2"], "room": "I"}, "tradesman_lying"),
        ({"room": "I"}, {"tradesman": 0, "path": ["S2"], "room": "I"}, "not_in_room_two"),
        ({}, {"tradesman": 0, "path": ["S2"], "room": "III"}, "unknown_room"),
        ({}, {"tradesman": 0, "path": [], "room": "I"}, "empty_path"),
        ({}, {"tradesman": 0, "path": ["S3"], "room": "I"}, "not_orthogonal"),
        ({}, {"tradesman": 0, "path": ["S2", "S1"], "room": "I"}, "shop_revisited"),
        ({}, {"tradesman": 0, "path": ["S5", "S9"], "room": "I"}, "own_tradesman_there"),
    ],
)
def test_a_shop_move_is_refused(change: dict[str, Any], action: dict[str, Any], code: str) -> None:
    state = two_player_game()
    state["seats"][0]["tradesmen"][0].update(change)
    refused(state, 0, code, type="shop", **action)


def test_a_shop_move_beyond_the_capacity_is_refused() -> None:
    state = two_player_game()
    state["seats"][0]["capacity"] = 0
    refused(state, 0, "insufficient_capacity", type="shop", tradesman=0, path=["S2"], room="I")


def test_only_one_shop_or_reset_per_turn() -> None:
    state = two_player_game()
    act(state, 0, type="shop", tradesman=0, path=["S2", "S3"], room="I")
    refused(state, 0, "main_action_done", type="reset", slot=0, keep=None, lay_down=1)


def test_a_turn_cannot_end_before_its_shop_or_reset() -> None:
    refused(two_player_game(), 0, "main_action_missing", type="end_turn")


def test_reset_keeps_a_letter_refills_the_desk_and_lays_a_tradesman_down() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    letter = state["letters"]["desk"][2]
    top = state["letters"]["draw_pile"][0]
    act(state, 0, type="reset", slot=2, keep=1, lay_down=1)
    assert ann["stacks"][1] == [letter]
    assert state["letters"]["desk"][2] == top
    assert ann["tradesmen"][1]["upright"] is False and ann["tradesmen"][0]["upright"] is True


def test_a_kept_letter_covers_another_only_when_both_spaces_are_taken() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    ann["stacks"] = [["LA1"], []]
    refused(state, 0, "free_space_first", type="reset", slot=0, keep=0, lay_down=0)
    keeps = {a["keep"] for a in RULES.legal_actions(state, 0) if a["type"] == "reset"}
    assert keeps == {None, 1}
    ann["stacks"] = [["LA1"], ["LA2"]]
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    assert len(ann["stacks"][0]) == 2  # LA1 is covered until a typesetting action frees it


def test_reset_discarding_a_letter_gains_its_resources() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    letter = state["letters"]["desk"][0]
    goods = dict(data.LEAD_LETTERS[letter]["gain"])
    before = {good: ann["marks" if good == "mark" else good] for good in goods}
    act(state, 0, type="reset", slot=0, keep=None, lay_down=0)
    for good, amount in goods.items():
        assert ann["marks" if good == "mark" else good] == before[good] + amount
    assert state["letters"]["discard_pile"] == [letter]


def test_reset_moves_tradesmen_from_room_one_down_and_takes_their_room_two_action() -> None:
    state = two_player_game()
    ann = state["seats"][0]
    ann["tradesmen"][1] = {"shop": "S7", "room": "I", "upright": True}  # S7 room II: paper+ink
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    assert ann["tradesmen"][1] == {"shop": "S7", "room": "II", "upright": True}
    assert (ann["paper"], ann["ink"]) == (2, 2)


def test_reset_leaves_a_tradesman_lying_in_room_one_where_it_is() -> None:
    """B. Reset: "all of your tradesmen standing in room I's now move down to room II of
    the same shop. Then lay down one of your upright tradesmen"; the Shop rules use
    "standing" the same way ("You may only move a tradesman that is standing in a room
    II"). A tradesman that shopped into a room I this phase lies there: it does not also
    earn the room II action in the same phase; it moves down after standing up again."""
    state = two_player_game()
    ann = state["seats"][0]
    act(state, 0, type="shop", tradesman=1, path=["S10", "S6"], room="I")  # S6 II: trade
    paper, ink = ann["paper"], ann["ink"]
    act(state, 0, type="end_turn")
    act(state, 1, type="reset", slot=0, keep=None, lay_down=0)
    act(state, 1, type="end_turn")
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    assert ann["tradesmen"][1] == {"shop": "S6", "room": "I", "upright": False}
    assert (ann["paper"], ann["ink"]) == (paper, ink) and prompt(state, 0) is None


def two_tradesmen_in_room_one(shops: tuple[str, str], players: int = 2) -> dict[str, Any]:
    """Ann's (seat 0, first) two tradesmen stand in room I of ``shops``, ready for a Reset."""
    state = two_player_game() if players == 2 else new_game(players)
    state["order"] = list(range(players))
    ann = state["seats"][0]
    ann["tradesmen"] = [{"shop": shop, "room": "I", "upright": True} for shop in shops]
    return state


def test_a_reset_moving_two_tradesmen_asks_which_acts_first() -> None:
    # B. Reset: "carry out the action of the room II entered by tradesmen that moved"
    state = two_tradesmen_in_room_one(("S6", "S7"))  # room II: trade; 1 paper + 1 ink
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    assert [man["room"] for man in state["seats"][0]["tradesmen"]] == ["II", "II"]
    assert prompt(state, 0) == "room_two_order"
    assert RULES.legal_actions(state, 0) == [
        {"type": "act_first", "tradesman": 0},
        {"type": "act_first", "tradesman": 1},
    ]


def test_the_tradesman_chosen_first_takes_its_room_two_action_first() -> None:
    state = two_tradesmen_in_room_one(("S6", "S7"))
    ann = state["seats"][0]
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    act(state, 0, type="act_first", tradesman=1)  # Print shop: 1 paper + 1 ink at once
    assert (ann["paper"], ann["ink"]) == (2, 2)
    assert prompt(state, 0) == "trade"  # then the Warehouse's trade


def test_the_other_tradesman_first_leaves_its_action_waiting_behind_the_first() -> None:
    state = two_tradesmen_in_room_one(("S6", "S7"))
    ann = state["seats"][0]
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    act(state, 0, type="act_first", tradesman=0)
    assert prompt(state, 0) == "trade" and (ann["paper"], ann["ink"]) == (1, 1)
    act(state, 0, type="decline")
    assert (ann["paper"], ann["ink"]) == (2, 2)


def test_which_tradesman_acts_first_cannot_be_declined_or_be_another() -> None:
    state = two_tradesmen_in_room_one(("S6", "S7"))
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    refused(state, 0, "choice_required", type="decline")
    refused(state, 0, "tradesman_not_moved", type="act_first", tradesman=2)
    refused(state, 0, "choice_pending", type="end_turn")


def test_two_tradesmen_entering_the_same_room_two_action_are_not_asked() -> None:
    state = two_tradesmen_in_room_one(("S4", "S6"), players=4)  # both rooms II: trade
    act(state, 0, type="reset", slot=0, keep=0, lay_down=0)
    assert [effect["icon"] for effect in state["pending"][0]] == ["trade", "trade"]


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"slot": 9, "keep": None, "lay_down": 0}, "empty_desk_space"),
        ({"slot": None, "keep": None, "lay_down": 0}, "choose_letter"),
        ({"slot": 0, "keep": 2, "lay_down": 0}, "unknown_stack"),
        ({"slot": 0, "keep": None, "lay_down": 3}, "tradesman_lying"),
    ],
)
def test_a_reset_is_refused(action: dict[str, Any], code: str) -> None:
    refused(two_player_game(), 0, code, type="reset", **action)


def test_two_turns_each_end_the_action_phase_and_buying_starts_leftmost_first() -> None:
    state = two_player_game()
    for seat in (0, 1, 0, 1):
        act(state, seat, type="reset", slot=0, keep=None, lay_down=upright_tradesman(state, seat))
        while state["pending"][seat]:
            act(state, seat, type="decline")
        act(state, seat, type="end_turn")
    assert state["phase"] == "orders"
    # nobody advanced on the order track: reverse player order
    assert state["buying"]["queue"] == [1, 0]
    assert RULES.status(state)["to_act"] == [1]


def upright_tradesman(state: dict[str, Any], seat: int) -> int:
    return next(i for i, man in enumerate(state["seats"][seat]["tradesmen"]) if man["upright"])


def test_a_seat_out_of_turn_is_refused() -> None:
    refused(two_player_game(), 1, "not_your_turn", type="end_turn")


def test_unknown_actions_seats_and_system_steps_are_refused() -> None:
    state = two_player_game()
    refused(state, 0, "unknown_action", type="fly")
    refused(state, 7, "unknown_seat", type="end_turn")
    refused(state, 0, "system_only", type="pay_wages")
    refused(state, None, "no_system_step", type="pay_wages")
    refused(state, 0, "nothing_to_decline", type="decline")
    refused(state, 0, "wrong_phase", type="buy_order", slot=0)


def test_a_waiting_choice_comes_before_anything_else() -> None:
    state = two_player_game()
    act(state, 0, type="shop", tradesman=0, path=["S2", "S6"], room="II")  # S6 room II: trade
    assert prompt(state, 0) == "trade"
    refused(state, 0, "choice_pending", type="end_turn")
    assert {"type": "decline"} in RULES.legal_actions(state, 0)
    act(state, 0, type="decline")
    assert prompt(state, 0) is None


def test_a_finished_game_refuses_everything() -> None:
    state = two_player_game()
    state["finished"] = True
    refused(state, 0, "game_finished", type="end_turn")
    assert RULES.legal_actions(state, 0) == []


@pytest.mark.parametrize(
    "action",
    [
        {"type": "reset", "slot": 0, "keep": None, "lay_down": True},  # a boolean, not 1
        {"type": "reset", "slot": 0, "keep": None},  # a key missing
        {"type": "reset", "slot": 0, "keep": None, "lay_down": 0, "extra": 1},  # unknown key
        {"type": "shop", "tradesman": 0, "path": "S2", "room": "I"},  # a string, not a list
        {"type": "shop", "tradesman": 0, "path": [2], "room": "I"},  # a number in the path
        {"type": "shop", "tradesman": 0.0, "path": ["S2"], "room": "I"},  # a float
    ],
)
def test_an_action_of_the_wrong_shape_is_refused_before_any_rule(action: dict[str, Any]) -> None:
    refused(two_player_game(), 0, "malformed_action", **action)


def test_a_trade_tile_direction_is_a_boolean_not_a_number() -> None:
    state = two_player_game()
    act(state, 0, type="shop", tradesman=0, path=["S2", "S6"], room="II")  # S6 room II: trade
    tile = next(t for t in state["trading"]["display"] if t is not None)
    refused(state, 0, "malformed_action", type="trade_tile", tile=tile, reverse=1, times=1)


def test_a_seat_is_an_integer_and_an_action_an_object() -> None:
    state = two_player_game()
    refused(state, True, "unknown_seat", type="end_turn")  # True is not seat 1
    with pytest.raises(IllegalAction) as error:
        RULES.apply(state, ["end_turn"], random.Random(1))  # type: ignore[arg-type]
    assert error.value.code == "malformed_action"


def test_an_automatic_step_carries_nothing_but_its_type() -> None:
    state = two_player_game()
    state["phase"] = "wages"
    refused(state, None, "no_system_step", type="pay_wages", marks=5)
    act(state, None, type="pay_wages")
    assert state["phase"] == "preparation"
