"""Impression fold rate (events/s) of a whole random 4-player game against a dict-dispatch fold.

One random game at the largest player count is played once; its log is then re-folded from
scratch (``projections.fold.fold``, best of 25: a fold takes a few milliseconds, and on a
shared machine fewer runs rarely include an undisturbed one) and compared, in the same run,
with the shared trivial fold of ``bench/foldrate.py`` that dispatches the same events on
their type to a handler that only counts.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.foldrate import report_fold_rate
from projections.games.impression import IMPRESSION


def run(report: Callable[..., None]) -> None:
    report_fold_rate(report, IMPRESSION, IMPRESSION.max_players, "bench-impression", repeats=25)
