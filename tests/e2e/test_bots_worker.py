"""Bot seats with a real ``meeple worker --queue steps --queue bots`` process and a
throwaway redis-server: the bots' turns go through the ``meeple-bots`` RQ queue."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rq import Queue
from rq.registry import FinishedJobRegistry

from projections.audit import audit
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config
from service.workers.jobs import BOTS_QUEUE, RQJobs
from tests.redis_servers import RedisServer

ROOT = Path(__file__).resolve().parents[2]
MEEPLE = str(Path(sys.executable).with_name("meeple"))


@pytest.fixture
def deployment(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> Iterator[tuple[Services, subprocess.Popen[bytes], Path]]:
    server = make_redis_server(tmp_path / "redis")
    store_url = f"sqlite:///{tmp_path}/meeple.db"
    config = load_config({}, store_url=store_url, redis_url=server.url, rate_limits=False)
    services = bootstrap(config)
    assert isinstance(services.jobs, RQJobs)
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        worker = subprocess.Popen(
            [MEEPLE, "worker", "--queue", "steps", "--queue", "bots"],
            cwd=ROOT,
            env={
                **os.environ,
                "MEEPLE_STORE_URL": store_url,
                "MEEPLE_REDIS_URL": server.url,
                "MEEPLE_SWEEP_INTERVAL": "0.5",
            },
            stdout=log,
            stderr=log,
        )
    yield services, worker, log_path
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=30)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
    services.close()


def test_a_human_plays_restoration_against_bots_served_by_a_real_bots_worker(
    deployment: tuple[Services, subprocess.Popen[bytes], Path],
) -> None:
    services, worker, log_path = deployment
    client = create_app(services=services).test_client()
    players: list[Any] = [
        "Ann",
        {"bot": {"agent": "random"}},
        {"bot": {"agent": "greedy"}},
        {"open": True},
    ]
    created = client.post("/games", json={"ruleset": "restoration", "players": players})
    assert created.status_code == 201, created.json
    game_id = created.json["id"]
    ann = {"Authorization": f"Bearer {created.json['seats'][0]['token']}"}
    # The last seat goes to a bot before the start; until then the game waits.
    assert client.get(f"/games/{game_id}").json["status"]["waiting_for_players"] is True
    seated = client.post(f"/games/{game_id}/seats/3/bot", json={"agent": "random"}, headers=ann)
    assert seated.status_code == 200, seated.json
    chooser = random.Random(3)
    deadline = time.monotonic() + 600
    while True:
        assert worker.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, log_path.read_text()
        summary = client.get(f"/games/{game_id}").json
        status = summary["status"]
        if status["finished"]:
            break
        if 0 not in status["to_act"] or status["awaiting_system"]:
            time.sleep(0.02)  # the worker plays the steps and the bots
            continue
        legal = client.get(f"/games/{game_id}/legal-actions", headers=ann).json["actions"]
        if legal:
            posted = client.post(
                f"/games/{game_id}/actions", json=chooser.choice(legal), headers=ann
            )
            assert posted.status_code in (201, 409, 422), posted.json
    events = services.store.read(game_id)
    bot_moves = [event for event in events if event["actor"].get("bot")]
    assert {event["actor"]["seat"] for event in bot_moves} == {1, 2, 3}
    assert {event["idempotency_key"].rsplit("-", 1)[0] for event in bot_moves} == {
        f"bot_turn-{game_id}"
    }
    assert audit(events).ok
    jobs = services.jobs
    assert isinstance(jobs, RQJobs)
    finished = FinishedJobRegistry(queue=Queue(BOTS_QUEUE, connection=jobs.connection))
    assert finished.count > 0
