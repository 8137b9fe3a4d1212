"""How long an automatic step takes to follow the action that made it due, with one RQ worker.

A redis-server with AOF ``appendfsync always`` holds the store (database 0) and the queues
(database 1), as compose.yaml; one ``meeple worker`` does the steps. This process serves the
API in-process and plays games of every product ruleset (known seeds, played ahead in
memory) one action at a time with ``Prefer: wait=10``, so every action is answered after
the steps it made due and none is bounced. Measured:

- from an action's append to its automatic step's append (the two events' ``recorded_at``,
  both stamped on this machine's clock), p50 and p99;
- the answer to an action that made a step due (POST to its answer, which waited for it);

each against one bare ``XADD`` round trip to the same redis-server, measured in the same run
(ratios: lower is better). Runs ``MEEPLE_BENCH_SECONDS`` (default 6) seconds.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.bench_http import (
    ADMIN_KEY,
    ROOT,
    WORKER_CODE,
    Plan,
    game_plan,
    percentile,
    redis_server,
    stop,
)

GAMES = 12
BASELINE_XADDS = 2000


def recorded(envelope: dict[str, Any]) -> float:
    return datetime.strptime(envelope["recorded_at"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def xadd_round_trips(url: str, count: int) -> list[float]:
    """Seconds of each of ``count`` XADDs, one at a time, to the Redis at ``url``."""
    import redis

    client = redis.Redis.from_url(url)
    took = []
    for number in range(count):
        began = time.perf_counter()
        client.xadd("bench:steps:baseline", {"e": str(number)})
        took.append(time.perf_counter() - began)
    client.close()
    return took


def run(report: Callable[..., None]) -> None:
    seconds = float(os.environ.get("MEEPLE_BENCH_SECONDS", "6"))
    with (
        tempfile.TemporaryDirectory(prefix="meeple-bench-steps-") as scratch,
        redis_server(Path(scratch)) as url,
    ):
        env = {
            "MEEPLE_STORE_URL": f"{url}/0",
            "MEEPLE_REDIS_URL": f"{url}/1",
            "MEEPLE_ADMIN_KEY": ADMIN_KEY,
            "MEEPLE_RATE_LIMITS": "off",
        }
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE],
            cwd=ROOT,
            env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            steps, answers, bounced = play(env, seconds)
        finally:
            stop(worker)
        baseline = xadd_round_trips(f"{url}/2", BASELINE_XADDS)
    print(
        f"   {len(steps)} automatic steps after {len(answers)} waited answers; "
        f"{bounced} answers not 201",
        flush=True,
    )
    for name, fraction in (("p50", 0.50), ("p99", 0.99)):
        xadd = percentile(baseline, fraction) * 1000
        report(f"steps: {name} action -> its step appended (lower is better)",
               percentile(steps, fraction) * 1000, "ms", xadd, f"XADD {name}")  # fmt: skip
        report(f"steps: {name} answer with Prefer: wait (lower is better)",
               percentile(answers, fraction) * 1000, "ms", xadd, f"XADD {name}")  # fmt: skip


def play(env: dict[str, str], seconds: float) -> tuple[list[float], list[float], int]:
    """Play the games round-robin for ``seconds``: (step delays, answer times of the actions
    that made a step due, answers that were not 201)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        from service.app import create_app

        app = create_app()
        client = app.test_client()
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        plans = []
        for number in range(2000, 2000 + GAMES):
            body, moves, _ = game_plan(number)
            created: dict[str, Any] = client.post("/games", json=body, headers=admin).json or {}
            plans.append(Plan(created["id"], [s["token"] for s in created["seats"]], moves))
        answers: list[float] = []
        bounced = 0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline and any(p.next < len(p.moves) for p in plans):
            for plan in plans:
                if plan.next >= len(plan.moves):
                    continue
                seat, action = plan.moves[plan.next]
                began = time.perf_counter()
                answer = client.post(
                    f"/games/{plan.game_id}/actions",
                    json=action,
                    headers={"Authorization": f"Bearer {plan.tokens[seat]}", "Prefer": "wait=10"},
                )
                took = time.perf_counter() - began
                if answer.status_code != 201:
                    bounced += 1
                    plan.next = len(plan.moves)
                    continue
                plan.next += 1
                body = answer.json or {}
                if body["version"] > body["seq"]:
                    answers.append(took)
        services = app.extensions["meeple"]
        steps = []
        for plan in plans:
            events = services.store.read(plan.game_id)
            for before, step in itertools.pairwise(events):
                if step["type"] == "system" and before["type"] == "action":
                    steps.append(recorded(step) - recorded(before))
        services.close()
        return steps, answers, bounced
    finally:
        os.environ.clear()
        os.environ.update(saved)
