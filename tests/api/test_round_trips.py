"""One durable round trip per action on Redis (docs/operations.md, "Speed"): the append, the
head hash, the announcement to live streams, and what the action makes due (the automatic
step's job, its due mark, webhook notices, read-model catch-up) go in one script call.

Round trips are counted where redis-py sends: every command or pipeline or script call is
one ``send_packed_command`` on a connection. The store and the queues are two databases of
one server, as compose.yaml deploys them; rate limits are off (they have their own count).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient
from redis.connection import AbstractConnection

from service.app import create_app
from service.application import commands
from service.application.job_state import RedisJobState
from service.bootstrap import Services, bootstrap
from service.config import load_config
from service.workers import jobs as jobs_module
from service.workers.jobs import (
    HEARTBEAT_SLACK,
    JOB_FUNCTIONS,
    STEPS_QUEUE,
    SUSPENSION_CHECK_EVERY,
    RQJobs,
    system_step,
    system_step_key,
    worker_class,
)
from tests.api.conftest import ADMIN_KEY, bearer, new_game


@pytest.fixture
def redis_services(request: pytest.FixtureRequest) -> Iterator[Services]:
    url: str = request.getfixturevalue("redis_server_url")
    with redis.Redis.from_url(url) as client:
        client.flushall()  # only ever a server this test run started (tests/redis_servers.py)
    config = load_config(
        {},
        store_url=url,
        redis_url=url.rsplit("/", 1)[0] + "/1",
        admin_key=ADMIN_KEY,
        rate_limits=False,
    )
    built = bootstrap(config)
    yield built
    built.close()


@contextmanager
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """The commands this thread sends to Redis inside the block, one entry per round trip."""
    sent: list[Any] = []
    me = threading.get_ident()
    original = AbstractConnection.send_packed_command

    def counting(self: AbstractConnection, command: Any, check_health: bool = True) -> None:
        if threading.get_ident() == me:
            sent.append(command)
        original(self, command, check_health)

    with monkeypatch.context() as patch:
        patch.setattr(AbstractConnection, "send_packed_command", counting)
        yield sent


def play(client: FlaskClient, game: dict[str, Any], seat: int, action: dict[str, Any]) -> Any:
    token = game["seats"][seat]["token"]
    response = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))
    assert response.status_code == 201, response.json
    return response


def game_awaiting_reveal(client: FlaskClient) -> dict[str, Any]:
    """A new game after both bids: its automatic reveal is due after event 3."""
    game = new_game(client)
    play(client, game, 0, {"type": "bid", "amount": 1})
    play(client, game, 1, {"type": "bid", "amount": 2})
    return game


def hearing(services: Services) -> None:
    """Wait until this process hears the announcements (what lets it trust its cache)."""
    deadline = time.monotonic() + 10
    while not services.jobs.streams.listen():
        assert time.monotonic() < deadline, "never subscribed to the announcements"
        time.sleep(0.01)


def test_an_action_that_makes_a_step_due_is_one_round_trip(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = create_app(services=redis_services).test_client()
    hearing(redis_services)
    game = new_game(client)
    play(client, game, 0, {"type": "bid", "amount": 3})  # the scripts are loaded by now
    queues = redis.Redis.from_url(redis_services.config.redis_url or "")
    with round_trips(monkeypatch) as sent:
        play(client, game, 1, {"type": "bid", "amount": 5})
    assert len(sent) == 1, sent
    assert b"EVALSHA" in sent[0][0]
    # ... and that one call queued the automatic step, marked it due and announced the append.
    job_id = system_step_key(game["id"], 3)
    assert queues.lrange(f"rq:queue:{STEPS_QUEUE}", 0, -1) == [job_id.encode()]
    assert queues.hget(f"rq:job:{job_id}", "status") == b"queued"
    assert queues.zscore(RedisJobState.DUE_STEPS, f"{game['id']}:3") is not None
    queues.close()


def test_a_game_with_webhooks_has_its_notice_queued_after_the_append(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = create_app(services=redis_services).test_client()
    hearing(redis_services)
    game = new_game(client)
    hook = {
        "id": "hook-1",
        "game_id": game["id"],
        "url": "https://receiver.example/hook",
        "secret": "s",
        "events": ["action"],
        "owner": {"seat": 0},
        "created_at": 0.0,
        "cursor": 1,
    }
    assert redis_services.jobs.state.add_webhook(hook)
    queues = redis.Redis.from_url(redis_services.config.redis_url or "")
    with round_trips(monkeypatch) as sent:
        play(client, game, 0, {"type": "bid", "amount": 3})
    # The append's call says the game has webhooks; its notice is queued after it (RQ: a
    # look at the job, then its two pipelines) - only games with webhooks pay for it.
    assert len(sent) == 4, sent
    assert b"EVALSHA" in sent[0][0]
    assert queues.hget(f"rq:job:notify-{game['id']}", "status") == b"queued"
    queues.close()


def append_elsewhere(services: Services, game_id: str, seat: int, action: dict[str, Any]) -> None:
    """An action appended by another process (its own services), announced as every one is;
    and the automatic step it makes due, if any, as that process's worker would append it."""
    other = bootstrap(services.config)
    try:
        loaded = commands.load_game(other, game_id)
        result = commands.act(other, game_id, seat, action, loaded=loaded)
        if result.game.ruleset.status(result.game.state).get("awaiting_system"):
            assert system_step(other, game_id, result.version).appended
    finally:
        other.close()


def test_an_action_after_another_process_appended_reads_the_game_first(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = create_app(services=redis_services).test_client()
    hearing(redis_services)
    game = new_game(client)
    play(client, game, 0, {"type": "bid", "amount": 3})
    assert commands.load_for_action(redis_services, game["id"])[1] is False  # trusted
    append_elsewhere(redis_services, game["id"], 1, {"type": "bid", "amount": 5})
    deadline = time.monotonic() + 10
    while redis_services.jobs.streams.is_current(game["id"], 2):
        assert time.monotonic() < deadline, "the announcement never came"
        time.sleep(0.01)
    with round_trips(monkeypatch) as sent:
        response = play(client, game, 0, {"type": "draw"})
    assert response.json["version"] == 5
    assert len(sent) == 2, sent  # the new events, then the append's one call
    assert b"XRANGE" in sent[0][0] and b"EVALSHA" in sent[1][0]


def test_a_refusal_decided_on_a_cache_left_behind_is_checked_on_the_stored_game(
    redis_services: Services,
) -> None:
    client = create_app(services=redis_services).test_client()
    hearing(redis_services)
    game = new_game(client)
    play(client, game, 0, {"type": "bid", "amount": 3})
    stale = redis_services.folder.cached(game["id"])
    assert stale is not None and stale.version == 2
    append_elsewhere(redis_services, game["id"], 1, {"type": "bid", "amount": 5})
    # On the cache the bids are not in yet and drawing is refused (phase_mismatch); in the
    # store they are revealed and it is seat 0's turn. Even taken as current, the cache is
    # not believed when it refuses.
    result = commands.act(
        redis_services, game["id"], 0, {"type": "draw"}, loaded=stale, checked=False
    )
    assert result.version == 5
    assert [e["type"] for e in redis_services.store.read(game["id"])][-2:] == ["system", "action"]


def test_steps_that_follow_one_another_are_one_job_on_redis(redis_services: Services) -> None:
    """A ``system_step`` run appends the steps that follow its own (``jobs.STEPS_PER_JOB``):
    each is marked due in its append's script, so the sweep has it if the run dies, but none
    is queued as an RQ job of its own."""
    client = create_app(services=redis_services).test_client()
    game = new_game(client, "impression")
    queues = redis.Redis.from_url(redis_services.config.redis_url or "")
    chained = 0
    for _ in range(400):
        loaded = commands.load_game(redis_services, game["id"])
        status = loaded.ruleset.status(loaded.state)
        if status["awaiting_system"]:
            queues.delete(f"rq:queue:{STEPS_QUEUE}")  # the job the last action queued
            outcome = system_step(redis_services, game["id"], loaded.version)
            taken = outcome.version - loaded.version
            chained = max(chained, taken)
            assert outcome.appended and taken >= 1
            assert queues.llen(f"rq:queue:{STEPS_QUEUE}") == 0
            assert queues.zcard(RedisJobState.DUE_STEPS) == 0
            if chained >= 2:
                break
            continue
        seat = status["to_act"][0]
        action = loaded.ruleset.legal_actions(loaded.state, seat)[0]
        play(client, game, seat, action)
    assert chained >= 2, "no two automatic steps in a row: the test proves nothing"
    queues.close()


def test_only_the_api_follows_the_announcements(redis_services: Services) -> None:
    """A worker (services without the app) never asks whether its cache is current, so it
    does not hear every append of every game; the API does, from its start."""
    worker = bootstrap(redis_services.config)
    try:
        assert worker.jobs.streams._listener is None
        client = create_app(services=redis_services).test_client()
        assert redis_services.jobs.streams._listener is not None  # the app started it
        game = game_awaiting_reveal(client)
        # The worker appends the step (commands.append notes it): still no listener.
        assert system_step(worker, game["id"], 3).appended
        assert worker.jobs.streams._listener is None
        assert not worker.jobs.streams.is_current(game["id"], 4)
    finally:
        worker.close()


def test_an_automatic_step_clears_its_due_mark_in_its_append(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = create_app(services=redis_services).test_client()
    game = game_awaiting_reveal(client)
    queues = redis.Redis.from_url(redis_services.config.redis_url or "")
    assert queues.zscore(RedisJobState.DUE_STEPS, f"{game['id']}:3") is not None
    with round_trips(monkeypatch) as sent:
        assert system_step(redis_services, game["id"], 3).appended
    names = [bytes(command[0]).split(b"\r\n")[2] for command in sent]
    assert b"ZREM" not in names, "the due mark was cleared by a round trip of its own"
    # Whether anything followed the cached game, then the append with all it writes.
    assert names == [b"XRANGE", b"EVALSHA"]
    assert queues.zscore(RedisJobState.DUE_STEPS, f"{game['id']}:3") is None
    queues.close()


def test_a_workers_heartbeat_is_one_round_trip(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = redis_services.jobs
    worker = worker_class()([jobs.queues["steps"]], connection=jobs.connection)
    with round_trips(monkeypatch) as sent:
        worker.heartbeat()
    assert len(sent) == 1, sent
    assert jobs.connection.hget(worker.key, "last_heartbeat") is not None
    assert jobs.connection.ttl(worker.key) > 0


def test_a_busy_worker_sends_a_heartbeat_only_when_its_key_would_expire_too_soon(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RQ asks for three heartbeats a job; the worker's key lives minutes ahead, so one sent
    a moment ago already keeps it alive as long as asked, less ``HEARTBEAT_SLACK``."""
    jobs = redis_services.jobs
    worker = worker_class()([jobs.queues["steps"]], connection=jobs.connection)
    clock = [1000.0]
    worker.clock = lambda: clock[0]
    with round_trips(monkeypatch) as sent:
        worker.heartbeat()  # the first: sent
        worker.heartbeat()
        clock[0] += HEARTBEAT_SLACK - 1
        worker.heartbeat()  # the key expires HEARTBEAT_SLACK - 1 seconds sooner than asked
        worker.heartbeat(timeout=60)  # a shorter expiry than the key has: nothing to do
    assert len(sent) == 1, sent
    with round_trips(monkeypatch) as sent:
        clock[0] += 2
        worker.heartbeat()  # now it would expire more than the slack too soon: sent
        worker.heartbeat(timeout=worker.worker_ttl + 600)  # asked for longer: sent
    assert len(sent) == 2, sent
    assert jobs.connection.ttl(worker.key) > worker.worker_ttl + 500


def test_a_worker_asks_whether_it_is_suspended_at_most_once_a_second(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rq.exceptions import StopRequested
    from rq.suspension import resume, suspend

    jobs = redis_services.jobs
    worker = worker_class()([jobs.queues["steps"]], connection=jobs.connection)
    clock = [1000.0]
    worker.clock = lambda: clock[0]
    with round_trips(monkeypatch) as sent:
        worker.check_for_suspension(burst=True)
        worker.check_for_suspension(burst=True)
    assert len(sent) == 1, sent
    suspend(jobs.connection)
    try:
        clock[0] += SUSPENSION_CHECK_EVERY / 2
        worker.check_for_suspension(burst=True)  # not asked again yet
        clock[0] += SUSPENSION_CHECK_EVERY / 2
        with pytest.raises(StopRequested):  # a burst worker stops when suspended
            worker.check_for_suspension(burst=True)
    finally:
        resume(jobs.connection)


def test_a_worker_writes_a_state_it_already_wrote_no_more(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = redis_services.jobs
    worker = worker_class()([jobs.queues["steps"]], connection=jobs.connection)
    worker.register_birth()
    with round_trips(monkeypatch) as sent:
        worker.set_state("idle")
        worker.set_state("idle")
        worker.set_state("busy")
    assert len(sent) == 2, sent
    assert jobs.connection.hget(worker.key, "state") == b"busy"
    worker.register_death()


def test_a_job_costs_its_worker_nine_round_trips_of_its_own(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RQ's bookkeeping of a job, each write behind the AOF's fsync: the dequeue (2), the
    job's start (2 transactions, and the key made persistent), its success (a watched
    transaction: 3), the worker's state back to idle. RQ 2.12 as it is sent 14: three
    heartbeats, the job's heartbeat again as it ends, the suspension asked (StepWorker)."""
    client = create_app(services=redis_services).test_client()
    jobs = redis_services.jobs
    ran: list[tuple[Any, ...]] = []
    # The job itself does nothing here: only the worker's own round trips are counted.
    monkeypatch.setitem(JOB_FUNCTIONS, "system_step", lambda services, *args: ran.append(args))
    # The services this process's jobs run with (``meeple worker`` installs its own).
    monkeypatch.setattr(jobs_module, "_process_services", redis_services)
    worker = worker_class()([jobs.queues["steps"]], connection=jobs.connection)
    # Time stands still: past its first, no heartbeat or suspension check falls due however
    # long the bursts take on a busy machine.
    worker.clock = lambda: 1000.0
    # RQ's command channel (``rq:pubsub:<worker>``) is opened and closed once per ``work()``,
    # not per job, by a thread that a busy machine may leave running past RQ's one-second
    # join: the next call then opens a new connection (five more round trips) and the count
    # depends on the machine's load. Without it, every burst counts the same commands.
    monkeypatch.setattr(worker, "subscribe", lambda: None)

    def burst(steps: int) -> int:
        for _ in range(steps):  # one step job each
            game_awaiting_reveal(client)
        assert jobs.queues["steps"].count == steps
        with round_trips(monkeypatch) as sent:
            worker.work(burst=True)
        return len(sent)

    burst(1)  # its first start cleans the registries and opens connections: not counted
    one, four = burst(1), burst(4)
    assert len(ran) == 6
    assert (four - one) / 3 == 9


def test_one_worker_at_a_time_catches_the_game_index_up(redis_services: Services) -> None:
    """Each worker folds what it catches up on its own cache: one at a time does it, the one
    that did last, until it stops (a worker that died); then another takes over."""
    client = create_app(services=redis_services).test_client()
    one, two = bootstrap(redis_services.config), bootstrap(redis_services.config)
    try:
        first = new_game(client)
        assert jobs_module.catch_up(one) == 1
        second = new_game(client)
        assert jobs_module.catch_up(two) == 0, "the other worker caught up too"
        assert jobs_module.catch_up(one) == 1
        listed = client.get("/games", headers=bearer(ADMIN_KEY)).json["games"]
        assert [game["id"] for game in listed] == [second["id"], first["id"]]
        # The first worker stops: its turn runs out, and the other's catch-up takes over.
        queues = redis.Redis.from_url(redis_services.config.redis_url or "")
        assert 0 < queues.pttl(RQJobs.CATCH_UP_TURN_KEY) <= RQJobs.CATCH_UP_TURN * 1000
        queues.delete(RQJobs.CATCH_UP_TURN_KEY)
        third = new_game(client)
        assert jobs_module.catch_up(two) == 1
        assert jobs_module.catch_up(one) == 0
        listed = client.get("/games", headers=bearer(ADMIN_KEY)).json["games"]
        assert listed[0]["id"] == third["id"]
        queues.close()
    finally:
        one.close()
        two.close()


def test_a_step_writes_its_games_row_in_the_index_with_its_append(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process that appends a step holds the game folded: the game's row goes in the
    append's script (no round trip of its own), as a catch-up would write it, so the catch-up
    folds nothing again; a game not indexed yet is left to the catch-up."""
    client = create_app(services=redis_services).test_client()
    index = redis_services.game_index
    game = new_game(client)
    play(client, game, 0, {"type": "bid", "amount": 1})
    assert index.get(game["id"]) is None, "a game not indexed yet got a row from its append"
    assert commands.catch_up(redis_services) == 2
    with round_trips(monkeypatch) as sent:
        play(client, game, 1, {"type": "bid", "amount": 2})
    assert len(sent) == 1, "the row cost a round trip of its own"
    row = index.get(game["id"])
    assert row is not None and row.version == 3
    assert row.updated_at == redis_services.store.read(game["id"])[-1]["recorded_at"]
    assert row.awaiting_system == "reveal_bids" and row.to_act == []
    # The worker's step writes the row too.
    assert system_step(redis_services, game["id"], 3).appended
    row = index.get(game["id"])
    assert row is not None and row.version == 4 and row.awaiting_system is None
    # The catch-up reads the two events and folds neither again.
    folded: list[str] = []
    through = redis_services.folder.load_through
    monkeypatch.setattr(
        redis_services.folder,
        "load_through",
        lambda game_id, envelopes: folded.append(game_id) or through(game_id, envelopes),
    )
    assert commands.catch_up(redis_services) == 2
    assert folded == []
    assert index.get(game["id"]) == row
    # The same row as a catch-up from scratch writes.
    store = redis.Redis.from_url(redis_services.config.store_url)
    store.delete(*store.keys("meeple:{index}:*"))
    store.close()
    assert commands.catch_up(redis_services) == 4
    assert folded == [game["id"]]
    assert index.get(game["id"]) == row
