"""Gutenberg fold rate (events/s) of a whole random 4-player game against a dict-dispatch fold.

One random game at the largest player count (characters on) is played once; its log is then
re-folded from scratch (``projections.fold.fold``, best of 5) and compared, in the same run,
with the shared trivial fold of ``bench.foldrate`` (each event dispatched on its type to a
handler that only counts).
"""

from __future__ import annotations

from collections.abc import Callable

from bench.foldrate import report_fold_rate
from projections.games.gutenberg.rules import GUTENBERG


def run(report: Callable[..., None]) -> None:
    report_fold_rate(
        report, GUTENBERG, GUTENBERG.max_players, "bench-gutenberg", {"characters": True}, 5
    )
