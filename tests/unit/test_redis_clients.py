"""Redis URLs: one server, a Sentinel service, a cluster (events.redis_clients), and the
failover settings (service.config)."""

from __future__ import annotations

import pytest
import redis

from events.redis_clients import (
    RedisURLError,
    SentinelTarget,
    parse_sentinel_url,
    redis_client,
    same_place,
    with_database,
)
from service.config import ConfigError, load_config, store_options


def test_a_sentinel_url_names_its_sentinels_service_and_database() -> None:
    target = parse_sentinel_url("redis+sentinel://10.0.0.1:26379,10.0.0.2:26380/meeple/1")
    assert target == SentinelTarget((("10.0.0.1", 26379), ("10.0.0.2", 26380)), "meeple", 1)


def test_a_sentinel_url_without_a_database_uses_database_zero_and_keeps_its_credentials() -> None:
    target = parse_sentinel_url("redis+sentinel://app:s%40cret@sentinel:26379/main")
    assert (target.service_name, target.db) == ("main", 0)
    assert (target.username, target.password) == ("app", "s@cret")


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://sentinel:26379",  # no service
        "redis+sentinel://sentinel:26379/",  # no service
        "redis+sentinel://sentinel/meeple",  # no port
        "redis+sentinel://sentinel:port/meeple",
        "redis+sentinel://sentinel:70000/meeple",
        "redis+sentinel://sentinel:26379/meeple/one",
        "redis+sentinel://sentinel:26379/meeple/1/2",
        "redis+sentinel://:26379/meeple",
    ],
)
def test_a_sentinel_url_that_names_nothing_openable_is_refused(url: str) -> None:
    with pytest.raises(RedisURLError):
        parse_sentinel_url(url)


def test_a_refused_url_never_shows_its_password() -> None:
    with pytest.raises(RedisURLError) as refused:
        parse_sentinel_url("redis+sentinel://app:hunter2@sentinel:26379")
    assert "hunter2" not in str(refused.value)


def test_a_sentinel_client_follows_the_service_not_an_address() -> None:
    client = redis_client("redis+sentinel://127.0.0.1:1/meeple/2", decode_responses=True)
    assert isinstance(client, redis.Redis)
    pool = client.connection_pool
    assert (pool.service_name, pool.connection_kwargs["db"]) == ("meeple", 2)
    assert pool.connection_kwargs["decode_responses"] is True


def test_clients_of_one_sentinel_service_are_one_place_other_services_are_not() -> None:
    store = redis_client("redis+sentinel://127.0.0.1:1/meeple/0")
    queues = redis_client("redis+sentinel://127.0.0.1:1/meeple/1")
    other = redis_client("redis+sentinel://127.0.0.1:1/other/1")
    server = redis_client("redis://127.0.0.1:6390/1")
    assert same_place(store, queues)
    assert not same_place(store, other)
    assert not same_place(store, server)
    assert same_place(server, redis_client("redis://127.0.0.1:6390/0"))


def test_an_unknown_scheme_is_refused() -> None:
    with pytest.raises(RedisURLError):
        redis_client("http://127.0.0.1:6379")


def test_with_database_changes_only_the_database() -> None:
    assert with_database("redis://h:1/0", 3) == "redis://h:1/3"
    assert (
        with_database("redis+sentinel://a:1,b:2/meeple/0", 1) == "redis+sentinel://a:1,b:2/meeple/1"
    )
    assert with_database("redis+cluster://h:1", 1) == "redis+cluster://h:1"


def test_min_replicas_are_read_from_the_environment_and_passed_to_a_redis_store() -> None:
    config = load_config(
        {
            "MEEPLE_STORE_URL": "redis+sentinel://s:26379/meeple",
            "MEEPLE_REDIS_MIN_REPLICAS": "1",
            "MEEPLE_REDIS_REPLICA_TIMEOUT": "250",
        }
    )
    assert store_options(config) == {"min_replicas": 1, "replica_timeout": 250}
    assert store_options(load_config({"MEEPLE_STORE_URL": "redis://h:1/0"})) == {}


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"MEEPLE_REDIS_MIN_REPLICAS": "-1"}, "MEEPLE_REDIS_MIN_REPLICAS"),
        ({"MEEPLE_REDIS_REPLICA_TIMEOUT": "0"}, "MEEPLE_REDIS_REPLICA_TIMEOUT"),
        ({"MEEPLE_REDIS_MIN_REPLICAS": "one"}, "MEEPLE_REDIS_MIN_REPLICAS"),
    ],
)
def test_failover_settings_that_cannot_work_are_refused(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        load_config({"MEEPLE_STORE_URL": "redis://h:1/0", **env})


def test_min_replicas_on_the_sqlite_store_are_refused() -> None:
    with pytest.raises(ConfigError, match="needs a Redis event store"):
        load_config({"MEEPLE_REDIS_MIN_REPLICAS": "1"})


class _Node:
    """What ``RedisEventStore._waiting`` asks of a server: its version and its AOF."""

    def __init__(self, version: str, aof: int) -> None:
        self.answers = {"server": {"redis_version": version}, "persistence": {"aof_enabled": aof}}

    def info(self, section: str) -> dict[str, object]:
        return self.answers[section]


@pytest.mark.parametrize(
    ("version", "aof", "command"),
    [
        ("7.0.15", 1, ("WAIT", 1, 250)),
        ("7.2.4", 0, ("WAIT", 1, 250)),
        ("7.2.4", 1, ("WAITAOF", 0, 1, 250)),
        ("8.0.0", 1, ("WAITAOF", 0, 1, 250)),
    ],
)
def test_an_append_waits_for_replicas_on_disk_where_the_server_can_tell(
    version: str, aof: int, command: tuple[object, ...]
) -> None:
    from events.redis_store import RedisEventStore

    store = RedisEventStore(
        redis_client("redis://127.0.0.1:1/0"), min_replicas=1, replica_timeout=250
    )
    assert store._waiting(_Node(version, aof)) == command


def test_a_waitaof_reply_counts_its_replicas_not_the_primary() -> None:
    from events.redis_store import _confirmed

    assert _confirmed([1, 0]) == 0
    assert _confirmed([1, 2]) == 2
    assert _confirmed(1) == 1
