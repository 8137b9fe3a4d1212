"""Helpers for Impression's unit tests: a fresh game and acting as a seat."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.games.impression import IMPRESSION, effects
from projections.ruleset import IllegalAction

RULES = IMPRESSION


#: where each seat's tradesmen stand in a test game unless the test says otherwise
START_SHOPS = [["S1", "S9"], ["S5", "S11"], ["S3", "S10"], ["S7", "S2"]]


def new_game(
    players: int = 2, seed: int = 7, tradesmen: list[list[str]] | None = None
) -> dict[str, Any]:
    """A game set up from ``seed`` whose players have placed their tradesmen."""
    state = set_up(players, seed)
    place_tradesmen(state, tradesmen or START_SHOPS[:players])
    return state


def set_up(players: int = 2, seed: int = 7) -> dict[str, Any]:
    """A game right after setup, before anyone placed a tradesman."""
    names = ["Ann", "Bob", "Cid", "Dee"][:players]
    return RULES.setup(names, {}, random.Random(seed))


def place_tradesmen(state: dict[str, Any], shops: list[list[str]]) -> None:
    """Each seat places its first tradesman, in player order, then its second."""
    for index in (0, 1):
        for seat in list(state["order"]):
            act(state, seat, type="place_tradesman", shop=shops[seat][index])


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


def refused(state: dict[str, Any], seat: int | None, code: str, **action: Any) -> None:
    """The action is refused with ``code`` and leaves the table as it was."""
    before = RULES.view(state, None)
    with pytest.raises(IllegalAction) as error:
        act(state, seat, **action)
    assert error.value.code == code
    assert RULES.view(state, None) == before


SEAT = 0


def turn_game() -> dict[str, Any]:
    """Two players, Ann (seat 0) first, her Shop or Reset already taken this turn."""
    state = new_game(2)
    state["order"] = [0, 1]
    state["turn"]["main_done"] = True
    return state


def me(state: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = state["seats"][SEAT]
    return found


def queue(state: dict[str, Any], *icons: dict[str, Any]) -> None:
    """Ann's effects are queued and resolved until a choice waits."""
    effects.start_effects(state, SEAT, list(icons), random.Random(5))
