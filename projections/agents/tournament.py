"""Games between agents, straight through the ruleset contract (no event log): a table
draws with its own seeded generator and each agent decides with its own."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from projections.agents.evaluation import evaluate
from projections.agents.playout import Outcome, mover, outcomes, play
from projections.ruleset import Ruleset


@dataclass(frozen=True)
class Played:
    """A game between agents: each seat's outcome, whether the game reached its end by the
    rules (else it was cut after ``max_steps`` seat actions and valued by the evaluation),
    and how many seat actions were played."""

    outcomes: list[Outcome]
    finished: bool
    steps: int


def play_game(
    ruleset: Ruleset,
    agents: list[Any],
    seed: str,
    options: dict[str, Any] | None = None,
    max_steps: int = 100_000,
) -> list[Outcome]:
    """One game with ``agents[seat]`` in each seat; each seat's outcome at the end (or, past
    ``max_steps`` seat actions, by the game's evaluation)."""
    return play_out(ruleset, agents, seed, options, max_steps).outcomes


def play_out(
    ruleset: Ruleset,
    agents: list[Any],
    seed: str,
    options: dict[str, Any] | None = None,
    max_steps: int = 100_000,
) -> Played:
    """``play_game``, also telling whether the game ended by the rules and its length."""
    players = [f"P{seat + 1}" for seat in range(len(agents))]
    state = ruleset.setup(players, {**ruleset.options, **(options or {})}, random.Random(seed))
    table = random.Random(f"table:{seed}")
    steps = 0
    for step in itertools.count():
        turn = mover(ruleset, state, table) if step < max_steps else None
        if turn is None:
            break
        seat = turn[0]
        action = agents[seat].choose(ruleset, state, seat, random.Random(f"{seed}:{step}"))
        play(ruleset, state, seat, action, table)
        steps = step + 1
    finished = bool(ruleset.status(state).get("finished"))
    return Played(outcomes(ruleset, state, evaluate(ruleset, state)), finished, steps)
