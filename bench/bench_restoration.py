"""Restoration fold rate (events/s) of a whole random 4-player game against a dict-dispatch fold.

One random game at the largest player count is played once; its log is then re-folded from
scratch (``projections.fold.fold``, best of 5) and compared with the trivial fold of
bench/foldrate.py (dispatch each event on its type to a handler that only counts), in the same run.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.__main__ import best_of
from bench.foldrate import trivial_fold
from projections.fold import fold
from projections.games.restoration.game import RESTORATION
from projections.simulate import play_random


def run(report: Callable[..., None]) -> None:
    players = ["Orange", "Grey", "Jade", "Teal"][: RESTORATION.max_players]
    _, log = play_random(RESTORATION, players, "bench-restoration")
    events = log.envelopes
    count = len(events)
    ours = best_of(5, lambda: fold(events))
    base = best_of(5, lambda: trivial_fold(events))
    report(
        f"fold restoration 4p ({count} events, {ours * 1000:.0f} ms)",
        count / ours,
        "events/s",
        count / base,
        "dict-dispatch",
    )
