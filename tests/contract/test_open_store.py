"""Opening stores from URLs, and what only the SQLite backend has to show."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from events.config import DEFAULT_STORE_URL, open_store
from events.envelope import NewEvent
from events.redis_store import RedisEventStore
from events.sqlite_pool import IDLE_CONNECTIONS
from events.sqlite_store import SQLiteEventStore
from events.store import StoreError
from tests.redis_servers import RedisCluster

EVENT = NewEvent(type="action", data={"action": {"type": "draw"}}, actor={"seat": 0})


def test_the_default_store_is_a_sqlite_file_under_var() -> None:
    assert DEFAULT_STORE_URL == "sqlite:///var/meeple.db"


def test_a_relative_sqlite_url_creates_its_directories_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    store = open_store("sqlite:///var/nested/meeple.db")
    store.close()

    assert isinstance(store, SQLiteEventStore)
    assert (tmp_path / "var" / "nested" / "meeple.db").is_file()


def test_an_absolute_sqlite_url_opens_that_file(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'abs.db'}")
    store.close()

    assert (tmp_path / "abs.db").is_file()


def test_redis_urls_open_the_redis_store(redis_server_url: str) -> None:
    store = open_store(redis_server_url)
    try:
        assert isinstance(store, RedisEventStore)
        assert store.ping()
    finally:
        store.close()


def test_a_cluster_url_opens_the_redis_store_on_a_cluster_client(
    redis_cluster: RedisCluster,
) -> None:
    store = open_store(redis_cluster.url)
    try:
        assert isinstance(store, RedisEventStore)
        assert type(store.client).__name__ == "RedisCluster"
        assert store.ping()
    finally:
        store.close()


@pytest.mark.parametrize("url", ["postgres://db/events", "var/meeple.db", "sqlite:///"])
def test_an_unusable_store_url_is_refused_with_a_store_error(url: str) -> None:
    with pytest.raises(StoreError):
        open_store(url)


def test_a_closed_sqlite_store_refuses_to_work(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    store.close()

    with pytest.raises(StoreError, match="closed"):
        store.version("g1")
    assert not store.ping()


def test_short_lived_threads_do_not_each_leave_a_sqlite_connection_open(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    store.append("g1", [EVENT], expected_version=0)
    before = len(os.listdir("/proc/self/fd"))

    for _ in range(60):
        thread = threading.Thread(target=store.read, args=("g1",))
        thread.start()
        thread.join()

    # Each open connection holds the database and its WAL files open.
    assert len(os.listdir("/proc/self/fd")) - before <= 3 * IDLE_CONNECTIONS
    store.close()


def test_a_second_sqlite_store_object_sees_the_first_ones_appends(tmp_path: Path) -> None:
    first = SQLiteEventStore(tmp_path / "events.db")
    second = SQLiteEventStore(tmp_path / "events.db")
    try:
        first.append("g1", [EVENT], expected_version=0)
        second.append("g1", [EVENT], expected_version=1)

        assert first.version("g1") == 2
        assert [envelope["seq"] for envelope in first.read("g1")] == [1, 2]
    finally:
        first.close()
        second.close()


def test_the_feed_gathers_games_from_every_master_of_a_cluster(redis_cluster: RedisCluster) -> None:
    redis_cluster.flush()
    store = open_store(redis_cluster.url)
    assert isinstance(store, RedisEventStore)
    try:
        games = [f"spread-{number}" for number in range(12)]
        for game_id in games:
            store.append(game_id, [EVENT, EVENT], expected_version=0)
        masters = {
            store.client.get_node_from_key(f"meeple:{{{game_id}}}:events").name for game_id in games
        }

        page = store.read_feed(None, limit=100)

        assert len(masters) == 3
        assert sorted((e["game_id"], e["seq"]) for e in page.events) == sorted(
            (game_id, seq) for game_id in games for seq in (1, 2)
        )
    finally:
        store.close()
