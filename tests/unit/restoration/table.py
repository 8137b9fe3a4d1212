"""Helpers that lay out a Restoration table for the unit tests and act on it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.fold import copy_state
from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from projections.ruleset import IllegalAction

State = dict[str, Any]
NAMES = ["Orange", "Grey", "Jade", "Teal"]


def unlocked(
    players: int = 3, event: str = "quiet_season", arrangement: str = "first_game"
) -> State:
    """A game at the end of setup, seat 0 first, with ``event`` as round 1's Event tile and
    every player's starting skill on research position RD1; ``reveal_event`` is due."""
    state = RESTORATION.setup(NAMES[:players], {"arrangement": arrangement}, random.Random(1))
    events = state["events"]
    if event not in events["rounds"][:1]:
        where = "rounds" if event in events["rounds"] else "unused"
        index = events[where].index(event)
        events[where][index], events["rounds"][0] = events["rounds"][0], event
    state["first_player"] = 0
    for seat in range(players):
        act(state, seat, "unlock_research", position="RD1")
    return state


def table(players: int = 3, event: str = "quiet_season", arrangement: str = "first_game") -> State:
    """Like ``unlocked``, moved on to round 1's Construction phase, every player having
    resolved the event the simplest way (skipping, else the first answer)."""
    state = unlocked(players, event, arrangement)
    run_system(state)
    while state["phase"] == "event":
        seat = RESTORATION.status(state)["to_act"][0]
        options = RESTORATION.legal_actions(state, seat)
        skip = {"type": "skip_action"}
        choice = skip if skip in options else options[0]
        RESTORATION.apply(state, {**choice, "seat": seat}, random.Random(0))
        run_system(state)
    return state


def act(state: State, seat: int, kind: str, **fields: Any) -> None:
    RESTORATION.apply(state, {"type": kind, **fields, "seat": seat}, random.Random(0))


def run_system(state: State) -> list[str]:
    """Apply every automatic step now due; returns their names."""
    done = []
    while (step := RESTORATION.system_action(state)) is not None:
        RESTORATION.apply(state, {**step, "seat": None}, random.Random(0))
        done.append(step["type"])
    return done


def refused(state: State, seat: int | None, kind: str, **fields: Any) -> str:
    """The error code of an illegal action, checking it left the state unchanged."""
    before = copy_state(state)
    with pytest.raises(IllegalAction) as caught:
        RESTORATION.apply(state, {"type": kind, **fields, "seat": seat}, random.Random(0))
    assert state == before, "a refused action must not change the state"
    assert caught.value.message
    return caught.value.code


def show_tiles(state: State, *tiles: str) -> None:
    """Put these Construction tiles in the display (first), swapping others to the pile."""
    construction = state["construction"]
    pool = construction["display"] + construction["pile"]
    rest = [tile for tile in pool if tile not in tiles]
    size = len(construction["display"])
    construction["display"] = [*tiles, *rest[: size - len(tiles)]]
    construction["pile"] = rest[size - len(tiles) :]
    construction["progress"] = {tile: [] for tile in construction["display"]}


def place_at(state: State, position: str, seat: int, artisan: bool = False) -> None:
    """A worker of ``seat`` stands at ``position`` (taken from its board)."""
    player = state["seats"][seat]
    player["board_artisans" if artisan else "board_workers"] -= 1
    state["positions"][position]["workers"].append({"seat": seat, "artisan": artisan})


def decision(state: State) -> State:
    front: State = state["pending"][0]
    return front


def landing(workshop: str, steps: int, start: int = 0) -> str:
    spaces = data.BOARDS[workshop]["spaces"]
    return str(spaces[(start + steps) % len(spaces)])
