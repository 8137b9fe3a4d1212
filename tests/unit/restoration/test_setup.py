"""Setup the Game, steps 1-7, and the 2 Players Setup."""

from __future__ import annotations

import random

import pytest

from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from projections.ruleset import IllegalAction
from tests.unit.restoration.table import NAMES, act, refused, run_system


def fresh(players: int, seed: int = 3) -> dict:
    return RESTORATION.setup(NAMES[:players], {"arrangement": "first_game"}, random.Random(seed))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_players_plus_two_construction_tiles_are_drawn(players: int) -> None:
    state = fresh(players)
    assert len(state["construction"]["display"]) == players + 2
    assert len(state["construction"]["pile"]) == 24 - players - 2


def test_three_event_tiles_are_drawn_and_only_the_first_is_open() -> None:
    state = fresh(3)
    assert len(state["events"]["rounds"]) == 3
    assert state["events"]["revealed"] == 1
    view = RESTORATION.view(state, 0)
    assert [e["id"] for e in view["events"]["revealed"]] == state["events"]["rounds"][:1]
    assert view["events"]["face_down"] == 2


def test_the_manager_supply_shows_four_different_types_with_duplicates_stacked() -> None:
    for seed in range(20):
        state = fresh(4, seed)
        supply = state["managers"]["supply"]
        assert len(supply) == 4
        revealed = sum(supply.values())
        assert len(state["managers"]["deck"]["draw_pile"]) == 30 - revealed - 4


def test_each_player_starts_with_three_workers_an_artisan_and_one_hidden_manager() -> None:
    state = fresh(4)
    for player in state["seats"]:
        assert player["board_workers"] == 3
        assert player["board_artisans"] == 1
        assert player["recruitment"] == 2
        assert len(player["hand"]) == 1
        assert player["technology"] == 0
    assert state["artisan_supply"] == 2


def test_reputation_starts_on_the_space_of_each_players_turn_order() -> None:
    state = fresh(4, seed=5)
    first = state["first_player"]
    for place, start in enumerate(data.REPUTATION["start_by_turn_order"][:4]):
        assert state["seats"][(first + place) % 4]["reputation"] == start


def test_the_first_player_is_drawn_at_random() -> None:
    firsts = {fresh(4, seed)["first_player"] for seed in range(30)}
    assert firsts == {0, 1, 2, 3}


def test_every_production_token_starts_on_its_boards_bottom_left_space() -> None:
    state = fresh(3)
    assert {w: place["token"] for w, place in state["workshops"].items()} == dict.fromkeys(
        "ABCDE", 0
    )


def test_the_workshop_area_has_intersections_and_single_positions_with_their_influence() -> None:
    state = fresh(3)
    positions = state["positions"]
    assert positions["AB1"]["influence"] == {"A": 1, "B": 1}
    assert positions["BC"]["influence"] == {"B": 1, "C": 1}
    assert positions["C2"]["influence"] == {"C": 2}
    kinds = [spot["kind"] for spot in positions.values()]
    assert kinds.count("intersection") == 12 and kinds.count("single") == 10


def test_another_arrangement_moves_the_auxiliary_boards_and_their_tokens() -> None:
    state = RESTORATION.setup(NAMES[:3], {"arrangement": "turned"}, random.Random(1))
    assert "AD1" in state["positions"] and state["positions"]["DE"]["influence"] == {
        "D": 1,
        "E": 1,
    }
    assert state["workshops"]["B"]["token"] == data.ARRANGEMENTS["turned"]["start"]["B"]


def test_an_unknown_arrangement_is_refused() -> None:
    with pytest.raises(IllegalAction) as caught:
        RESTORATION.setup(NAMES[:3], {"arrangement": "spiral"}, random.Random(1))
    assert caught.value.code == "unknown_arrangement"


def test_restoration_needs_two_to_four_players() -> None:
    with pytest.raises(IllegalAction) as caught:
        RESTORATION.setup(["Solo"], {}, random.Random(1))
    assert caught.value.code == "player_count"


def test_two_players_remove_the_six_manager_cards_with_the_grey_icon() -> None:
    state = fresh(2)
    removed = state["managers"]["removed"]
    assert len(removed) == 6
    assert all(data.MANAGERS[card]["two_player_icon"] for card in removed)
    assert (
        sum(state["managers"]["supply"].values()) + len(state["managers"]["deck"]["draw_pile"]) + 2
        == 24
    )


def test_two_players_may_place_only_on_intersections() -> None:
    state = fresh(2)
    assert all(spot["closed"] == (spot["kind"] == "single") for spot in state["positions"].values())


def test_each_player_first_unlocks_one_research_skill_with_an_upgrade_token() -> None:
    state = fresh(3)
    assert RESTORATION.status(state)["to_act"] == [0, 1, 2]
    act(state, 1, "unlock_research", position="RD3")
    assert state["seats"][1]["research"]["RD3"]["unlocked"]
    assert state["upgrade_supply"] == 27
    assert RESTORATION.status(state)["to_act"] == [0, 2]
    assert refused(state, 1, "unlock_research", position="RD2") == "already_unlocked"
    assert refused(state, 0, "unlock_research", position="RD9") == "invalid_action"


def test_once_every_skill_is_chosen_the_event_phase_begins_with_an_automatic_step() -> None:
    state = fresh(3)
    for seat in range(3):
        act(state, seat, "unlock_research", position="RD2")
    status = RESTORATION.status(state)
    assert status["awaiting_system"] == "reveal_event" and status["to_act"] == []
    assert run_system(state)[0] == "reveal_event"
    assert state["phase"] in ("event", "construction")
