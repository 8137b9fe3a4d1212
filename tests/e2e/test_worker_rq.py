"""Real RQ worker processes (``meeple worker``: ``service.bootstrap.run_worker``) against a
throwaway redis-server.

- every landed game is played to its end through HTTP alone, each automatic step done by
  the worker process;
- a worker killed with SIGKILL in the middle of a step is recovered by another worker's
  sweep, and the step is appended exactly once;
- two workers running the same step at once append it once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from rq.job import Job

from projections.ruleset import Action, State, all_rulesets, register
from service.app import create_app
from service.application.job_state import RedisJobState
from service.application.webhooks import verify_signature
from service.bootstrap import Services, bootstrap
from service.config import Config, load_config
from service.workers.jobs import RQJobs, run_job, system_step_key
from tests.e2e.test_webhooks import SECRET, Receiver, running_receiver
from tests.redis_servers import RedisServer
from tests.rulesets.tally import TALLY, Tally

ROOT = Path(__file__).resolve().parents[2]
#: The worker process registers the test-only ruleset, then runs ``meeple worker``; with
#: MEEPLE_TEST_GATE set, its Tally's automatic steps wait while that file exists.
WORKER_CODE = (
    "import tests.e2e.test_worker_rq as here; here.prepare_worker_process(); "
    "from service.config import load_config; from service.bootstrap import run_worker; "
    "raise SystemExit(run_worker(load_config()))"
)


def prepare_worker_process() -> None:
    """Register Tally in a worker process; gate its automatic steps if the test asks to."""
    register(TALLY)
    gate = os.environ.get("MEEPLE_TEST_GATE")
    if not gate:
        return
    ungated = Tally.apply

    def apply(self: Tally, state: State, action: Action, rng: random.Random) -> None:
        # A step "in the middle": the worker holds the job until the test removes the gate.
        deadline = time.monotonic() + 120
        while action.get("seat") is None and os.path.exists(gate):
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        ungated(self, state, action, rng)

    Tally.apply = apply  # type: ignore[method-assign]


@dataclass
class Deployment:
    """A store, a Redis for the queues, this process's services, and worker processes."""

    config: Config
    redis: RedisServer
    directory: Path
    services: Services
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start_worker(self, **env: str) -> subprocess.Popen[bytes]:
        log = (self.directory / f"worker-{len(self.workers)}.log").open("wb")
        variables = {
            **os.environ,
            "MEEPLE_STORE_URL": self.config.store_url,
            "MEEPLE_REDIS_URL": self.redis.url,
            "MEEPLE_SWEEP_INTERVAL": "0.2",
            "MEEPLE_STEP_GRACE": "0.5",
            **env,
        }
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER_CODE], cwd=ROOT, env=variables, stdout=log, stderr=log
        )
        log.close()
        self.workers.append(worker)
        return worker

    def stop(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
        self.services.close()

    def worker_logs(self) -> str:
        return "\n".join(path.read_text() for path in sorted(self.directory.glob("worker-*.log")))


@pytest.fixture
def deployment(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> Iterator[Deployment]:
    server = make_redis_server(tmp_path / "redis")
    # The automatic steps are the subject, not how fast one client may post.
    config = load_config(
        {}, store_url=f"sqlite:///{tmp_path}/meeple.db", redis_url=server.url, rate_limits=False
    )
    services = bootstrap(config)
    assert isinstance(services.jobs, RQJobs)
    built = Deployment(config, server, tmp_path, services)
    yield built
    built.stop()


def wait_until(check: Callable[[], bool], what: str, deployment: Deployment, patience: float = 60):
    deadline = time.monotonic() + patience
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}; worker logs:\n{deployment.worker_logs()}")
        time.sleep(0.02)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def play_over_http(
    client: FlaskClient,
    deployment: Deployment,
    ruleset: str,
    players: int,
    seed: str,
    options: dict[str, Any],
) -> dict[str, Any]:
    """Create a game and follow ``legal-actions`` to its end; the worker does every step."""
    body = {"ruleset": ruleset, "players": [f"P{n}" for n in range(players)], "options": options}
    created = client.post("/games", json=body).json
    tokens = [seat["token"] for seat in created["seats"]]
    path = f"/games/{created['id']}"
    chooser = random.Random(seed)
    for _ in range(20000):
        summary = client.get(path).json
        status = summary["status"]
        if status["finished"]:
            return dict(summary)
        if status["awaiting_system"]:
            version = summary["version"]
            wait_until(
                lambda version=version: client.get(path).json["version"] > version,
                f"{ruleset}: the worker did not do {status['awaiting_system']}",
                deployment,
            )
            continue
        for seat in status["to_act"]:
            legal = client.get(f"{path}/legal-actions", headers=bearer(tokens[seat])).json
            if legal["actions"]:
                action = chooser.choice(legal["actions"])
                posted = client.post(f"{path}/actions", json=action, headers=bearer(tokens[seat]))
                assert posted.status_code in (201, 409), posted.json
                break
    raise AssertionError(f"{ruleset}: the game did not end")


def test_a_real_worker_does_every_automatic_step_of_a_game_of_each_landed_ruleset(
    deployment: Deployment,
) -> None:
    deployment.start_worker()
    client = create_app(services=deployment.services).test_client()
    finished: dict[str, int] = {}
    for ruleset in all_rulesets():
        players = min(max(2, ruleset.min_players), ruleset.max_players)
        # A game that offers a round limit (timed play, with its normal final scoring) is
        # played short: the test is about the worker's steps, not about long games.
        options = {"round_limit": 2} if "round_limit" in ruleset.options else {}
        summary = play_over_http(client, deployment, ruleset.id, players, "rq", options)
        assert summary["result"] is not None, ruleset.id
        events = deployment.services.store.read(summary["id"])
        steps = [event for event in events if event["type"] == "system"]
        keys = [event["idempotency_key"] for event in steps]
        assert keys == [system_step_key(summary["id"], event["seq"] - 1) for event in steps]
        finished[summary["id"]] = summary["version"]

    def indexed() -> dict[str, int]:
        games = client.get("/games", query_string={"status": "finished", "limit": 100}).json
        return {row["id"]: row["version"] for row in games["games"]}

    # The worker keeps the game index (GET /games) caught up with the log.
    wait_until(lambda: indexed() == finished, "the game index did not catch up", deployment)


def job_status(connection: redis.Redis, job_id: str) -> str | None:
    status = connection.hget(f"rq:job:{job_id}", "status")
    return None if status is None else status.decode()


def bid_until_a_step_is_due(client: FlaskClient, ruleset: str) -> tuple[str, int]:
    created = client.post("/games", json={"ruleset": ruleset, "players": ["Ann", "Bob"]}).json
    for seat in (0, 1):
        token = created["seats"][seat]["token"]
        response = client.post(
            f"/games/{created['id']}/actions",
            json={"type": "bid", "amount": seat},
            headers=bearer(token),
        )
        assert response.status_code == 201
    return created["id"], int(response.json["version"])


def test_a_worker_killed_mid_step_is_recovered_and_the_step_appended_once(
    deployment: Deployment,
) -> None:
    gate = deployment.directory / "gate"
    gate.touch()
    doomed = deployment.start_worker(MEEPLE_TEST_GATE=str(gate))
    client = create_app(services=deployment.services).test_client()
    game_id, version = bid_until_a_step_is_due(client, "tally")
    job_id = system_step_key(game_id, version)
    connection = deployment.services.jobs.connection
    wait_until(lambda: job_status(connection, job_id) == "started", "never started", deployment)
    doomed.send_signal(signal.SIGKILL)
    doomed.wait(timeout=30)
    gate.unlink()
    assert deployment.services.store.version(game_id) == version  # nothing half-appended
    # The job is stranded in RQ's started registry; a new worker's sweep finds the step due.
    deployment.start_worker(MEEPLE_TEST_GATE=str(gate))
    wait_until(
        lambda: deployment.services.store.version(game_id) > version, "not recovered", deployment
    )
    # A duplicate of the lost job, run now, finds the step appended and appends nothing.
    duplicate = deployment.services.jobs.queues["steps"].enqueue(
        run_job, "system_step", game_id, version
    )
    wait_until(lambda: duplicate.get_status() == "finished", "duplicate not run", deployment)
    assert duplicate.return_value().reason == "stale"
    events = deployment.services.store.read(game_id)
    assert [event["type"] for event in events].count("system") == 1
    assert events[version]["idempotency_key"] == job_id


def test_two_workers_running_the_same_step_at_once_append_it_once(
    deployment: Deployment,
) -> None:
    client = create_app(services=deployment.services).test_client()
    game_id, version = bid_until_a_step_is_due(client, "tally")
    queue = deployment.services.jobs.queues["steps"]
    # The job the append enqueued under its deterministic id, and eight more copies of it.
    jobs = [Job.fetch(system_step_key(game_id, version), connection=queue.connection)]
    jobs += [queue.enqueue(run_job, "system_step", game_id, version) for _ in range(8)]
    # Their sweeps wait long enough to leave the step to the jobs.
    deployment.start_worker(MEEPLE_STEP_GRACE="600")
    deployment.start_worker(MEEPLE_STEP_GRACE="600")
    wait_until(
        lambda: all(job.get_status() == "finished" for job in jobs), "jobs not run", deployment
    )
    assert sum(job.return_value().appended for job in jobs) == 1
    events = deployment.services.store.read(game_id)
    assert [event["type"] for event in events].count("system") == 1


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def test_a_worker_delivers_signed_webhooks_kept_in_redis_and_retries_them(
    deployment: Deployment, receiver: Receiver
) -> None:
    receiver.failures = 1
    # The receiver is on loopback: the API (registering) and the worker (delivering) both
    # need the operator's allow-list to reach it.
    deployment.start_worker(
        MEEPLE_WEBHOOK_RETRY_BASE="0.05", MEEPLE_WEBHOOK_ALLOW_HOSTS="127.0.0.1"
    )
    deployment.services.jobs.settings = replace(
        deployment.services.jobs.settings, webhook_allow_hosts="127.0.0.1"
    )
    client = create_app(services=deployment.services).test_client()
    created = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    ann = created["seats"][0]["token"]
    registered = client.post(
        f"/games/{created['id']}/webhooks",
        json={"url": receiver.url, "secret": SECRET, "events": ["action", "system"]},
        headers=bearer(ann),
    )
    assert registered.status_code == 201
    assert isinstance(deployment.services.jobs.state, RedisJobState)
    for seat in (0, 1):
        token = created["seats"][seat]["token"]
        client.post(
            f"/games/{created['id']}/actions",
            json={"type": "bid", "amount": seat},
            headers=bearer(token),
        )
    receiver.wait_for(lambda bodies: {body["seq"] for body in bodies} == {2, 3, 4})
    for hit in receiver.received:
        assert verify_signature(hit["headers"]["Meeple-Signature"], SECRET, hit["body"])
    assert [hit["status"] for hit in receiver.received].count(500) == 1


def test_a_stream_is_woken_by_an_append_in_another_process_through_redis(
    deployment: Deployment,
) -> None:
    # The stream polls the store only once a minute here: the event must come by the push.
    deployment.services.jobs.settings = replace(
        deployment.services.jobs.settings, stream_poll=60, stream_heartbeat=60
    )
    client = create_app(services=deployment.services).test_client()
    created = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    other = bootstrap(deployment.config)  # another API process, with its own connections
    try:
        response = client.get(f"/games/{created['id']}/stream", buffered=False)
        chunks = iter(response.response)
        assert next(chunks).startswith(b"retry:")  # subscribed
        token = created["seats"][0]["token"]
        other_client = create_app(services=other).test_client()
        posted = other_client.post(
            f"/games/{created['id']}/actions",
            json={"type": "bid", "amount": 4},
            headers=bearer(token),
        )
        assert posted.status_code == 201
        # The stream first says whose turn it is (docs/api.md), then the event.
        turn = next(chunks).decode()
        assert turn.startswith("event: turn\n"), turn
        message = next(chunks).decode()
        assert message.startswith("id: 2\nevent: action\n")
        response.close()
    finally:
        other.close()


def test_a_plain_meeple_worker_runs_one_process_per_queue_group_and_restarts_a_dead_one(
    deployment: Deployment,
) -> None:
    """``meeple worker`` with no ``--queue``: steps and notifications in one process, bots in
    another, analyses in a third, so a step never waits behind a bot or an analysis."""
    from rq import Queue, Worker

    from service.workers.jobs import (
        ANALYSES_QUEUE,
        BOTS_QUEUE,
        NOTIFICATIONS_QUEUE,
        STEPS_QUEUE,
    )

    connection = deployment.services.jobs.connection
    meeple = str(Path(sys.executable).with_name("meeple"))
    log = (deployment.directory / "supervisor.log").open("wb")
    env = {**os.environ, "MEEPLE_STORE_URL": deployment.config.store_url}
    supervisor = subprocess.Popen(
        [meeple, "worker"],
        cwd=ROOT,
        env={**env, "MEEPLE_REDIS_URL": deployment.redis.url},
        stdout=log,
        stderr=log,
    )
    log.close()

    def serving() -> dict[str, set[int]]:
        return {
            name: {worker.pid for worker in Worker.all(queue=Queue(name, connection=connection))}
            for name in (STEPS_QUEUE, NOTIFICATIONS_QUEUE, BOTS_QUEUE, ANALYSES_QUEUE)
        }

    try:
        wanted = {STEPS_QUEUE: 1, NOTIFICATIONS_QUEUE: 2, BOTS_QUEUE: 2, ANALYSES_QUEUE: 1}
        wait_until(
            lambda: {name: len(found) for name, found in serving().items()} == wanted,
            "the six workers to start",
            deployment,
        )
        pids = serving()
        # The steps alone, two notification workers, two bot workers, one analyses worker.
        assert len(pids[STEPS_QUEUE]) == 1 and len(pids[ANALYSES_QUEUE]) == 1
        assert len(pids[NOTIFICATIONS_QUEUE]) == 2 and len(pids[BOTS_QUEUE]) == 2
        assert len(set().union(*pids.values())) == 6
        bots_worker = min(pids[BOTS_QUEUE])
        os.kill(bots_worker, signal.SIGKILL)
        # Its registration lingers until its key expires; a new process takes the queue.
        wait_until(
            lambda: len(serving()[BOTS_QUEUE] - {bots_worker}) == 2,
            "the bots worker's restart",
            deployment,
        )
        children = {pid for group in serving().values() for pid in group} - {bots_worker}
        assert len(children) == 6
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=60) == 0
        for pid in children:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
        output = (deployment.directory / "supervisor.log").read_text()
        assert "a process per queue group" in output, output
