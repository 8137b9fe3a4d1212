"""``make bench-agents`` (not part of CI or ``make bench``): how strong the agents are.

For every game at 2 players, MCTS at a fixed budget plays N games against random and N
against greedy, seats alternating, on ``--jobs`` processes (default: one per core); each
line gives MCTS's win rate with its 95 % interval against the goal (>= 90 % against random,
>= 60 % against greedy) and the seconds the line took; a progress bar on stderr counts each
line's games as they finish.

What a line measures (docs/analysis.md, "Tournaments and strength"):

- Gutenberg, Restoration and Impression: whole games, to the final ranking, MCTS at
  ``--playouts`` playouts a decision (default 50).
- Impendium: MCTS at ``--playouts`` too, but a game is bounded, because nothing else bounds
  it: with ``round_limit`` 40 (the ruleset's own option: the game ends after round 40 with
  the normal ranking, unless 25 VP or the galaxies end it sooner) and at most 1,200 seat
  actions, after which the game is valued by the game's evaluation (the leader wins). The
  cap is needed because a round may last for ever under the rules: a seat whose rivals have
  passed may keep taking turns that offer a trade the rival declines (a trade offer counts as
  something done, docs/rules/impendium.md, "Ending a turn"); the greedy agent did just that
  whenever passing looked worse to it one ply ahead, until Impendium's evaluation counted
  the round's income (docs/analysis.md), and the cap stays as a guard. The bracket counts
  the games the cap cut short; such a game is decided by the evaluation, not by the rules.

    python -m bench.agents_strength [--games 100] [--playouts 50] [--jobs N] [--game gutenberg ...]
        [--opponent random|greedy ...]

``--game`` and ``--opponent`` choose lines (default: all eight), so that the table can be
run a part at a time on a machine that cannot give it hours in one go.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from projections.agents import Budget, make_agent
from projections.agents.statistics import wilson
from projections.agents.tournament import play_out
from projections.ruleset import get_ruleset

GAMES = ("gutenberg", "restoration", "impression", "impendium")
GOALS = {"random": 0.9, "greedy": 0.6}
#: play_game's own bound: no whole game of the other three comes near it.
MAX_STEPS = 100_000


@dataclass(frozen=True)
class Bounds:
    """How a game of one line is bounded: the ruleset options and the most seat actions."""

    options: dict[str, Any] = field(default_factory=dict)
    max_steps: int = MAX_STEPS


BOUNDS = {"impendium": Bounds(options={"round_limit": 40}, max_steps=1200)}


@dataclass(frozen=True)
class Share:
    """One game's result for MCTS: its share of the win, and whether the cap cut it short."""

    share: float
    cut: bool


def mcts_share(game: str, opponent: str, playouts: int, index: int) -> Share:
    """MCTS's share of the win in game ``index`` (MCTS sits first in even games)."""
    ruleset = get_ruleset(game)
    bounds = BOUNDS.get(game, Bounds())
    mcts = make_agent("mcts", Budget(iterations=playouts))
    other = make_agent(opponent)
    seats = [mcts, other] if index % 2 == 0 else [other, mcts]
    played = play_out(
        ruleset,
        seats,
        f"strength:{game}:{opponent}:{index}",
        options=bounds.options,
        max_steps=bounds.max_steps,
    )
    return Share(share=played.outcomes[index % 2].win, cut=not played.finished)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agents_strength")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--playouts", type=int, default=50, help="MCTS playouts a move")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    parser.add_argument("--game", action="append", choices=GAMES, help="default: every game")
    parser.add_argument(
        "--opponent", action="append", choices=tuple(GOALS), help="default: random and greedy"
    )
    args = parser.parse_args(argv)
    if args.games < 1 or args.playouts < 1 or args.jobs < 1:
        parser.error("--games, --playouts and --jobs must be at least 1")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    # The bar goes to stderr, so stdout keeps only the table.
    console = Console(stderr=True)

    print(f"MCTS ({args.playouts} playouts a move) at 2 players, {args.games} games a line")
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for game in args.game or GAMES:
            for opponent in args.opponent or GOALS:
                goal = GOALS[opponent]
                began = time.perf_counter()
                played: list[Share] = []
                columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
                with Progress(
                    *Progress.get_default_columns()[:1], *columns, console=console, transient=True
                ) as bar:
                    task = bar.add_task(f"{game} vs {opponent}", total=args.games)
                    futures = [
                        pool.submit(mcts_share, game, opponent, args.playouts, index)
                        for index in range(args.games)
                    ]
                    for future in as_completed(futures):
                        played.append(future.result())
                        bar.advance(task)
                wins = sum(one.share for one in played)
                cut = sum(one.cut for one in played)
                rate = wilson(wins, args.games)
                verdict = "meets" if wins / args.games >= goal else "misses"
                cuts = f", {cut} cut" if game in BOUNDS else ""
                print(
                    f"{game:<12} mcts vs {opponent:<7} {wins / args.games:6.1%} "
                    f"(95% CI {rate.low:.1%}-{rate.high:.1%})  goal {goal:.0%}: {verdict}"
                    f"  [{time.perf_counter() - began:.0f} s{cuts}]",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
