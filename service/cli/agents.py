"""``meeple`` commands that put agents to work: ``analyze`` one decision of a logged game,
and a ``tournament`` between agents. Both run here, with no server."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from projections.agents import AGENTS, Budget, make_agent
from projections.agents.analysis import analyze, search_seed
from projections.agents.lines import candidate_lines, own_line
from projections.agents.statistics import mean_interval, wilson
from projections.agents.tournament import play_game
from projections.audit import LogFormatError, parse_jsonl
from projections.fold import ReplayError, fold
from service.application.analyses import DEFAULT_PLAYOUTS, DEFAULT_SEED
from service.cli.log import fail, seated_ruleset


def add_commands(subparsers: Any) -> None:
    """Register ``analyze`` and ``tournament`` on the ``meeple`` argument parser."""
    analyze_cmd = subparsers.add_parser(
        "analyze", help="weigh a seat's candidate moves at one point of a logged game (MCTS)"
    )
    analyze_cmd.add_argument("file", type=Path, help="the game's log, JSON Lines (meeple export)")
    analyze_cmd.add_argument("--at", type=int, required=True, help="after this many events")
    analyze_cmd.add_argument("--seat", type=int, required=True, help="the deciding seat (0-based)")
    analyze_cmd.add_argument(
        "--playouts",
        type=int,
        default=DEFAULT_PLAYOUTS,
        help=f"default {DEFAULT_PLAYOUTS}, as over HTTP",
    )
    analyze_cmd.add_argument("--seconds", type=float, help="stop after this long as well")
    analyze_cmd.add_argument(
        "--seed",
        default=DEFAULT_SEED,
        help=f"the search's seed (default \"{DEFAULT_SEED}\"): the same as an HTTP analysis's "
        "seed gives the same figures",
    )
    analyze_cmd.add_argument("--top", type=int, default=10, help="candidates shown (default 10)")
    analyze_cmd.add_argument(
        "--json", action="store_true", help="print the result as the API's `result` (JSON)"
    )
    analyze_cmd.set_defaults(handler=run_analyze)

    tournament = subparsers.add_parser(
        "tournament", help="play agents against each other and print their win rates"
    )
    tournament.add_argument("ruleset", help="ruleset id, e.g. gutenberg")
    tournament.add_argument(
        "--agents", default="mcts,random", help=f"one per seat, from {', '.join(AGENTS)}"
    )
    tournament.add_argument("--games", type=int, default=20, help="default 20")
    tournament.add_argument("--playouts", type=int, default=100, help="MCTS playouts a move")
    tournament.add_argument("--seed", default="tournament")
    tournament.set_defaults(handler=run_tournament)


def run_analyze(args: argparse.Namespace) -> int:
    try:
        envelopes = parse_jsonl(args.file.read_bytes())
        game = fold(envelopes, upto=args.at)
    except OSError as failure:
        return fail(f"cannot read {args.file}: {failure.strerror}")
    except LogFormatError as failure:
        return fail(f"line {failure.line}: {failure.reason}")
    except ReplayError as failure:
        return fail(f"seq {failure.seq}: {failure.reason}")
    if args.at < 1 or args.at > len(envelopes):
        return fail(f"--at must be 1-{len(envelopes)}", 2)
    ruleset, state = game.ruleset, game.state
    if not 0 <= args.seat < len(game.meta["players"]):
        return fail(f"--seat must be 0-{len(game.meta['players']) - 1}", 2)
    if not ruleset.legal_actions(state, args.seat):
        return fail(f"seat {args.seat} has no decision to make after event {args.at}", 2)
    try:
        budget = Budget(args.playouts, args.seconds, time.monotonic if args.seconds else None)
    except ValueError as error:
        return fail(str(error), 2)
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    seed = search_seed(args.at, args.seat, args.seed)
    with Progress(transient=True, disable=args.json) as bar:
        task = bar.add_task(f"analysing seat {args.seat}", total=args.playouts)
        result = analyze(
            ruleset,
            state,
            args.seat,
            budget,
            seed,
            progress=lambda done: bar.update(task, completed=done),
        )
    if args.json:
        found = result.to_dict()
        actions = [candidate["action"] for candidate in found["candidates"]]
        lines = candidate_lines(ruleset, state, args.seat, actions)
        for candidate, line in zip(found["candidates"], lines, strict=True):
            candidate["summary"] = line
        print(json.dumps(found, sort_keys=True))
        return 0
    table = Table(title=f"{ruleset.title}, seat {args.seat} after event {args.at}")
    for column in ("action", "playouts", "win rate (95% CI)", "mean score", "mean margin"):
        table.add_column(column, justify="left" if column == "action" else "right")
    shown = result.candidates[: args.top]
    lines = candidate_lines(ruleset, state, args.seat, [c.action for c in result.candidates])
    for candidate, line in zip(shown, lines, strict=False):
        marker = "* " if candidate.action == result.pick else "  "
        table.add_row(
            marker + line,
            str(candidate.playouts),
            f"{candidate.win_rate:.0%} ({candidate.win_interval.low:.0%}-"
            f"{candidate.win_interval.high:.0%})",
            _mean(candidate.mean_score, candidate.score_interval),
            _mean(candidate.mean_margin, candidate.margin_interval),
        )
    console = Console()
    console.print(table)
    console.print(f"{result.playouts} playouts; * the pick: {json.dumps(result.pick)}")
    console.print(f"  ({own_line(ruleset, state, args.seat, result.pick)})")
    return 0


def run_tournament(args: argparse.Namespace) -> int:
    names = [name.strip() for name in args.agents.split(",") if name.strip()]
    ruleset = seated_ruleset(args.ruleset, len(names), "agents")
    if isinstance(ruleset, str):
        return fail(ruleset, 2)
    if args.games < 1 or args.playouts < 1:
        return fail("--games and --playouts must be at least 1", 2)
    try:
        agents = [make_agent(name, Budget(iterations=args.playouts)) for name in names]
    except ValueError as error:
        return fail(str(error), 2)
    from rich.progress import track

    wins = [0.0] * len(names)
    scores: list[list[float]] = [[] for _ in names]
    for game in track(range(args.games), description=f"{ruleset.id}", transient=True):
        # Seats rotate, so no agent keeps the first player's edge.
        seating = [(seat + game) % len(names) for seat in range(len(names))]
        outcome = play_game(ruleset, [agents[i] for i in seating], f"{args.seed}:{game}")
        for seat, entrant in enumerate(seating):
            wins[entrant] += outcome[seat].win
            scores[entrant].append(outcome[seat].score)
    print(f"{ruleset.title}, {args.games} games, seats rotating")
    for entrant, name in enumerate(names):
        rate = wilson(wins[entrant], args.games)
        own = scores[entrant]
        print(
            f"  {entrant + 1}. {name:<7} wins {wins[entrant]:6.1f}  "
            f"win rate {wins[entrant] / args.games:6.1%} (95% CI {rate.low:.1%}-{rate.high:.1%})"
            f"  mean score "
            + _mean(sum(own) / len(own), mean_interval(sum(own), sum(s * s for s in own), len(own)))
        )
    return 0


def _mean(mean: float, interval: Any) -> str:
    if interval is None:
        return f"{mean:.1f}"
    return f"{mean:.1f} ({interval.low:.1f} to {interval.high:.1f})"
