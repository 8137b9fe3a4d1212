"""Information-set Monte Carlo tree search (single-observer ISMCTS: Cowling, Powley and
Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 2012).

One tree is grown over the deciding seat's information set. Each iteration:

1. **determinize**: ``resample_hidden`` redraws everything the deciding seat cannot see (deck
   and bag order, the other seats' hands and secret choices), so the search never uses what
   the seat cannot see;
2. **select**: from the root, while every action legal in this determinization has been
   tried, follow the child with the best UCB1 score for the seat that moves there, counting
   a child's *availability* (how often it was legal) instead of its parent's visits;
3. **expand** one untried action (progressive widening bounds how many children a node may
   have, so a decision listing thousands of actions is still searched in depth); at the root
   the untried actions come best first by the greedy agent's one-ply evaluation (a *prior*,
   computed once per search on one determinization), so with thousands of candidates (a
   Gutenberg plan phase) the few the budget can try are the promising ones, not a random few;
4. **roll out** for at most ``rollout_steps`` seat actions, each the best of a few legal
   actions drawn at random by the game's evaluation one step ahead, then value the
   position: the final ranking once the game is over, otherwise the game's evaluation
   (``projections.agents.evaluation``);
5. **back up** each seat's share of the win along the path.

Automatic steps are applied as they come (their randomness is the search's own ``rng``). The
root's children keep, for the deciding seat, the statistics an analysis reports: playouts,
win share, score and margin (sums and sums of squares, for confidence intervals).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from events.envelope import canonical_json
from projections.agents.budget import Budget
from projections.agents.evaluation import evaluate
from projections.agents.greedy import one_ply_values, sampled_greedy_policy
from projections.agents.playout import Policy, mover, outcomes, play, rollout
from projections.ruleset import Action, IllegalAction, Ruleset, State

#: UCB1's exploration constant (rewards are win shares in [0, 1]).
EXPLORATION = 0.7
#: Progressive widening: a node visited n times may have at most WIDEN_BASE * n**WIDEN_POWER
#: children (at least one).
WIDEN_BASE = 2.0
WIDEN_POWER = 0.5
#: Seat actions a rollout plays before the position is valued by the evaluation: a few
#: sensible moves tell more than many random ones (Gutenberg against greedy, 30 playouts:
#: 6 of 12 games won with 60 random steps, 9 of 12 with 10 steps of ROLLOUT_SAMPLE).
ROLLOUT_STEPS = 10
#: A rollout's move: the best of this many legal actions drawn at random, by the game's
#: evaluation one step ahead (``greedy.sampled_greedy_policy``).
ROLLOUT_SAMPLE = 4
#: Default playouts of one decision.
ITERATIONS = 200
#: How many lists of legal actions a search keeps keyed (``KeyedActions``).
KEYED_REMEMBERED = 8


def action_key(seat: int, action: Action) -> bytes:
    """One key per seat and distinct action, whatever its key order (in a simultaneous
    phase the seat moving first in a simulation varies, so a node's children are keyed by
    who acts as well as by what)."""
    return canonical_json([seat, action])


@dataclass
class Stats:
    """The deciding seat's totals over the playouts through one root action."""

    playouts: int = 0
    wins: float = 0.0
    score: float = 0.0
    score_squares: float = 0.0
    margin: float = 0.0
    margin_squares: float = 0.0

    def add(self, win: float, score: float, margin: float) -> None:
        self.playouts += 1
        self.wins += win
        self.score += score
        self.score_squares += score * score
        self.margin += margin
        self.margin_squares += margin * margin


class KeyedActions:
    """Legal actions by ``action_key``, remembering the last few lists keyed: a search meets
    the same lists again and again (the root's in every playout, a rival's thousands of
    Gutenberg plans at every node of a simultaneous phase), and keying each action anew
    cost a quarter of a search. A list equal to one remembered gets its keys again."""

    def __init__(self, size: int = KEYED_REMEMBERED) -> None:
        self.size = size
        self.recent: list[tuple[int, list[Action], dict[bytes, Action]]] = []

    def __call__(self, actor: int, legal: list[Action]) -> dict[bytes, Action]:
        for index, (seat, actions, keyed) in enumerate(self.recent):
            if seat == actor and len(actions) == len(legal) and actions == legal:
                if index:
                    self.recent.insert(0, self.recent.pop(index))
                return keyed
        keyed = {action_key(actor, action): action for action in legal}
        self.recent.insert(0, (actor, legal, keyed))
        del self.recent[self.size :]
        return keyed


@dataclass
class Node:
    """A tree node: the action that led here, by whom, and its UCB statistics."""

    seat: int | None = None
    action: Action | None = None
    visits: int = 0
    availability: int = 0
    reward: float = 0.0
    children: dict[bytes, Node] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)

    def may_widen(self) -> bool:
        return len(self.children) < max(1, int(WIDEN_BASE * (self.visits + 1) ** WIDEN_POWER))


@dataclass
class Search:
    """The outcome of a search: the pick and the statistics of every root action tried."""

    seat: int
    playouts: int
    pick: Action
    root: Node

    def candidates(self) -> list[tuple[Action, Stats]]:
        """The root actions tried, most played first (then best rewarded: the pick first)."""
        children = sorted(self.root.children.values(), key=lambda n: (-n.visits, -n.reward))
        return [(child.action, child.stats) for child in children if child.action is not None]


Progress = Callable[[int], None]


class MctsAgent:
    """Information-set MCTS over the ruleset contract."""

    name = "mcts"

    def __init__(
        self,
        budget: Budget | None = None,
        rollout_steps: int = ROLLOUT_STEPS,
        exploration: float = EXPLORATION,
        prior: bool = True,
        policy: Policy | None = None,
    ) -> None:
        self.budget = budget or Budget(iterations=ITERATIONS)
        self.rollout_steps = rollout_steps
        self.exploration = exploration
        self.prior = prior
        self.policy = policy if policy is not None else sampled_greedy_policy(ROLLOUT_SAMPLE)

    def choose(self, ruleset: Ruleset, state: State, seat: int, rng: random.Random) -> Action:
        """The most played root action after the budget's playouts (the only legal action
        at once, without a search: every playout would go through it)."""
        legal = ruleset.legal_actions(state, seat)
        if len(legal) == 1:
            return legal[0]
        return self.search(ruleset, state, seat, rng).pick

    def search(
        self,
        ruleset: Ruleset,
        state: State,
        seat: int,
        rng: random.Random,
        progress: Progress | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> Search:
        """Grow the tree for ``seat`` deciding in ``state``; ``progress(done)`` is told each
        playout, and ``cancelled()`` stops the search early."""
        legal = ruleset.legal_actions(state, seat)
        if not legal:
            raise ValueError(f"seat {seat} has no legal action")
        root = Node()
        more = self.budget.start()
        ranks: dict[bytes, int] = {}
        if self.prior and len(legal) > 1:
            valued = one_ply_values(ruleset, state, seat, legal, rng)
            valued.sort(key=lambda pair: -pair[1])  # stable: ties keep the seeded order
            ranks = {action_key(seat, action): rank for rank, (action, _) in enumerate(valued)}
        keys = KeyedActions()
        done = 0
        while more(done) and not (cancelled is not None and cancelled()):
            world = ruleset.resample_hidden(state, seat, rng)
            self._iterate(ruleset, world, seat, root, rng, ranks, keys)
            done += 1
            if progress is not None:
                progress(done)
        tried = [child for child in root.children.values() if child.visits]
        pick = max(tried, key=lambda n: (n.visits, n.reward)).action if tried else None
        return Search(seat=seat, playouts=done, pick=pick or legal[0], root=root)

    def _iterate(
        self,
        ruleset: Ruleset,
        world: State,
        seat: int,
        root: Node,
        rng: random.Random,
        ranks: dict[bytes, int],
        keys: KeyedActions,
    ) -> None:
        path = [root]
        node = root
        # At the root the deciding seat moves, even where several seats are awaited.
        turn: tuple[int, list[Action]] | None = (seat, ruleset.legal_actions(world, seat))
        while turn is not None:
            actor, legal = turn
            keyed = keys(actor, legal)
            for key, child in node.children.items():
                if key in keyed:
                    child.availability += 1
            untried = [key for key in keyed if key not in node.children]
            if untried and (node.may_widen() or not any(k in keyed for k in node.children)):
                ranked = [key for key in untried if key in ranks] if node is root else []
                if ranked:
                    key = min(ranked, key=ranks.__getitem__)
                else:
                    key = untried[rng.randrange(len(untried))]
                child = Node(seat=actor, action=keyed[key], availability=1)
                node.children[key] = child
            else:
                available = [child for key, child in node.children.items() if key in keyed]
                child = max(available, key=self._ucb)
            try:
                play(ruleset, world, actor, keyed[action_key(actor, child.action or {})], rng)
            except IllegalAction:
                break  # the determinization disagrees with the table; value what we have
            path.append(child)
            node = child
            if child.visits == 0:
                break
            turn = mover(ruleset, world, rng)
        rollout(ruleset, world, rng, self.rollout_steps, self.policy)
        values = outcomes(ruleset, world, evaluate(ruleset, world))
        for visited in path[1:]:
            if visited.seat is not None:
                visited.visits += 1
                visited.reward += values[visited.seat].win
        mine = values[seat]
        if len(path) > 1:
            path[1].stats.add(mine.win, mine.score, mine.margin)
        root.visits += 1

    def _ucb(self, node: Node) -> float:
        if node.visits == 0:
            return math.inf
        mean = node.reward / node.visits
        spread = math.log(max(node.availability, 1)) / node.visits
        return mean + self.exploration * math.sqrt(spread)
