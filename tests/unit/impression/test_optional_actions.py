"""Optional Actions: signboards, activating contracts, city discs and pairing."""

from __future__ import annotations

from typing import Any

import pytest

from projections.games.impression import data
from tests.unit.impression.support import (
    RULES,
    SEAT,
    act,
    me,
    prompt,
    refused,
    turn_game,
)


def signboard(colour: str, usable: bool = True) -> dict[str, Any]:
    return {"colour": colour, "source": "OI1", "used": False, "usable": usable}


def test_a_white_signboard_gains_one_workforce_and_is_turned_face_down() -> None:
    state = turn_game()
    me(state)["signboards"] = [signboard("white")]
    assert {"type": "signboard_white"} in RULES.legal_actions(state, SEAT)
    act(state, SEAT, type="signboard_white")
    assert me(state)["workforce"] == 3 and me(state)["signboards"][0]["used"] is True
    act(state, SEAT, type="decline")  # the assistant that workforce 3 brings
    refused(state, SEAT, "not_enough_signboards", type="signboard_white")


def test_two_red_signboards_give_a_travel_without_map_payments() -> None:
    state = turn_game()
    me(state)["signboards"] = [signboard("red"), signboard("red")]
    act(state, SEAT, type="signboard_red")
    assert state["pending"][SEAT][0] == {"icon": "travel", "free": True}


def test_two_blue_signboards_give_a_technology_without_paying() -> None:
    state = turn_game()
    me(state)["signboards"] = [signboard("blue"), signboard("blue")]
    act(state, SEAT, type="signboard_blue")
    assert prompt(state, SEAT) == "technology"
    assert state["pending"][SEAT][0]["no_money"] and state["pending"][SEAT][0]["no_resources"]


def test_signboards_of_orders_completed_this_round_wait_for_the_next_action_phase() -> None:
    state = turn_game()
    me(state)["signboards"] = [signboard("blue"), signboard("blue", usable=False)]
    refused(state, SEAT, "not_enough_signboards", type="signboard_blue")


def test_activating_a_contract_gains_the_slot_action_only_the_first_time() -> None:
    state = turn_game()
    p = me(state)
    p["contracts"] = ["K1", "K2"]
    p["slots"][0]["active"] = True
    act(state, SEAT, type="activate_contract", contract="K1", slot=0)
    assert p["slots"][0]["contract"] == "K1" and p["marks"] == 5  # slot bonus: 2 marks
    act(state, SEAT, type="activate_contract", contract="K2", slot=0)
    assert p["slots"][0]["contract"] == "K2" and p["marks"] == 5
    # the replaced contract can be reactivated later, not in the same turn
    refused(state, SEAT, "contract_just_replaced", type="activate_contract", contract="K1", slot=0)
    state["turn"].update(main_done=True)
    act(state, SEAT, type="end_turn")  # a new turn begins
    assert state["turn"]["swapped"] == []
    state["turn"]["index"] = 0
    act(state, SEAT, type="activate_contract", contract="K1", slot=0)
    assert p["slots"][0]["contract"] == "K1"


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"contract": "K1", "slot": 1}, "slot_inactive"),
        ({"contract": "K3", "slot": 0}, "contract_not_owned"),
        ({"contract": "K2", "slot": 0}, "contract_already_active"),
    ],
)
def test_activating_a_contract_is_refused(action: dict[str, Any], code: str) -> None:
    state = turn_game()
    me(state)["contracts"] = ["K1", "K2"]
    me(state)["slots"][0].update(active=True, contract="K2")
    refused(state, SEAT, code, type="activate_contract", **action)


def test_a_city_disc_is_used_once_for_its_reward() -> None:
    state = turn_game()
    disc = next(
        d
        for d, tile in data.DISCS.items()
        if tile.get("reward") == [{"icon": "gain", "gain": {"vp": 3}}]
    )
    me(state)["discs"] = [{"id": disc, "used": False}]
    act(state, SEAT, type="use_city_disc", disc=disc)
    assert me(state)["vp"] == 3 and me(state)["discs"][0]["used"] is True
    refused(state, SEAT, "disc_not_usable", type="use_city_disc", disc=disc)


def test_a_signboard_disc_counts_as_a_signboard_not_as_a_reward() -> None:
    state = turn_game()
    me(state)["discs"] = [{"id": "D1", "used": False}]
    refused(state, SEAT, "disc_not_usable", type="use_city_disc", disc="D1")


def test_pairing_is_refused_without_the_icon_a_tile_or_a_free_letter() -> None:
    state = turn_game()
    p = me(state)
    p["discs"] = [{"id": "D1", "used": False}, {"id": "D7", "used": False}]
    p["board"][0] = {"letter": "LB1", "paired": None, "bonus_taken": False}
    refused(state, SEAT, "no_pair_icon", type="pair_city_tile", disc="D1", cell=0)
    p["pairing"] = True
    refused(state, SEAT, "disc_not_owned", type="pair_city_tile", disc="D2", cell=0)
    refused(state, SEAT, "no_letter_there", type="pair_city_tile", disc="D1", cell=3)
    act(state, SEAT, type="pair_city_tile", disc="D1", cell=0)
    refused(state, SEAT, "disc_already_paired", type="pair_city_tile", disc="D1", cell=0)
    refused(state, SEAT, "letter_already_paired", type="pair_city_tile", disc="D7", cell=0)


def test_optional_actions_are_not_possible_in_production() -> None:
    state = turn_game()
    state["phase"] = "production"
    state["production_done"] = [False, True]
    refused(state, SEAT, "wrong_phase", type="signboard_white")
