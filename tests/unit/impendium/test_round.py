"""The round: generating resources, the federation's free resource, harbingers activating,
the end of the round, and the steps only the game may take."""

from __future__ import annotations

from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import STARS
from tests.unit.impendium.helpers import act, auto, put_star, refused, table


def _to_generation(state: dict) -> None:
    for _ in state["players"]:
        act(state, state["turn"]["seat"], "pass")
    assert auto(state) == "end_of_round"
    assert IMPENDIUM.status(state)["awaiting_system"] == "generate_resources"


def test_each_colony_yields_its_stars_top_row_and_so_does_the_arks_star() -> None:
    # "Increase your resource counter per colony (indicated by the top row of the star card
    # the colony is on) as well as according to the star card that your Ark ... occupying."
    state = table()
    put_star(state, "2,0", "S01", [0, 0, 1])  # yields 1 hydrogen, 1 life forms, 1 water
    state["arks"][1] = "2,0"
    _to_generation(state)
    auto(state)
    assert state["seats"][0]["resources"] == {
        "life_forms": 7,
        "water": 7,
        "artifacts": 5,
        "hydrogen": 7,
    }
    assert state["seats"][1]["resources"] == {
        "life_forms": 7,
        "water": 7,
        "artifacts": 5,
        "hydrogen": 7,
    }
    assert STARS["S01"]["production"] == {"hydrogen": 1, "life_forms": 1, "water": 1}


def test_rulers_pay_victory_points_and_resources_each_round() -> None:
    # "Increase Victory points and additional resources according to your ruler of the
    # Galaxy cards."
    state = table()
    state["galaxies"] = [{"id": 1, "colour": "red", "stars": [], "ruler": 1, "card": "R02"}]
    _to_generation(state)
    auto(state)
    assert state["seats"][1]["vp_sources"]["rulers"] == 1
    assert state["seats"][1]["resources"]["water"] == 6


def test_every_player_takes_one_free_resource_from_the_federation() -> None:
    state = table()
    _to_generation(state)
    auto(state)
    assert IMPENDIUM.status(state)["to_act"] == [0, 1]
    refused(state, 0, {"type": "take_federation_resource", "resource": "gold"}, "bad_resource")
    act(state, 1, "take_federation_resource", resource="artifacts")
    refused(state, 1, {"type": "take_federation_resource", "resource": "water"}, "already_taken")
    act(state, 0, "take_federation_resource", resource="hydrogen")
    assert state["seats"][1]["resources"]["artifacts"] == 6
    assert state["phase"] == "actions"
    assert state["turn"]["seat"] == 1  # the marker passed clockwise
    refused(state, 1, {"type": "take_federation_resource", "resource": "water"}, "phase_mismatch")


def test_a_destroying_harbinger_flips_the_weakest_neighbour_to_dust_and_frees_its_colonies() -> (
    None
):
    state = table()
    put_star(state, "2,0", "S01", [0, 1])
    put_star(state, "4,2", "S02", [0])
    state["board"]["4,0"] = {"kind": "harbinger", "card": "H01", "discs": [None] * 4}
    _to_generation(state)
    auto(state)
    act(state, 0, "take_federation_resource", resource="water")
    act(state, 1, "take_federation_resource", resource="water")
    assert IMPENDIUM.status(state)["awaiting_system"] == "activate_harbingers"
    auto(state)
    assert state["board"]["4,2"] == {"kind": "dust", "card": "S02"}
    assert state["board"]["2,0"]["kind"] == "star"
    assert state["phase"] == "actions"


def test_draining_harbingers_take_from_everyone_or_from_arks_nearby() -> None:
    state = table()
    state["board"]["0,2"] = {"kind": "harbinger", "card": "H08", "discs": [None] * 4}
    state["board"]["2,0"] = {"kind": "harbinger", "card": "H14", "discs": [None] * 4}
    state["arks"][1] = "-1,0"
    _to_generation(state)
    auto(state)
    act(state, 0, "take_federation_resource", resource="life_forms")
    act(state, 1, "take_federation_resource", resource="life_forms")
    auto(state)
    assert [m["resources"]["water"] for m in state["seats"]] == [4, 4]
    assert [m["resources"]["hydrogen"] for m in state["seats"]] == [3, 5]


def test_the_end_of_round_resets_factions_and_passes_the_marker() -> None:
    state = table()
    state["seats"][0]["factions"] = ["F13", "F03"]
    act(state, 0, "use_faction_ability", faction="F13", target=0)
    act(state, 0, "use_faction_ability", faction="F03", target=0)
    _to_generation(state)
    assert state["start_player"] == 1
    assert state["round"] == 2
    assert state["seats"][0]["turned"] == []
    assert state["seats"][0]["discounts"] == {"project": {}, "colony": {}, "substitute": {}}


def test_the_round_limit_ends_the_game_with_the_normal_ranking() -> None:
    state = table(round_limit=1)
    state["seats"][1]["vp"] = 3
    act(state, 0, "pass")
    act(state, 1, "pass")
    auto(state)
    assert IMPENDIUM.status(state)["awaiting_system"] == "final_scoring"
    auto(state)
    result = IMPENDIUM.result(state)
    assert result is not None
    assert result["ranking"][0] == [1]
    assert result["end_trigger"] == {"reason": "round_limit", "seat": None}
    assert IMPENDIUM.legal_actions(state, 0) == []


def test_only_the_game_takes_its_automatic_steps() -> None:
    state = table()
    refused(state, 0, {"type": "end_of_round"}, "system_action_only")
    refused(state, None, {"type": "end_of_round"}, "no_system_step")
    refused(state, 0, {"type": "fly"}, "unknown_action")
    refused(state, 5, {"type": "pass"}, "bad_seat")
    state["finished"] = True
    refused(state, 0, {"type": "pass"}, "game_finished")
