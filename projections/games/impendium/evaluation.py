"""How an agent values an unfinished Impendium position (projections/agents): each seat's
victory points, plus a little for its resources (what buys colonies, projects and battles)."""

from __future__ import annotations

from projections.ruleset import State

#: Points a resource on hand is worth to an agent (not to the rulebook).
RESOURCE = 0.02


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    return [seat["vp"] + RESOURCE * sum(seat["resources"].values()) for seat in state["seats"]]
