"""Analysis records: their ids, caps and statuses, and where they are kept (SQLite beside the
event store, or Redis with ``MEEPLE_REDIS_URL``); docs/analysis.md says what an analysis is.

Identical requests share one result: an analysis's id is a hash of its inputs (game, event,
seat, budget, seed), so asking again returns the same resource. The search's seed comes from
the request alone, never from the game's secret seed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis

from events.envelope import canonical_json
from events.redis_clients import redis_client
from events.sqlite_pool import SQLitePool
from projections.agents.analysis import search_seed as agents_search_seed
from service.application.job_state import job_state_location

log = logging.getLogger(__name__)

Record = dict[str, Any]

#: What an analysis may be doing; the first two are unfinished (counted under the caps).
STATUSES = ("queued", "running", "done", "cancelled", "failed")
ACTIVE = ("queued", "running")
#: The seed of a request that names none.
DEFAULT_SEED = "0"
#: The playouts of a request that names none (``MEEPLE_ANALYSIS_PLAYOUTS``'s default, and
#: ``meeple analyze``'s).
DEFAULT_PLAYOUTS = 200
#: How often a running analysis writes its progress down and asks whether it was cancelled.
PROGRESS_EVERY = 0.5


@dataclass(frozen=True)
class Caps:
    """How many unfinished analyses one seat of one game (``per_game``), one requester (a
    token), one owner (a client address: service.application.owners) and the service may
    have."""

    per_game: int
    per_requester: int
    total: int
    per_owner: int | None = None


def analysis_id(game_id: str, at: int, seat: int, playouts: int, seconds: float | None,
                seed: str) -> str:  # fmt: skip
    """The id of the analysis with these inputs: identical requests share it (and its result)."""
    inputs = {"game": game_id, "at": at, "seat": seat, "playouts": playouts}
    inputs |= {"seconds": seconds, "seed": seed}
    return hashlib.sha256(b"meeple analysis\0" + canonical_json(inputs)).hexdigest()[:32]


def search_seed(record: Record) -> str:
    """The search's seed: the request's inputs alone (public), never the game's seed; the
    same as ``meeple analyze`` derives from the same ``--at``, ``--seat`` and ``--seed``."""
    return agents_search_seed(int(record["at"]), int(record["seat"]), str(record["seed"]))


# -- storage ---------------------------------------------------------------------------------


class AnalysisStore(ABC):
    """Analysis records (plain dicts, JSON on disk), safe from many threads and processes.

    ``change(analysis_id, decide)`` is the one way to write: atomically, ``decide(record,
    unfinished)`` sees the record (None when missing or expired) and the unfinished records
    of every game (for the caps), and returns the new record or None to leave it as it is.
    """

    @abstractmethod
    def get(self, analysis_id: str, now: float) -> Record | None:
        """The record, or None when there is none (or it expired)."""

    @abstractmethod
    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        """Apply ``decide`` atomically; the record as it stands afterwards."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


def unfinished_now(record: Record, now: float) -> bool:
    """Whether the record counts under the caps: queued or running, within its lease (a
    worker that died mid-analysis leaves it unfinished only until the lease ends)."""
    return record["status"] in ACTIVE and float(record["lease_until"]) > now


class SQLiteAnalysisStore(AnalysisStore):
    """Analyses in a table of the job state's SQLite file; expired rows are deleted as new
    analyses are asked for."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS analyses (
        id TEXT PRIMARY KEY,
        active INTEGER NOT NULL,
        expires_at REAL NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS analyses_active ON analyses (active);
    CREATE INDEX IF NOT EXISTS analyses_expiry ON analyses (expires_at);
    """

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self._pool.create(self.SCHEMA)

    def get(self, analysis_id: str, now: float) -> Record | None:
        rows = self._pool.query(
            "SELECT record FROM analyses WHERE id = ? AND expires_at > ?", (analysis_id, now)
        )
        return dict(json.loads(rows[0][0])) if rows else None

    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        # BEGIN IMMEDIATE: no other writer between the count under the caps and the write.
        with self._pool.transaction() as db:
            db.execute("DELETE FROM analyses WHERE expires_at <= ?", (now,))
            row = db.execute("SELECT record FROM analyses WHERE id = ?", (analysis_id,)).fetchone()
            record = None if row is None else dict(json.loads(row[0]))
            active = [
                json.loads(raw)
                for (raw,) in db.execute("SELECT record FROM analyses WHERE active = 1")
            ]
            changed = decide(record, [r for r in active if unfinished_now(r, now)])
            if changed is None:
                return record
            db.execute(
                "INSERT OR REPLACE INTO analyses (id, active, expires_at, record)"
                " VALUES (?, ?, ?, ?)",
                (
                    analysis_id,
                    int(changed["status"] in ACTIVE),
                    changed["expires_at"],
                    json.dumps(changed),
                ),
            )
            return changed

    def close(self) -> None:
        self._pool.close()


class RedisAnalysisStore(AnalysisStore):
    """Analyses in Redis: one string per record (expiring with it) and one hash of the
    unfinished ones, all under one hash tag so a transaction may touch them together."""

    ACTIVE_KEY = "meeple:{analyses}:active"

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    @classmethod
    def from_url(cls, url: str) -> RedisAnalysisStore:
        return cls(redis_client(url, decode_responses=True))

    @staticmethod
    def key(analysis_id: str) -> str:
        return f"meeple:{{analyses}}:analysis:{analysis_id}"

    def get(self, analysis_id: str, now: float) -> Record | None:
        raw = self.client.get(self.key(analysis_id))
        return None if raw is None else dict(json.loads(raw))

    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        key = self.key(analysis_id)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    # Watched: another change meanwhile fails the transaction; decide again.
                    pipe.watch(key, self.ACTIVE_KEY)
                    raw = pipe.get(key)
                    record = None if raw is None else dict(json.loads(raw))
                    active = [json.loads(value) for value in pipe.hvals(self.ACTIVE_KEY)]
                    stale = [r["id"] for r in active if not unfinished_now(r, now)]
                    changed = decide(record, [r for r in active if unfinished_now(r, now)])
                    pipe.multi()
                    if stale:
                        pipe.hdel(self.ACTIVE_KEY, *stale)
                    if changed is not None:
                        ttl = max(1, math.ceil(float(changed["expires_at"]) - now))
                        pipe.set(key, json.dumps(changed), ex=ttl)
                        if changed["status"] in ACTIVE:
                            pipe.hset(self.ACTIVE_KEY, analysis_id, json.dumps(changed))
                        else:
                            pipe.hdel(self.ACTIVE_KEY, analysis_id)
                    pipe.execute()
                    return changed if changed is not None else record
                except redis.WatchError:
                    continue

    def close(self) -> None:
        self.client.close()


def open_analysis_store(store_url: str, redis_url: str | None) -> AnalysisStore:
    """Where a deployment keeps its analyses: where it keeps its job state."""
    location = job_state_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        return SQLiteAnalysisStore(rest.removeprefix("/"))
    return RedisAnalysisStore.from_url(location)


# -- the live stream -----------------------------------------------------------------------------


def stream_note(record: Record) -> Record:
    """What an ``analysis`` message of the live stream carries (the record without its result:
    GET it once ``status`` says it is done), and the seat that may see it."""
    note = {
        "id": record["id"],
        "seat": record["seat"],
        "at": record["at"],
        "status": record["status"],
        "progress": record["progress"],
    }
    if record.get("kind") == "review":
        note["kind"] = "review"  # a ``review`` message, with the review's figures so far
        result = record.get("result") or {}
        note["accuracy"] = result.get("accuracy")
        note["marks"] = result.get("marks")
    return note


def now_text() -> str:
    """This moment as a record states it (UTC, to the second)."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
