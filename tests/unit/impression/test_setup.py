"""Setup 1-9 of the Impression rulebook and the status of a new game."""

from __future__ import annotations

import random

import pytest

from projections.games.impression import data
from projections.ruleset import IllegalAction
from tests.unit.impression.support import RULES, act, new_game, refused, set_up


@pytest.mark.parametrize(("players", "shops"), [(2, 9), (3, 12), (4, 16)])
def test_the_shops_for_the_player_count_are_laid_out(players: int, shops: int) -> None:
    # Setup 9: "for a 3-player game keep the 2+ and 3+ shop tiles"
    state = new_game(players)
    assert len(state["shops"]) == shops
    assert all(data.SHOPS[s]["min_players"] <= players for s in state["shops"])


#: "Shop Actions (Action Phase)", each by its icon: the rulebook lists them without a
#: player count
SHOP_ACTIONS = {
    "Gaining resources": "gain",
    "Lead letter": "use_letter",
    "Increasing capacity": "capacity",
    "Increasing your workforce": "workforce",
    "Trade": "trade",
    "Typesetting": "typeset",
    "Travel": "travel",
    "Technology": "technology",
}


@pytest.mark.parametrize("players", range(RULES.min_players, RULES.max_players + 1))
def test_every_shop_action_the_rulebook_lists_is_in_a_room_at_every_player_count(
    players: int,
) -> None:
    # A. Shop: "Wherever your tradesman stops, lay it down and immediately take the action
    # of that room"; the Shop Actions list Travel and the others for every game
    state = set_up(players)
    offered = {
        effect["icon"]
        for shop in state["shops"]
        for room in ("room_I", "room_II")
        for effect in data.SHOPS[shop][room]
    }
    missing = [name for name, icon in SHOP_ACTIONS.items() if icon not in offered]
    assert not missing, f"no room in play at {players} players offers {missing}"


def test_every_tile_is_dealt_as_the_setup_says() -> None:
    state = new_game(3)
    assert len(state["trading"]["display"]) == 3  # Setup 1
    for level in data.LEVELS:  # Setup 2 and 3
        assert len(state["tech"][level]["display"]) == 3
        assert all(data.TECHNOLOGIES[t]["level"] == level for t in state["tech"][level]["display"])
        assert len(state["factories"][level]["draw_pile"]) == 9
    # Setup 4: a disc on every grey city, the rest in the box
    assert set(state["map_discs"]) == set(data.GREY_CITIES)
    assert len(state["boxed_discs"]) == 24 - len(data.GREY_CITIES)
    assert len(state["contracts"]["display"]) == 5  # Setup 6
    assert all(state["letters"]["desk"]) and len(state["letters"]["desk"]) == 4  # Setup 7
    assert len(state["letters"]["draw_pile"]) == 50


def test_each_player_starts_with_the_documented_values() -> None:
    state = new_game(4)
    for p in state["seats"]:
        assert (p["marks"], p["paper"], p["lead"], p["ink"]) == (3, 1, 1, 1)
        assert (p["workforce"], p["capacity"], p["city_markers"], p["assistants"]) == (2, 2, 12, 5)
        shops = [man["shop"] for man in p["tradesmen"]]
        assert len(set(shops)) == 2
        assert all(man["room"] == "II" and man["upright"] for man in p["tradesmen"])
    assert state["agents"] == [data.START_CITY] * 4
    assert sorted(state["order"]) == [0, 1, 2, 3]


def test_a_new_game_waits_for_the_first_player_to_place_a_tradesman() -> None:
    state = set_up(2)
    assert RULES.status(state) == {
        "round": 1,
        "phase": "placement",
        "to_act": [state["order"][0]],
        "awaiting_system": None,
        "finished": False,
    }
    assert all(p["tradesmen"] == [] for p in state["seats"])
    assert RULES.system_action(state) is None
    assert RULES.result(state) is None


def test_the_first_player_may_place_a_tradesman_in_any_shop_in_play() -> None:
    state = set_up(3)
    seat = state["order"][0]
    assert RULES.legal_actions(state, seat) == [
        {"type": "place_tradesman", "shop": shop} for shop in state["shops"]
    ]
    assert RULES.legal_actions(state, state["order"][1]) == []


def test_players_place_a_tradesman_each_in_player_order_then_a_second() -> None:
    state = set_up(3)
    first, second, third = state["order"]
    for seat, shop in [(first, "S1"), (second, "S1"), (third, "S13"), (first, "S2")]:
        assert RULES.status(state)["to_act"] == [seat]
        act(state, seat, type="place_tradesman", shop=shop)
    assert {"type": "place_tradesman", "shop": "S1"} not in RULES.legal_actions(state, second)
    act(state, second, type="place_tradesman", shop="S6")
    act(state, third, type="place_tradesman", shop="S14")
    assert [man["shop"] for man in state["seats"][first]["tradesmen"]] == ["S1", "S2"]
    assert [man["shop"] for man in state["seats"][second]["tradesmen"]] == ["S1", "S6"]
    assert all(
        man["room"] == "II" and man["upright"] for p in state["seats"] for man in p["tradesmen"]
    )
    # sharing a shop with another player is no arrival: nobody earned a mark
    assert all(p["marks"] == 3 for p in state["seats"])
    assert RULES.status(state)["phase"] == "action"
    assert RULES.status(state)["to_act"] == [first]
    assert state["turn"] == {"index": 0, "pass": 1, "main_done": False, "swapped": []}


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "place_tradesman", "shop": "S16"}, "unknown_shop"),  # a 4+ shop
        ({"type": "place_tradesman", "shop": None}, "malformed_action"),
        ({"type": "place_tradesman", "shop": "S1"}, "own_tradesman_there"),
        ({"type": "reset", "slot": 0, "keep": None, "lay_down": 0}, "wrong_phase"),
        ({"type": "end_turn"}, "wrong_phase"),
        ({"type": "decline"}, "nothing_to_decline"),
    ],
)
def test_a_placement_is_refused(action: dict[str, object], code: str) -> None:
    state = set_up(2)
    first, second = state["order"]
    act(state, first, type="place_tradesman", shop="S1")
    act(state, second, type="place_tradesman", shop="S2")
    refused(state, first, code, **action)


def test_placing_out_of_turn_is_refused() -> None:
    state = set_up(2)
    refused(state, state["order"][1], "not_your_turn", type="place_tradesman", shop="S1")


def test_a_tradesman_is_placed_only_before_the_first_round() -> None:
    state = new_game(2)
    refused(state, state["order"][0], "wrong_phase", type="place_tradesman", shop="S2")


def test_a_game_whose_tradesmen_are_placed_waits_for_the_first_player_to_act() -> None:
    state = new_game(2)
    assert RULES.status(state)["phase"] == "action"
    assert RULES.status(state)["to_act"] == [state["order"][0]]


def test_impression_is_for_two_to_four_players() -> None:
    with pytest.raises(IllegalAction) as error:
        RULES.setup(["Solo"], {}, random.Random(1))
    assert error.value.code == "player_count"


def test_setup_is_deterministic_for_the_same_random_source() -> None:
    assert new_game(3, seed=11) == new_game(3, seed=11)
