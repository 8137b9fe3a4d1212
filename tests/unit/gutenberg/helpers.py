"""Building Gutenberg states for unit tests: a real setup, then the phase a test needs."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.fold import copy_state
from projections.games.gutenberg.rules import GUTENBERG, ROWS
from projections.ruleset import IllegalAction, State

NAMES = ["Ann", "Ben", "Cat", "Dan"]


def new_game(players: int = 4, characters: bool = False, seed: str = "unit") -> State:
    """A state straight after ``setup``."""
    return GUTENBERG.setup(NAMES[:players], {"characters": characters}, random.Random(seed))


def act(state: State, seat: int | None, action: dict[str, Any], seed: int = 0) -> None:
    """Apply a seat's action (or an automatic step with seat None)."""
    GUTENBERG.apply(state, {**action, "seat": seat}, random.Random(seed))


def run_system(state: State) -> list[str]:
    """Apply every automatic step due, in turn; the types applied."""
    applied = []
    while (step := GUTENBERG.system_action(state)) is not None:
        act(state, None, step)
        applied.append(step["type"])
    return applied


def close_round(state: State) -> list[int]:
    """After the last fulfilment, every seat still waited for says it is done (``pass``);
    the seats that did, in order."""
    closed = []
    while state["phase"] == "round_end" and (to_act := GUTENBERG.status(state)["to_act"]):
        act(state, to_act[0], {"type": "pass"})
        closed.append(to_act[0])
    return closed


def refused(state: State, seat: int, action: dict[str, Any]) -> str:
    """The error code of an illegal action, after checking it left the state unchanged."""
    before = copy_state(state)
    with pytest.raises(IllegalAction) as caught:
        act(state, seat, action)
    assert state == before, "a refused action leaves the state unchanged"
    assert caught.value.message
    return caught.value.code


def finish_setup(state: State) -> State:
    """Draft the first options and give everyone types A, I, O; the game is then in round 1."""
    run_system(state)
    while state["pending"]:
        seat = state["pending"][0]["seat"]
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    while state["phase"] == "draft":
        seat = GUTENBERG.status(state)["to_act"][0]
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    for seat in range(len(state["players"])):
        act(state, seat, {"type": "choose_types", "letters": ["A", "I", "O"]})
    return state


def in_round(players: int = 4, seed: str = "unit") -> State:
    """A game in the plan phase of round 1, no characters."""
    return finish_setup(new_game(players, seed=seed))


def at_row(state: State, row: str, queue: list[int] | None = None) -> State:
    """Jump to one action row with the given seats queued (everyone planned 1 marker a row)."""
    for player in state["seats"]:
        player["plan"] = [1] * len(ROWS)
    state["plans_revealed"] = True
    state["phase"] = row
    state["queue"] = [0] if queue is None else queue
    state["turn"] = 0
    return state


def give_order(state: State, seat: int, printing: str, refinement: str) -> None:
    """Move two cards from wherever they are into a seat's orders (keeps every card once)."""
    for kind, card in (("printing", printing), ("refinement", refinement)):
        deck = state["decks"][kind]
        for pile in (deck["draw_pile"], deck["discard_pile"], state["board"][kind]):
            if card in pile:
                pile[pile.index(card)] = None if pile is state["board"][kind] else card
                if pile is not state["board"][kind]:
                    pile.remove(card)
                break
        else:
            for player in state["seats"]:
                for order in list(player["orders"]):
                    if order[kind] == card:
                        player["orders"].remove(order)
                        other = "refinement" if kind == "printing" else "printing"
                        state["decks"][other]["discard_pile"].append(order[other])
    state["seats"][seat]["orders"].append({"printing": printing, "refinement": refinement})


def give_inks(state: State, seat: int, inks: dict[str, int]) -> None:
    """Move inks from the bag to a seat."""
    bag = state["bag"]["contents"]
    player = state["seats"][seat]
    for colour, amount in inks.items():
        bag[colour] -= amount
        player["inks"][colour] = player["inks"].get(colour, 0) + amount


def put_gear(state: State, seat: int, axle: int, gear: str, rotation: int) -> None:
    """Install a gear from the deck on a seat's axle."""
    deck = state["decks"]["gears"]
    for pile in (deck["draw_pile"], deck["discard_pile"]):
        if gear in pile:
            pile.remove(gear)
    if gear in state["board"]["gears"]:
        state["board"]["gears"][state["board"]["gears"].index(gear)] = None
    state["seats"][seat]["gears"][axle] = {"gear": gear, "rotation": rotation}
