"""The rate limits' counts (service.http.rate_counts): one suite that the counts in Redis and
the counts in the process both pass, and what only the counts in the process must also do
(stay within their number of keys, forget what expired).

A count that must refuse has a window of a minute or an hour, so no window ends during a test
however slow the machine; one that must have expired has a window of 0.2 s (or 1 s) and is
asked again after 0.5 s (1.3 s) on the same clock: Redis's, or the process's monotonic one.
The counts in the process are otherwise tested on a clock the test moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from service.http.rate_counts import Count, Counts, MemoryCounts, RedisCounts
from tests.redis_servers import RedisServer

HOUR = 3600.0


def count(key: str, amount: int, window: float = HOUR) -> Count:
    return Count(f"test-rate:{key}", amount, window)


class CountsContract:
    """What any store of counts does; a subclass gives ``counts``."""

    @pytest.fixture
    def counts(self) -> Iterator[Counts]:
        raise NotImplementedError

    def test_a_count_lets_its_amount_through_then_refuses(self, counts: Counts) -> None:
        three = [count("ann", 3)]
        remaining = [counts.hit(three).remaining for _ in range(3)]
        assert remaining == [2, 1, 0]
        refused = counts.hit(three)
        assert refused.over == 0 and refused.remaining == 0
        assert HOUR - 60 < refused.reset_after <= HOUR  # when the first leaves the window
        assert counts.hit([count("bob", 3)]).over is None  # another key has its own

    def test_counts_are_kept_in_order_until_one_is_full(self, counts: Counts) -> None:
        minute, hour = count("ann-minute", 5, 60), count("ann-hour", 2)
        assert counts.hit([minute, hour]).remaining == 4  # the first one's
        assert counts.hit([minute, hour]).over is None
        refused = counts.hit([minute, hour])
        assert refused.over == 1 and refused.remaining == 0
        # The refused request was kept by the count before the full one only.
        assert counts.hit([minute]).remaining == 1

    def test_invalid_tokens_lock_their_owner_out_once_a_count_is_full(self, counts: Counts) -> None:
        minute, hour = count("ann-minute", 3, 60), count("ann-hour", 30)
        assert counts.fail("test-rate:ann-locked", [minute, hour]) is None
        assert counts.fail("test-rate:ann-locked", [minute, hour]) is None
        locked = counts.fail("test-rate:ann-locked", [minute, hour])
        assert locked is not None and 50 < locked <= 60  # the window of the count that filled
        again = counts.fail("test-rate:ann-locked", [minute, hour])
        assert again is not None and again <= locked
        assert counts.fail("test-rate:bob-locked", [count("bob-minute", 3, 60)]) is None

    def test_a_lockout_ends_with_its_window(self, counts: Counts) -> None:
        one = [count("ann", 1, 0.2)]
        assert counts.fail("test-rate:ann-locked", one) == pytest.approx(0.2)
        time.sleep(0.5)
        # Over: the next invalid token fills the count afresh, and locks out anew.
        assert counts.fail("test-rate:ann-locked", one) == pytest.approx(0.2)


class TestCountsInRedis(CountsContract):
    @pytest.fixture
    def counts(self, redis_server_url: str) -> Iterator[Counts]:
        with redis.Redis.from_url(redis_server_url) as client:
            client.flushall()  # only ever a server this test run started
        store = RedisCounts(redis_server_url)
        yield store
        store.close()

    def test_each_count_is_a_key_that_lives_as_long_as_its_window(self, counts: Counts) -> None:
        assert isinstance(counts, RedisCounts)
        counts.hit([count("ann-hour", 5), count("ann-second", 5, 1)])
        shared = counts.redis
        assert HOUR * 1000 - 60_000 < shared.pttl("test-rate:ann-hour") <= HOUR * 1000
        second = shared.pttl("test-rate:ann-second")
        assert 0 < second <= 1000 or second == -2  # -2: gone already (a slow machine)
        time.sleep(1.3)
        assert not shared.exists("test-rate:ann-second")
        assert shared.llen("test-rate:ann-hour") == 1

    def test_a_refused_request_is_not_kept(self, counts: Counts) -> None:
        assert isinstance(counts, RedisCounts)
        two = [count("ann", 2)]
        for _ in range(10):
            counts.hit(two)
        assert counts.redis.llen("test-rate:ann") == 2  # a log never outgrows its limit

    def test_two_processes_share_one_exact_count(
        self, counts: Counts, redis_server_url: str
    ) -> None:
        other = RedisCounts(redis_server_url)
        try:
            five = [count("ann", 5)]
            kept = [store.hit(five).over is None for _ in range(4) for store in (counts, other)]
            assert kept.count(True) == 5
        finally:
            other.close()


def test_counts_in_redis_write_nothing_to_its_append_only_file(
    make_redis_server: Callable[..., RedisServer], tmp_path: Path
) -> None:
    server = make_redis_server(tmp_path, "--appendonly", "yes", "--appendfsync", "always")
    counts = RedisCounts(server.url)
    try:
        written = counts.redis.info("persistence")["aof_current_size"]
        for _ in range(50):
            counts.hit([count("ann", 100)])
        counts.fail("test-rate:ann-locked", [count("ann-invalid", 3)])
        assert counts.redis.llen("test-rate:ann") == 50
        # A count needs no durability, and an fsync would cost the request more than it.
        assert counts.redis.info("persistence")["aof_current_size"] == written
    finally:
        counts.close()


class TestCountsInTheProcess(CountsContract):
    @pytest.fixture
    def counts(self) -> Iterator[Counts]:
        yield MemoryCounts()

    def test_a_refused_request_is_not_kept(self) -> None:
        now = [1000.0]
        counts = MemoryCounts(clock=lambda: now[0])
        one = [count("ann", 1, 10)]
        assert counts.hit(one).over is None
        for _ in range(5):
            now[0] += 1
            assert counts.hit(one).over == 0
        now[0] += 5.5  # the first has left the window; the refused ones were never in it
        assert counts.hit(one).over is None

    def test_at_most_the_maximum_of_keys_are_kept_the_longest_unused_forgotten(self) -> None:
        now = [1000.0]
        counts = MemoryCounts(max_keys=3, clock=lambda: now[0])
        for name in ("ann", "bob", "cid", "dee", "eve"):
            now[0] += 1
            counts.hit([count(name, 2)])
        assert len(counts) == 3
        assert counts.hit([count("eve", 2)]).remaining == 0  # kept
        assert counts.hit([count("ann", 2)]).remaining == 1  # forgotten, counted afresh

    def test_a_key_is_forgotten_once_its_window_has_passed(self) -> None:
        now = [1000.0]
        counts = MemoryCounts(clock=lambda: now[0])
        counts.hit([count("ann-second", 20, 1), count("ann-minute", 20, 60)])
        counts.fail("test-rate:bob-locked", [count("bob", 1, 60)])
        assert len(counts) == 4  # three logs and a lock-out
        now[0] += 1.5
        assert len(counts) == 3
        now[0] += 60
        assert len(counts) == 0
