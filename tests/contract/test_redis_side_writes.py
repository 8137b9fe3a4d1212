"""The Redis store's side writes (``append(..., then=commands)``): run in the append's own
script after the events, only when they were written, with their guards; never on a cluster.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from events.envelope import Envelope
from events.redis_store import (
    REPLY_EXISTS,
    SKIP_IF_FIELD_IN,
    SKIP_UNLESS_EXISTS,
    SKIP_UNLESS_FIELD_BELOW,
    ZADD_SCORED_BY,
    RedisEventStore,
)
from events.store import ConcurrencyConflict
from tests.contract.conftest import Backend, redis_cluster_url
from tests.contract.test_store_contract import step


def test_side_writes_are_made_with_a_successful_append(redis_store: RedisEventStore) -> None:
    redis_store.append("g", [step(1)], 0, then=[("RPUSH", "side", "first"), ("SET", "k", "v")])
    assert redis_store.client.lrange("side", 0, -1) == ["first"]
    assert redis_store.client.get("k") == "v"
    assert redis_store.version("g") == 1


def test_no_side_write_is_made_when_the_append_conflicts_or_replays(
    redis_store: RedisEventStore,
) -> None:
    redis_store.append("g", [step(1)], 0, idempotency_key="once")
    with pytest.raises(ConcurrencyConflict):
        redis_store.append("g", [step(1)], 0, then=[("RPUSH", "side", "conflict")])
    replayed = redis_store.append(
        "g", [step(1)], 0, idempotency_key="once", then=[("RPUSH", "side", "replay")]
    )
    assert replayed.replayed
    assert redis_store.client.exists("side") == 0


def test_guards_skip_the_commands_they_cover(redis_store: RedisEventStore) -> None:
    redis_store.client.hset("job", "status", "queued")
    redis_store.append(
        "g",
        [step(1)],
        0,
        then=[
            (SKIP_UNLESS_EXISTS, "missing", 2),
            (SKIP_IF_FIELD_IN, "job", "status", 1, "started"),
            ("RPUSH", "side", "skipped: no key"),
            (SKIP_IF_FIELD_IN, "job", "status", 1, "deferred", "queued"),
            ("RPUSH", "side", "skipped: queued"),
            (SKIP_UNLESS_EXISTS, "job", 1),
            ("RPUSH", "side", "made"),
        ],
    )
    assert redis_store.client.lrange("side", 0, -1) == ["made"]


def test_a_guard_skips_unless_a_field_holds_a_number_below_a_bound(
    redis_store: RedisEventStore,
) -> None:
    redis_store.client.hset("versions", mapping={"a": 3, "b": 7})
    redis_store.append(
        "g",
        [step(1)],
        0,
        then=[
            (SKIP_UNLESS_FIELD_BELOW, "versions", "a", 5, 1),
            ("RPUSH", "side", "a below 5"),
            (SKIP_UNLESS_FIELD_BELOW, "versions", "b", 7, 1),
            ("RPUSH", "side", "skipped: b is 7"),
            (SKIP_UNLESS_FIELD_BELOW, "versions", "missing", 100, 2),
            ("RPUSH", "side", "skipped: no field"),
            ("RPUSH", "side", "skipped too"),
            ("RPUSH", "side", "made"),
        ],
    )
    assert redis_store.client.lrange("side", 0, -1) == ["a below 5", "made"]


def test_a_member_may_be_scored_by_a_hash_field(redis_store: RedisEventStore) -> None:
    redis_store.client.hset("orders", "game", 42)
    redis_store.append(
        "g",
        [step(1)],
        0,
        then=[
            (ZADD_SCORED_BY, "set", "orders", "game", "game"),
            (ZADD_SCORED_BY, "set", "orders", "unknown", "unknown"),
        ],
    )
    assert redis_store.client.zrange("set", 0, -1, withscores=True) == [("game", 42.0)]


def test_side_writes_may_be_made_of_the_sealed_envelopes(redis_store: RedisEventStore) -> None:
    seen: list[list[Envelope]] = []

    def writes(envelopes: list[Envelope]) -> list[tuple[str, ...]]:
        seen.append(envelopes)
        return [("SET", "at", envelopes[-1]["recorded_at"])]

    result = redis_store.append("g", [step(1), step(2)], 0, then=writes)
    assert seen == [result.envelopes]
    assert redis_store.client.get("at") == redis_store.read("g")[-1]["recorded_at"]
    with pytest.raises(ConcurrencyConflict):
        redis_store.append("g", [step(3)], 0, then=lambda _: [("SET", "at", "conflict")])
    assert redis_store.client.get("at") != "conflict"


def test_side_writes_may_ask_whether_keys_exist(redis_store: RedisEventStore) -> None:
    redis_store.client.set("here", "1")
    result = redis_store.append(
        "g", [step(1)], 0, then=[(REPLY_EXISTS, "here"), (REPLY_EXISTS, "missing")]
    )
    assert result.replies == (1, 0)
    assert redis_store.append("g", [step(2)], 1).replies == ()


def test_side_writes_may_select_another_database_without_moving_the_caller(
    redis_store: RedisEventStore,
) -> None:
    redis_store.append("g", [step(1)], 0, then=[("SELECT", 1), ("SET", "elsewhere", "1")])
    assert redis_store.client.exists("elsewhere") == 0
    assert redis_store.version("g") == 1  # this connection still reads its own database
    kwargs = redis_store.client.connection_pool.connection_kwargs
    with redis.Redis(host=kwargs["host"], port=kwargs["port"], db=1) as other:
        assert other.get("elsewhere") == b"1"


def test_a_cluster_store_refuses_side_writes(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    backend = Backend("redis-cluster", redis_cluster_url(request, tmp_path))
    store = backend.open()
    with pytest.raises(ValueError, match="single Redis server"):
        store.append("g", [step(1)], 0, then=[("SET", "k", "v")])  # type: ignore[call-arg]
    assert store.version("g") == 0
    backend.close_all()
