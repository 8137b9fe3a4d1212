"""Setup: dealing, starting stars, setup colonies, Arks, and the options a game may take."""

from __future__ import annotations

import random

import pytest

from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import STARS
from projections.ruleset import IllegalAction
from tests.unit.impendium.helpers import act, fresh, refused, through_setup


def test_each_player_starts_with_three_of_each_resource_and_one_faction() -> None:
    state = fresh(4)
    for mine in state["seats"]:
        assert mine["resources"] == {"life_forms": 3, "water": 3, "artifacts": 3, "hydrogen": 3}
        assert len(mine["factions"]) == 1
    assert all(state["subverting"][r] for r in ("life_forms", "water", "artifacts", "hydrogen"))


def test_three_federation_projects_are_dealt_or_four_at_five_players() -> None:
    assert len(fresh(4)["projects"]) == 3
    assert len(fresh(5)["projects"]) == 4


def test_the_first_four_stars_go_next_to_the_federation() -> None:
    state = fresh(2)
    allowed = [a["position"] for a in IMPENDIUM.legal_actions(state, 0)]
    assert sorted(allowed) == ["-2,0", "0,-2", "0,2", "2,0"]
    act(state, 0, "place_start_star", position="2,0")
    drawn = fresh(2)["setup_stars"][0]
    assert state["board"]["2,0"] == {
        "kind": "star",
        "card": drawn,
        "colonies": [None] * len(STARS[drawn]["slots"]),
    }
    assert state["setup_stars"][0] is None


def test_the_fifth_player_places_next_to_another_star_not_of_its_colour() -> None:
    state = fresh(5, seed="five")
    for seat, position in enumerate(["2,0", "0,2", "-2,0", "0,-2"]):
        act(state, seat, "place_start_star", position=position)
    allowed = [a["position"] for a in IMPENDIUM.legal_actions(state, 4)]
    colour = STARS[state["setup_stars"][4]]["colour"]
    for position in allowed:
        x, y = (int(n) for n in position.split(","))
        neighbours = [f"{x + 2},{y}", f"{x - 2},{y}", f"{x},{y + 2}", f"{x},{y - 2}"]
        assert any(state["board"].get(n, {}).get("kind") == "star" for n in neighbours)
        assert not any(
            state["board"].get(n, {}).get("kind") == "star"
            and STARS[state["board"][n]["card"]]["colour"] == colour
            for n in neighbours
        )


def test_a_starting_star_elsewhere_is_refused() -> None:
    state = fresh(2)
    refused(state, 0, {"type": "place_start_star", "position": "4,0"}, "bad_star_position")
    refused(state, 1, {"type": "place_start_star", "position": "2,0"}, "not_your_turn")
    act(state, 0, "place_start_star", position="2,0")
    refused(state, 1, {"type": "place_start_star", "position": "2,0"}, "position_taken")


def test_setup_colonies_go_on_symbol_slots_of_map_stars_in_turn() -> None:
    state = fresh(2)
    act(state, 0, "place_start_star", position="2,0")
    act(state, 1, "place_start_star", position="-2,0")
    assert state["phase"] == "setup_colonies"
    numeric = len(STARS[state["board"]["2,0"]["card"]]["slots"]) - 1
    refused(
        state,
        0,
        {"type": "place_setup_colony", "position": "2,0", "slot": numeric},
        "numeric_slot_at_setup",
    )
    refused(
        state, 0, {"type": "place_setup_colony", "position": "0,0", "slot": 0}, "not_a_map_star"
    )
    refused(state, 0, {"type": "place_setup_colony", "position": "2,0", "slot": 9}, "bad_slot")
    refused(state, 0, {"type": "place_start_star", "position": "4,0"}, "phase_mismatch")
    act(state, 0, "place_setup_colony", position="2,0", slot=0)
    refused(state, 1, {"type": "place_setup_colony", "position": "2,0", "slot": 0}, "slot_taken")
    assert state["board"]["2,0"]["colonies"][0] == 0
    assert state["setup_queue"] == [1, 0, 1, 0, 1]


def test_arks_go_anywhere_on_the_map_then_round_one_begins() -> None:
    state = fresh(2)
    while state["phase"] != "setup_arks":
        seat = IMPENDIUM.status(state)["to_act"][0]
        IMPENDIUM.apply(
            state, {**IMPENDIUM.legal_actions(state, seat)[0], "seat": seat}, random.Random(1)
        )
    refused(state, 0, {"type": "place_ark", "position": "8,8"}, "bad_ark_position")
    refused(state, 0, {"type": "place_ark", "position": "1,1"}, "bad_ark_position")
    act(state, 0, "place_ark", position="1,0")
    act(state, 1, "place_ark", position="0,0")
    assert state["arks"] == ["1,0", "0,0"]
    assert IMPENDIUM.status(state) == {
        "round": 1,
        "phase": "generate",
        "to_act": [],
        "awaiting_system": "generate_resources",
        "finished": False,
    }


def test_after_setup_each_player_has_three_colonies_on_the_map() -> None:
    state = through_setup(fresh(3))
    for seat in range(3):
        placed = sum(
            entry["colonies"].count(seat)
            for entry in state["board"].values()
            if entry["kind"] == "star"
        )
        assert placed == 3


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (1, {"variant": "cooperative"}),
        (2, {"variant": "solo"}),
        (7, {}),
        (2, {"variant": "team"}),
        (2, {"round_limit": 0}),
        (2, {"fast_galaxies": "yes"}),
    ],
)
def test_unsupported_player_counts_and_options_are_refused(players: int, options: dict) -> None:
    names = [f"P{n}" for n in range(players)]
    with pytest.raises(IllegalAction) as caught:
        IMPENDIUM.setup(names, {**IMPENDIUM.options, **options}, random.Random(0))
    assert caught.value.code == "bad_options"


def test_the_solo_variant_takes_one_player() -> None:
    state = fresh(1, variant="solo")
    assert len(state["seats"]) == 1


def test_one_player_with_the_default_options_plays_the_solo_variant() -> None:
    assert fresh(1)["options"]["variant"] == "solo"
