"""How an agent values an unfinished Gutenberg position (projections/agents): each seat's
points if the game ended now (``scoring.breakdown``), plus a little for what turns into
points later - orders in hand (fame once fulfilled) and inks and types on hand to print
them with."""

from __future__ import annotations

from projections.games.gutenberg import effects, scoring
from projections.ruleset import State

#: Points a feature is worth to an agent (not to the rulebook).
ORDER_IN_HAND = 1.0
MATERIAL = 0.1


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    values = []
    for player in state["seats"]:
        points = sum(scoring.breakdown(player).values())
        material = effects.total(player["inks"]) + effects.total(player["types"])
        values.append(points + ORDER_IN_HAND * len(player["orders"]) + MATERIAL * material)
    return values
