"""``meeple`` commands that work on logs: simulate, export, import, replay, verify.

Exported logs are JSON Lines: one envelope a line, in canonical JSON. ``verify`` and
``replay`` need no server and no store, so a third party can check a finished game offline.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from events.envelope import NewEvent
from events.store import EventStore
from projections.audit import LogFormatError, audit, jsonl_lines, parse_jsonl, read_log, to_jsonl
from projections.fold import ReplayError, fold
from projections.ruleset import Ruleset, all_rulesets, get_ruleset
from projections.simulate import play_random

DEFAULT_STORE_URL = "sqlite:///var/meeple.db"


def add_commands(subparsers: Any) -> None:
    """Register the log commands on the ``meeple`` argument parser."""
    simulate = subparsers.add_parser("simulate", help="play random legal games to the end")
    simulate.add_argument("ruleset", help="ruleset id, e.g. gutenberg")
    simulate.add_argument("--players", type=int, required=True, help="number of players")
    simulate.add_argument("--seed", required=True, help="seed of the first game")
    simulate.add_argument("--games", type=int, default=1, help="how many games (default 1)")
    simulate.add_argument("--out", type=Path, help="write every game's log to this .jsonl file")
    simulate.add_argument(
        "--option", action="append", default=[], metavar="NAME=JSON", help="a game option"
    )
    simulate.set_defaults(handler=run_simulate)

    export = subparsers.add_parser("export", help="write a game's whole log as JSON Lines")
    export.add_argument("game_id")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.add_argument("--store", help="store URL (default: $MEEPLE_STORE_URL)")
    export.set_defaults(handler=run_export)

    importer = subparsers.add_parser("import", help="load an exported log into the store")
    importer.add_argument("file", type=Path)
    importer.add_argument("--store", help="store URL (default: $MEEPLE_STORE_URL)")
    importer.set_defaults(handler=run_import)

    replay = subparsers.add_parser("replay", help="fold a log file and print the state")
    replay.add_argument("file", type=Path)
    replay.add_argument("--at", type=int, help="stop after event N")
    replay.add_argument("--seat", type=int, help="print this seat's view (default: spectator)")
    replay.set_defaults(handler=run_replay)

    verify = subparsers.add_parser("verify", help="audit a log file: chain, re-fold, steps, seed")
    verify.add_argument("file", type=Path)
    verify.set_defaults(handler=run_verify)


# -- simulate ------------------------------------------------------------------------


def seated_ruleset(name: str, seats: int, who: str = "players") -> Ruleset | str:
    """The ruleset called ``name`` if it seats ``seats``, else what is wrong, for ``_fail``."""
    try:
        ruleset = get_ruleset(name)
    except KeyError:
        known = ", ".join(r.id for r in all_rulesets())
        return f"unknown ruleset {name!r}; known: {known}"
    if not ruleset.min_players <= seats <= ruleset.max_players:
        return f"{ruleset.title} takes {ruleset.min_players}-{ruleset.max_players} {who}"
    return ruleset


def run_simulate(args: argparse.Namespace) -> int:
    ruleset = seated_ruleset(args.ruleset, args.players)
    if isinstance(ruleset, str):
        return fail(ruleset, 2)
    if args.games < 1:
        return fail("--games must be at least 1", 2)
    try:
        options = _parse_options(args.option)
    except ValueError as error:
        return fail(str(error), 2)
    players = [f"P{index + 1}" for index in range(args.players)]
    seeds = [args.seed] if args.games == 1 else [f"{args.seed}-{i}" for i in range(args.games)]
    out = args.out.open("wb") if args.out else None
    wins: Counter[int] = Counter()
    lengths = []
    try:
        for index, seed in _progress(seeds, f"simulating {ruleset.id}"):
            game_id = f"sim-{ruleset.id}-{index + 1}"
            game, log = play_random(ruleset, players, seed, options, game_id=game_id)
            result = ruleset.result(game.state) or {}
            lengths.append(len(log.envelopes))
            for seat in (result.get("ranking") or [[]])[0]:
                wins[seat] += 1
            if out is not None:
                out.write(to_jsonl(log.envelopes))
            if args.games <= 20:
                print(_result_line(game_id, players, len(log.envelopes), result))
    finally:
        if out is not None:
            out.close()
    if args.games > 1:
        mean = sum(lengths) / len(lengths)
        first_places = ", ".join(f"{players[s]} {wins[s]}" for s in range(len(players)))
        print(f"{args.games} games, {mean:.0f} events on average; first places: {first_places}")
    return 0


def _result_line(game_id: str, players: list[str], events: int, result: dict[str, Any]) -> str:
    totals = {entry["seat"]: entry["total"] for entry in result.get("scores", [])}
    places = []
    for place, seats in enumerate(result.get("ranking", []), start=1):
        for seat in seats:
            places.append(f"{place}. {players[seat]} ({totals.get(seat, '?')})")
    return f"{game_id}: {events} events; " + ", ".join(places)


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--option wants NAME=JSON, got {pair!r}")
        try:
            options[name] = json.loads(raw)
        except json.JSONDecodeError:
            options[name] = raw
    return options


def _progress(items: list[str], label: str) -> Any:
    """Enumerate ``items`` with a progress bar when there are many."""
    if len(items) <= 20:
        return enumerate(items)
    from rich.progress import track

    return enumerate(track(items, description=label, transient=True))


# -- export / import -----------------------------------------------------------------


def _open_store(url: str | None) -> EventStore:
    from events.config import open_store

    return open_store(url or os.environ.get("MEEPLE_STORE_URL") or DEFAULT_STORE_URL)


def run_export(args: argparse.Namespace) -> int:
    store = _open_store(args.store)
    try:
        version = store.version(args.game_id)
        if version == 0:
            return fail(f"no game {args.game_id!r} in the store")
        # A page of events at a time, as the API streams it: a long log never sits whole
        # in memory.
        lines = jsonl_lines(read_log(store, args.game_id, upto=version))
        if args.out:
            with args.out.open("wb") as out:
                out.writelines(lines)
        else:
            sys.stdout.buffer.writelines(lines)
            sys.stdout.flush()
    finally:
        store.close()
    return 0


def run_import(args: argparse.Namespace) -> int:
    envelopes, error = _read_log(args.file)
    if error is not None:
        return error
    report = audit(envelopes)
    if not report.ok:
        return fail(f"refusing to import an unsound log: seq {report.seq}: {report.reason}")
    game_id = envelopes[0]["game_id"]
    store = _open_store(args.store)
    try:
        if store.version(game_id) != 0:
            return fail(f"game {game_id!r} is already in the store")
        for envelope in envelopes:
            result = store.append(
                game_id,
                [NewEvent.copy_of(envelope)],
                envelope["seq"] - 1,
                envelope["idempotency_key"],
            )
            if result.envelopes[0]["hash"] != envelope["hash"]:
                return fail(f"seq {envelope['seq']}: the stored event's hash differs")
    finally:
        store.close()
    print(f"imported {game_id}: {len(envelopes)} events")
    return 0


# -- replay / verify -----------------------------------------------------------------


def run_replay(args: argparse.Namespace) -> int:
    envelopes, error = _read_log(args.file)
    if error is not None:
        return error
    try:
        game = fold(envelopes, upto=args.at)
    except ReplayError as failure:
        return fail(f"seq {failure.seq}: {failure.reason}")
    ruleset = game.ruleset
    if args.seat is not None and not 0 <= args.seat < len(game.meta["players"]):
        return fail(f"--seat must be 0-{len(game.meta['players']) - 1}", 2)
    output = {
        "game_id": game.meta["game_id"],
        "ruleset": ruleset.id,
        "version": game.version,
        "status": ruleset.status(game.state),
        "view": ruleset.view(game.state, args.seat),
        "result": ruleset.result(game.state),
    }
    print(json.dumps(output, indent=2, sort_keys=True))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    envelopes, error = _read_log(args.file)
    if error is not None:
        return error
    report = audit(envelopes)
    if not report.ok:
        print(f"seq {report.seq}: {report.reason}")
        return 1
    seed = "seed matches its commitment" if report.seed_checked else "game not finished"
    print(
        f"ok: {report.events} events, hash chain sound, every event re-folded, "
        f"{report.system_steps_checked} automatic steps recomputed, {seed}"
    )
    return 0


def _read_log(path: Path) -> tuple[list[dict[str, Any]], int | None]:
    try:
        raw = path.read_bytes()
    except OSError as failure:
        return [], fail(f"cannot read {path}: {failure.strerror}")
    try:
        return parse_jsonl(raw), None
    except LogFormatError as failure:
        print(f"seq {failure.line}: {failure.reason}")
        return [], 1


def fail(message: str, code: int = 1) -> int:
    print(f"meeple: {message}", file=sys.stderr)
    return code
