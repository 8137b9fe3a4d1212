"""How an agent values an unfinished Impression position (projections/agents): each seat's
points by the Scoring list if the game ended now (``scoring.breakdown``: victory points,
contracts, orders in production and never started, resources and cash), plus a little for
each completed order (the first tie-breaker)."""

from __future__ import annotations

from projections.games.impression import scoring
from projections.ruleset import State

#: Points a completed order is worth to an agent beyond its victory points.
COMPLETED_ORDER = 0.5


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    return [
        sum(scoring.breakdown(state, player).values()) + COMPLETED_ORDER * len(player["completed"])
        for player in state["seats"]
    ]
