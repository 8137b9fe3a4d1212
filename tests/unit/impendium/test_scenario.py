"""Scenario: a two-player game from a fixed seed, set up and played through two rounds with
chosen actions, checked at the end."""

from __future__ import annotations

import random

from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import STARS
from tests.unit.impendium.helpers import act, auto, fresh


def _slot_paid_with(state: dict, card: str, seat: int) -> int:
    """The first free symbol slot of ``card`` the player can pay."""
    for action in IMPENDIUM.legal_actions(state, seat):
        if action["type"] == "construct_federation_star" and action["project"] == card:
            return int(action["slot"])
    raise AssertionError("no affordable slot")


def test_two_rounds_of_a_seeded_two_player_game() -> None:
    state = fresh(2, seed="scenario")
    act(state, 0, "place_start_star", position="2,0")
    act(state, 1, "place_start_star", position="-2,0")
    for seat, position, slot in [
        (0, "2,0", 0),
        (1, "-2,0", 0),
        (0, "2,0", 1),
        (1, "-2,0", 1),
        (0, "2,0", 2),
        (1, "-2,0", 2),
    ]:
        act(state, seat, "place_setup_colony", position=position, slot=slot)
    act(state, 0, "place_ark", position="0,0")
    act(state, 1, "place_ark", position="-2,0")
    east, west = STARS[state["board"]["2,0"]["card"]], STARS[state["board"]["-2,0"]["card"]]

    assert auto(state) == "generate_resources"
    expected_0 = {r: 3 + 3 * east["production"].get(r, 0) for r in east["production"]}
    for resource, amount in expected_0.items():
        assert state["seats"][0]["resources"][resource] == amount
    west_gain = 4 * west["production"].get("hydrogen", 0)  # 3 colonies and the Ark
    assert state["seats"][1]["resources"]["hydrogen"] == 3 + west_gain
    act(state, 0, "take_federation_resource", resource="water")
    act(state, 1, "take_federation_resource", resource="hydrogen")
    assert state["phase"] == "actions" and state["turn"]["seat"] == 0

    project = state["projects"][0]["card"]
    slot = _slot_paid_with(state, project, 0)
    act(state, 0, "construct_federation_star", project=project, slot=slot)
    act(state, 0, "end_turn")
    act(state, 1, "move", to="-1,0")
    act(state, 1, "move", to="0,0")
    act(state, 1, "attack", rng=random.Random(3), target=0)
    fight = state["last_attack"]
    roll = random.Random(3)
    assert fight["dice"] == [roll.randint(1, 6), roll.randint(1, 6)]
    if fight["winner"] is None:
        assert state["pending"] == []
    else:
        assert fight["spoils"] == min(abs(fight["dice"][0] - fight["dice"][1]), 5)
    while state["pending"]:
        chooser = state["pending"][0]["seat"]
        choice = IMPENDIUM.legal_actions(state, chooser)[0]
        IMPENDIUM.apply(state, {**choice, "seat": chooser}, random.Random(1))
    act(state, 1, "pass")
    act(state, 0, "pass")
    assert auto(state) == "end_of_round"
    assert state["round"] == 2 and state["start_player"] == 1
    assert auto(state) == "generate_resources"
    act(state, 0, "take_federation_resource", resource="artifacts")
    act(state, 1, "take_federation_resource", resource="artifacts")
    assert state["turn"]["seat"] == 1
    assert state["projects"][0]["discs"][slot] == 0
    assert state["arks"] == ["0,0", "0,0"]
    assert state["last_attack"] is None  # cleared at the end of the round
    totals = [sum(m["resources"].values()) for m in state["seats"]]
    assert all(total > 0 for total in totals)
    assert IMPENDIUM.status(state) == {
        "round": 2,
        "phase": "actions",
        "to_act": [1],
        "awaiting_system": None,
        "finished": False,
    }
