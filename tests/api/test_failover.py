"""No acknowledged action lost when the Redis primary dies (docs/operations.md, "Failover").

On loopback: a primary, two replicas and a Sentinel; the service on ``redis+sentinel://``
with ``MEEPLE_REDIS_MIN_REPLICAS=1``, a real worker for the automatic steps, client threads
acting with Idempotency-Keys; SIGKILL of the primary, Sentinel's failover, the service and
the worker following the new primary by themselves (bench/bench_failover.py runs the same
scenario longer, with and without MIN_REPLICAS: ``make failover``). And a replica that stops
answering: the action answers 503 ``replication_lag``, and its retry the same event, once.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from flask.testing import FlaskClient

from bench.bench_failover import run_scenario
from events.store import ReplicationLag
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import bearer, new_game
from tests.redis_servers import RedisServer, redis_binary


def test_every_acknowledged_action_survives_a_failover_with_one_replica_required(
    tmp_path: Path,
) -> None:
    redis_binary("redis-server")
    outcome = run_scenario(tmp_path, min_replicas=1, before=40, after=40)
    print(f"\n{outcome.line()}")
    assert outcome.acknowledged_before_kill >= 40
    assert outcome.acknowledged >= outcome.acknowledged_before_kill + 40  # it went on after
    assert outcome.lost == 0
    assert outcome.duplicated == 0
    assert outcome.broken == 0
    assert outcome.steps > 0
    assert outcome.steps_twice == 0
    assert outcome.stuck == 0


@pytest.fixture
def replicated(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> Iterator[tuple[RedisServer, RedisServer, Services]]:
    primary = make_redis_server(tmp_path / "primary")
    replica = make_redis_server(tmp_path / "replica", "--replicaof", "127.0.0.1", str(primary.port))
    wait_until(lambda: _linked(primary), "the replica to sync")
    config = load_config(
        {},
        store_url=primary.url,
        rate_limits=False,
        redis_min_replicas=1,
        redis_replica_timeout=300,
    )
    services = bootstrap(config)
    yield primary, replica, services
    _resume(replica)
    services.close()


def test_an_action_the_replica_did_not_confirm_answers_503_and_its_retry_the_same_event(
    replicated: tuple[RedisServer, RedisServer, Services],
) -> None:
    _, replica, services = replicated
    client: FlaskClient = create_app(services=services).test_client()
    game = new_game(client, "tally", ["Ann", "Bob"])
    path = f"/games/{game['id']}"
    bids = {"type": "bid", "amount": 3}
    headers = {**bearer(game["seats"][0]["token"]), "Idempotency-Key": "bid-once"}

    _pause(replica)
    refused = client.post(f"{path}/actions", json=bids, headers=headers)
    assert refused.status_code == 503
    assert refused.mimetype == "application/problem+json"
    assert refused.json["code"] == "replication_lag"
    assert refused.headers["Retry-After"] == "1"
    # Still unconfirmed: the retry is refused too, and appends nothing more.
    again = client.post(f"{path}/actions", json=bids, headers=headers)
    assert again.json["code"] == "replication_lag"

    _resume(replica)
    answered = client.post(f"{path}/actions", json=bids, headers=headers)
    assert answered.status_code < 300, answered.json
    events = services.store.read(game["id"])
    held = [event for event in events if event.get("idempotency_key") == "seat0:bid-once"]
    assert [event["seq"] for event in held] == [answered.json["version"]]
    with replica.client() as reading:
        copied = reading.xrange(f"meeple:{{{game['id']}}}:events")
    assert len(copied) == len(events)


def test_a_store_waits_for_no_replica_unless_asked(
    make_redis_server: Callable[..., RedisServer], tmp_path: Path
) -> None:
    from events.envelope import NewEvent
    from events.redis_store import RedisEventStore

    alone = make_redis_server(tmp_path / "alone")
    asked = RedisEventStore.from_url(alone.url, min_replicas=1, replica_timeout=50)
    plain = RedisEventStore.from_url(alone.url)
    event = NewEvent("action", {"n": 1}, {"seat": 0})
    with pytest.raises(ReplicationLag) as lag:
        asked.append("g1", [event], 0, "k")
    assert (lag.value.acknowledged, lag.value.wanted) == (0, 1)
    assert lag.value.result.version == 1  # the primary has it, whole
    assert plain.append("g2", [event], 0).version == 1
    asked.close()
    plain.close()


def _linked(primary: RedisServer) -> bool:
    with primary.client() as client:
        info = client.info("replication")
    replica = info.get("slave0")
    return isinstance(replica, dict) and replica.get("state") == "online"


def _pause(server: RedisServer) -> None:
    """SIGSTOP: the replica takes nothing and confirms nothing until it is resumed."""
    os.kill(_pid(server), signal.SIGSTOP)


def _resume(server: RedisServer) -> None:
    os.kill(_pid(server), signal.SIGCONT)


def _pid(server: RedisServer) -> int:
    assert server.executor is not None and server.executor.process is not None
    return server.executor.process.pid


def wait_until(check: Callable[[], bool], what: str, patience: float = 60.0) -> None:
    deadline = time.monotonic() + patience
    while True:
        try:
            if check():
                return
        except redis.RedisError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {patience:g} s for {what}")
        time.sleep(0.05)
