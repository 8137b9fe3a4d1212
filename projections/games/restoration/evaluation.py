"""How an agent values an unfinished Restoration position (projections/agents): each seat's
Achievement Points if the game ended now (``scoring.breakdown``), plus a little for the
workers still to place this round (each placement moves a Production token)."""

from __future__ import annotations

from projections.games.restoration import scoring
from projections.ruleset import State

#: Points a worker on the player board is worth to an agent (not to the rulebook).
WORKER_ON_BOARD = 0.5


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    return [
        sum(scoring.breakdown(player).values()) + WORKER_ON_BOARD * player["board_workers"]
        for player in state["seats"]
    ]
