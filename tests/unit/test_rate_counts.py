"""Rate-limit counts kept per process and added up through Redis (service.http.rate_counts).

Two ``SyncedCounts`` stand for two API processes sharing one Redis; each syncs only when the
test says so, and the clock stands still in the middle of a window, so nothing here depends
on timing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from limits import parse
from limits.strategies import SlidingWindowCounterRateLimiter

from service.http.rate_counts import PREFIX, SyncedCounts

NOW = 1_800_000_030.5  # the middle of a minute


@pytest.fixture
def two_processes(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[SyncedCounts, SyncedCounts]]:
    url: str = request.getfixturevalue("redis_server_url")
    with redis.Redis.from_url(url) as client:
        client.flushall()  # only ever a server this test run started
    monkeypatch.setattr(time, "time", lambda: NOW)
    first = SyncedCounts("meeple+" + url, sync_interval=3600)
    second = SyncedCounts("meeple+" + url, sync_interval=3600)
    yield first, second
    first.close()
    second.close()


def test_each_process_counts_the_others_hits_once_synced(
    two_processes: tuple[SyncedCounts, SyncedCounts],
) -> None:
    first, second = (SlidingWindowCounterRateLimiter(counts) for counts in two_processes)
    five = parse("5/minute")
    assert all(first.hit(five, "token") for _ in range(3))
    assert second.hit(five, "token")  # the second process has not heard of the key yet
    for counts in (*two_processes, *two_processes):
        counts.sync()
    assert second.hit(five, "token")  # 3 + 1 + 1
    assert not second.hit(five, "token")
    two_processes[1].sync()
    two_processes[0].sync()
    assert not first.hit(five, "token")
    assert first.get_window_stats(five, "token").remaining == 0


def test_a_failed_sync_keeps_the_hits_for_the_next(
    two_processes: tuple[SyncedCounts, SyncedCounts], monkeypatch: pytest.MonkeyPatch
) -> None:
    first_counts, second_counts = two_processes
    first = SlidingWindowCounterRateLimiter(first_counts)
    second = SlidingWindowCounterRateLimiter(second_counts)
    two = parse("2/minute")
    assert first.hit(two, "token")
    assert second.hit(two, "token")
    with monkeypatch.context() as patch:
        patch.setattr(first_counts.redis, "pipeline", broken_pipeline)
        with pytest.raises(redis.ConnectionError):
            first_counts.sync()
    first_counts.sync()
    second_counts.sync()
    assert not second.hit(two, "token")  # the first's hit arrived after all
    shared = first_counts.redis
    assert sum(int(shared.get(key) or 0) for key in shared.scan_iter(f"{PREFIX}*")) == 2


def broken_pipeline(*args: object, **kwargs: object) -> object:
    raise redis.ConnectionError("Redis is out of reach")
