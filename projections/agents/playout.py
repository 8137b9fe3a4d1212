"""Playing a state forward with the ruleset contract alone: whose move it is, the automatic
steps, random rollouts, and what a finished (or cut-off) game is worth to each seat.

Everything here works on a state the caller owns (a determinization or a copy): it is
mutated in place. Randomness comes from the ``rng`` passed in, never from the game's seed:
an agent's simulations must not draw what the real game will draw.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from projections.ruleset import Action, Ruleset, State

#: A rollout policy: the action ``seat`` takes in ``state``, from its ``legal`` actions.
Policy = Callable[[Ruleset, State, int, list[Action], random.Random], Action]


class NoMove(Exception):
    """Nobody can act and no automatic step is due, yet the game has not finished."""


def random_policy(
    ruleset: Ruleset, state: State, seat: int, legal: list[Action], rng: random.Random
) -> Action:
    """Any legal action, uniformly."""
    return legal[rng.randrange(len(legal))]


def run_system_steps(ruleset: Ruleset, state: State, rng: random.Random, limit: int = 1000) -> int:
    """Apply the automatic steps due now until a seat must act or the game ends; how many."""
    for applied in range(limit):
        status = ruleset.status(state)
        if status.get("finished") or not status.get("awaiting_system"):
            return applied
        action = ruleset.system_action(state)
        if action is None:
            raise NoMove(f"awaiting {status['awaiting_system']} but no automatic step is due")
        ruleset.apply(state, {**action, "seat": None}, rng)
    raise NoMove(f"more than {limit} automatic steps in a row")


def mover(ruleset: Ruleset, state: State, rng: random.Random) -> tuple[int, list[Action]] | None:
    """The seat that acts next and its legal actions, or None when the game is over.

    In a simultaneous phase several seats are awaited; the one that moves first in a
    simulation is drawn at random among those that can act (their order does not matter to
    the rules, and no seat may wait on purpose for another's secret choice)."""
    run_system_steps(ruleset, state, rng)
    status = ruleset.status(state)
    if status.get("finished"):
        return None
    seats = sorted(status.get("to_act") or [])
    rng.shuffle(seats)
    for seat in seats:
        legal = ruleset.legal_actions(state, seat)
        if legal:
            return seat, legal
    raise NoMove(f"nobody can act: {status}")


def play(ruleset: Ruleset, state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Apply ``seat``'s ``action`` to ``state``."""
    ruleset.apply(state, {**action, "seat": seat}, rng)


def rollout(
    ruleset: Ruleset,
    state: State,
    rng: random.Random,
    max_steps: int,
    policy: Policy = random_policy,
) -> int:
    """Play ``state`` forward with ``policy`` for at most ``max_steps`` seat actions (or to
    the end); returns how many were played."""
    for played in range(max_steps):
        turn = mover(ruleset, state, rng)
        if turn is None:
            return played
        seat, legal = turn
        play(ruleset, state, seat, policy(ruleset, state, seat, legal, rng), rng)
    run_system_steps(ruleset, state, rng)
    return max_steps


@dataclass(frozen=True)
class Outcome:
    """What a state is worth to one seat: its share of the win (1 for a sole winner, 1/k for
    k tied winners, else 0), its score, and its margin (score minus the best other score)."""

    win: float
    score: float
    margin: float


def outcomes(ruleset: Ruleset, state: State, scores: list[float]) -> list[Outcome]:
    """Each seat's outcome: from the final ranking once the game is over, otherwise from
    ``scores`` (an evaluation of the unfinished state; the leaders share the win)."""
    result = ruleset.result(state) if ruleset.status(state).get("finished") else None
    if result is not None:
        totals = {entry["seat"]: float(entry["total"]) for entry in result["scores"]}
        scores = [totals.get(seat, 0.0) for seat in range(len(scores))]
        winners = list(result["ranking"][0]) if result.get("ranking") else []
    else:
        best = max(scores)
        winners = [seat for seat, score in enumerate(scores) if score == best]
    outcome = []
    for seat, score in enumerate(scores):
        others = [other for index, other in enumerate(scores) if index != seat]
        margin = score - max(others) if others else score
        win = 1.0 / len(winners) if seat in winners else 0.0
        outcome.append(Outcome(win=win, score=score, margin=margin))
    return outcome
