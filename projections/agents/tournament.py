"""Games between agents, straight through the ruleset contract (no event log): a table
draws with its own seeded generator and each agent decides with its own."""

from __future__ import annotations

import itertools
import random
from typing import Any

from projections.agents.evaluation import evaluate
from projections.agents.playout import Outcome, mover, outcomes, play
from projections.ruleset import Ruleset


def play_game(
    ruleset: Ruleset,
    agents: list[Any],
    seed: str,
    options: dict[str, Any] | None = None,
    max_steps: int = 100_000,
) -> list[Outcome]:
    """One game with ``agents[seat]`` in each seat; each seat's outcome at the end (or, past
    ``max_steps`` seat actions, by the game's evaluation)."""
    players = [f"P{seat + 1}" for seat in range(len(agents))]
    state = ruleset.setup(players, {**ruleset.options, **(options or {})}, random.Random(seed))
    table = random.Random(f"table:{seed}")
    for step in itertools.count():
        turn = mover(ruleset, state, table) if step < max_steps else None
        if turn is None:
            break
        seat = turn[0]
        action = agents[seat].choose(ruleset, state, seat, random.Random(f"{seed}:{step}"))
        play(ruleset, state, seat, action, table)
    return outcomes(ruleset, state, evaluate(ruleset, state))
