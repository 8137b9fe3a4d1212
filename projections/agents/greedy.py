"""The greedy agent: one-ply lookahead on the game's evaluation.

Each candidate action is tried on one determinization of the position (everything the seat
cannot see redrawn by ``resample_hidden``, so the lookahead never peeks at hidden cards),
the automatic steps it makes due are run, and the action whose result leaves the seat
furthest ahead of its best rival by the game's evaluation (``projections.agents.evaluation``)
is chosen; ties go to the earliest listed after a seeded shuffle.
"""

from __future__ import annotations

import random

from projections.agents.evaluation import evaluate
from projections.agents.playout import Policy, play, run_system_steps
from projections.fold import copy_state
from projections.ruleset import Action, IllegalAction, Ruleset, State

#: The most candidates weighed in one decision; beyond it a seeded sample is weighed (a
#: Gutenberg plan phase lists thousands of plans).
MAX_CANDIDATES = 200


class GreedyAgent:
    """Picks the action with the best evaluation one step ahead."""

    name = "greedy"

    def __init__(self, max_candidates: int = MAX_CANDIDATES) -> None:
        self.max_candidates = max_candidates

    def choose(self, ruleset: Ruleset, state: State, seat: int, rng: random.Random) -> Action:
        """The best-looking legal action for ``seat``."""
        legal = ruleset.legal_actions(state, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action")
        ranked = one_ply_values(ruleset, state, seat, legal, rng, self.max_candidates)
        best, best_value = ranked[0][0], float("-inf")
        for action, value in ranked:
            if value > best_value:
                best, best_value = action, value
        return best


def sampled_greedy_policy(sample: int) -> Policy:
    """A rollout policy: the best of ``sample`` legal actions drawn at random, by the game's
    evaluation one step ahead (a playout that plays sensibly tells more than a random one)."""

    def policy(
        ruleset: Ruleset, state: State, seat: int, legal: list[Action], rng: random.Random
    ) -> Action:
        if len(legal) == 1:
            return legal[0]
        drawn = rng.sample(legal, min(sample, len(legal)))
        best, best_value = drawn[0], float("-inf")
        for action in drawn:
            value = lead_after(ruleset, state, seat, action, rng)
            if value > best_value:
                best, best_value = action, value
        return best

    return policy


def one_ply_values(
    ruleset: Ruleset,
    state: State,
    seat: int,
    legal: list[Action],
    rng: random.Random,
    max_candidates: int = MAX_CANDIDATES,
) -> list[tuple[Action, float]]:
    """Up to ``max_candidates`` of ``legal`` (a seeded sample beyond), in a seeded order, each
    with how far ahead of its best rival it leaves ``seat`` by the game's evaluation, one
    step ahead on one redraw of what the seat cannot see (-inf where that redraw forbids it).
    """
    candidates = list(legal)
    rng.shuffle(candidates)
    candidates = candidates[:max_candidates]
    world = ruleset.resample_hidden(state, seat, rng)
    return [(action, lead_after(ruleset, world, seat, action, rng)) for action in candidates]


def lead_after(
    ruleset: Ruleset, state: State, seat: int, action: Action, rng: random.Random
) -> float:
    """How far ahead of its best rival ``seat`` is, by the game's evaluation, once ``action``
    and the automatic steps it makes due are played on a copy of ``state``; -inf where
    ``state`` forbids it (legal at the table, not in this redraw of what the seat cannot see).
    """
    after = copy_state(state)
    try:
        play(ruleset, after, seat, action, rng)
    except IllegalAction:
        return float("-inf")
    run_system_steps(ruleset, after, rng)
    values = evaluate(ruleset, after)
    rivals = [value for other, value in enumerate(values) if other != seat]
    return values[seat] - (max(rivals) if rivals else 0.0)
