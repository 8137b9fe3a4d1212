"""The fair order of bot turns and analyses (service.workers.fair), one suite run on both of its
implementations, in memory and in Redis: round-robin across owners and across each owner's
games, an owner's running jobs capped, a job waiting once; then the in-process pool that serves
the order, and what only Redis has (leases). Every order here is recorded, never timed."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis

from service.workers.fair import FairPool, FairQueue, RedisFairQueue, Share, Taken

#: A database of the session's test Redis that no other test uses; emptied for each test.
FAIR_DB = 5


class InMemory:
    """The memory queue behind the suite's small interface."""

    def __init__(self) -> None:
        self.queue = FairQueue()

    def push(self, job_id: str, owner: str, game: str) -> None:
        self.queue.push(job_id, Share(owner, game), job_id)

    def pop(self, per_owner: int = 100) -> Taken | None:
        return self.queue.pop(per_owner)

    def done(self, taken: Taken) -> None:
        self.queue.done(taken)


class InRedis:
    """The Redis queue behind the same interface, on a clock that only goes forward."""

    def __init__(self, client: redis.Redis) -> None:
        self.queue = RedisFairQueue(client, "bots")
        self.clock = itertools.count(1000)

    def push(self, job_id: str, owner: str, game: str) -> None:
        self.queue.push(job_id, Share(owner, game), job_id, float(next(self.clock)))

    def pop(self, per_owner: int = 100) -> Taken | None:
        return self.queue.pop(per_owner, float(next(self.clock)), lease=600.0)

    def done(self, taken: Taken) -> None:
        self.queue.done(taken)


@pytest.fixture(params=["memory", "redis"])
def fair(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemory()
        return
    url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
    client = redis.Redis.from_url(f"{url}/{FAIR_DB}")
    client.flushdb()
    yield InRedis(client)
    client.close()


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for the pool's threads to get there; fail past ``timeout`` (never a verdict on
    how long they took)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the pool never got there"
        time.sleep(0.01)


def taken_in_turn(fair: Any, per_owner: int = 100) -> list[str]:
    """Every job, taken one after another (each done before the next is taken)."""
    order = []
    while (taken := fair.pop(per_owner)) is not None:
        order.append(taken.job_id)
        fair.done(taken)
    return order


def test_an_owners_many_games_do_not_keep_another_owners_job_behind_them(fair: Any) -> None:
    for game in range(1, 6):
        fair.push(f"a{game}", "address:a", f"ga{game}")
    fair.push("b1", "address:b", "gb1")
    assert taken_in_turn(fair) == ["a1", "b1", "a2", "a3", "a4", "a5"]


def test_an_owner_served_since_comes_back_behind_one_that_was_not(fair: Any) -> None:
    for game in range(1, 4):
        fair.push(f"a{game}", "address:a", f"ga{game}")
    fair.push("b1", "address:b", "gb")
    order = []
    for _ in range(2):
        taken = fair.pop()
        order.append(taken.job_id)
        fair.done(taken)
    # b's game's next turn comes once its last one is played: b was served after a was.
    fair.push("b2", "address:b", "gb")
    assert order + taken_in_turn(fair) == ["a1", "b1", "a2", "b2", "a3"]


def test_an_owners_games_take_turns(fair: Any) -> None:
    fair.push("first-of-g1", "address:a", "g1")
    fair.push("second-of-g1", "address:a", "g1")
    fair.push("first-of-g2", "address:a", "g2")
    assert taken_in_turn(fair) == ["first-of-g1", "first-of-g2", "second-of-g1"]


def test_an_owner_at_its_limit_waits_while_another_owners_job_runs(fair: Any) -> None:
    fair.push("a1", "address:a", "g1")
    fair.push("a2", "address:a", "g2")
    fair.push("b1", "address:b", "g3")
    first = fair.pop(per_owner=1)
    assert first.job_id == "a1"
    second = fair.pop(per_owner=1)
    assert second.job_id == "b1"
    assert fair.pop(per_owner=1) is None  # a runs one already, b has nothing left
    fair.done(first)
    third = fair.pop(per_owner=1)
    assert third.job_id == "a2"
    assert (third.share.owner, third.share.group) == ("address:a", "g2")


def test_a_job_waiting_already_waits_once(fair: Any) -> None:
    fair.push("a1", "address:a", "g1")
    fair.push("a1", "address:a", "g1")
    assert taken_in_turn(fair) == ["a1"]


def test_a_job_taken_may_wait_again_while_it_runs(fair: Any) -> None:
    fair.push("a1", "address:a", "g1")
    running = fair.pop()
    fair.push("a1", "address:a", "g1")
    assert fair.pop(per_owner=1) is None  # its owner's one place is taken by its first run
    fair.done(running)
    assert taken_in_turn(fair, per_owner=1) == ["a1"]


def test_the_memory_queue_tells_a_waiting_jobs_place() -> None:
    queue = FairQueue()
    for job_id, owner, game in (("a1", "a", "g1"), ("a2", "a", "g2"), ("b1", "b", "g3")):
        queue.push(job_id, Share(owner, game), None)
    assert queue.order() == ["a1", "b1", "a2"]
    queue.pop(1)
    assert queue.order() == ["b1", "a2"]


def test_in_redis_a_dead_workers_job_frees_its_owners_place_when_its_lease_ends(
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
    client = redis.Redis.from_url(f"{url}/{FAIR_DB}")
    client.flushdb()
    queue = RedisFairQueue(client, "analyses")
    for job_id, game in (("a1", "g1"), ("a2", "g2")):
        queue.push(job_id, Share("address:a", game), {"name": job_id}, 1000.0)
    died = queue.pop(1, 1001.0, lease=10.0)
    assert died is not None and died.item == {"name": "a1"}
    assert queue.running("a1", 1005.0) and queue.owner_running("address:a", 1005.0) == 1
    assert queue.pop(1, 1005.0, lease=10.0) is None  # never given back: its worker died
    after = queue.pop(1, 1012.0, lease=10.0)
    assert after is not None and after.job_id == "a2"
    assert queue.owner_of("a2") is None and len(queue) == 0
    client.close()


def test_the_pool_runs_another_owners_job_next_while_one_owners_wait() -> None:
    """One thread: the first job holds it while the rest are queued; then the order is the
    fair one, not the order they came in."""
    pool = FairPool("bots", 1, lambda: 1)
    opened = threading.Event()
    ran: list[str] = []

    def job(name: str) -> Any:
        def run() -> None:
            if name == "a1":
                assert opened.wait(30)
            ran.append(name)

        return run

    pool.submit("a1", Share("address:a", "g1"), job("a1"))
    for game in range(2, 5):
        pool.submit(f"a{game}", Share("address:a", f"g{game}"), job(f"a{game}"))
    pool.submit("b1", Share("address:b", "gb"), job("b1"))
    assert pool.busy("a1") and pool.busy("b1")
    assert pool.position("b1") == 1 and pool.position("a2") == 2
    opened.set()
    wait_until(lambda: len(ran) == 5)
    assert pool.shutdown() == []
    assert ran == ["a1", "b1", "a2", "a3", "a4"]


def test_the_pool_runs_no_more_of_one_owners_jobs_at_once_than_its_share() -> None:
    pool = FairPool("bots", 2, lambda: 1)
    opened = threading.Event()
    running: list[str] = []
    lock = threading.Lock()
    second_started = threading.Event()

    def job(name: str) -> Any:
        def run() -> None:
            with lock:
                running.append(name)
            if name == "b1":
                second_started.set()
            assert opened.wait(30)

        return run

    for game in range(1, 4):
        pool.submit(f"a{game}", Share("address:a", f"g{game}"), job(f"a{game}"))
    pool.submit("b1", Share("address:b", "gb"), job("b1"))
    assert second_started.wait(30)
    with lock:
        assert running == ["a1", "b1"]  # a2 and a3 wait: a has one running
    opened.set()
    wait_until(lambda: len(running) == 4)
    assert pool.shutdown() == []
    assert running[2:] == ["a2", "a3"]
