"""The end of the game: the triggers, the last turns, the ranking, and the three variants'
wins and losses."""

from __future__ import annotations

from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import COLOURS
from tests.unit.impendium.helpers import act, auto, put_star, star_ids, table


def _galaxy_of_each_colour(state: dict, count: int = 5) -> None:
    state["galaxies"] = [
        {"id": n + 1, "colour": COLOURS[n % 5], "stars": [], "ruler": None, "card": None}
        for n in range(count)
    ]


def test_one_galaxy_of_each_colour_triggers_the_end() -> None:
    # "until a player reaches 25 Victory points or one galaxy of each color has been
    # constructed at which point, each player may take one more turn"
    state = table(3)
    act(state, 0, "pass")
    _galaxy_of_each_colour(state)
    act(state, 1, "move", to="1,0")
    assert state["end_trigger"] == {"reason": "galaxies", "seat": None}
    assert state["final_turns"] == [2, 0]
    act(state, 1, "end_turn")
    act(state, 2, "pass")
    assert state["turn"]["seat"] == 0  # a passed player still has the last turn
    act(state, 0, "pass")
    assert auto(state) == "final_scoring"
    assert state["finished"]


def test_an_end_reached_while_generating_gives_everyone_a_last_turn() -> None:
    state = table(2)
    state["seats"][1]["vp"] = 24
    state["galaxies"] = [{"id": 1, "colour": "red", "stars": [], "ruler": 1, "card": "R09"}]
    act(state, 0, "pass")
    act(state, 1, "pass")
    auto(state)  # end of round: seat 1 starts round 2
    auto(state)  # generation: the ruler card pays 2 VP
    assert state["end_trigger"] == {"reason": "victory_points", "seat": 1}
    assert state["final_turns"] == [1, 0]
    act(state, 0, "take_federation_resource", resource="water")
    act(state, 1, "take_federation_resource", resource="water")
    assert state["turn"]["seat"] == 1 and state["final_turns"] == [0]


def test_equal_vp_is_broken_by_colonies_on_the_map_then_resources() -> None:
    state = table(3)
    put_star(state, "2,0", "S01", [2])
    state["seats"][0]["resources"]["water"] = 9
    for mine in state["seats"]:
        mine["vp"] = 10
    state["phase"] = "final_scoring"
    auto(state)
    result = IMPENDIUM.result(state)
    assert result is not None
    assert result["ranking"] == [[2], [0], [1]]
    assert result["scores"][0]["breakdown"] == {
        "federation_stars": 0,
        "harbinger_majority": 0,
        "harbinger_discs": 0,
        "rulers": 0,
        "diplomacy": 0,
    }


def test_fully_tied_players_share_a_place() -> None:
    state = table(2)
    state["phase"] = "final_scoring"
    auto(state)
    assert IMPENDIUM.result(state)["ranking"] == [[0, 1]]


def test_the_solo_player_wins_with_every_colour_and_25_vp() -> None:
    # "Must build at least one galaxy of each color and make it to 25 victory points."
    state = table(1, variant="solo")
    put_star(state, "2,0", "S01", [0])
    _galaxy_of_each_colour(state)
    state["seats"][0]["vp"] = 24
    state["seats"][0]["hand"] = ["D09"]
    act(state, 0, "play_diplomacy", card="D09")
    assert state["end_trigger"]["reason"] == "solo_win"
    auto(state)
    assert IMPENDIUM.result(state)["outcome"]["won"] is True


def test_the_solo_player_loses_at_once_with_no_colonies_on_the_map() -> None:
    # "Lose immediately if you have no colonies on the map."
    state = table(1, variant="solo")
    put_star(state, "2,0", "S01", [0])
    state["board"]["4,0"] = {"kind": "harbinger", "card": "H01", "discs": [None] * 4}
    act(state, 0, "pass")
    auto(state)
    auto(state)
    act(state, 0, "take_federation_resource", resource="water")
    auto(state)  # the harbinger destroys the only colony's star
    assert state["end_trigger"]["reason"] == "solo_loss"
    auto(state)
    assert IMPENDIUM.result(state)["outcome"] == {
        "variant": "solo",
        "won": False,
        "winners": [],
        "reason": "solo_loss",
    }


def test_semi_cooperative_players_with_20_vp_win_once_every_colour_has_a_galaxy() -> None:
    # "Must build at least one galaxy of each color for any player to win. Once
    # accomplished, all players with 20+ victory points win."
    state = table(3, variant="semi_cooperative")
    state["seats"][0]["vp"] = 30
    state["seats"][2]["vp"] = 20
    act(state, 0, "move", to="1,0")
    assert state["end_trigger"] is None  # no 25 VP trigger in this variant
    _galaxy_of_each_colour(state)
    act(state, 0, "end_turn")
    assert state["end_trigger"] == {"reason": "galaxies", "seat": None}
    for seat in (1, 2, 0):
        act(state, seat, "pass")
    auto(state)
    result = IMPENDIUM.result(state)
    assert result["outcome"]["winners"] == [0, 2]
    assert result["ranking"] == [[0, 2], [1]]


def test_semi_cooperative_players_all_lose_without_every_colour() -> None:
    state = table(2, variant="semi_cooperative", round_limit=1)
    state["seats"][0]["vp"] = 30
    act(state, 0, "pass")
    act(state, 1, "pass")
    auto(state)
    auto(state)
    assert IMPENDIUM.result(state)["outcome"]["won"] is False


def test_cooperative_players_win_together_with_eight_galaxies_including_every_colour() -> None:
    # "Must build at least one galaxy of each color and a total of 8 galaxies."
    state = table(2, variant="cooperative")
    for seat, position in ((0, "2,0"), (1, "-2,0")):
        put_star(state, position, star_ids("red")[seat], [seat] * 3)
    _galaxy_of_each_colour(state, 7)
    act(state, 0, "move", to="1,0")
    assert state["end_trigger"] is None
    _galaxy_of_each_colour(state, 8)
    act(state, 0, "move", to="2,0")
    assert state["end_trigger"]["reason"] == "cooperative_win"
    auto(state)
    result = IMPENDIUM.result(state)
    assert result["outcome"]["winners"] == [0, 1]
    assert result["ranking"] == [[0, 1]]


def test_cooperative_players_lose_at_once_below_three_colonies_each() -> None:
    # "Lose immediately if you have less than 3 colonies per player on the map in total."
    state = table(2, variant="cooperative")
    put_star(state, "2,0", "S06", [0, 0, 1, 1])
    put_star(state, "-2,0", "S03", [0, 1])
    state["arks"][0] = "2,0"
    state["seats"][0]["factions"].append("F18")
    act(state, 0, "build_colony", slot=4, resource="water", relocate="map:-2,0/0")
    assert state["end_trigger"] is None
    state["board"]["-2,0"]["colonies"][1] = None
    act(state, 0, "end_turn")
    assert state["end_trigger"]["reason"] == "cooperative_loss"
