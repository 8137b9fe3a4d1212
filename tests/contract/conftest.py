"""The backends the contract suite runs on: each test gets a fresh, empty store.

A ``Backend`` opens new store objects on the same data, so a test can "reconnect".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from events.config import open_store
from events.redis_store import RedisEventStore
from events.store import EventStore
from tests.redis_servers import RedisCluster


@dataclass
class Backend:
    """One store's data, opened as many times as a test likes (every object is closed after)."""

    name: str
    url: str
    opened: list[EventStore] = field(default_factory=list)

    def open(self) -> EventStore:
        store = open_store(self.url)
        self.opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self.opened:
            store.close()


def sqlite_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'events.db'}"


def redis_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    url: str = request.getfixturevalue("redis_server_url")
    # Only ever a server this test run started (tests/redis_servers.py).
    with redis.Redis.from_url(url) as client:
        client.flushall()
    return url


def redis_cluster_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    cluster: RedisCluster = request.getfixturevalue("redis_cluster")
    cluster.flush()
    return cluster.url


BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], str]] = {
    "sqlite": sqlite_url,
    "redis": redis_url,
    "redis-cluster": redis_cluster_url,
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    chosen = Backend(request.param, BACKENDS[request.param](request, tmp_path))
    yield chosen
    chosen.close_all()


@pytest.fixture
def store(backend: Backend) -> EventStore:
    return backend.open()


@pytest.fixture
def redis_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisEventStore]:
    """A fresh Redis event store on a single server (its own client, closed after)."""
    backend = Backend("redis", redis_url(request, tmp_path))
    store = backend.open()
    assert isinstance(store, RedisEventStore)
    yield store
    backend.close_all()
