"""Metrics, logs and readiness of real processes (docs/operations.md, "Metrics", "Logs",
"Probes"): the Redis deployment as compose.yaml runs it (gunicorn with compose's command line
and two workers, a ``meeple worker`` for steps and notifications, all sharing one
PROMETHEUS_MULTIPROC_DIR), and the embedded ``meeple serve`` with nothing configured.

- after a known number of actions, automatic steps and webhook deliveries (counted in the
  games' logs and at the receiver), one scrape of ``/metrics`` shows exactly those counts,
  though the API's two workers took the actions and the worker process the steps and the
  deliveries;
- every log line of both is JSON, a job's line carries the request id of the action that
  made it due, and no line holds a token;
- ``/ready`` answers 503 while Redis is stopped and 200 again once it is back;
- ``meeple serve`` alone counts into ``var/metrics`` and starts with a clean count.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_webhooks import SECRET, running_receiver
from tests.redis_servers import RedisServer
from tests.security.conftest import ROOT, LiveServer, start_gunicorn, start_server, stop_server
from tests.security.test_streams import on_redis

#: Actions per game; Gutenberg appends an automatic step after most pairs of them.
ACTIONS = 12
RULESETS = ("gutenberg", "restoration")
PATIENCE = 120.0
#: compose's ``worker`` service: steps and notifications.
WORKER_QUEUES = ("--queue", "steps", "--queue", "notifications")


@dataclass
class Deployment:
    api: LiveServer
    worker: subprocess.Popen[bytes]
    worker_log: Path
    redis: RedisServer

    def worker_lines(self) -> list[str]:
        return self.worker_log.read_text(errors="replace").splitlines()


def settings(redis: RedisServer, directory: Path) -> dict[str, str]:
    return {
        **on_redis(redis),
        "MEEPLE_RATE_LIMITS": "off",
        "MEEPLE_LOG_FORMAT": "json",
        "MEEPLE_WEBHOOK_ALLOW_HOSTS": "127.0.0.1",
        "PROMETHEUS_MULTIPROC_DIR": str(directory / "metrics"),
        # Every step is its job's, never the sweep's, and no attempt times out, however
        # slow a loaded machine runs: the counts below are then known exactly.
        "MEEPLE_STEP_GRACE": "600",
        "MEEPLE_WEBHOOK_TIMEOUT": "60",
    }


@pytest.fixture
def deployment(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> Iterator[Deployment]:
    redis = make_redis_server(tmp_path / "redis")
    env = settings(redis, tmp_path)
    api = start_gunicorn(tmp_path, env, workers=2)
    clean = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    clean.pop("PROMETHEUS_MULTIPROC_DIR", None)
    path = os.pathsep.join(filter(None, [str(ROOT), clean.get("PYTHONPATH")]))
    worker_log = tmp_path / "worker.log"
    with worker_log.open("wb") as output:
        worker = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker", *WORKER_QUEUES],
            cwd=tmp_path,
            env={**clean, "PYTHONPATH": path, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        yield Deployment(api, worker, worker_log, redis)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        stop_server(api)


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def act(api: LiveServer, game: dict[str, Any], request_id: str) -> dict[str, Any]:
    """The seat to act posts its first legal action (once the pending step, if any, is
    appended); the answer's body."""
    deadline = time.monotonic() + PATIENCE
    while True:
        summary = api.call("GET", f"/games/{game['id']}").body
        if not summary["status"].get("awaiting_system"):
            break
        assert time.monotonic() < deadline, "the automatic step was never appended"
        time.sleep(0.05)
    seat = summary["status"]["to_act"][0]
    token = game["seats"][seat]["token"]
    legal = api.call("GET", f"/games/{game['id']}/legal-actions", token=token).body
    answer = api.call(
        "POST",
        f"/games/{game['id']}/actions",
        legal["actions"][0],
        token=token,
        headers={"X-Request-ID": request_id},
    )
    assert answer.status == 201, answer
    assert answer.headers["x-request-id"] == request_id
    body: dict[str, Any] = answer.body
    return body


def settled(api: LiveServer, game: dict[str, Any]) -> bool:
    return not api.call("GET", f"/games/{game['id']}").body["status"].get("awaiting_system")


def scrape(api: LiveServer) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of one ``GET /metrics``: (name, labels) -> value."""
    import urllib.request

    with urllib.request.urlopen(api.base + "/metrics", timeout=30) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = response.read().decode()
    from prometheus_client.parser import text_string_to_metric_families

    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def total(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    wanted = set(labels.items())
    return sum(value for (found, has), value in samples.items() if found == name and wanted <= has)


def counted_outcome(attempt: dict[str, Any]) -> str:
    """An attempt's outcome as meeple_webhook_deliveries_total names it."""
    if attempt["outcome"] != "http_status":
        return str(attempt["outcome"])
    return "delivered" if 200 <= attempt["status"] < 300 else "http_error"


def test_one_scrape_counts_every_action_step_and_delivery_of_every_process(
    deployment: Deployment,
) -> None:
    api = deployment.api
    with running_receiver() as receiver:
        games = [api.create_game(ruleset) for ruleset in RULESETS]
        body = {"url": receiver.url, "secret": SECRET, "events": ["action"]}
        hooked = games[0]
        token = hooked["seats"][0]["token"]
        assert api.call("POST", f"/games/{hooked['id']}/webhooks", body, token).status == 201
        answers = {}
        for game in games:
            for number in range(ACTIONS):
                request_id = f"act-{game['id']}-{number}"
                answers[request_id] = act(api, game, request_id)
        for game in games:
            wait_until(lambda game=game: settled(api, game), "the automatic steps")
        logs = {
            ruleset: Counter(
                event["type"]
                for event in api.call("GET", f"/games/{game['id']}/events?limit=1000").body[
                    "events"
                ]
            )
            for ruleset, game in zip(RULESETS, games, strict=True)
        }
        assert logs["gutenberg"]["system"] > 0

        def deliveries() -> list[dict[str, Any]]:
            listing = api.call("GET", f"/games/{hooked['id']}/webhooks", token=token).body
            found: list[dict[str, Any]] = listing["webhooks"][0]["deliveries"]
            return found

        def delivered() -> bool:
            found = deliveries()
            return len(found) == ACTIONS and all(
                delivery["status"] == "delivered" for delivery in found
            )

        try:
            wait_until(delivered, "every delivery delivered")
        except AssertionError:
            tail = deployment.worker_log.read_text()[-5000:]
            raise AssertionError(f"deliveries: {deliveries()}\nworker: {tail}") from None
        receiver.wait_for(lambda bodies: len(bodies) >= ACTIONS, patience=PATIENCE)
        samples = scrape(api)
        received = len(receiver.bodies())
        attempts = [attempt for delivery in deliveries() for attempt in delivery["attempts"]]

    assert received == ACTIONS
    # Each attempt as the deliveries record it (a receiver slow to answer may see a retry).
    made = Counter(counted_outcome(attempt) for attempt in attempts)
    assert made["delivered"] == received
    for ruleset, counted in logs.items():
        assert counted["action"] == ACTIONS
        assert total(samples, "meeple_actions_appended_total", ruleset=ruleset) == ACTIONS
        assert total(samples, "meeple_steps_appended_total", ruleset=ruleset) == counted["system"]
    # Every step here ran as its job (none was left to the sweep): each one's latency observed.
    assert total(samples, "meeple_step_latency_seconds_count") == sum(
        counted["system"] for counted in logs.values()
    )
    assert total(samples, "meeple_webhook_deliveries_total") == len(attempts)
    for outcome, count in made.items():
        counted = total(samples, "meeple_webhook_deliveries_total", outcome=outcome)
        assert counted == count, outcome
    assert (
        total(samples, "meeple_webhook_deliveries_total", outcome="delivered", receiver="allowed")
        == received
    )
    route = "/games/<game_id>/actions"
    posted = total(samples, "meeple_http_requests_total", method="POST", route=route)
    assert posted == total(samples, "meeple_http_requests_total", route=route, status="201")
    assert posted == ACTIONS * len(RULESETS)
    assert total(samples, "meeple_http_request_duration_seconds_count", route=route) == posted
    # Never a raw path, a game id or a token in a label.
    labels = {value for (_, has) in samples for _, value in has}
    assert not any(game["id"] in value for game in games for value in labels)
    # A delivery's job may find its owner's places taken and put it off: more jobs than attempts.
    assert total(samples, "meeple_jobs_total", job="deliver", outcome="ok") >= len(attempts)
    assert total(samples, "meeple_jobs_total", outcome="failed") == 0
    assert total(samples, "meeple_queue_depth", queue="steps") == 0
    assert ("meeple_compute_jobs", frozenset({("kind", "bots"), ("state", "queued")})) in samples

    # The logs: JSON lines only, a step's job line with the request id of the action that
    # made it due, and no token anywhere.
    server_lines = [json.loads(line) for line in api.logs().splitlines() if line.strip()]
    worker_lines = [json.loads(line) for line in deployment.worker_lines() if line.strip()]
    requests = [line for line in server_lines if line.get("kind") == "request"]
    assert {line["request_id"] for line in requests} >= set(answers)
    assert all(line["route"] != line["path"] for line in requests if line["request_id"] in answers)
    stepped = [rid for rid, answer in answers.items() if answer["status"].get("awaiting_system")]
    assert stepped
    step_jobs = {
        line["request_id"]
        for line in worker_lines
        if line.get("kind") == "job" and line["job"] == "system_step" and line["outcome"] == "ok"
    }
    assert set(stepped) <= step_jobs
    delivery_jobs = [line for line in worker_lines if line.get("job") == "deliver"]
    assert len(delivery_jobs) == total(samples, "meeple_jobs_total", job="deliver")
    # Those the actions' notices started carry their request ids; a retry the sweep started
    # (a delivery put off while its owner's places were taken) carries none.
    assert any(line["request_id"] in answers for line in delivery_jobs)
    assert all(line["request_id"] in {*answers, None} for line in delivery_jobs)
    text = api.logs() + deployment.worker_log.read_text()
    for game in games:
        for seat in game["seats"]:
            assert seat["token"] not in text


def test_ready_answers_503_while_redis_is_stopped_and_200_once_it_is_back(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> None:
    redis = make_redis_server(tmp_path / "redis")
    api = start_gunicorn(tmp_path, settings(redis, tmp_path))
    try:
        ready = api.call("GET", "/ready")
        assert ready.status == 200, ready
        assert ready.body == {"status": "ready", "checks": {"store": True, "redis": True,
                                                            "queues": True}}  # fmt: skip
        redis.stop()
        down = api.call("GET", "/ready")
        assert down.status == 503, down
        assert down.headers["content-type"] == "application/problem+json"
        assert down.code == "not_ready"
        assert down.body["checks"] == {"store": False, "redis": False, "queues": False}
        assert api.call("GET", "/health").status == 503
        # The counts are still there to read; the queues' gauges say they cannot be read.
        samples = scrape(api)
        assert total(samples, "meeple_queues_readable") == 0
        assert total(samples, "meeple_http_requests_total", route="/ready", status="503") == 1
        redis.start()
        wait_until(lambda: api.call("GET", "/ready").status == 200, "ready again")
        assert total(scrape(api), "meeple_queues_readable") == 1
    finally:
        stop_server(api)


def test_the_embedded_server_counts_with_nothing_configured_and_starts_from_zero(
    tmp_path: Path,
) -> None:
    stale = tmp_path / "var" / "metrics" / f"serve-{socket.gethostname()}-999999999"
    stale.mkdir(parents=True)
    (stale / "counter_1.db").write_bytes(b"left by a server that died")
    api = start_server(tmp_path, {}, [])
    try:
        game = api.create_game()
        act(api, game, "embedded-1")
        samples = scrape(api)
        assert total(samples, "meeple_actions_appended_total", ruleset="gutenberg") == 1
        assert total(samples, "meeple_http_requests_total", route="/games", status="201") == 1
        assert not stale.exists()
        owned = list((tmp_path / "var" / "metrics").iterdir())
        assert [directory.name.split("-")[0] for directory in owned] == ["serve"]
    finally:
        stop_server(api)
