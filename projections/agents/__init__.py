"""Agents: bots that choose a seat's action with the ruleset contract alone (DESIGN.md,
"Agents and analysis"). Pure and seeded: no I/O, no clock of their own, no global random;
the same seed and budget in iterations give the same choice.

- ``random``: any legal action (``random_agent``);
- ``greedy``: one-ply lookahead on the game's evaluation (``greedy``, ``evaluation``);
- ``mcts``: information-set Monte Carlo tree search (``mcts``).

Every agent sees a position only through ``legal_actions`` for its own seat and
``resample_hidden`` for that seat, so it never uses what its seat cannot see.
"""

from __future__ import annotations

import random
from typing import Protocol

from projections.agents.budget import Budget
from projections.agents.greedy import GreedyAgent
from projections.agents.mcts import MctsAgent
from projections.agents.random_agent import RandomAgent
from projections.ruleset import Action, Ruleset, State

__all__ = ["AGENTS", "Agent", "Budget", "GreedyAgent", "MctsAgent", "RandomAgent", "make_agent"]


class Agent(Protocol):
    """A bot: ``choose`` returns one of ``seat``'s legal actions in ``state``."""

    name: str

    def choose(self, ruleset: Ruleset, state: State, seat: int, rng: random.Random) -> Action: ...


AGENTS = ("random", "greedy", "mcts")


def make_agent(name: str, budget: Budget | None = None) -> Agent:
    """The agent called ``name``; ``budget`` applies to ``mcts`` (the others need none)."""
    if name == "random":
        return RandomAgent()
    if name == "greedy":
        return GreedyAgent()
    if name == "mcts":
        return MctsAgent(budget)
    raise ValueError(f"no agent {name!r}; agents are {', '.join(AGENTS)}")
