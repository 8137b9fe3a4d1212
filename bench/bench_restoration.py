"""Restoration fold rate (events/s) of a whole random 4-player game against a dict-dispatch fold.

One random game at the largest player count is played once; its log is then re-folded from
scratch (``projections.fold.fold``, best of 25: the game folds in a few milliseconds, so on a
shared machine a few runs are often all disturbed) and compared with the trivial fold of
bench/foldrate.py (dispatch each event on its type to a handler that only counts), in the same run.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.foldrate import report_fold_rate
from projections.games.restoration.game import RESTORATION


def run(report: Callable[..., None]) -> None:
    report_fold_rate(report, RESTORATION, RESTORATION.max_players, "bench-restoration", repeats=25)
