"""Nothing stalls while a bot thinks: reads and automatic steps beside an all-bot game, or none.

Two deployments, each as a user starts it: the embedded default (``meeple serve`` in an empty
directory: SQLite, jobs in-process, bots in child processes), and Redis (a redis-server with
AOF ``appendfsync always``, ``meeple serve`` on it, and one plain ``meeple worker``). In each,
one client plays human games of every product ruleset (known seeds, played ahead in memory)
one action at a time, and between two actions reads ``GET /health`` and ``GET /games/{id}``
of another game, for ``MEEPLE_BENCH_SECONDS`` (default 6) seconds: first with nothing else
going on (the baseline), then while an all-bot Impendium game whose three seats are MCTS bots
at ``MAX_PLAYOUTS`` playouts plays (each of its decisions thinks for seconds). Printed, for
each deployment: the p99 of each read, and of an automatic step's delay (from the action's
append to its step's append, both ``recorded_at`` on this machine's clock), with the bot
against without it (ratios: lower is better; 1 means the bot costs nothing).
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.bench_http import (
    ADMIN_KEY,
    ROOT,
    Plan,
    free_port,
    game_plan,
    percentile,
    redis_server,
    stop,
    wait_for,
)

#: Human games played in each phase (round-robin, so each action usually finds its game
#: ready rather than waiting for its automatic step).
GAMES = 48
#: Seconds the bot game is given to start thinking before the phase with it is measured.
BOT_START = 2.0


class Client:
    """One keep-alive connection to the server, timing each request."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any, float]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = None if body is None else json.dumps(body)
        began = time.perf_counter()
        self.connection.request(method, path, data, headers)
        response = self.connection.getresponse()
        payload = response.read()
        took = time.perf_counter() - began
        return response.status, json.loads(payload) if payload else None, took

    def close(self) -> None:
        self.connection.close()


def recorded(envelope: dict[str, Any]) -> float:
    return datetime.strptime(envelope["recorded_at"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def create_plans(client: Client, first: int) -> list[Plan]:
    plans = []
    for number in range(first, first + GAMES):
        body, moves, steps = game_plan(number)
        status, created, _ = client.call("POST", "/games", body, ADMIN_KEY)
        if status != 201:
            raise RuntimeError(f"could not create a {body['ruleset']} game: {created}")
        plans.append(
            Plan(created["id"], [s["token"] for s in created["seats"]], moves, steps=steps)
        )
    return plans


def step_delays(client: Client, plans: list[Plan], since: dict[str, int]) -> list[float]:
    """Seconds from each action to the automatic step it made due, after ``since``."""
    delays = []
    for plan in plans:
        after = since[plan.game_id]
        status, page, _ = client.call(
            "GET", f"/games/{plan.game_id}/events?after={after}&limit=1000", token=ADMIN_KEY
        )
        assert status == 200, page
        for before, step in itertools.pairwise(page["events"]):
            if step["type"] == "system" and before["type"] == "action":
                delays.append(recorded(step) - recorded(before))
    return delays


def phase(client: Client, plans: list[Plan], other: str, seconds: float) -> dict[str, list[float]]:
    """Play and read for ``seconds``: the latencies of each read, and the steps' delays."""
    since = {}
    for plan in plans:
        status, info, _ = client.call("GET", f"/games/{plan.game_id}")
        since[plan.game_id] = info["version"]
    reads: dict[str, list[float]] = {"health": [], "game": []}
    deadline = time.perf_counter() + seconds
    for plan in itertools.cycle(plans):
        if time.perf_counter() >= deadline:
            break
        _, _, took = client.call("GET", "/health")
        reads["health"].append(took)
        _, _, took = client.call("GET", f"/games/{other}")
        reads["game"].append(took)
        if plan.next >= len(plan.moves):
            continue
        seat, action = plan.moves[plan.next]
        status, answer, _ = client.call(
            "POST", f"/games/{plan.game_id}/actions", action, plan.tokens[seat]
        )
        if status == 201:
            plan.next += 1
        elif status != 409:  # 409: its automatic step is still due; try it next time round
            raise RuntimeError(f"an action was refused: {status} {answer}")
    # The steps of the last actions land within a moment (a bot thinking or not).
    time.sleep(1.0)
    return {**reads, "step": step_delays(client, plans, since)}


def measure(port: int, seconds: float) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """The quiet phase, then the phase with the all-bot game; each phase's figures."""
    from service.application.bot_seats import MAX_PLAYOUTS

    client = Client(port)
    try:
        other = create_plans(client, 3000)
        status, reading, _ = client.call(
            "POST", "/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}
        )
        assert status == 201, reading
        quiet = phase(client, other[: GAMES // 2], reading["id"], seconds)
        bot = {"bot": {"agent": "mcts", "playouts": MAX_PLAYOUTS}}
        status, bots, _ = client.call(
            "POST", "/games", {"ruleset": "impendium", "players": [bot] * 3}, ADMIN_KEY
        )
        assert status == 201, bots
        client.close()  # the server closes an idle keep-alive connection; the next call reconnects
        time.sleep(BOT_START)
        busy = phase(client, other[GAMES // 2 :], reading["id"], seconds)
        status, info, _ = client.call("GET", f"/games/{bots['id']}")
        print(
            f"   the bot game played {info['version'] - 1} events meanwhile "
            f"(finished: {info['status']['finished']})",
            flush=True,
        )
        return quiet, busy
    finally:
        client.close()


@contextlib.contextmanager
def serving(directory: Path, env: dict[str, str]) -> Iterator[int]:
    """``meeple serve`` in ``directory`` with ``env``; yields its port."""
    port = free_port()
    log = (directory / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        stdout=log,
        stderr=log,
    )
    log.close()
    try:
        wait_for(lambda: Client(port).call("GET", "/health")[0] == 200, "meeple serve", 300)
        yield port
    finally:
        stop(process)


def deployments(
    scratch: Path,
) -> Iterator[tuple[str, Callable[[], contextlib.AbstractContextManager[int]]]]:
    common = {"MEEPLE_ADMIN_KEY": ADMIN_KEY, "MEEPLE_RATE_LIMITS": "off"}

    @contextlib.contextmanager
    def embedded() -> Iterator[int]:
        directory = scratch / "embedded"
        directory.mkdir()
        env = {key: value for key, value in common.items()}
        with serving(directory, env) as port:
            yield port

    @contextlib.contextmanager
    def on_redis() -> Iterator[int]:
        directory = scratch / "redis"
        directory.mkdir()
        with redis_server(directory) as url:
            env = {**common, "MEEPLE_STORE_URL": f"{url}/0", "MEEPLE_REDIS_URL": f"{url}/1"}
            worker = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "worker"],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                with serving(directory, env) as port:
                    yield port
            finally:
                stop(worker)

    yield "embedded", embedded
    yield "redis + meeple worker", on_redis


def run(report: Callable[..., None]) -> None:
    seconds = float(os.environ.get("MEEPLE_BENCH_SECONDS", "6"))
    with tempfile.TemporaryDirectory(prefix="meeple-bench-liveness-") as scratch:
        for name, deployment in deployments(Path(scratch)):
            with deployment() as port:
                quiet, busy = measure(port, seconds)
            counts = ", ".join(f"{len(busy[k])}/{len(quiet[k])} {k}" for k in quiet)
            print(f"   {name}: {counts} (with the bot / without)", flush=True)
            for kind, what in (
                ("health", "GET /health"),
                ("game", "GET /games/{id} of another game"),
                ("step", "an action -> its automatic step"),
            ):
                report(
                    f"liveness {name}: p99 {what} (lower is better)",
                    percentile(busy[kind], 0.99) * 1000,
                    "ms",
                    percentile(quiet[kind], 0.99) * 1000,
                    "no bot",
                )
