"""Impendium fold rate: re-folding a random 6-player game's log, against a dict-dispatch fold.

A random game at the largest player count (6 players, 100 rounds) is played once with
``projections.simulate.play_random``; its log is then folded from scratch with
``projections.fold.fold`` (best of a few runs). The baseline folds the same number of
events through a dict of handlers that only count, measured in the same run.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.__main__ import best_of
from bench.foldrate import trivial_fold
from projections.fold import fold
from projections.games.impendium import IMPENDIUM
from projections.simulate import play_random

PLAYERS = ["Ann", "Ben", "Cas", "Dee", "Eve", "Fay"]


def run(report: Callable[..., None]) -> None:
    _, log = play_random(IMPENDIUM, PLAYERS, "bench-impendium", {"round_limit": 100})
    events = log.envelopes
    count = len(events)
    ours = best_of(3, lambda: fold(events))
    base = best_of(3, lambda: trivial_fold(events))
    report(
        f"fold impendium 6 players ({count} events, {ours:.3f} s)",
        count / ours,
        "events/s",
        count / base,
        "dict-dispatch",
    )
