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
    queue,
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


def bob_can_pair(state: dict[str, Any], disc: str, cell: int, letter: str) -> dict[str, Any]:
    """Bob (seat 1) covered a pair icon, holds city tile ``disc`` and has ``letter`` on
    composing stick space ``cell`` (not matching it)."""
    bob: dict[str, Any] = state["seats"][1]
    bob["pairing"] = True
    bob["discs"] = [{"id": disc, "used": False}]
    bob["board"][cell] = {"letter": letter, "paired": None, "bonus_taken": False}
    return bob


@pytest.mark.parametrize("phase", ["action", "orders", "production"])
def test_a_city_tile_is_paired_at_any_time_even_on_another_players_turn(phase: str) -> None:
    """Iconography, pair icon: "pair a city tile with a lead letter on your composing board
    at any time (1 city tile per lead letter)" - not only on your own turn."""
    state = turn_game()  # Ann's turn
    if phase == "orders":
        state["phase"] = "orders"
        state["buying"] = {"queue": [0, 1], "index": 0, "order_bought": False}
        state["buying"]["contract_bought"] = False
    elif phase == "production":
        state["phase"] = "production"
        state["production_done"] = [False, True]
    bob = bob_can_pair(state, "D1", 0, "LB1")  # city tile A on space A holding a B
    assert RULES.status(state)["to_act"] == [SEAT]
    pair = {"type": "pair_city_tile", "disc": "D1", "cell": 0}
    assert RULES.legal_actions(state, 1) == [pair]
    ink = bob["ink"]
    act(state, 1, **pair)
    assert bob["board"][0]["paired"] == "D1" and bob["ink"] == ink + 1  # space A: 1 ink
    assert RULES.status(state)["to_act"] == [SEAT] and RULES.legal_actions(state, 1) == []


def test_a_choice_earned_by_pairing_off_turn_waits_for_its_player_and_holds_the_scoring() -> None:
    state = turn_game()
    state["phase"] = "final_optionals"
    state["order"], state["turn"]["index"] = [1, SEAT], 1  # Ann's last optional actions
    bob = bob_can_pair(state, "D4", 3, "LA1")  # space D: 1 resource of your choice
    act(state, 1, type="pair_city_tile", disc="D4", cell=3)
    assert prompt(state, 1) == "gain_choice"
    act(state, SEAT, type="end_turn")
    assert RULES.status(state)["phase"] == "final_scoring"
    assert RULES.status(state)["awaiting_system"] is None
    assert RULES.status(state)["to_act"] == [1]
    refused(state, None, "no_system_step", type="final_scoring")
    paper = bob["paper"]
    act(state, 1, type="choose_resource", resource="paper")
    assert bob["paper"] == paper + 1
    assert RULES.status(state)["awaiting_system"] == "final_scoring"


def test_a_pairing_is_refused_while_an_automatic_step_is_due() -> None:
    state = turn_game()
    state["phase"] = "wages"
    bob_can_pair(state, "D1", 0, "LB1")
    assert RULES.legal_actions(state, 1) == []
    refused(state, 1, "not_your_turn", type="pair_city_tile", disc="D1", cell=0)


def test_a_city_tile_may_be_paired_while_a_choice_of_yours_waits() -> None:
    state = turn_game()
    p = me(state)
    p["pairing"] = True
    p["discs"] = [{"id": "D1", "used": False}]
    p["board"][0] = {"letter": "LB1", "paired": None, "bonus_taken": False}
    queue(state, {"icon": "trade"})
    pair = {"type": "pair_city_tile", "disc": "D1", "cell": 0}
    assert pair in RULES.legal_actions(state, SEAT)
    act(state, SEAT, **pair)
    assert p["board"][0]["paired"] == "D1" and prompt(state, SEAT) == "trade"
