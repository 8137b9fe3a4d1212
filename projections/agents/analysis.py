"""The analysis of one decision: for each candidate action of a seat, what information-set
MCTS found it worth - playouts, win rate, mean score and mean margin, each with a 95 %
confidence interval - and the agent's pick (the most played candidate).

The position is seen as that seat saw it: the search determinizes with ``resample_hidden``
for that seat, so what the seat could not see never changes the analysis (given a
``resample_hidden`` that draws the same for the same information set).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from projections.agents.budget import Budget
from projections.agents.mcts import MctsAgent, Stats
from projections.agents.statistics import Interval, mean_interval, wilson
from projections.ruleset import Action, Ruleset, State


@dataclass(frozen=True)
class Candidate:
    """One candidate action and what the playouts through it gave the seat."""

    action: Action
    playouts: int
    win_rate: float
    win_interval: Interval
    mean_score: float
    score_interval: Interval | None
    mean_margin: float
    margin_interval: Interval | None

    @classmethod
    def from_stats(cls, action: Action, stats: Stats) -> Candidate:
        n = stats.playouts
        return cls(
            action=action,
            playouts=n,
            win_rate=stats.wins / n,
            win_interval=wilson(stats.wins, n),
            mean_score=stats.score / n,
            score_interval=mean_interval(stats.score, stats.score_squares, n),
            mean_margin=stats.margin / n,
            margin_interval=mean_interval(stats.margin, stats.margin_squares, n),
        )


@dataclass(frozen=True)
class Analysis:
    """The candidates, most played first; ``complete`` is False when it was cancelled."""

    seat: int
    playouts: int
    pick: Action
    candidates: list[Candidate]
    complete: bool

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (intervals as ``[low, high]``)."""

        def pair(interval: Interval | None) -> list[float] | None:
            return None if interval is None else [interval.low, interval.high]

        return {
            "seat": self.seat,
            "playouts": self.playouts,
            "complete": self.complete,
            "pick": self.pick,
            "candidates": [
                {
                    "action": c.action,
                    "playouts": c.playouts,
                    "win_rate": c.win_rate,
                    "win_interval": pair(c.win_interval),
                    "mean_score": c.mean_score,
                    "score_interval": pair(c.score_interval),
                    "mean_margin": c.mean_margin,
                    "margin_interval": pair(c.margin_interval),
                }
                for c in self.candidates
            ],
        }


def search_seed(at: int, seat: int, seed: str) -> str:
    """The search's seed for ``seat``'s decision after event ``at`` under the requested
    ``seed``: made of the request alone (public), never of the game's secret seed. The service
    and ``meeple analyze`` derive it alike, so the same request gives the same figures in both."""
    return f"analysis:{at}:{seat}:{seed}"


def analyze(
    ruleset: Ruleset,
    state: State,
    seat: int,
    budget: Budget,
    seed: str,
    progress: Callable[[int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Analysis:
    """Search ``seat``'s decision in ``state`` within ``budget``; the same seed and a budget
    in playouts give the same analysis."""
    stop = cancelled or (lambda: False)
    search = MctsAgent(budget).search(
        ruleset, state, seat, random.Random(seed), progress=progress, cancelled=stop
    )
    candidates = [
        Candidate.from_stats(action, stats)
        for action, stats in search.candidates()
        if stats.playouts
    ]
    return Analysis(
        seat=seat,
        playouts=search.playouts,
        pick=search.pick,
        candidates=candidates,
        complete=not stop(),
    )
