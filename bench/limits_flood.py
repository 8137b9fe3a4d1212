"""What a flood of random tokens and a burst over one token cost the compose shape (not part
of ``make bench``): ``python -m bench.limits_flood``.

A redis-server with AOF ``appendfsync always`` and gunicorn with 2 gevent workers on the Redis
store, as bench_http starts them (no RQ worker: nothing here makes a step due). An honest
player on an address of its own asks for its seat's state and posts a refused action, 10
requests a second on one connection, throughout; its latencies are printed per phase:

- quiet: 5 s of the player alone;
- flood: ``MEEPLE_FLOOD_REQUESTS`` (10,000) requests with a new random token each, paced at
  ``MEEPLE_FLOOD_RATE`` (500) a second over 16 connections from one address: actions and
  analyses in turn (the analyses' limit per token has a window of an hour);
- after: 5 s of the player alone again, with the API workers' CPU (what the flood left them
  doing) and the keys the limits keep in Redis;
- burst: 8 connections posting refused actions with one seat's token for 10 s (against the
  default 20/second), and 8 connections creating games for 1 s from one address (against
  30/minute): what got through, in all and in the first second.

``MEEPLE_FLOOD_CODE=/path/to/a/checkout`` serves that checkout's code instead of this one (to
compare with an older commit).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from bench.bench_http import (
    GUNICORN_WORKERS,
    WORKER_CLASS,
    children_of,
    cpu_seconds,
    free_port,
    percentile,
    redis_server,
    status_of,
    stop,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[1]
ADMIN_KEY = "bench-admin-key-0123456789abcdef"
PLAYER_ADDRESS = "127.0.0.2"
#: The bursts' address: the flood's may be locked out for its tokens.
BURST_ADDRESS = "127.0.0.3"
FLOOD_CONNECTIONS = 16
FLOOD_PROCESSES = 2


@contextlib.contextmanager
def api(redis_url: str, code: Path) -> Iterator[tuple[int, list[int]]]:
    """gunicorn serving ``code``'s app on the Redis store of ``redis_url`` (a server's URL
    without a database: bench_http's ``redis_server``); yields its port and workers."""
    base = redis_url.rstrip("/")
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")},
        "MEEPLE_STORE_URL": f"{base}/0",
        "MEEPLE_REDIS_URL": f"{base}/1",
        "MEEPLE_ADMIN_KEY": ADMIN_KEY,
        "PYTHONPATH": str(code),
    }
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", f"--bind=127.0.0.1:{port}",
         f"--workers={GUNICORN_WORKERS}", f"--worker-class={WORKER_CLASS}",
         "--keep-alive=30", "--log-level=warning", "service.app:create_app()"],
        cwd=code, env=env,
    )  # fmt: skip
    try:
        wait_for(lambda: status_of(port, "/health") < 500, "gunicorn", patience=600)
        yield port, children_of(process.pid)
    finally:
        stop(process)


def call(
    connection: http.client.HTTPConnection,
    method: str,
    path: str,
    body: Any = None,
    token: str | None = None,
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    connection.request(method, path, body=data, headers=headers)
    response = connection.getresponse()
    raw = response.read()
    return response.status, json.loads(raw) if raw else None


def new_game(port: int) -> dict[str, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        status, game = call(
            connection, "POST", "/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]},
            token=ADMIN_KEY,
        )  # fmt: skip
        assert status == 201, game
        return dict(game)
    finally:
        connection.close()


class Player(threading.Thread):
    """The honest player: 10 requests a second with its seat's token, each one timed."""

    def __init__(self, port: int, game: dict[str, Any]) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.game_id = game["id"]
        self.token = game["seats"][0]["token"]
        self.latencies: list[float] = []
        self.statuses: dict[int, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=30, source_address=(PLAYER_ADDRESS, 0)
        )
        ask = [
            ("GET", f"/games/{self.game_id}/state", None),
            ("POST", f"/games/{self.game_id}/actions", {"type": "no such action"}),
        ]
        number = 0
        while not self.done.is_set():
            method, path, body = ask[number % 2]
            number += 1
            began = time.perf_counter()
            status, _ = call(connection, method, path, body, self.token)
            self.latencies.append(time.perf_counter() - began)
            self.statuses[status] = self.statuses.get(status, 0) + 1
            time.sleep(max(0.0, 0.1 - (time.perf_counter() - began)))
        connection.close()

    def take(self) -> tuple[list[float], dict[int, int]]:
        """The latencies and statuses since the last take."""
        latencies, self.latencies = self.latencies, []
        statuses, self.statuses = self.statuses, {}
        return latencies, statuses


def _flood(port: int, game_id: str, requests: int, interval: float) -> dict[int, int]:
    """One connection's share of the flood: ``requests`` with random tokens, one every
    ``interval`` seconds."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    statuses: dict[int, int] = {}
    asks = [
        (f"/games/{game_id}/actions", {"type": "x"}),
        (f"/games/{game_id}/analyses", {"seat": 0}),
    ]
    start = time.perf_counter()
    for number in range(requests):
        time.sleep(max(0.0, start + number * interval - time.perf_counter()))
        path, body = asks[number % 2]
        status, _ = call(connection, "POST", path, body, secrets.token_urlsafe(32))
        statuses[status] = statuses.get(status, 0) + 1
    connection.close()
    return statuses


def _flood_process(port: int, game_id: str, requests: int, interval: float, threads: int) -> dict:
    results: list[dict[int, int]] = []
    workers = [
        threading.Thread(target=lambda: results.append(_flood(port, game_id, requests, interval)))
        for _ in range(threads)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    total: dict[int, int] = {}
    for statuses in results:
        for status, count in statuses.items():
            total[status] = total.get(status, 0) + count
    return total


def flood(port: int, game_id: str, requests: int, rate: float) -> dict[int, int]:
    per_connection = requests // FLOOD_CONNECTIONS
    interval = FLOOD_CONNECTIONS / rate
    threads = FLOOD_CONNECTIONS // FLOOD_PROCESSES
    with multiprocessing.get_context("spawn").Pool(FLOOD_PROCESSES) as pool:
        parts = pool.starmap(
            _flood_process, [(port, game_id, per_connection, interval, threads)] * FLOOD_PROCESSES
        )
    total: dict[int, int] = {}
    for part in parts:
        for status, count in part.items():
            total[status] = total.get(status, 0) + count
    return total


def burst(port: int, method: str, path: str, body: Any, token: str | None, seconds: float) -> str:
    """8 connections sending the same request for ``seconds``: what got through."""
    passed: list[float] = []
    lock = threading.Lock()
    start = time.perf_counter()

    def send() -> None:
        connection = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=30, source_address=(BURST_ADDRESS, 0)
        )
        while time.perf_counter() - start < seconds:
            status, _ = call(connection, method, path, body, token)
            if status != 429:
                with lock:
                    passed.append(time.perf_counter() - start)
        connection.close()

    threads = [threading.Thread(target=send) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    first = sum(1 for at in passed if at <= 1.0)
    return f"{len(passed)} through in {seconds:g} s, {first} in the first second"


def show(phase: str, latencies: list[float], statuses: dict[int, int]) -> None:
    print(
        f"  player, {phase:<6} {len(latencies):>4} requests {dict(sorted(statuses.items()))}: "
        f"p50 {percentile(latencies, 0.5) * 1000:6.1f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1000:6.1f} ms",
        flush=True,
    )


def main() -> int:
    code = Path(os.environ.get("MEEPLE_FLOOD_CODE") or ROOT).resolve()
    requests = int(os.environ.get("MEEPLE_FLOOD_REQUESTS", "10000"))
    rate = float(os.environ.get("MEEPLE_FLOOD_RATE", "500"))
    print(f"== limits flood: serving {code}", flush=True)
    with (
        tempfile.TemporaryDirectory() as directory,
        redis_server(Path(directory)) as redis_url,
        api(redis_url, code) as (port, workers),
    ):
        limits = redis.Redis.from_url(redis_url.rstrip("/") + "/1")
        games = [new_game(port) for _ in range(3)]
        player = Player(port, games[0])
        player.start()
        time.sleep(5)
        show("quiet", *player.take())

        began, cpu = time.perf_counter(), cpu_seconds(workers)
        statuses = flood(port, games[0]["id"], requests, rate)
        spent = time.perf_counter() - began
        show("flood", *player.take())
        print(
            f"  flood: {sum(statuses.values())} requests in {spent:.1f} s "
            f"({sum(statuses.values()) / spent:.0f}/s) {dict(sorted(statuses.items()))}; "
            f"API workers {100 * (cpu_seconds(workers) - cpu) / spent:.0f}% of a core; "
            f"{limits.dbsize()} keys in the limits' Redis",
            flush=True,
        )
        cpu = cpu_seconds(workers)
        time.sleep(5)
        idle = 100 * (cpu_seconds(workers) - cpu) / 5
        show("after", *player.take())
        print(
            f"  after: API workers {idle:.1f}% of a core; {limits.dbsize()} keys in the limits' "
            "Redis"
        )
        player.done.set()
        player.join()

        token = games[1]["seats"][0]["token"]
        path = f"/games/{games[1]['id']}/actions"
        print("  one token, 20/second:", burst(port, "POST", path, {"type": "x"}, token, 10))
        game = {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}
        print("  one address, 30/minute:", burst(port, "POST", "/games", game, None, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
