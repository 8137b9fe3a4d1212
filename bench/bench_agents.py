"""Agents' playouts (random rollouts through the ruleset contract, as MCTS runs them) in
events/s against the fold rate of a random game of the same ruleset, in the same run.

A playout applies each seat action and automatic step straight to a state, but asks the
ruleset for the legal actions at every decision; a fold only applies logged events. The
ratio says what the search pays for enumerating legal actions.

A second line per game times MCTS itself: the search's playouts per second (each one a
redraw of what the seat cannot see, the tree, a 10-move sampled-greedy rollout and the
evaluation) over a few decisions of that random game, against the random playouts (whole
games) per second of the line above.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from typing import Any

from bench.__main__ import best_of
from projections.agents import Budget, MctsAgent
from projections.agents.playout import mover, play, run_system_steps
from projections.fold import copy_state, fold
from projections.ruleset import Ruleset, State, get_ruleset
from projections.simulate import play_random

#: (ruleset, players, playouts timed): Impendium's games run to thousands of events.
CASES = [("gutenberg", 2, 10), ("restoration", 2, 10), ("impression", 2, 10), ("impendium", 2, 1)]
#: MCTS decisions timed per game, spread over its random game, at this many playouts each.
DECISIONS = 4
SEARCH_PLAYOUTS = 50


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


def decisions(ruleset: Ruleset, seed: str, count: int) -> list[tuple[State, int]]:
    """``count`` positions spread over a random game: (state, the seat to decide)."""
    found: list[tuple[State, int]] = []

    def keep(game: Any, envelope: Any) -> None:
        status = game.ruleset.status(game.state)
        for seat in status.get("to_act") or []:
            if not status.get("awaiting_system") and ruleset.legal_actions(game.state, seat):
                found.append((copy_state(game.state), seat))
                return

    play_random(ruleset, ["P1", "P2"], seed, on_step=keep)
    stride = max(1, len(found) // count)
    return found[::stride][:count]


def run(report: Callable[..., None]) -> None:
    for game, players, count in CASES:
        ruleset = get_ruleset(game)
        names = [f"P{seat + 1}" for seat in range(players)]
        _, log = play_random(ruleset, names, f"bench-agents-{game}")
        events = log.envelopes
        fold_seconds = best_of(3, functools.partial(fold, events))
        steps = 0
        began = time.perf_counter()
        for index in range(count):
            steps += playout_steps(ruleset, f"bench-agents-{game}-{index}")
        seconds = time.perf_counter() - began
        random_rate = count / seconds
        report(
            f"playouts {game} {players}p ({random_rate:.1f} playouts/s)",
            steps / seconds,
            "steps/s",
            len(events) / fold_seconds,
            "fold events/s",
        )
        agent = MctsAgent(Budget(iterations=SEARCH_PLAYOUTS))
        positions = decisions(ruleset, f"bench-agents-{game}", DECISIONS)
        began = time.perf_counter()
        for index, (state, seat) in enumerate(positions):
            agent.search(ruleset, state, seat, random.Random(f"bench-search-{index}"))
        seconds = time.perf_counter() - began
        report(
            f"mcts search {game} {players}p ({seconds / len(positions):.2f} s a decision)",
            SEARCH_PLAYOUTS * len(positions) / seconds,
            "playouts/s",
            random_rate,
            "random playouts/s",
        )
