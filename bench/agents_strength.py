"""``make bench-agents`` (not part of CI or ``make bench``): how strong the agents are.

For every game at 2 players, MCTS at a fixed budget plays N games against random and N
against greedy, seats alternating, on the machine's cores; each line gives MCTS's win rate
with its 95 % interval against the goal (>= 90 % against random, >= 60 % against greedy).

    python -m bench.agents_strength [--games 100] [--playouts 50] [--game gutenberg ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from projections.agents import Budget, make_agent
from projections.agents.statistics import wilson
from projections.agents.tournament import play_game
from projections.ruleset import get_ruleset

GAMES = ("gutenberg", "restoration", "impression", "impendium")
GOALS = {"random": 0.9, "greedy": 0.6}


def mcts_share(game: str, opponent: str, playouts: int, index: int) -> float:
    """MCTS's share of the win in game ``index`` (MCTS sits first in even games)."""
    ruleset = get_ruleset(game)
    mcts = make_agent("mcts", Budget(iterations=playouts))
    other = make_agent(opponent)
    seats = [mcts, other] if index % 2 == 0 else [other, mcts]
    outcome = play_game(ruleset, seats, f"strength:{game}:{opponent}:{index}")
    return outcome[index % 2].win


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.agents_strength")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--playouts", type=int, default=50, help="MCTS playouts a move")
    parser.add_argument("--game", action="append", choices=GAMES, help="default: every game")
    args = parser.parse_args(argv)
    print(f"MCTS ({args.playouts} playouts a move) at 2 players, {args.games} games a line")
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for game in args.game or GAMES:
            for opponent, goal in GOALS.items():
                began = time.perf_counter()
                shares = list(
                    pool.map(
                        mcts_share,
                        [game] * args.games,
                        [opponent] * args.games,
                        [args.playouts] * args.games,
                        range(args.games),
                    )
                )
                wins = sum(shares)
                rate = wilson(wins, args.games)
                verdict = "meets" if wins / args.games >= goal else "misses"
                print(
                    f"{game:<12} mcts vs {opponent:<7} {wins / args.games:6.1%} "
                    f"(95% CI {rate.low:.1%}-{rate.high:.1%})  goal {goal:.0%}: {verdict}"
                    f"  [{time.perf_counter() - began:.0f} s]",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
