"""``Prefer: wait=N`` against a real RQ worker process and redis-server: every action of a
game is answered with the game after the automatic steps it made due, none is bounced with
409, and the answers wait on the announcements the worker's appends publish.

The store and the queues are two databases of one redis-server, as compose.yaml runs them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from service.app import create_app
from service.bootstrap import bootstrap
from service.config import load_config
from service.workers.jobs import RQJobs
from tests.e2e.test_worker_rq import Deployment, bearer
from tests.redis_servers import RedisServer


@pytest.fixture
def redis_deployment(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> Iterator[Deployment]:
    server = make_redis_server(tmp_path / "redis")
    config = load_config(
        {},
        store_url=server.url,
        redis_url=server.url.rsplit("/", 1)[0] + "/1",
        rate_limits=False,
    )
    services = bootstrap(config)
    assert isinstance(services.jobs, RQJobs)
    built = Deployment(config, server, tmp_path, services)
    yield built
    built.stop()


def test_every_action_of_a_game_is_answered_after_its_automatic_steps(
    redis_deployment: Deployment,
) -> None:
    redis_deployment.start_worker(MEEPLE_REDIS_URL=redis_deployment.config.redis_url or "")
    client = create_app(services=redis_deployment.services).test_client()
    created = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    tokens = [seat["token"] for seat in created["seats"]]
    path = f"/games/{created['id']}"
    chooser = random.Random("prefer-wait")
    answers = []
    for _ in range(500):
        summary = client.get(path).json
        status = summary["status"]
        # The answer before waited for every step: the game never awaits one here.
        assert status["awaiting_system"] is None, (status, redis_deployment.worker_logs())
        if status["finished"]:
            break
        seat = status["to_act"][0]
        legal = client.get(f"{path}/legal-actions", headers=bearer(tokens[seat])).json
        answer = client.post(
            f"{path}/actions",
            json=chooser.choice(legal["actions"]),
            headers={**bearer(tokens[seat]), "Prefer": "wait=9"},
        )
        assert answer.status_code == 201, (answer.json, redis_deployment.worker_logs())
        assert answer.headers["Preference-Applied"] == "wait=9"
        answers.append(answer.json)
    else:
        raise AssertionError("the game did not end")
    events = redis_deployment.services.store.read(created["id"])
    steps = [event["seq"] for event in events if event["type"] == "system"]
    # Tally: a reveal and a scoring per round, each done by the worker before an answer.
    assert len(steps) == 6
    stepped = [answer for answer in answers if answer["version"] > answer["seq"]]
    assert sorted(answer["version"] for answer in stepped) == steps
