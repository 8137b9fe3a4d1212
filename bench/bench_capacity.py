"""Capacity figures for docs/scaling.md: events per game, Redis memory per event and per game,
memory per cached game and per open stream, RQ's cost per job on one Redis.

Every figure is a line starting ``capacity:``; docs/scaling.md names the line each of its
figures comes from. The CPU an action costs the API, Redis and the workers is not measured
again here: ``python -m bench http`` prints it (its line ``CPU ms per action``).

- **Events per game**: whole games of every product ruleset at 2 and 4 players (clamped to
  the ruleset's bounds), played with the random player the sims use (``play_random``) and
  with the greedy bot (one-ply lookahead, which plays with a purpose as people do), from
  seeds; the median of the games, their range, and the automatic steps per seat action.
  Counts: the same seeds give the same figures on any machine.
- **Redis memory per event and per game**: greedy games of each ruleset played whole
  through the service (``create_app`` on the Redis store, the Flask test client, automatic
  steps in-process) on a throwaway redis-server started on a free port; ``used_memory``
  (INFO memory) and the AOF's size before and after each ruleset's games, divided by the
  events stored, and by the games; and ``MEMORY USAGE`` of every key of each game by key
  family. A game of another ruleset is played first and not counted, so the keys every game
  shares exist before the first count.
- **Memory per cached game**: the games just played, loaded through a ``Folder`` of the
  store at eight positions each (an eighth of the way, a quarter ... the end), each kept as
  the process's cache keeps a game (``Game.settle``); the Python memory each one holds
  (``tracemalloc``; the allocator adds some to it in a process's resident memory).
- **Memory per open stream**: compose's shape on loopback (gunicorn with 2 gevent workers,
  the Redis store in database 0, ``MEEPLE_REDIS_URL`` in database 1): after 50 streams
  (each worker's hub and pub/sub connection started), batches of ``STREAM_BATCH`` idle
  streams; the gunicorn workers' resident memory and Redis's ``used_memory`` grown per
  stream in each batch (median of the batches); and a gunicorn worker's own resident memory.
- **RQ on one Redis**: one ``meeple worker --queue steps`` and a redis-server; ``JOBS``
  empty jobs queued as the service queues its automatic steps (bench_http.rq_cost), repeated
  ``REPEATS`` times: the worker's and redis-server's CPU per job, the jobs per second the
  worker took, and the Redis memory a finished job holds for its ``result_ttl``; an RQ
  worker's resident memory.

``MEEPLE_BENCH_CAPACITY_GAMES`` (default 3): whole games per ruleset, agent and player count.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bench_http import (
    ADMIN_KEY,
    PIDS,
    children_of,
    gunicorn,
    rq_cost,
    seat_moves,
    stop,
    wait_for,
    worker_code,
)
from bench.bench_streams import create_games, open_streams, still_open
from events.envelope import canonical_json
from projections.ruleset import Ruleset
from projections.simulate import MemoryLog
from tests.redis_servers import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[1]
GAMES = int(os.environ.get("MEEPLE_BENCH_CAPACITY_GAMES", "3"))
PLAYER_COUNTS = (2, 4)
AGENTS = ("random", "greedy")
#: Positions at which each played game is loaded for its cached size: 1/8, 2/8 ... 8/8.
POSITIONS = 8
#: Streams opened first and not counted, then the batches that are.
WARM_STREAMS = 50
STREAM_BATCH = 300
STREAM_BATCHES = 3
STREAM_GAMES = 50
JOBS = 600
REPEATS = 3
#: The AOF as compose keeps it (fsync per write changes the time, not the bytes), never
#: rewritten during the bench, so its growth is what the appends wrote.
AOF = ("--appendonly", "yes", "--appendfsync", "no", "--auto-aof-rewrite-percentage", "0")

Line = Callable[[str], None]


def figure(name: str, value: float, unit: str, detail: str = "") -> None:
    """One capacity figure: ``capacity: <name> <value> <unit> (<how it was measured>)``."""
    tail = f"  ({detail})" if detail else ""
    print(f"capacity: {name:<50} {value:>14,.1f} {unit}{tail}", flush=True)


def run(report: Callable[..., None]) -> None:
    with tempfile.TemporaryDirectory(prefix="meeple-bench-capacity-") as scratch:
        directory = Path(scratch)
        played = events_per_game(GAMES)
        server = RedisServer(free_port(), directory / "store", AOF).start()
        try:
            games = redis_memory(server, played, GAMES)
            cached_game_memory(server, games)
        finally:
            server.stop()
        stream_memory(directory / "streams")
        rq_on_one_redis(directory / "queues")


# -- events per game --------------------------------------------------------------------


def product_rulesets() -> list[Ruleset]:
    from service.http.openapi import product_rulesets as rulesets

    return list(rulesets())


def players_for(ruleset: Ruleset, count: int) -> list[str]:
    return [f"P{seat}" for seat in range(min(max(count, ruleset.min_players), ruleset.max_players))]


def play_whole(ruleset: Ruleset, players: list[str], seed: str, agent: str) -> MemoryLog:
    """One whole game from ``seed``, each seat's choice made by ``agent`` (``random``, the
    sims' player, or ``greedy``), the automatic steps as a worker takes them."""
    import random

    from projections.agents import GreedyAgent
    from projections.fold import decide_action, decide_system
    from projections.simulate import StuckGame, new_game, play_random, step

    if agent == "random":
        return play_random(ruleset, players, seed)[1]
    game, log = new_game(ruleset, players, seed)
    bot = GreedyAgent()
    chooser = random.Random(f"choices:{seed}")
    for _ in range(100_000):
        status = ruleset.status(game.state)
        if status["finished"]:
            return log
        if status.get("awaiting_system"):
            decided = decide_system(game)
            if decided is None:
                raise StuckGame(f"awaiting {status['awaiting_system']} but no system action")
            event = decided[0]
        else:
            seats = list(status.get("to_act") or [])
            chooser.shuffle(seats)
            seat = next((s for s in seats if ruleset.legal_actions(game.state, s)), None)
            if seat is None:
                raise StuckGame(f"nobody can act at version {game.version}: {status}")
            event = decide_action(game, seat, bot.choose(ruleset, game.state, seat, chooser))[0]
        step(game, log, event)
    raise StuckGame("no end after 100,000 steps")


@dataclass
class Played:
    """Whole games of one ruleset, agent and player count: their logs and their seeds."""

    ruleset: Ruleset
    agent: str
    players: list[str]
    seeds: list[str] = field(default_factory=list)
    logs: list[MemoryLog] = field(default_factory=list)


def events_per_game(
    games: int,
    rulesets: list[Ruleset] | None = None,
    agents: tuple[str, ...] = AGENTS,
    player_counts: tuple[int, ...] = PLAYER_COUNTS,
) -> list[Played]:
    """Play ``games`` whole games of each ruleset, agent and player count; print the events
    per game of each."""
    everything = []
    for ruleset in rulesets or product_rulesets():
        for count in sorted({len(players_for(ruleset, n)) for n in player_counts}):
            for agent in agents:
                played = Played(ruleset, agent, players_for(ruleset, count))
                for number in range(games):
                    seed = f"capacity-{ruleset.id}-{count}-{number}"
                    played.seeds.append(seed)
                    played.logs.append(play_whole(ruleset, played.players, seed, agent))
                everything.append(played)
                kinds = [Counter(e["type"] for e in log.envelopes) for log in played.logs]
                totals = [len(log.envelopes) for log in played.logs]
                actions = statistics.median(kind["action"] for kind in kinds)
                steps = statistics.median(kind["system"] for kind in kinds)
                figure(
                    f"events per game, {ruleset.id}, {count} players, {agent}",
                    statistics.median(totals),
                    "events",
                    f"median of {games} games, {min(totals)}-{max(totals)}; seat actions "
                    f"{actions:g}, automatic steps {steps:g}, "
                    f"{steps / max(1, actions):.3f} steps per action",
                )
    return everything


# -- Redis memory per event and per game -------------------------------------------------


@contextlib.contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """``os.environ`` with ``values`` set (None: removed) inside the block."""
    saved = dict(os.environ)
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def used_memory(client: Any) -> int:
    return int(client.info("memory")["used_memory"])


def aof_bytes(directory: Path) -> int:
    """The bytes of every file of the AOF (Redis 7 keeps a base and increments in a folder)."""
    return sum(path.stat().st_size for path in directory.rglob("*.aof"))


def key_families(client: Any, game_id: str) -> dict[str, int]:
    """``MEMORY USAGE`` of every key of ``game_id``, by key name with the id left out."""
    families: Counter[str] = Counter()
    for key in client.scan_iter(match=f"*{game_id}*", count=1000):
        families[key.replace(game_id, "<id>")] += int(client.memory_usage(key, samples=0) or 0)
    return dict(families)


@dataclass
class StoredGame:
    """A game played through the service: its id, its ruleset and how many events it has."""

    game_id: str
    ruleset: str
    events: int


def play_through_service(client: Any, app: Any, played: Played, number: int) -> StoredGame:
    """Create game ``number`` of ``played`` with its seed and POST its seat actions; the
    automatic steps are the service's own (in-process). Checks the stored game is the same."""
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    log = played.logs[number]
    body = {"ruleset": played.ruleset.id, "players": played.players, "seed": played.seeds[number]}
    created = client.post("/games", json=body, headers=admin)
    if created.status_code != 201:
        raise RuntimeError(f"could not create a {played.ruleset.id} game: {created.json}")
    game_id = created.json["id"]
    tokens = [seat["token"] for seat in created.json["seats"]]
    jobs = app.extensions["meeple"].jobs
    moves, _ = seat_moves(log.envelopes)
    for seat, action in moves:
        for _ in range(100):
            answer = client.post(
                f"/games/{game_id}/actions",
                json=action,
                headers={"Authorization": f"Bearer {tokens[seat]}"},
            )
            if answer.status_code in (201, 202):
                break
            if answer.status_code != 409:
                raise RuntimeError(f"{played.ruleset.id} action refused: {answer.json}")
            jobs.wait_idle(10)
        else:
            raise RuntimeError(f"{played.ruleset.id}: an automatic step never came")
    jobs.wait_idle(30)
    version = app.extensions["meeple"].store.version(game_id)
    if version != len(log.envelopes):
        raise RuntimeError(
            f"{played.ruleset.id} game stored {version} events, its playout {len(log.envelopes)}"
        )
    return StoredGame(game_id, played.ruleset.id, version)


def redis_memory(server: RedisServer, played: list[Played], games: int) -> list[StoredGame]:
    """Play the greedy games of each ruleset through the service on ``server`` (a throwaway
    redis-server with the AOF on); print its memory and AOF bytes per event and per game.
    The games played."""
    greedy = [p for p in played if p.agent == "greedy"] or played
    directory = server.directory
    stored: list[StoredGame] = []
    with (
        server.client() as redis_client,
        environment(
            MEEPLE_STORE_URL=server.url,
            MEEPLE_REDIS_URL=None,
            MEEPLE_ADMIN_KEY=ADMIN_KEY,
            MEEPLE_RATE_LIMIT_ACTIONS="100000/second",
        ),
    ):
        from service.app import create_app

        app = create_app()
        client = app.test_client()
        try:
            # Not counted: the keys every game shares (the feed, the index...) start here.
            warm = next(p for p in reversed(greedy))
            play_through_service(client, app, warm, 0)
            rulesets = list(dict.fromkeys(p.ruleset.id for p in greedy))
            for ruleset in rulesets:
                mine = [p for p in greedy if p.ruleset.id == ruleset]
                gc.collect()
                memory, aof = used_memory(redis_client), aof_bytes(directory)
                envelope_bytes = 0
                these = []
                for each in mine:
                    for number in range(min(games, len(each.logs))):
                        these.append(play_through_service(client, app, each, number))
                        envelope_bytes += sum(
                            len(canonical_json(e)) for e in each.logs[number].envelopes
                        )
                grown = used_memory(redis_client) - memory
                written = aof_bytes(directory) - aof
                events = sum(game.events for game in these)
                counts = ", ".join(sorted({f"{len(p.players)}" for p in mine}))
                figure(
                    f"redis bytes per event, {ruleset}",
                    grown / events,
                    "bytes",
                    f"used_memory +{grown:,} over {events:,} events of {len(these)} greedy "
                    f"games, {counts} players; the envelopes' canonical JSON "
                    f"{envelope_bytes / events:,.0f} bytes an event",
                )
                figure(
                    f"redis bytes per game, {ruleset}",
                    grown / len(these),
                    "bytes",
                    f"{events / len(these):,.0f} events a game",
                )
                figure(
                    f"AOF bytes per event, {ruleset}",
                    written / events,
                    "bytes",
                    f"AOF +{written:,}, not rewritten",
                )
                families: Counter[str] = Counter()
                for game in these:
                    families.update(key_families(redis_client, game.game_id))
                keyed = sum(families.values())
                parts = ", ".join(
                    f"{name} {size / len(these):,.0f}" for name, size in families.most_common()
                )
                print(
                    f"   {ruleset}: MEMORY USAGE of a game's keys, mean {keyed / len(these):,.0f}"
                    f" bytes: {parts}; outside them "
                    f"{(grown - keyed) / len(these):,.0f} a game",
                    flush=True,
                )
                stored.extend(these)
        finally:
            app.extensions["meeple"].close()
    return stored


# -- memory per cached game -------------------------------------------------------------


def resident_bytes(pid: int | str = "self") -> int:
    """The resident memory of a process (``VmRSS``), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def cached_game_memory(server: RedisServer, games: list[StoredGame]) -> None:
    """Load each stored game at ``POSITIONS`` positions as the cache keeps a game; print the
    memory one such game holds."""
    from events.redis_store import RedisEventStore
    from projections.fold import Folder

    store = RedisEventStore.from_url(server.url)
    try:
        by_ruleset: dict[str, list[StoredGame]] = {}
        for game in games:
            by_ruleset.setdefault(game.ruleset, []).append(game)
        for ruleset, these in by_ruleset.items():
            folder = Folder(store, cache_size=0)
            points = [
                (game.game_id, max(1, game.events * n // POSITIONS))
                for game in these
                for n in range(1, POSITIONS + 1)
            ]
            sizes = traced_sizes(folder, points)
            state_bytes = [
                len(json.dumps(folder.load(game_id, at=at).state)) for game_id, at in points
            ]
            figure(
                f"memory per cached game, {ruleset}",
                statistics.median(sizes),
                "bytes",
                f"tracemalloc, median of {len(points)} positions of {len(these)} games, "
                f"largest {max(sizes):,}; its state's JSON {statistics.median(state_bytes):,.0f}",
            )
    finally:
        store.close()


def traced_sizes(folder: Any, points: list[tuple[str, int]]) -> list[int]:
    """The Python memory each loaded game holds, one game at a time (tracemalloc)."""
    sizes = []
    tracemalloc.start()
    try:
        for game_id, at in points:
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            game = folder.load(game_id, at=at)
            game.settle()
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0] - before)
            del game
    finally:
        tracemalloc.stop()
    return sizes


# -- memory per open stream -------------------------------------------------------------


def stream_memory(
    directory: Path, batches: int = STREAM_BATCHES, batch: int = STREAM_BATCH
) -> None:
    """Compose's API on loopback; print the memory an idle open stream holds."""
    server = RedisServer(free_port(), directory).start()
    base = server.url.rsplit("/", 1)[0]
    env = {
        **os.environ,
        "MEEPLE_STORE_URL": f"{base}/0",
        "MEEPLE_REDIS_URL": f"{base}/1",
        "MEEPLE_ADMIN_KEY": ADMIN_KEY,
        "PYTHONPATH": str(ROOT),
        "MEEPLE_STREAMS_PER_ADDRESS": str(10 * batch * batches),
        "MEEPLE_STREAMS_PER_GAME": str(10 * batch * batches),
    }
    streams: list[socket.socket] = []
    try:
        with server.client() as redis_client, gunicorn("service.app:create_app()", env) as port:
            workers = children_of(PIDS[f"gunicorn:{port}"])
            games = create_games(port, STREAM_GAMES)
            streams += open_streams(port, games, WARM_STREAMS)
            time.sleep(1.0)
            rss, memory = [], []
            for _ in range(batches):
                gc.collect()
                before = sum(resident_bytes(pid) for pid in workers)
                held = used_memory(redis_client)
                streams += open_streams(port, games, batch)
                time.sleep(1.0)
                rss.append((sum(resident_bytes(pid) for pid in workers) - before) / batch)
                memory.append((used_memory(redis_client) - held) / batch)
            open_now = still_open(streams)
            idle = [resident_bytes(pid) for pid in workers]
            figure(
                "API resident memory per open stream",
                statistics.median(rss),
                "bytes",
                f"median of {batches} batches of {batch} idle streams: "
                + ", ".join(f"{value:,.0f}" for value in rss)
                + f"; {open_now} of {len(streams)} still open",
            )
            figure(
                "redis bytes per open stream",
                statistics.median(memory),
                "bytes",
                "used_memory (its slot's lease) per stream, batches "
                + ", ".join(f"{value:,.0f}" for value in memory),
            )
            figure(
                "API worker resident memory, 1 of 2 gunicorn workers",
                min(idle) - statistics.median(rss) * len(streams) / len(workers),
                "bytes",
                f"VmRSS {', '.join(f'{value:,}' for value in idle)} less its share of the "
                f"streams; {STREAM_GAMES} games served",
            )
    finally:
        for connection in streams:
            connection.close()
        server.stop()


# -- RQ on one Redis --------------------------------------------------------------------


def rq_on_one_redis(directory: Path, jobs: int = JOBS, repeats: int = REPEATS) -> None:
    """One steps worker and one redis-server; print what an empty job costs each."""
    from redis import Redis
    from rq import Worker

    server = RedisServer(free_port(), directory, AOF).start()
    url = server.url.rsplit("/", 1)[0] + "/1"
    env = {
        **os.environ,
        "MEEPLE_STORE_URL": server.url,
        "MEEPLE_REDIS_URL": url,
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [sys.executable, "-c", worker_code(["steps"])],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        connection = Redis.from_url(url)
        wait_for(lambda: Worker.count(connection=connection) >= 1, "the RQ worker")
        redis_pid = int(connection.info("server")["process_id"])
        groups = {"worker": [worker.pid], "redis": [redis_pid]}
        rq_cost(url, groups, 50)  # not counted: the worker's first jobs import what they run
        worker_ms, redis_ms, rates, kept = [], [], [], []
        for _ in range(repeats):
            held = used_memory(connection)
            spent, elapsed = rq_cost(url, groups, jobs)
            worker_ms.append(spent["worker"] / jobs * 1000)
            redis_ms.append(spent["redis"] / jobs * 1000)
            rates.append(jobs / elapsed)
            kept.append((used_memory(connection) - held) / jobs)
        resident = resident_bytes(worker.pid)
        connection.close()
    finally:
        stop(worker, grace=10)
        server.stop()

    def spread(values: list[float], digits: int = 3) -> str:
        return ", ".join(f"{value:,.{digits}f}" for value in values)

    figure(
        "RQ worker CPU ms per job",
        statistics.median(worker_ms),
        "ms",
        f"{jobs} empty jobs as steps are queued, {repeats} runs: {spread(worker_ms)}",
    )
    figure(
        "redis CPU ms per RQ job",
        statistics.median(redis_ms),
        "ms",
        f"the queue's Redis, runs {spread(redis_ms)}",
    )
    figure(
        "RQ jobs/s, one steps worker",
        statistics.median(rates),
        "jobs/s",
        f"runs {spread(rates, 0)}",
    )
    figure(
        "redis bytes per finished RQ job",
        statistics.median(kept),
        "bytes",
        f"kept for its result_ttl; runs {spread(kept, 0)}",
    )
    figure("RQ worker resident memory", resident, "bytes", "VmRSS of the steps worker")
