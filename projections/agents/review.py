"""A game review of one seat (docs/analysis.md, "Game review"): for each of its decisions the
move played against the best move the search finds, what each is worth, how much the played
move lost and a mark (inaccuracy, mistake, blunder); the evaluation after every event; an
accuracy figure for the game.

Everything is seen as the reviewed seat saw it: every evaluation and search begins with
``resample_hidden`` for that seat, and the seeds are made of the request (seat, event, seed)
alone, never of the game's seed, so a review of a live game uses nothing the seat could not
see at that decision, and two games that differ only in that get the identical review.

What a move is worth is measured by *paired* playouts: each playout redraws what the seat
cannot see once, then plays every compared move on a copy of that same redraw with the same
luck for what follows (common random numbers), so the difference between two moves is not
drowned by the luck of the draw.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from projections.agents.budget import Budget
from projections.agents.evaluation import evaluate
from projections.agents.greedy import sampled_greedy_policy
from projections.agents.lines import candidate_lines
from projections.agents.mcts import ROLLOUT_SAMPLE, ROLLOUT_STEPS, MctsAgent
from projections.agents.playout import outcomes, play, rollout
from projections.fold import copy_state
from projections.ruleset import Action, Ruleset, State

#: Default search playouts of one decision, and paired playouts of one evaluation.
SEARCH_PLAYOUTS = 50
EVALUATIONS = 16
MARKS = ("inaccuracy", "mistake", "blunder")


@dataclass(frozen=True)
class Thresholds:
    """Expected final margin (the seat's score minus the best other score, in the game's
    points) a move may lose against the best found before it is marked as each."""

    inaccuracy: float
    mistake: float
    blunder: float

    def mark(self, loss: float) -> str | None:
        """The mark a move losing ``loss`` points of expected margin earns, if any."""
        for name, limit in (("blunder", self.blunder), ("mistake", self.mistake)):
            if loss >= limit:
                return name
        return "inaccuracy" if loss >= self.inaccuracy else None

    def to_dict(self) -> dict[str, float]:
        return {"inaccuracy": self.inaccuracy, "mistake": self.mistake, "blunder": self.blunder}


#: Per game, from what random moves lost against the search's pick in one random game each
#: (docs/analysis.md, "Marks": most lose nothing measurable, a few lose 1-4 points). A game
#: not listed uses DEFAULT_THRESHOLDS.
THRESHOLDS: dict[str, Thresholds] = {
    "gutenberg": Thresholds(0.5, 1.5, 3.0),
    "restoration": Thresholds(0.5, 1.5, 3.0),
    "impression": Thresholds(0.5, 1.5, 3.0),
    "impendium": Thresholds(0.5, 1.0, 2.0),
}
DEFAULT_THRESHOLDS = Thresholds(1.0, 2.0, 4.0)


def thresholds_for(ruleset_id: str) -> Thresholds:
    return THRESHOLDS.get(ruleset_id, DEFAULT_THRESHOLDS)


def move_accuracy(win_lost: float) -> float:
    """A move's accuracy (0-100) from the share of a win it gave away (0-1): lichess's
    curve, 100 for nothing lost, about 65 for a tenth, 40 for a fifth."""
    value = 103.1668 * math.exp(-0.04354 * max(0.0, win_lost) * 100) - 3.1669
    return min(100.0, max(0.0, value))


def evaluate_position(
    ruleset: Ruleset, state: State, seat: int, playouts: int, seed: str
) -> dict[str, Any]:
    """What ``state`` is worth to ``seat`` as it sees it: mean win share and margin of
    ``playouts`` playouts from redraws of what it cannot see; a finished game's own result
    (``proven``)."""
    if ruleset.status(state).get("finished"):
        mine = outcomes(ruleset, state, evaluate(ruleset, state))[seat]
        return {"win": mine.win, "margin": mine.margin, "proven": True}
    rng = random.Random(seed)
    policy = sampled_greedy_policy(ROLLOUT_SAMPLE)
    win = margin = 0.0
    for _ in range(playouts):
        world = ruleset.resample_hidden(state, seat, rng)
        rollout(ruleset, world, rng, ROLLOUT_STEPS, policy)
        mine = outcomes(ruleset, world, evaluate(ruleset, world))[seat]
        win += mine.win
        margin += mine.margin
    return {"win": win / playouts, "margin": margin / playouts, "proven": False}


def compare_moves(
    ruleset: Ruleset, state: State, seat: int, moves: list[Action], playouts: int, seed: str
) -> list[dict[str, Any]]:
    """What each of ``seat``'s ``moves`` is worth in ``state``, by paired playouts (the same
    redraw and the same luck afterwards for every move); each ``{"win", "margin"}``."""
    rng = random.Random(seed)
    policy = sampled_greedy_policy(ROLLOUT_SAMPLE)
    totals = [[0.0, 0.0] for _ in moves]
    for _ in range(playouts):
        world = ruleset.resample_hidden(state, seat, rng)
        luck = rng.getrandbits(64)
        for total, move in zip(totals, moves, strict=True):
            after = copy_state(world)
            same_luck = random.Random(luck)
            play(ruleset, after, seat, move, same_luck)
            rollout(ruleset, after, same_luck, ROLLOUT_STEPS, policy)
            mine = outcomes(ruleset, after, evaluate(ruleset, after))[seat]
            total[0] += mine.win
            total[1] += mine.margin
    return [{"win": w / playouts, "margin": m / playouts} for w, m in totals]


def judge_decision(
    ruleset: Ruleset,
    before: State,
    seat: int,
    played: Action,
    search_playouts: int,
    evaluations: int,
    seed: str,
) -> dict[str, Any]:
    """One decision: the move played, the best move the search finds, what each is worth
    (``before`` is the best's value, ``after`` the played move's), the loss and the mark."""
    played = {name: value for name, value in played.items() if name != "seat"}
    legal = ruleset.legal_actions(before, seat)
    forced = len(legal) <= 1
    best = played
    if not forced:
        budget = Budget(iterations=search_playouts)
        search = MctsAgent(budget).search(ruleset, before, seat, random.Random(f"{seed}:search"))
        best = search.pick
    moves = [played] if best == played else [best, played]
    values = compare_moves(ruleset, before, seat, moves, evaluations, f"{seed}:compare")
    best_value, played_value = values[0], values[-1]
    if played_value["margin"] > best_value["margin"]:
        # Measured apart, the move played did better than the search's pick: it was the best.
        best, best_value = played, played_value
    loss = best_value["margin"] - played_value["margin"]
    win_lost = max(0.0, best_value["win"] - played_value["win"])
    lines = candidate_lines(ruleset, before, seat, [played, best] if best != played else [played])
    return {
        "played": played,
        "played_summary": lines[0],
        "best": best,
        "best_summary": lines[-1],
        "forced": forced,
        "before": best_value,
        "after": played_value,
        "loss": loss,
        "win_lost": win_lost,
        "mark": None if forced else thresholds_for(ruleset.id).mark(loss),
        "accuracy": move_accuracy(win_lost),
    }


def review_event(
    ruleset: Ruleset, point: dict[str, Any], seat: int, search_playouts: int, evaluations: int,
    seed: str,
) -> dict[str, Any]:  # fmt: skip
    """One event of the review: ``point`` holds its ``seq``, the state ``after`` it and, when
    it is the seat's own action, the state ``before`` it and the action ``played``. The
    evaluation after it (the played move's value at the seat's own moves, so the graph and
    the marks are the same numbers) and, at the seat's moves, the decision."""
    seq = int(point["seq"])
    own = f"review:{seq}:{seat}:{seed}"
    if point.get("played") is not None:
        decision = judge_decision(
            ruleset, point["before"], seat, point["played"], search_playouts, evaluations, own
        )
        after = dict(decision["after"])
        finished = ruleset.status(point["after"]).get("finished")
        if finished:
            after = evaluate_position(ruleset, point["after"], seat, evaluations, own)
        return {"seq": seq, "evaluation": {"proven": bool(finished), **after}, "decision": decision}
    evaluation = evaluate_position(ruleset, point["after"], seat, evaluations, own)
    return {"seq": seq, "evaluation": evaluation, "decision": None}


def summarize_review(ruleset_id: str, events: list[dict[str, Any]]) -> dict[str, Any]:
    """The game's figures from the events reviewed so far: the seat's accuracy (the mean of
    its unforced moves' accuracies) and how many moves earned each mark."""
    decisions = [e["decision"] for e in events if e.get("decision") and not e["decision"]["forced"]]
    counts = {mark: sum(d["mark"] == mark for d in decisions) for mark in MARKS}
    accuracy = sum(d["accuracy"] for d in decisions) / len(decisions) if decisions else None
    return {
        "accuracy": accuracy,
        "marks": counts,
        "decisions": sum(1 for e in events if e.get("decision")),
        "thresholds": thresholds_for(ruleset_id).to_dict(),
    }
