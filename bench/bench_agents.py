"""Agents' playouts (random rollouts through the ruleset contract, as MCTS runs them) in
events/s against the fold rate of a random game of the same ruleset, in the same run.

A playout applies each seat action and automatic step straight to a state, but asks the
ruleset for the legal actions at every decision; a fold only applies logged events. The
ratio says what the search pays for enumerating legal actions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from bench.__main__ import best_of
from projections.agents.playout import mover, play, run_system_steps
from projections.fold import fold
from projections.ruleset import Ruleset, get_ruleset
from projections.simulate import play_random

#: (ruleset, players, playouts timed): Impendium's games run to thousands of events.
CASES = [("gutenberg", 2, 10), ("restoration", 2, 10), ("impression", 2, 10), ("impendium", 2, 1)]


def playout_steps(ruleset: Ruleset, seed: str) -> int:
    """One random playout from setup to the end; how many steps (seat and automatic) it took."""
    state = ruleset.setup(["P1", "P2"], dict(ruleset.options), random.Random(seed))
    rng = random.Random(f"playout:{seed}")
    steps = 0
    while True:
        steps += run_system_steps(ruleset, state, rng)
        turn = mover(ruleset, state, rng)
        if turn is None:
            return steps
        seat, legal = turn
        play(ruleset, state, seat, legal[rng.randrange(len(legal))], rng)
        steps += 1


def run(report: Callable[..., None]) -> None:
    for game, players, count in CASES:
        ruleset = get_ruleset(game)
        names = [f"P{seat + 1}" for seat in range(players)]
        _, log = play_random(ruleset, names, f"bench-agents-{game}")
        events = log.envelopes
        fold_seconds = best_of(3, lambda events=events: fold(events))
        steps = 0
        began = time.perf_counter()
        for index in range(count):
            steps += playout_steps(ruleset, f"bench-agents-{game}-{index}")
        seconds = time.perf_counter() - began
        report(
            f"playouts {game} {players}p ({count / seconds:.1f} playouts/s)",
            steps / seconds,
            "steps/s",
            len(events) / fold_seconds,
            "fold events/s",
        )
