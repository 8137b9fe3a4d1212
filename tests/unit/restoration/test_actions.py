"""Each action a decision asks for: its effect and every way it can be refused."""

from __future__ import annotations

from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from tests.unit.restoration.table import (
    act,
    decision,
    place_at,
    refused,
    run_system,
    show_tiles,
    table,
)


def ask(state: dict, seat: int, kind: str, optional: bool = True, **extra: object) -> None:
    """Put a decision for ``seat`` in front of the queue, as an icon would."""
    state["pending"].insert(0, {"kind": kind, "seat": seat, "optional": optional, **extra})


# -- Construction action ----------------------------------------------------------------


def test_starting_a_construction_puts_a_board_worker_on_a_tile_of_that_colour() -> None:
    state = table(3)
    show_tiles(state, "T13", "T08")  # T13 starts green (reputation), T08 red
    ask(state, 0, "construct", colour="green")
    options = RESTORATION.legal_actions(state, 0)
    assert {"type": "start_construction", "tile": "T13"} in options
    assert {"type": "start_construction", "tile": "T08"} not in options
    act(state, 0, "start_construction", tile="T13")
    assert state["construction"]["progress"]["T13"] == [{"seat": 0, "space": 0}]
    assert state["seats"][0]["board_workers"] == 2
    assert decision(state)["kind"] == "reputation"  # the space's effect is gained


def test_continuing_a_construction_moves_the_worker_up_to_the_next_space() -> None:
    state = table(3)
    show_tiles(state, "T11")  # red, white(manager), green, white, blue
    state["construction"]["progress"]["T11"].append({"seat": 0, "space": 0})
    ask(state, 0, "construct", colour="white")
    act(state, 0, "continue_construction", tile="T11", space=0)
    assert state["construction"]["progress"]["T11"] == [{"seat": 0, "space": 1}]
    assert decision(state)["kind"] == "manager"


def test_construction_errors() -> None:
    state = table(3)
    show_tiles(state, "T11", "T08", "T01")
    state["construction"]["progress"]["T11"].append({"seat": 1, "space": 0})
    ask(state, 0, "construct", colour="red")
    assert refused(state, 0, "start_construction", tile="T01") == "colour_mismatch"
    assert refused(state, 0, "start_construction", tile="T99") == "invalid_action"  # no such tile
    waiting = state["construction"]["pile"][0]
    assert refused(state, 0, "start_construction", tile=waiting) == "tile_not_in_display"
    assert refused(state, 0, "continue_construction", tile="T11", space=0) == "no_progress_there"
    assert refused(state, 1, "continue_construction", tile="T11", space=0) == "not_your_turn"
    assert refused(state, 0, "develop", track="technology") == "decision_pending"
    state["seats"][0]["board_workers"] = 0
    assert refused(state, 0, "start_construction", tile="T08") == "no_worker_on_board"


def test_a_worker_may_not_continue_onto_a_space_of_another_colour() -> None:
    state = table(3)
    show_tiles(state, "T11")
    state["construction"]["progress"]["T11"].append({"seat": 0, "space": 0})
    ask(state, 0, "construct", colour="blue")
    assert refused(state, 0, "continue_construction", tile="T11", space=0) == "colour_mismatch"


def test_a_breakthrough_ignores_colour_and_reaches_antique_spaces() -> None:
    state = table(3)
    show_tiles(state, "T04")  # blue, antique, blue, red
    state["construction"]["progress"]["T04"].append({"seat": 0, "space": 0})
    ask(state, 0, "breakthrough")
    act(state, 0, "continue_construction", tile="T04", space=0)
    assert state["construction"]["progress"]["T04"] == [{"seat": 0, "space": 1}]


def test_an_antique_effect_builds_only_on_antique_spaces() -> None:
    state = table(3)
    show_tiles(state, "T04", "T11")
    state["construction"]["progress"]["T04"].append({"seat": 0, "space": 0})
    state["construction"]["progress"]["T11"].append({"seat": 0, "space": 0})
    ask(state, 0, "antique")
    assert [a for a in RESTORATION.legal_actions(state, 0) if a["type"] != "skip_action"] == [
        {"type": "continue_construction", "tile": "T04", "space": 0}
    ]
    assert refused(state, 0, "continue_construction", tile="T11", space=0) == "colour_mismatch"


def test_taking_your_worker_back_needs_a_reputation_level() -> None:
    state = table(3)
    show_tiles(state, "T08")
    state["construction"]["progress"]["T08"].append({"seat": 1, "space": 0})
    state["seats"][1]["reputation"] = 0
    ask(state, 1, "completion", tile="T08", space=0)
    assert refused(state, 1, "completion_choice", choice="take_back") == ("insufficient_reputation")
    assert refused(state, 1, "completion_choice", choice="stay") == "invalid_action"


def test_a_player_without_reputation_rests_the_worker_without_being_asked() -> None:
    state = table(3)
    show_tiles(state, "T08")  # red, blue, red
    state["seats"][1].update(reputation=0, board_workers=2)
    progress = state["construction"]["progress"]["T08"]
    progress += [{"seat": 1, "space": 0}, {"seat": 0, "space": 1}]
    state["seats"][0]["board_workers"] -= 1
    ask(state, 0, "construct", colour="red")
    act(state, 0, "continue_construction", tile="T08", space=1)
    assert state["seats"][1]["rest"] == 1
    assert decision(state)["kind"] == "upgrade"


# -- Development ---------------------------------------------------------------------


def test_advancing_on_the_technology_track_resolves_the_new_space() -> None:
    state = table(3)
    ask(state, 0, "development")
    act(state, 0, "develop", track="technology")
    assert state["seats"][0]["technology"] == 1
    assert decision(state)["kind"] == data.TECHNOLOGY[1]["effect"]


def test_crossing_a_worker_unlock_line_recruits_a_worker_placeable_this_round() -> None:
    state = table(3)
    line = next(level for level, row in data.TECHNOLOGY.items() if row["unlock_line"])
    state["seats"][0]["technology"] = line - 1
    ask(state, 0, "development")
    act(state, 0, "develop", track="technology")
    assert state["seats"][0]["recruitment"] == 1
    assert state["seats"][0]["board_workers"] == 4


def test_reaching_the_highest_space_takes_the_highest_free_scoring_space() -> None:
    state = table(3)
    state["scoring_spaces_taken"] = 1
    state["seats"][0]["technology"] = data.TOP_LEVEL - 1
    ask(state, 0, "development")
    act(state, 0, "develop", track="technology")
    assert state["seats"][0]["technology_scoring_space"] == data.SCORING_SPACES[1]
    assert refused(state, 0, "develop", track="technology") == "no_decision_pending"
    ask(state, 0, "development")
    assert refused(state, 0, "develop", track="technology") == "technology_track_finished"


def test_each_small_technology_space_holds_one_worker() -> None:
    state = table(3)
    for seat in (1, 2):
        state["seats"][seat]["technology"] = 1
    ask(state, 0, "development")
    assert refused(state, 0, "develop", track="technology") == "technology_space_full"
    act(state, 0, "develop", track="reputation")


def test_advancing_reputation_stops_at_the_top() -> None:
    state = table(3)
    state["seats"][0]["reputation"] = data.REPUTATION["highest"]
    ask(state, 0, "development")
    assert refused(state, 0, "develop", track="reputation") == "reputation_at_top"
    assert refused(state, 0, "develop", track="fame") == "invalid_action"


# -- Manager cards --------------------------------------------------------------------


def test_taking_a_manager_from_the_supply_refills_it_to_four_types() -> None:
    state = table(3)
    state["managers"]["supply"] = {"foreman": 1, "broker": 2, "steward": 1, "herald": 1}
    ask(state, 0, "manager")
    act(state, 0, "take_manager", source="supply", manager="foreman")
    assert "foreman" in state["seats"][0]["hand"]
    assert RESTORATION.status(state)["awaiting_system"] == "refill_manager_supply"
    assert run_system(state) == ["refill_manager_supply"]
    assert len(state["managers"]["supply"]) == 4


def test_taking_from_a_stack_leaves_the_supply_as_it_was() -> None:
    state = table(3)
    state["managers"]["supply"] = {"foreman": 1, "broker": 2, "steward": 1, "herald": 1}
    ask(state, 0, "manager")
    act(state, 0, "take_manager", source="supply", manager="broker")
    assert state["managers"]["supply"]["broker"] == 1
    assert RESTORATION.status(state)["awaiting_system"] is None


def test_drawing_the_top_of_the_manager_deck_is_seen_only_by_the_drawer() -> None:
    state = table(3)
    top = state["managers"]["deck"]["draw_pile"][0]
    ask(state, 0, "manager")
    act(state, 0, "take_manager", source="deck")
    assert state["seats"][0]["hand"][-1] == top
    assert RESTORATION.view(state, 1)["seats"][0]["hand"] is None
    assert RESTORATION.reveals_hidden(state, {"type": "take_manager", "source": "deck", "seat": 0})


def test_manager_taking_errors() -> None:
    state = table(3)
    ask(state, 0, "manager")
    absent = next(kind for kind in data.MANAGERS if kind not in state["managers"]["supply"])
    assert refused(state, 0, "take_manager", source="supply", manager=absent) == (
        "manager_not_in_supply"
    )
    assert refused(state, 0, "take_manager", source="deck", manager=absent) == "invalid_action"
    assert refused(state, 0, "take_manager", source="discard") == "invalid_action"
    state["managers"]["deck"] = {"draw_pile": [], "discard_pile": []}
    assert refused(state, 0, "take_manager", source="deck") == "manager_deck_empty"


# -- Transfer -------------------------------------------------------------------------


def test_a_transfer_swaps_two_workers_in_the_workshop_area() -> None:
    state = table(3)
    place_at(state, "B1", 1)
    place_at(state, "C1", 2, artisan=True)
    ask(state, 0, "transfer")
    act(state, 0, "transfer", first="B1/1", second="C1/artisan")
    assert state["positions"]["B1"]["workers"] == [{"seat": 2, "artisan": True}]
    assert state["positions"]["C1"]["workers"] == [{"seat": 1, "artisan": False}]


def test_a_transferred_just_placed_worker_moves_in_its_new_workshops() -> None:
    state = table(3, event="tax_assessment")
    place_at(state, "E1", 1)
    act(state, 0, "place_worker", position="A1", artisan=False)
    act(state, 0, "move", workshop="A")
    act(state, 0, "skip_action")
    ask(state, 0, "transfer")
    act(state, 0, "transfer", first="A1/0", second="E1/1")
    assert state["turn"]["position"] == "E1"
    assert [a for a in RESTORATION.legal_actions(state, 0) if a["type"] == "move"] == [
        {"type": "move", "workshop": "E"}
    ]


def test_transfer_errors() -> None:
    state = table(3)
    place_at(state, "B1", 1)
    place_at(state, "B1", 2)
    place_at(state, "C1", 1)
    ask(state, 0, "transfer")
    assert refused(state, 0, "transfer", first="B1/0", second="C1/1") == "worker_not_there"
    assert refused(state, 0, "transfer", first="B1/1", second="B1/2") == "same_position"
    assert refused(state, 0, "transfer", first="B1/1", second="C1/1") == "pointless_transfer"
    act(state, 0, "transfer", first="B1/2", second="C1/1")


# -- Reputation, upgrades, skipping ----------------------------------------------------


def test_the_reputation_icon_moves_up_or_down() -> None:
    state = table(3)
    state["seats"][0]["reputation"] = 1
    ask(state, 0, "reputation")
    act(state, 0, "adjust_reputation", direction="down")
    assert state["seats"][0]["reputation"] == 0
    ask(state, 0, "reputation")
    assert refused(state, 0, "adjust_reputation", direction="down") == "reputation_at_bottom"
    assert refused(state, 0, "adjust_reputation", direction="sideways") == "invalid_action"
    state["seats"][0]["reputation"] = data.REPUTATION["highest"]
    assert refused(state, 0, "adjust_reputation", direction="up") == "reputation_at_top"
    act(state, 0, "adjust_reputation", direction="down")


def test_an_upgrade_token_unlocks_a_research_position() -> None:
    state = table(3)
    ask(state, 0, "upgrade", optional=False, may_keep=True)
    act(state, 0, "place_upgrade", target="RD3")
    assert state["seats"][0]["research"]["RD3"]["unlocked"]


def test_upgrade_tokens_fill_the_research_ap_track_from_the_left() -> None:
    state = table(3)
    for _ in range(2):
        ask(state, 0, "upgrade", optional=False, may_keep=True)
        act(state, 0, "place_upgrade", target="ap_track")
    assert state["seats"][0]["ap_track"] == 2


def test_upgrade_errors() -> None:
    state = table(3)
    ask(state, 0, "upgrade", optional=False, may_keep=False)
    assert refused(state, 0, "place_upgrade", target="keep") == "must_place_upgrade"
    assert refused(state, 0, "place_upgrade", target="RD1") == "research_already_unlocked"
    assert refused(state, 0, "place_upgrade", target="RD7") == "invalid_action"  # no such position
    assert refused(state, 0, "skip_action") == "effect_is_mandatory"
    state["seats"][0]["ap_track"] = len(data.AP_TRACK)
    assert refused(state, 0, "place_upgrade", target="ap_track") == "ap_track_full"
    state["upgrade_supply"] = 0
    assert refused(state, 0, "place_upgrade", target="RD2") == "no_upgrade_tokens"


def test_an_optional_action_may_be_skipped() -> None:
    state = table(3)
    ask(state, 0, "development")
    act(state, 0, "skip_action")
    assert state["pending"] == []
    assert refused(state, 0, "skip_action") == "no_decision_pending"
