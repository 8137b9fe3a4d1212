"""The fold-rate measurement every game's bench module shares.

Play one random game (``projections.simulate.play_random``), re-fold its log from scratch
(``projections.fold.fold``, best of a few runs) and report events/s against a trivial fold of
the same events in the same run: a dict of handlers dispatched on the event type that only
count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.__main__ import best_of
from events.envelope import Envelope
from projections.fold import fold
from projections.ruleset import Ruleset
from projections.simulate import play_random


def trivial_fold(events: list[Envelope]) -> dict[str, int]:
    """The baseline: dispatch each event on its type to a handler that counts."""

    def count(state: dict[str, int], event: dict[str, Any]) -> None:
        state[event["type"]] = state.get(event["type"], 0) + 1

    handlers: dict[str, Callable[[dict[str, int], dict[str, Any]], None]] = {
        kind: count for kind in ("game_created", "action", "system", "undone", "redone")
    }
    state: dict[str, int] = {}
    for event in events:
        handlers[event["type"]](state, event)
    return state


def report_fold_rate(
    report: Callable[..., None],
    ruleset: Ruleset,
    player_count: int,
    seed: str,
    options: dict[str, Any] | None = None,
    repeats: int = 3,
) -> list[Envelope]:
    """Play a random game, report its fold rate against the trivial fold; returns the log."""
    players = [f"P{index + 1}" for index in range(player_count)]
    _, log = play_random(ruleset, players, seed, options)
    events = log.envelopes
    count = len(events)
    ours = best_of(repeats, lambda: fold(events))
    base = best_of(repeats, lambda: trivial_fold(events))
    report(
        f"fold {ruleset.id} {player_count}p ({count} events, {ours * 1000:.0f} ms)",
        count / ours,
        "events/s",
        count / base,
        "dict-dispatch",
    )
    return events
