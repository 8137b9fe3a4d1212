"""Analyses run by a real ``meeple worker --queue analyses`` process on RQ and a throwaway
redis-server: the result, progress reaching this process's live streams over Redis pub/sub,
and a cancellation the worker notices mid-search."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rq import Queue

from projections.agents.budget import Budget
from service.app import create_app
from service.workers import analyses
from service.workers.jobs import ANALYSES_QUEUE
from tests.e2e.test_worker_rq import ROOT, Deployment, bearer, deployment, wait_until

__all__ = ["deployment"]  # the fixture, shared with the other worker tests

#: The worker process: Tally registered, the search gated while MEEPLE_TEST_GATE exists,
#: then an RQ worker on the analyses' queue alone.
WORKER_CODE = (
    "import tests.e2e.test_analyses_rq as here; here.prepare_worker_process(); "
    "from service.config import load_config; from service.bootstrap import run_worker; "
    "raise SystemExit(run_worker(load_config(), queues=['analyses']))"
)


def prepare_worker_process() -> None:
    """Register Tally; with MEEPLE_TEST_GATE set, a search runs (reporting progress) until
    that file is removed or the analysis is cancelled, then searches a few playouts."""
    from projections.ruleset import register
    from tests.rulesets.tally import TALLY

    register(TALLY)
    gate = os.environ.get("MEEPLE_TEST_GATE")
    if not gate:
        return
    real = analyses.analyze

    def gated(ruleset: Any, state: Any, seat: int, budget: Budget, seed: str,
              progress: Any = None, cancelled: Any = None) -> Any:  # fmt: skip
        done = 0
        deadline = time.monotonic() + 120
        while os.path.exists(gate) and not cancelled() and time.monotonic() < deadline:
            done += 1
            progress(done)
            time.sleep(0.01)
        return real(ruleset, state, seat, Budget(iterations=5), seed, progress, cancelled)

    analyses.analyze = gated  # type: ignore[assignment]


def start_analyses_worker(deployment: Deployment, **env: str) -> subprocess.Popen[bytes]:
    log = (deployment.directory / f"worker-{len(deployment.workers)}.log").open("wb")
    variables = {
        **os.environ,
        "MEEPLE_STORE_URL": deployment.config.store_url,
        "MEEPLE_REDIS_URL": deployment.redis.url,
        **env,
    }
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER_CODE], cwd=ROOT, env=variables, stdout=log, stderr=log
    )
    log.close()
    deployment.workers.append(worker)
    wait_until(
        lambda: deployment.services.jobs.serves("analyses"),
        "the analyses worker did not start",
        deployment,
    )
    return worker


def status_of(client: Any, location: str, token: str) -> Callable[[], str]:
    return lambda: str(client.get(location, headers=bearer(token)).json["status"])


def test_a_worker_on_the_analyses_queue_runs_an_analysis_and_its_progress_reaches_streams(
    deployment: Deployment,
) -> None:
    client = create_app(services=deployment.services).test_client()
    game = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    token = game["seats"][0]["token"]
    watcher = deployment.services.jobs.subscribe(game["id"])  # what a live stream holds
    try:
        # No worker takes analyses yet: asking is refused, not left queued for ever.
        refused = client.post(
            f"/games/{game['id']}/analyses", json={"playouts": 30}, headers=bearer(token)
        )
        assert refused.status_code == 503, refused.json
        assert refused.json["code"] == "no_analysis_worker"
        queue = Queue(ANALYSES_QUEUE, connection=deployment.services.jobs.connection)
        assert queue.job_ids == []
        start_analyses_worker(deployment)
        response = client.post(
            f"/games/{game['id']}/analyses", json={"playouts": 30}, headers=bearer(token)
        )
        assert response.status_code in (200, 202), response.json
        location = response.headers["Location"]
        done = status_of(client, location, token)
        wait_until(lambda: done() == "done", "the worker did not analyse", deployment)
        result = client.get(location, headers=bearer(token)).json["result"]
        assert result["playouts"] == 30 and result["complete"]
        assert sum(candidate["playouts"] for candidate in result["candidates"]) == 30
        wait_until(
            lambda: any(n["status"] == "done" for n in watcher.feed.notes),
            "the worker's progress did not reach this process's streams",
            deployment,
        )
        assert watcher.feed.notes[-1] == {
            "id": response.json["id"],
            "seat": 0,
            "at": 1,
            "status": "done",
            "progress": {"done": 30, "total": 30},
        }
    finally:
        watcher.close()


def test_a_running_analysis_is_cancelled_by_its_worker(
    deployment: Deployment, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    start_analyses_worker(deployment, MEEPLE_TEST_GATE=str(gate))
    client = create_app(services=deployment.services).test_client()
    game = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    token = game["seats"][0]["token"]
    location = client.post(
        f"/games/{game['id']}/analyses", json={"playouts": 500}, headers=bearer(token)
    ).headers["Location"]

    def progressed() -> bool:
        return int(client.get(location, headers=bearer(token)).json["progress"]["done"]) > 0

    wait_until(progressed, "the worker did not start the analysis", deployment)
    # Another one waits behind it, and says where it stands.
    waiting = client.post(
        f"/games/{game['id']}/analyses",
        json={"playouts": 500, "seed": "another"},
        headers=bearer(token),
    )
    assert waiting.status_code == 202, waiting.json
    assert (waiting.json["status"], waiting.json["queue_position"]) == ("queued", 1)
    assert client.get(location, headers=bearer(token)).json["queue_position"] is None
    cancelled = client.post(location + "/cancel", headers=bearer(token))
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"

    def stopped() -> bool:
        analysis = client.get(location, headers=bearer(token)).json
        return analysis["result"] is not None

    wait_until(stopped, "the worker did not stop the cancelled search", deployment)
    analysis = client.get(location, headers=bearer(token)).json
    assert analysis["status"] == "cancelled"
    assert analysis["result"]["complete"] is False
    assert gate.exists()  # it stopped for the cancellation, not because the gate opened


def test_a_worker_on_the_analyses_queue_reviews_a_game_and_its_progress_reaches_streams(
    deployment: Deployment,
) -> None:
    client = create_app(services=deployment.services).test_client()
    game = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    tokens = [seat["token"] for seat in game["seats"]]
    for seat, amount in ((0, 3), (1, 4)):
        posted = client.post(
            f"/games/{game['id']}/actions",
            json={"type": "bid", "amount": amount},
            headers=bearer(tokens[seat]),
        )
        assert posted.status_code == 201, posted.json
    watcher = deployment.services.jobs.subscribe(game["id"])
    try:
        start_analyses_worker(deployment)
        response = client.post(
            f"/games/{game['id']}/reviews",
            json={"playouts": 20, "evaluations": 4},
            headers=bearer(tokens[0]),
        )
        assert response.status_code == 202, response.json
        location = response.headers["Location"]
        done = status_of(client, location, tokens[0])
        wait_until(lambda: done() == "done", "the worker did not review", deployment)
        review = client.get(location, headers=bearer(tokens[0])).json
        result = review["result"]
        assert result["complete"] and [m["seq"] for m in result["moves"]] == [2]
        assert [p["seq"] for p in result["evaluations"]] == list(range(1, review["at"] + 1))
        wait_until(
            lambda: any(n.get("kind") == "review" and n["status"] == "done"
                        for n in watcher.feed.notes),
            "the review's progress did not reach this process's streams",
            deployment,
        )  # fmt: skip
    finally:
        watcher.close()
