"""The random agent: any legal action, uniformly (boardgame.io's RandomBot)."""

from __future__ import annotations

import random

from projections.ruleset import Action, Ruleset, State


class RandomAgent:
    """Picks uniformly among the seat's legal actions."""

    name = "random"

    def choose(self, ruleset: Ruleset, state: State, seat: int, rng: random.Random) -> Action:
        """A legal action for ``seat``, drawn with ``rng``."""
        legal = ruleset.legal_actions(state, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action")
        return legal[rng.randrange(len(legal))]
