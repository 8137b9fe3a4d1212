"""Gutenberg fold rate (events/s) of a whole random 4-player game against a dict-dispatch fold.

One random game at the largest player count (characters on) is played once; its log is then
re-folded from scratch (``projections.fold.fold``, best of 5) and compared with a trivial fold
that dispatches the same events on their type to a handler that only counts, in the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.__main__ import best_of
from projections.fold import fold
from projections.games.gutenberg.rules import GUTENBERG
from projections.simulate import play_random


def trivial_fold(events: list[dict[str, Any]]) -> dict[str, int]:
    """The baseline: dispatch each event on its type to a handler that counts."""

    def count(state: dict[str, int], event: dict[str, Any]) -> None:
        state[event["type"]] = state.get(event["type"], 0) + 1

    handlers: dict[str, Callable[[dict[str, int], dict[str, Any]], None]] = {
        "game_created": count,
        "action": count,
        "system": count,
    }
    state: dict[str, int] = {}
    for event in events:
        handlers[event["type"]](state, event)
    return state


def run(report: Callable[..., None]) -> None:
    players = ["Ann", "Ben", "Cat", "Dan"][: GUTENBERG.max_players]
    _, log = play_random(GUTENBERG, players, "bench-gutenberg", {"characters": True})
    events = log.envelopes
    count = len(events)
    ours = best_of(5, lambda: fold(events))
    base = best_of(5, lambda: trivial_fold(events))
    report(
        f"fold gutenberg 4p ({count} events, {ours * 1000:.0f} ms)",
        count / ours,
        "events/s",
        count / base,
        "dict-dispatch",
    )
