"""What an acknowledged action is worth when the Redis primary dies: SIGKILL, Sentinel's failover.

On loopback: a primary, two replicas and a Sentinel (``redis-server --sentinel``); the store
and the queues on the Sentinel service (``redis+sentinel://``, databases 0 and 1), one
``meeple worker --queue steps`` (restarted when it exits, as compose would); this process
serves the API in-process. Client threads, a game each, play Tally (the test ruleset: an
automatic step every few actions) through HTTP, every action with an Idempotency-Key that
they send again after a 5xx until it is answered. After ``BEFORE`` acknowledged actions the
primary is killed with SIGKILL; Sentinel promotes a replica; the clients go on until
``AFTER`` more are acknowledged. Then every game's log is read from the new primary:

- ``acknowledged``: actions answered 2xx;
- ``lost``: acknowledged actions the log does not hold; ``duplicated``: held more than once;
- ``broken``: games whose log fails the audit (hash chain, re-fold, every automatic step
  recomputed); ``steps twice``: automatic steps appended twice; ``stuck``: games still
  awaiting an automatic step once the jobs are idle.

Run with ``MEEPLE_REDIS_MIN_REPLICAS=1`` and without (``make failover``; ``make bench`` runs
it too). With it nothing acknowledged may be lost; without, what is lost depends on how far
the replica was behind when the primary died (on loopback, often nothing: report it as seen).
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from bench.bench_http import ROOT, free_port, stop

SERVICE = "meeple"
#: Acknowledged actions before the primary is killed, and after the failover.
BEFORE = int(os.environ.get("MEEPLE_FAILOVER_BEFORE", "150"))
AFTER = int(os.environ.get("MEEPLE_FAILOVER_AFTER", "150"))
CLIENTS = 4
#: The longest a run may take, whatever happens (seconds).
PATIENCE = 240.0
#: A worker that registers the test ruleset, then takes the automatic steps.
WORKER_CODE = (
    "from projections.ruleset import register; from tests.rulesets.tally import TALLY; "
    "register(TALLY); from service.cli import main; "
    "raise SystemExit(main(['worker', '--queue', 'steps']))"
)


@dataclass
class Outcome:
    """What one run acknowledged and what of it the log holds after the failover."""

    min_replicas: int
    acknowledged: int = 0
    acknowledged_before_kill: int = 0
    lost: int = 0
    duplicated: int = 0
    games: int = 0
    broken: int = 0
    steps: int = 0
    steps_twice: int = 0
    stuck: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    failover_seconds: float = 0.0
    seconds: float = 0.0

    def line(self) -> str:
        refused = ", ".join(f"{code} {count}" for code, count in sorted(self.refused.items()))
        return (
            f"MIN_REPLICAS={self.min_replicas}: {self.acknowledged} acknowledged "
            f"({self.acknowledged_before_kill} before the kill), {self.lost} lost, "
            f"{self.duplicated} duplicated; {self.games} games, {self.broken} failing the "
            f"audit, {self.steps} automatic steps, {self.steps_twice} appended twice, "
            f"{self.stuck} stuck; failover {self.failover_seconds:.1f} s, run "
            f"{self.seconds:.0f} s; answers refused meanwhile: {refused or 'none'}"
        )


@dataclass
class Sentinelled:
    """A primary, its replicas and a Sentinel watching them, all on loopback."""

    directory: Path
    replicas: int = 2
    processes: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    primary: int = 0
    sentinel: int = 0

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel}/{SERVICE}"

    def start(self) -> Sentinelled:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("the failover run needs redis-server (apt-get install redis-server)")
        self.primary = free_port()
        self._server(binary, self.primary)
        for _ in range(self.replicas):
            self._server(binary, free_port(), "--replicaof", "127.0.0.1", str(self.primary))
        self.sentinel = free_port()
        conf = self.directory / "sentinel.conf"
        conf.write_text(
            f"port {self.sentinel}\nbind 127.0.0.1\nprotected-mode no\n"
            f"dir {self.directory}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.primary} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} 1000\n"
            f"sentinel failover-timeout {SERVICE} 10000\n"
        )
        log = (self.directory / "sentinel.log").open("wb")
        self.processes[self.sentinel] = subprocess.Popen(
            [binary, str(conf), "--sentinel"], stdout=log, stderr=log
        )
        log.close()  # the child has its own
        wait_for(self._sentinel_sees_every_replica, "Sentinel to see the replicas")
        return self

    def _server(self, binary: str, port: int, *args: str) -> None:
        directory = self.directory / f"redis-{port}"
        directory.mkdir()
        log = (directory / "redis.log").open("wb")
        self.processes[port] = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
             "--save", "", "--appendonly", "no", "--protected-mode", "no", *args],
            stdout=log, stderr=log,
        )  # fmt: skip
        log.close()
        wait_for(lambda: _answers(port), f"redis-server on {port}")

    def _sentinel_sees_every_replica(self) -> bool:
        try:
            with redis.Redis(port=self.sentinel, decode_responses=True) as sentinel:
                known = sentinel.execute_command("SENTINEL", "REPLICAS", SERVICE)
        except redis.RedisError:
            return False
        up = [_pairs(entry) for entry in known]
        return sum(1 for entry in up if entry.get("master-link-status") == "ok") == self.replicas

    def master_port(self) -> int | None:
        try:
            with redis.Redis(port=self.sentinel, decode_responses=True) as sentinel:
                address = sentinel.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE)
        except redis.RedisError:
            return None
        return int(address[1]) if address else None

    def kill_primary(self) -> None:
        """SIGKILL: no shutdown, nothing more sent to the replicas."""
        self.processes[self.primary].send_signal(signal.SIGKILL)
        self.processes[self.primary].wait()

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def _pairs(entry: Any) -> dict[str, Any]:
    if isinstance(entry, dict):
        return entry
    return dict(zip(entry[::2], entry[1::2], strict=True))


def _answers(port: int) -> bool:
    try:
        with redis.Redis(port=port, socket_connect_timeout=1) as client:
            return bool(client.ping())
    except redis.RedisError:
        return False


def wait_for(check: Callable[[], bool], what: str, patience: float = 60.0) -> None:
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"waited {patience:g} s for {what}")
        time.sleep(0.1)


@contextmanager
def worker(env: dict[str, str], directory: Path) -> Iterator[Callable[[], None]]:
    """A ``meeple worker --queue steps``; the function it yields restarts it if it exited."""
    running: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        log = (directory / f"worker-{len(running)}.log").open("wb")
        running.append(
            subprocess.Popen(
                [sys.executable, "-c", WORKER_CODE], cwd=ROOT, env=env, stdout=log, stderr=log
            )
        )
        log.close()

    def keep_running() -> None:
        if running[-1].poll() is not None:
            start()

    start()
    try:
        yield keep_running
    finally:
        stop(running[-1], grace=10)


@dataclass
class Acknowledged:
    game_id: str
    seat: int
    key: str
    seq: int


class Player:
    """A client thread: one game at a time, actions sent again after a 5xx until answered."""

    def __init__(self, app: Any, number: int, outcome: Outcome, lock: threading.Lock) -> None:
        self.client = app.test_client()
        self.rng = random.Random(f"failover-{number}")
        self.outcome = outcome
        self.lock = lock
        self.acknowledged: list[Acknowledged] = []
        self.games: list[str] = []
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self.play, daemon=True)

    def play(self) -> None:
        game: dict[str, Any] | None = None
        while not self.halt.is_set():
            if game is None:
                game = self._new_game()
                continue
            summary = self.client.get(f"/games/{game['id']}")
            if summary.status_code != 200:
                self._refused(summary)
                continue
            status = summary.json["status"]
            if status["finished"]:
                game = None
                continue
            if status["awaiting_system"] or not status["to_act"]:
                time.sleep(0.02)
                continue
            seat = self.rng.choice(status["to_act"])
            self._act(game, seat)

    def _new_game(self) -> dict[str, Any] | None:
        body = {"ruleset": "tally", "players": ["Ann", "Bob"], "options": {"rounds": 50}}
        created = self.client.post("/games", json=body)
        if created.status_code != 201:
            self._refused(created)
            return None
        self.games.append(created.json["id"])
        return dict(created.json)

    def _act(self, game: dict[str, Any], seat: int) -> None:
        headers = {"Authorization": f"Bearer {game['seats'][seat]['token']}"}
        path = f"/games/{game['id']}"
        legal = self.client.get(f"{path}/legal-actions", headers=headers)
        if legal.status_code != 200 or not legal.json["actions"]:
            self._refused(legal)
            return
        action = self.rng.choice(legal.json["actions"])
        key = uuid.uuid4().hex
        headers["Idempotency-Key"] = key
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            posted = self.client.post(f"{path}/actions", json=action, headers=headers)
            if posted.status_code < 300:
                seq = int(posted.json["version"])
                with self.lock:
                    self.acknowledged.append(Acknowledged(game["id"], seat, key, seq))
                    self.outcome.acknowledged += 1
                return
            self._refused(posted)
            if posted.status_code < 500:
                return  # refused for good (the game moved on): never acknowledged
            time.sleep(0.05)

    def _refused(self, response: Any) -> None:
        code = (response.json or {}).get("code", str(response.status_code))
        with self.lock:
            self.outcome.refused[code] += 1
        if response.status_code >= 500:
            time.sleep(0.05)


def run_scenario(
    directory: Path,
    min_replicas: int,
    clients: int = CLIENTS,
    before: int = BEFORE,
    after: int = AFTER,
) -> Outcome:
    """One run (see the module docstring) in ``directory``: ``before`` actions acknowledged
    before the kill, ``after`` after it; what it found."""
    from projections.audit import audit
    from projections.ruleset import register
    from service.app import create_app
    from service.bootstrap import bootstrap
    from service.config import load_config
    from service.workers.jobs import system_step_key
    from tests.rulesets.tally import TALLY

    register(TALLY)
    outcome = Outcome(min_replicas)
    servers = Sentinelled(directory).start()
    store_url, queues_url = f"{servers.url}/0", f"{servers.url}/1"
    settings = {
        "MEEPLE_STORE_URL": store_url,
        "MEEPLE_REDIS_URL": queues_url,
        "MEEPLE_REDIS_MIN_REPLICAS": str(min_replicas),
        "MEEPLE_REDIS_REPLICA_TIMEOUT": "1000",
        "MEEPLE_RATE_LIMITS": "off",
    }
    env = {**os.environ, **settings, "MEEPLE_SWEEP_INTERVAL": "0.2", "MEEPLE_STEP_GRACE": "1"}
    services = bootstrap(load_config(settings))
    lock = threading.Lock()
    players: list[Player] = []
    began = time.monotonic()
    # A request refused while the primary is down is logged with its traceback: thousands.
    logging.disable(logging.CRITICAL)
    try:
        with worker(env, directory) as keep_running:
            app = create_app(services=services)
            players = [Player(app, number, outcome, lock) for number in range(clients)]
            for player in players:
                player.thread.start()
            deadline = time.monotonic() + PATIENCE

            def until(check: Callable[[], bool]) -> None:
                while not check() and time.monotonic() < deadline:
                    keep_running()
                    time.sleep(0.05)

            until(lambda: outcome.acknowledged >= before)
            outcome.acknowledged_before_kill = outcome.acknowledged
            killed = time.monotonic()
            servers.kill_primary()
            until(lambda: servers.master_port() not in (None, servers.primary))
            outcome.failover_seconds = time.monotonic() - killed
            until(lambda: outcome.acknowledged >= outcome.acknowledged_before_kill + after)
            for player in players:
                player.halt.set()
            for player in players:
                player.thread.join(timeout=90)
            # A step whose job the dead primary held is the sweep's (its due mark was
            # replicated with the action): every game must come out of its wait.
            until(lambda: not _awaiting(services))
            outcome.seconds = time.monotonic() - began
        for player in players:
            outcome.games += len(player.games)
            held: dict[str, Counter[str]] = {}
            for game_id in player.games:
                events = services.store.read(game_id)
                held[game_id] = Counter(str(e.get("idempotency_key")) for e in events)
                if not audit(events).ok:
                    outcome.broken += 1
                steps = [e for e in events if e["type"] == "system"]
                outcome.steps += len(steps)
                keys = Counter(str(e["idempotency_key"]) for e in steps)
                outcome.steps_twice += sum(count - 1 for count in keys.values() if count > 1)
                expected = {system_step_key(game_id, e["seq"] - 1) for e in steps}
                outcome.steps_twice += len(set(keys) - expected)
                if _awaiting_game(services, game_id):
                    outcome.stuck += 1
            for ack in player.acknowledged:
                count = held[ack.game_id][f"seat{ack.seat}:{ack.key}"]
                if count == 0:
                    outcome.lost += 1
                elif count > 1:
                    outcome.duplicated += 1
    finally:
        logging.disable(logging.NOTSET)
        for player in players:
            player.halt.set()
        services.close()
        servers.stop()
    return outcome


def _awaiting_game(services: Any, game_id: str) -> bool:
    game = services.folder.load(game_id)
    return bool(game.ruleset.status(game.state).get("awaiting_system"))


def _awaiting(services: Any) -> bool:
    return any(_awaiting_game(services, game_id) for game_id in services.store.game_ids())


def run(report: Callable[..., None]) -> None:
    outcomes = []
    for min_replicas in (1, 0):
        with tempfile.TemporaryDirectory(prefix="meeple-failover-") as directory:
            outcome = run_scenario(Path(directory), min_replicas)
        print(f"   {outcome.line()}", flush=True)
        outcomes.append(outcome)
    with_replicas, without = outcomes
    report(
        "failover: acknowledged actions lost, MIN_REPLICAS=1 vs 0",
        with_replicas.lost,
        "lost",
        without.lost,
        "MIN_REPLICAS=0",
    )


if __name__ == "__main__":
    run(lambda *args: print(*args))
