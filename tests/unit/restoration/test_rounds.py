"""Event Phase, Audit Phase and Game End."""

from __future__ import annotations

from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from tests.unit.restoration.table import (
    act,
    decision,
    place_at,
    refused,
    run_system,
    table,
    unlocked,
)


def at_audit(players: int = 3) -> dict:
    """Round 1's Construction phase just over: the audit is due."""
    state = table(players)
    for player in state["seats"]:
        player["rest"] += player["board_workers"]
        player["board_workers"] = 0
        player["board_artisans"] = 0
        state["artisan_supply"] += 1
    state["turn"] = None
    state["phase"] = "audit"
    state["due"] = "audit"
    return state


# -- Event phase ------------------------------------------------------------------------


def test_every_player_resolves_a_choice_event_clockwise_from_the_first_player() -> None:
    state = unlocked(event="royal_commission")
    state["first_player"] = 1
    run_system(state)
    assert RESTORATION.status(state)["to_act"] == [1]
    act(state, 1, "develop", track="technology")
    act(state, 1, "skip_action")  # the technology space's own effect is optional
    assert decision(state)["seat"] == 2


def test_event_effects_are_mandatory_when_possible() -> None:
    state = unlocked(event="guild_fair")
    run_system(state)
    assert decision(state) == {"kind": "manager", "seat": 0, "optional": False}
    assert refused(state, 0, "skip_action") == "effect_is_mandatory"
    act(state, 0, "take_manager", source="deck")
    assert len(state["seats"][0]["hand"]) == 2


def test_an_event_that_cannot_be_carried_out_is_passed_over() -> None:
    state = unlocked(event="guild_fair")
    state["managers"]["deck"] = {"draw_pile": [], "discard_pile": []}
    state["managers"]["supply"] = {}
    for player in state["seats"]:
        player["hand"] = []
    run_system(state)
    assert state["phase"] == "construction"


def test_an_optional_event_may_be_declined() -> None:
    state = unlocked(event="masters_visit")
    run_system(state)
    assert decision(state)["kind"] == "breakthrough"
    act(state, 0, "skip_action")
    assert decision(state)["seat"] == 1


def test_tax_assessment_costs_everyone_one_reputation_if_able() -> None:
    state = unlocked(event="tax_assessment")
    state["seats"][2]["reputation"] = 0
    before = [p["reputation"] for p in state["seats"]]
    run_system(state)
    assert [p["reputation"] for p in state["seats"]] == [before[0] - 1, before[1] - 1, 0]
    assert state["phase"] == "construction"


def test_the_kiln_festival_gives_everyone_one_reputation() -> None:
    state = unlocked(event="kiln_festival")
    before = [p["reputation"] for p in state["seats"]]
    run_system(state)
    assert [p["reputation"] for p in state["seats"]] == [level + 1 for level in before]


# -- Audit -----------------------------------------------------------------------------


def test_artisans_leave_the_workshops_and_research_positions_before_influence_counts() -> None:
    state = at_audit()
    place_at(state, "A1", 1, artisan=False)
    state["seats"][1]["board_workers"] += 1
    state["positions"]["A2"]["workers"] = [{"seat": 0, "artisan": True}] * 2
    state["seats"][2]["research"]["RD1"]["workers"] = [{"artisan": True}]
    state["artisan_supply"] -= 3
    run_system(state)
    report = state["audit_report"]
    assert report["artisans_returned"] == 3
    assert state["positions"]["A2"]["workers"] == []
    rows = {row["workshop"]: row for row in report["workshops"]}
    assert rows["A"]["influence"] == [0, 2, 0] and rows["A"]["winner"] == 1
    assert state["first_player"] == 1


def test_a_main_workshop_tie_leaves_the_first_player_token_where_it_is() -> None:
    state = at_audit()
    state["first_player"] = 2
    run_system(state)
    assert state["first_player"] == 2


def test_no_artisan_is_gained_once_the_supply_is_empty() -> None:
    state = at_audit()
    place_at(state, "A1", 1)
    state["seats"][1]["board_workers"] += 1
    state["artisan_supply"] = 0
    state["seats"][0]["board_artisans"] = 6
    run_system(state)
    assert state["audit_report"]["workshops"][0]["artisan"] is False
    assert state["seats"][1]["board_artisans"] == 0


def test_after_the_audit_players_may_pay_reputation_to_keep_workers_in_place() -> None:
    state = at_audit()
    place_at(state, "B1", 0)
    place_at(state, "C1", 0)
    state["seats"][0]["board_workers"] += 2
    state["seats"][0]["rest"] -= 2
    state["seats"][0]["reputation"] = 3
    state["seats"][1]["reputation"] = 0
    assert run_system(state) == ["audit"]
    status = RESTORATION.status(state)
    assert status["phase"] == "keep" and status["to_act"] == [0]
    assert {"type": "keep_worker", "location": "pos:B1"} in RESTORATION.legal_actions(state, 0)
    act(state, 0, "keep_worker", location="pos:B1")
    assert state["seats"][0]["reputation"] == 2
    assert refused(state, 0, "keep_worker", location="pos:B1") == "no_worker_there"
    act(state, 0, "collect_workers")
    # Grey has no reputation to pay and Jade no worker out: both are passed over.
    assert RESTORATION.status(state)["awaiting_system"] == "end_of_round"
    assert run_system(state) == ["end_of_round", "reveal_event"]
    assert state["positions"]["B1"]["workers"] == [{"seat": 0, "artisan": False}]
    assert state["positions"]["C1"]["workers"] == []
    assert state["seats"][0]["board_workers"] == 2 and state["seats"][0]["rest"] == 0
    assert state["round"] == 2


def test_keeping_errors() -> None:
    state = at_audit()
    for seat in (0, 1):
        place_at(state, "B1", seat)
        state["seats"][seat]["board_workers"] += 1
    run_system(state)
    assert refused(state, 1, "keep_worker", location="pos:B1") == "not_your_turn"
    state["seats"][0]["reputation"] = 0
    assert refused(state, 0, "keep_worker", location="pos:B1") == "insufficient_reputation"
    assert refused(state, 0, "keep_worker", location="pos:C1") == "no_worker_there"
    act(state, 0, "collect_workers")
    assert refused(state, 0, "collect_workers") == "not_your_turn"


def test_a_kept_construction_worker_keeps_its_progress_into_the_next_round() -> None:
    state = at_audit()
    tile = state["construction"]["display"][0]
    state["construction"]["progress"][tile].append({"seat": 0, "space": 1})
    state["seats"][0]["rest"] -= 1
    run_system(state)
    act(state, 0, "keep_worker", location=f"tile:{tile}:1")  # nothing more to keep
    assert run_system(state) == ["end_of_round", "reveal_event"]
    assert state["construction"]["progress"][tile] == [{"seat": 0, "space": 1}]


def test_the_next_round_opens_with_its_event_tile_revealed() -> None:
    state = at_audit()  # nobody has a worker out to keep
    assert run_system(state) == ["audit", "end_of_round", "reveal_event"]
    assert state["events"]["revealed"] == 2
    assert len(RESTORATION.view(state, None)["events"]["revealed"]) == 2


def test_keep_worker_is_refused_outside_the_audit() -> None:
    state = table(3)
    assert refused(state, 0, "keep_worker", location="pos:B1") == "phase_mismatch"


# -- Game end ----------------------------------------------------------------------------


def test_the_third_audit_ends_the_game_with_final_scoring() -> None:
    state = at_audit()
    state["round"] = 3
    run_system(state)
    assert state["finished"] and state["phase"] == "finished"
    assert RESTORATION.status(state) == {
        "round": 3,
        "phase": "finished",
        "to_act": [],
        "awaiting_system": None,
        "finished": True,
    }
    result = RESTORATION.result(state)
    assert result is not None
    assert sorted(seat for place in result["ranking"] for seat in place) == [0, 1, 2]
    for row in result["scores"]:
        assert row["total"] == sum(row["breakdown"].values())
    assert refused(state, 0, "end_turn") == "game_finished"
    assert RESTORATION.legal_actions(state, 0) == []


def test_no_result_before_the_end() -> None:
    assert RESTORATION.result(table(3)) is None


def test_final_scoring_counts_every_source_line_by_line() -> None:
    state = at_audit()
    state["round"] = 3
    orange = state["seats"][0]
    orange.update(
        tiles=["T05", "T08"],
        technology=4,
        reputation=7,
        hand=["antiquarian", "treasurer"],
        board_artisans=1,
        upgrades_kept=2,
        ap_track=3,
    )
    state["artisan_supply"] -= 1
    run_system(state)
    orange_score = RESTORATION.result(state)["scores"][0]
    assert orange_score["breakdown"] == {
        "construction_tiles": 9 + 4,
        "technology": 0,  # below the highest space: the track scores on its scoring spaces
        "reputation": 7,
        "manager_cards": 2 + 0,
        "artisans": 3,
        "unused_upgrade_tokens": 2,
        "research_ap_track": data.AP_TRACK[2],
    }


def test_ties_are_broken_by_constructions_then_development_ap_then_artisans() -> None:
    state = at_audit()
    state["round"] = 3
    seats = state["seats"]
    for player in seats:
        player.update(reputation=0, hand=[], technology=0)
    seats[0].update(tiles=["T01"])  # 4 AP from one construction
    seats[1].update(reputation=4)  # 4 AP from the development board
    seats[2].update(reputation=1, board_artisans=1)  # 1 + 3
    state["artisan_supply"] -= 1
    run_system(state)
    assert RESTORATION.result(state)["ranking"] == [[0], [1], [2]]


def test_players_tied_on_everything_share_the_place() -> None:
    state = at_audit()
    state["round"] = 3
    for player in state["seats"]:
        player.update(reputation=2, hand=[], technology=0)
    run_system(state)
    assert RESTORATION.result(state)["ranking"] == [[0, 1, 2]]
