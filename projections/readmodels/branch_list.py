"""Where each game's branches are listed: a read model kept beside the event store (a small
SQLite table, or a list per source game in Redis), not found by scanning every stream."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from events.sqlite_pool import SQLitePool


class BranchList(ABC):
    """Each game's branches, kept beside the store (not found by scanning every stream)."""

    @abstractmethod
    def add(self, source: str, entry: dict[str, Any]) -> None: ...

    @abstractmethod
    def list(self, source: str) -> list[dict[str, Any]]: ...


class SQLiteBranchList(BranchList):
    """A small table in its own SQLite file beside the event store's."""

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self.path = self._pool.path
        self._pool.create(
            "CREATE TABLE IF NOT EXISTS branches (ord INTEGER PRIMARY KEY AUTOINCREMENT,"
            " source TEXT NOT NULL, entry TEXT NOT NULL);"
            "CREATE INDEX IF NOT EXISTS branches_by_source ON branches (source, ord)"
        )

    def add(self, source: str, entry: dict[str, Any]) -> None:
        with self._pool.transaction() as connection:
            connection.execute(
                "INSERT INTO branches (source, entry) VALUES (?, ?)", (source, json.dumps(entry))
            )

    def list(self, source: str) -> list[dict[str, Any]]:
        rows = self._pool.query(
            "SELECT entry FROM branches WHERE source = ? ORDER BY ord", (source,)
        )
        return [json.loads(row[0]) for row in rows]


class RedisBranchList(BranchList):
    """A list per source game, in the source's own hash slot on a Redis Cluster."""

    def __init__(self, client: Any, prefix: str = "meeple") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str) -> RedisBranchList:
        """Any URL ``events.redis_clients`` opens (a server, a Sentinel service, a cluster)."""
        from events.redis_clients import redis_client

        return cls(redis_client(url, decode_responses=True))

    def _key(self, source: str) -> str:
        return f"{self.prefix}:{{{source}}}:branches"

    def add(self, source: str, entry: dict[str, Any]) -> None:
        self.client.rpush(self._key(source), json.dumps(entry))

    def list(self, source: str) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.client.lrange(self._key(source), 0, -1)]
