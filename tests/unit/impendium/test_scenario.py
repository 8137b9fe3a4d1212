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


# A plain policy for longer scenarios: settle any choice, then build and recruit when
# possible, otherwise head for the federation card, then end the turn or pass.
PREFERENCE = [
    "take_ruler",
    "keep_diplomacy",
    "place_star",
    "place_harbinger",
    "take_spoils",
    "answer_trade",
    "construct_federation_star",
    "battle_harbinger",
    "recruit_faction",
    "build_colony",
    "take_federation_resource",
    "place_start_star",
    "place_setup_colony",
    "place_ark",
]


def _distance_home(action: dict) -> int:
    x, y = (int(n) for n in action["to"].split(","))
    return abs(x) + abs(y)


def _policy(state: dict, seat: int) -> dict:
    actions = IMPENDIUM.legal_actions(state, seat)
    for kind in PREFERENCE:
        for action in actions:
            if action["type"] == kind:
                return action
    moves = [a for a in actions if a["type"] == "move"]
    if moves and state["arks"][seat] != "0,0":
        return min(moves, key=_distance_home)
    return next(a for a in actions if a["type"] in ("end_turn", "pass"))


def _play_by_policy(players: int, seed: str, rounds: int) -> dict:
    state = fresh(players, seed=seed, round_limit=rounds)
    step = 0
    while not state["finished"]:
        step += 1
        status = IMPENDIUM.status(state)
        if status["awaiting_system"]:
            IMPENDIUM.apply(
                state, {"type": status["awaiting_system"], "seat": None}, random.Random(step)
            )
            continue
        seat = status["to_act"][0]
        IMPENDIUM.apply(state, {**_policy(state, seat), "seat": seat}, random.Random(step))
    return state


def test_a_seeded_three_player_game_ends_on_victory_points_with_the_books_straight() -> None:
    # A project-first policy keeps reusing its placed discs ("you may remove one to place
    # the new one"), so it reaches 25 VP well before the 8-round limit.
    state = _play_by_policy(3, "g1", 8)
    result = IMPENDIUM.result(state)
    assert result is not None and result["end_trigger"]["reason"] == "victory_points"
    assert state["round"] < 8
    assert state["seats"][result["end_trigger"]["seat"]]["vp"] >= 25
    placed = [e for e in state["board"].values() if e["kind"] == "star"]
    assert len(placed) > 3  # federation stars were constructed and placed
    assert any(e["kind"] == "harbinger" for e in state["board"].values()) or any(
        state["decks"]["harbingers"]["discard_pile"]
    )
    for score in result["scores"]:
        assert score["total"] == sum(score["breakdown"].values())
        assert score["breakdown"]["federation_stars"] > 0
    for galaxy in state["galaxies"]:
        assert len(galaxy["stars"]) >= 3
        assert {STARS[state["board"][p]["card"]]["colour"] for p in galaxy["stars"]} == {
            galaxy["colour"]
        }
    best = max(s["total"] for s in result["scores"])
    assert all(result["scores"][seat]["total"] == best for seat in result["ranking"][0])
