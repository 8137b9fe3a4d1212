"""Impendium fold rate: re-folding a random 6-player game's log, against a dict-dispatch fold.

A random game at the largest player count (6 players, 100 rounds) is played once with
``projections.simulate.play_random``; its log is then folded from scratch with
``projections.fold.fold`` (best of a few runs). The baseline folds the same number of
events through a dict of handlers that only count, measured in the same run.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.foldrate import report_fold_rate
from projections.games.impendium import IMPENDIUM


def run(report: Callable[..., None]) -> None:
    report_fold_rate(
        report, IMPENDIUM, IMPENDIUM.max_players, "bench-impendium", {"round_limit": 100}
    )
