"""Building Impendium tables for tests: a game past setup, stars put where a test wants them."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.fold import copy_state
from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import STARS
from projections.ruleset import IllegalAction

State = dict[str, Any]


class Dice:
    """A stand-in rng whose die rolls are chosen by the test."""

    def __init__(self, *rolls: int) -> None:
        self.rolls = list(rolls)

    def randint(self, low: int, high: int) -> int:
        return self.rolls.pop(0)


def fresh(players: int = 2, seed: str = "unit", **options: Any) -> State:
    names = ["Ann", "Ben", "Cas", "Dee", "Eve", "Fay"][:players]
    return IMPENDIUM.setup(names, {**IMPENDIUM.options, **options}, random.Random(seed))


def act(state: State, seat: int | None, kind: str, rng: Any = None, **fields: Any) -> None:
    IMPENDIUM.apply(state, {"type": kind, **fields, "seat": seat}, rng or random.Random(1))


def auto(state: State, rng: Any = None) -> str:
    step = IMPENDIUM.system_action(state)
    assert step is not None, "an automatic step is due"
    IMPENDIUM.apply(state, {**step, "seat": None}, rng or random.Random(1))
    return str(step["type"])


def through_setup(state: State) -> State:
    """Place starting stars, setup colonies and Arks with each player's first choice."""
    while state["phase"].startswith("setup"):
        seat = IMPENDIUM.status(state)["to_act"][0]
        action = IMPENDIUM.legal_actions(state, seat)[0]
        IMPENDIUM.apply(state, {**action, "seat": seat}, random.Random(1))
    return state


def started(players: int = 2, seed: str = "unit", **options: Any) -> State:
    """A game in the action turns of round 1 (each took water from the federation)."""
    state = through_setup(fresh(players, seed, **options))
    auto(state)
    for seat in range(players):
        act(state, seat, "take_federation_resource", resource="water")
    while IMPENDIUM.status(state)["awaiting_system"]:
        auto(state)
    return state


def table(players: int = 2, **options: Any) -> State:
    """Round 1's action turns on a bare map: only the federation card, Arks on it, 5 of each
    resource, no colonies; tests put the stars they need."""
    state = started(players, **options)
    state["board"] = {"0,0": {"kind": "federation"}}
    state["arks"] = ["0,0"] * players
    state["galaxies"] = []
    for mine in state["seats"]:
        mine["resources"] = {r: 5 for r in mine["resources"]}
    return state


def star_ids(colour: str) -> list[str]:
    return sorted(card for card, star in STARS.items() if star["colour"] == colour)


def producing(resource: str) -> list[str]:
    return sorted(card for card, star in STARS.items() if resource in star["production"])


def put_star(state: State, position: str, card: str, colonies: list[Any] | None = None) -> None:
    slots = len(STARS[card]["slots"])
    state["board"][position] = {
        "kind": "star",
        "card": card,
        "colonies": (colonies or []) + [None] * (slots - len(colonies or [])),
    }


def refused(state: State, seat: int | None, action: dict[str, Any], code: str) -> None:
    """The action raises ``code`` and leaves the state exactly as it was."""
    before = copy_state(state)
    with pytest.raises(IllegalAction) as caught:
        IMPENDIUM.apply(state, {**action, "seat": seat}, random.Random(1))
    assert caught.value.code == code, caught.value.message
    assert caught.value.message
    assert state == before
