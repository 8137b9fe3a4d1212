"""Construction Phase: Place Worker, Movements & Actions, Manager Cards, ending a turn."""

from __future__ import annotations

import random

from projections.games.restoration.game import RESTORATION
from tests.unit.restoration.table import (
    NAMES,
    act,
    decision,
    landing,
    place_at,
    refused,
    run_system,
    table,
)


def test_the_first_player_takes_the_first_turn() -> None:
    state = table(3)
    status = RESTORATION.status(state)
    assert status["phase"] == "construction" and status["to_act"] == [0]
    assert status["awaiting_system"] is None


def test_placing_at_a_workshop_grants_the_events_movements() -> None:
    state = table(3, event="tax_assessment")  # 3 movements
    act(state, 0, "place_worker", position="A1", artisan=False)
    assert state["positions"]["A1"]["workers"] == [{"seat": 0, "artisan": False}]
    assert state["seats"][0]["board_workers"] == 2
    assert state["turn"]["moves_left"] == 3


def test_an_artisan_may_be_placed_instead_of_an_own_worker() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="B2", artisan=True)
    assert state["seats"][0]["board_artisans"] == 0
    assert state["positions"]["B2"]["workers"] == [{"seat": 0, "artisan": True}]


def test_a_research_position_skips_moving_and_resolves_its_effect() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="RD1", artisan=False)  # RD1: development
    assert state["turn"]["moves_left"] == 0
    assert decision(state)["kind"] == "development"
    assert state["seats"][0]["research"]["RD1"]["workers"] == [{"artisan": False}]


def test_an_occupied_own_research_position_costs_one_reputation_per_worker() -> None:
    state = table(3)
    player = state["seats"][0]
    player["research"]["RD1"]["workers"].append({"artisan": False})
    player["board_workers"] -= 1
    player["reputation"] = 4
    act(state, 0, "place_worker", position="RD1", artisan=True)
    assert player["reputation"] == 3


def test_placement_errors() -> None:
    state = table(3)
    assert refused(state, 1, "place_worker", position="A1", artisan=False) == "not_your_turn"
    assert refused(state, 0, "place_worker", position="RD2", artisan=False) == "research_locked"
    assert refused(state, 0, "place_worker", position="Z9", artisan=False) == "unknown_position"
    assert refused(state, 0, "place_worker", position="A1", artisan="no") == "invalid_action"
    state["seats"][0]["board_artisans"] = 0
    assert refused(state, 0, "place_worker", position="A1", artisan=True) == (
        "no_artisan_available"
    )
    place_at(state, "AB1", 1)
    state["seats"][0]["reputation"] = 0
    assert refused(state, 0, "place_worker", position="AB1", artisan=False) == (
        "insufficient_reputation"
    )
    act(state, 0, "place_worker", position="A1", artisan=False)
    assert refused(state, 0, "place_worker", position="A2", artisan=False) == "already_placed"


def test_a_player_without_workers_on_the_board_cannot_place_one() -> None:
    state = table(3)
    state["seats"][0]["board_workers"] = 0
    assert refused(state, 0, "place_worker", position="A1", artisan=False) == (
        "no_worker_available"
    )


def test_two_players_cannot_use_single_positions() -> None:
    state = table(2)
    assert refused(state, 0, "place_worker", position="A1", artisan=False) == ("intersections_only")
    assert all(
        state["positions"][a["position"]]["kind"] == "intersection"
        for a in RESTORATION.legal_actions(state, 0)
        if a["type"] == "place_worker" and not a["position"].startswith("RD")
    )


def test_each_movement_moves_the_token_one_step_clockwise_and_offers_its_action() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="D1", artisan=False)
    act(state, 0, "move", workshop="D")
    assert state["workshops"]["D"]["token"] == 1
    assert decision(state)["kind"] == landing("D", 1) == "breakthrough"


def test_an_action_that_cannot_be_carried_out_is_passed_over() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="C1", artisan=False)
    act(state, 0, "move", workshop="C")
    assert landing("C", 1) == "transfer"  # a lone worker has nobody to swap with
    assert state["pending"] == [] and state["turn"]["moves_left"] == 2


def test_a_ceramic_space_offers_a_construction_action_of_its_colour() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="B1", artisan=False)
    act(state, 0, "move", workshop="B")  # manager
    act(state, 0, "skip_action")
    act(state, 0, "move", workshop="B")
    assert landing("B", 2) == "white"
    front = decision(state)
    assert front["kind"] == "construct" and front["colour"] == "white"


def test_an_intersection_moves_the_token_of_either_connected_workshop() -> None:
    state = table(3)
    act(state, 0, "place_worker", position="AB1", artisan=False)
    moves = [a for a in RESTORATION.legal_actions(state, 0) if a["type"] == "move"]
    assert moves == [{"type": "move", "workshop": "A"}, {"type": "move", "workshop": "B"}]
    assert refused(state, 0, "move", workshop="C") == "workshop_not_connected"


def test_movement_errors() -> None:
    state = table(3)
    assert refused(state, 0, "move", workshop="A") == "place_first"
    assert refused(state, 0, "end_turn") == "place_first"
    act(state, 0, "place_worker", position="A1", artisan=False)
    assert refused(state, 0, "end_turn") == "moves_pending"
    act(state, 0, "move", workshop="A")
    assert refused(state, 0, "move", workshop="A") == "decision_pending"
    assert refused(state, 0, "place_worker", position="A2", artisan=False) == "decision_pending"
    act(state, 0, "skip_action")
    for _ in range(2):
        act(state, 0, "move", workshop="A")
        act(state, 0, "skip_action")
    assert refused(state, 0, "move", workshop="A") == "no_moves_left"


def test_ending_a_turn_passes_clockwise() -> None:
    state = table(3, event="kiln_festival")  # 1 movement
    act(state, 0, "place_worker", position="A1", artisan=False)
    act(state, 0, "move", workshop="A")
    act(state, 0, "skip_action")
    act(state, 0, "end_turn")
    assert RESTORATION.status(state)["to_act"] == [1]


def test_a_player_with_nothing_left_to_place_is_skipped() -> None:
    state = table(3, event="kiln_festival")
    state["seats"][1].update(board_workers=0, board_artisans=0, rest=4)
    act(state, 0, "place_worker", position="RD1", artisan=False)
    act(state, 0, "skip_action")
    act(state, 0, "end_turn")
    assert RESTORATION.status(state)["to_act"] == [2]


def test_the_construction_phase_ends_when_everyone_has_placed_all_workers() -> None:
    state = table(2, event="kiln_festival")
    for seat in (0, 1):
        state["seats"][seat].update(board_workers=0, board_artisans=0, rest=3)
    state["seats"][1]["board_artisans"] = 1
    state["seats"][1]["rest"] = 3
    state["seats"][0]["board_workers"] = 1
    state["seats"][0]["rest"] = 2
    act(state, 0, "place_worker", position="RD1", artisan=False)
    act(state, 0, "skip_action")
    act(state, 0, "end_turn")
    assert RESTORATION.status(state)["to_act"] == [1]
    act(state, 1, "place_worker", position="AB1", artisan=True)
    for workshop in ("A", "B"):  # an intersection's movement turn moves both tokens
        act(state, 1, "move", workshop=workshop)
        act(state, 1, "skip_action")
    act(state, 1, "end_turn")
    status = RESTORATION.status(state)
    assert status["phase"] == "audit" and status["awaiting_system"] == "audit"
    assert status["to_act"] == []


def test_a_manager_card_effect_a_resolves_its_effect_and_is_discarded() -> None:
    state = table(3, event="masters_visit")  # 2 managers per turn
    state["seats"][0]["hand"] = ["foreman"]
    act(state, 0, "play_manager", manager="foreman", effect="A")
    assert decision(state)["kind"] == "development"
    assert state["seats"][0]["hand"] == []
    assert state["managers"]["deck"]["discard_pile"] == ["foreman"]


def test_an_immediate_manager_effect_applies_at_once() -> None:
    state = table(3, event="masters_visit")
    state["seats"][0].update(hand=["treasurer"], reputation=4)
    act(state, 0, "play_manager", manager="treasurer", effect="A")
    assert state["seats"][0]["reputation"] == 6 and state["pending"] == []


def test_manager_effect_b_adds_one_movement_and_action() -> None:
    state = table(3, event="masters_visit")
    state["seats"][0]["hand"] = ["steward"]
    assert refused(state, 0, "play_manager", manager="steward", effect="B") == (
        "no_workshop_to_move"
    )
    act(state, 0, "place_worker", position="A1", artisan=False)
    act(state, 0, "play_manager", manager="steward", effect="B")
    assert state["turn"]["moves_left"] == 3


def test_manager_errors() -> None:
    state = table(3, event="guild_fair")  # 1 manager per turn
    state["seats"][0]["hand"] = ["foreman", "treasurer"]
    assert refused(state, 0, "play_manager", manager="broker", effect="A") == (
        "manager_not_in_hand"
    )
    assert refused(state, 0, "play_manager", manager="foreman", effect="C") == "invalid_action"
    act(state, 0, "play_manager", manager="treasurer", effect="A")
    assert refused(state, 0, "play_manager", manager="foreman", effect="A") == (
        "manager_limit_reached"
    )


def test_no_manager_may_be_played_in_a_quiet_season() -> None:
    state = table(3, event="quiet_season")
    state["seats"][0]["hand"] = ["foreman"]
    assert not [a for a in RESTORATION.legal_actions(state, 0) if a["type"] == "play_manager"]


def test_unknown_and_system_actions_sent_by_a_seat_are_refused() -> None:
    state = table(3)
    assert refused(state, 0, "teleport") == "unknown_action"
    assert refused(state, 0, "audit") == "system_step_only"
    assert refused(state, None, "audit") == "no_such_step"


def test_nothing_may_be_done_while_an_automatic_step_is_due() -> None:
    state = RESTORATION.setup(NAMES[:2], {"arrangement": "first_game"}, random.Random(1))
    act(state, 0, "unlock_research", position="RD1")
    act(state, 1, "unlock_research", position="RD1")
    assert refused(state, 0, "place_worker", position="AB1", artisan=False) == "awaiting_system"
    assert RESTORATION.legal_actions(state, 0) == []
    run_system(state)


def test_a_seat_acting_outside_the_construction_phase_is_refused() -> None:
    state = RESTORATION.setup(NAMES[:2], {"arrangement": "first_game"}, random.Random(1))
    assert refused(state, 0, "place_worker", position="AB1", artisan=False) == "phase_mismatch"


def test_a_turn_may_end_unplaced_once_a_manager_used_up_the_last_worker() -> None:
    state = table(3, event="masters_visit")
    state["seats"][0].update(board_workers=1, board_artisans=0, rest=1, hand=["master_mason"])
    act(state, 0, "play_manager", manager="master_mason", effect="A")  # a Breakthrough
    tile = state["construction"]["display"][0]
    act(state, 0, "start_construction", tile=tile)  # takes the last worker off the board
    assert RESTORATION.legal_actions(state, 0) == [{"type": "end_turn"}]
    act(state, 0, "end_turn")
    assert RESTORATION.status(state)["to_act"] == [1]


def test_a_manager_played_while_an_own_action_waits_resolves_first() -> None:
    state = table(3, event="masters_visit")
    state["seats"][0]["hand"] = ["foreman"]
    act(state, 0, "place_worker", position="A1", artisan=False)
    act(state, 0, "move", workshop="A")  # development: a decision waits
    assert {"type": "play_manager", "manager": "foreman", "effect": "A"} in (
        RESTORATION.legal_actions(state, 0)
    )
    act(state, 0, "play_manager", manager="foreman", effect="A")
    assert [d["kind"] for d in state["pending"]] == ["development", "development"]
    act(state, 0, "develop", track="reputation")  # the Foreman's
    assert [d["kind"] for d in state["pending"]] == ["development"]  # the space's, still open
