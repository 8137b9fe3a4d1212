"""``python -m bench.calibration`` (part of ``make bench-agents``; not CI): do the review's
evaluations mean what they say?

For each game, greedy plays greedy (2 players, seeded); every ``--every``-th seat action a
position is kept, with the seat to move. After the game, each kept position is evaluated as
that seat sees it (``projections.agents.review.evaluate_position``: ``--evaluations``
playouts from redraws of what it cannot see) and set against what really happened: the
Brier score of the win probability against the seat's real share of the win (always saying
50 % scores 0.25; lower is better), a calibration table (positions by predicted win
probability: how many, the mean prediction, the share really won), and the mean absolute
error of the expected final margin against the real one.

    python -m bench.calibration [--games 8] [--every 12] [--evaluations 16] [--game gutenberg ...]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from projections.agents import make_agent
from projections.agents.evaluation import evaluate
from projections.agents.playout import mover, outcomes, play
from projections.agents.review import evaluate_position
from projections.fold import copy_state
from projections.ruleset import get_ruleset

GAMES = ("gutenberg", "restoration", "impression", "impendium")
OPTIONS = {"impendium": {"round_limit": 40}}
MAX_STEPS = {"impendium": 1200}
BINS = 5


def positions_of_one_game(game: str, index: int, every: int, evaluations: int) -> list[Any]:
    """(predicted win, real win, predicted margin, real margin) for the kept positions of
    one greedy-vs-greedy game."""
    ruleset = get_ruleset(game)
    seed = f"calibration:{game}:{index}"
    options = {**ruleset.options, **OPTIONS.get(game, {})}
    state = ruleset.setup(["P1", "P2"], options, random.Random(seed))
    table = random.Random(f"table:{seed}")
    agent = make_agent("greedy")
    kept: list[tuple[int, Any]] = []
    for step in range(MAX_STEPS.get(game, 100_000)):
        turn = mover(ruleset, state, table)
        if turn is None:
            break
        seat = turn[0]
        if step % every == every // 2:
            kept.append((seat, copy_state(state)))
        action = agent.choose(ruleset, state, seat, random.Random(f"{seed}:{step}"))
        play(ruleset, state, seat, action, table)
    final = outcomes(ruleset, state, evaluate(ruleset, state))
    rows = []
    for number, (seat, position) in enumerate(kept):
        value = evaluate_position(ruleset, position, seat, evaluations, f"{seed}:{number}")
        rows.append((value["win"], final[seat].win, value["margin"], final[seat].margin))
    return rows


def report(game: str, rows: list[Any], seconds: float) -> list[str]:
    """The lines printed for one game."""
    brier = sum((p - won) ** 2 for p, won, _, _ in rows) / len(rows)
    error = sum(abs(m - real) for _, _, m, real in rows) / len(rows)
    lines = [
        f"{game:<12} {len(rows)} positions  Brier {brier:.3f} (always 50%: 0.250)  "
        f"margin MAE {error:.1f}  [{seconds:.0f} s]"
    ]
    for low in range(BINS):
        inside = [r for r in rows if min(BINS - 1, int(r[0] * BINS)) == low]
        if not inside:
            continue
        said = sum(r[0] for r in inside) / len(inside)
        won = sum(r[1] for r in inside) / len(inside)
        lines.append(
            f"    said {low * 100 // BINS:>3}-{(low + 1) * 100 // BINS}%: {len(inside):>4} "
            f"positions, mean said {said:5.1%}, really won {won:5.1%}"
        )
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.calibration")
    parser.add_argument("--games", type=int, default=8, help="greedy-vs-greedy games a game")
    parser.add_argument("--every", type=int, default=12, help="keep every Nth position")
    parser.add_argument("--evaluations", type=int, default=16, help="playouts an evaluation")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--game", action="append", choices=GAMES, help="default: all four")
    args = parser.parse_args(argv)
    print(f"Evaluations ({args.evaluations} playouts) against greedy-vs-greedy outcomes")
    for game in args.game or GAMES:
        began = time.monotonic()
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            found = pool.map(
                positions_of_one_game,
                [game] * args.games,
                range(args.games),
                [args.every] * args.games,
                [args.evaluations] * args.games,
            )
            rows = [row for game_rows in found for row in game_rows]
        for line in report(game, rows, time.monotonic() - began):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
