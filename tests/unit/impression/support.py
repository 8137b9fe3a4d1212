"""Helpers for Impression's unit tests: a fresh game and acting as a seat."""

from __future__ import annotations

import random
from typing import Any

from projections.games.impression import IMPRESSION

RULES = IMPRESSION


def new_game(players: int = 2, seed: int = 7) -> dict[str, Any]:
    names = ["Ann", "Bob", "Cid", "Dee"][:players]
    return RULES.setup(names, {}, random.Random(seed))


def act(state: dict[str, Any], seat: int | None, **action: Any) -> None:
    RULES.apply(state, {**action, "seat": seat}, random.Random(1))


def first(state: dict[str, Any]) -> int:
    """The seat whose turn it is."""
    return int(RULES.status(state)["to_act"][0])


def prompt(state: dict[str, Any], seat: int) -> str | None:
    queue = state["pending"][seat]
    return str(queue[0]["icon"]) if queue else None


def clear_workshop(state: dict[str, Any], seat: int) -> None:
    for cell in state["seats"][seat]["workshop"].values():
        cell["down"] = cell["up"] = None
