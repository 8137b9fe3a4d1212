"""Storage quotas: how much of the store each owner's requests may fill (docs/security.md,
"What each owner may take").

Events are never deleted, so whoever can append can fill the store: a client that kept
within every rate limit once took Redis to its ``maxmemory`` in minutes, after which every
honest write was refused. Each owner (the client address a request comes from; the admin
key is exempt) may therefore append at most so many events and bytes a day (UTC) and in
all. What a request appends is charged to its owner after the append (``charge``, called
by ``commands.append`` while ``charged_to(owner)`` holds, which the HTTP layer sets for
each writing request); automatic steps and bot moves are charged to nobody: the rules bound
them by the players' own actions.

An owner past a quota is refused before the next write (``refusal``), from what this
process counted itself and last learned of the owner's counts in the ledger (added to it in
the background, twice a second: a request pays no round trip for its count), so an owner
passes a quota by at most what the other processes let through in that time. The counts
live where the job state lives (Redis shared by every process, or a SQLite file beside the
embedded store), a day's for two days and an owner's total for ``TOTAL_TTL`` after its last
write.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import redis

from events.redis_clients import redis_client
from events.sqlite_pool import SQLitePool
from events.store import StoreError

log = logging.getLogger(__name__)

#: Seconds an owner's total is kept after its last write (then it starts afresh).
TOTAL_TTL = 90 * 24 * 3600
#: Seconds a day's counts are kept (the day, and the next for late readers).
DAY_TTL = 2 * 24 * 3600
#: Owners whose counts each process remembers (the least recently charged are forgotten,
#: and learned again at their next charge).
REMEMBERED = 10_000
#: Seconds before an owner refused for its total is looked at again.
TOTAL_RECHECK = 3600

_owner: ContextVar[str | None] = ContextVar("meeple_storage_owner", default=None)


@contextmanager
def charged_to(owner: str | None) -> Iterator[None]:
    """Charge what is appended in this context to ``owner`` (None: to nobody)."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


def set_owner(owner: str | None) -> Any:
    """``charged_to`` in two halves, for a request's before and teardown hooks."""
    return _owner.set(owner)


def reset_owner(token: Any) -> None:
    _owner.reset(token)


def current_owner() -> str | None:
    return _owner.get()


@dataclass(frozen=True)
class Quota:
    """What one owner may append; 0 means no quota of that kind."""

    events_per_day: int
    bytes_per_day: int
    events: int
    bytes: int


@dataclass(frozen=True)
class Usage:
    """What an owner has appended today and in all."""

    events_today: int = 0
    bytes_today: int = 0
    events: int = 0
    bytes: int = 0

    def over(self, quota: Quota) -> str | None:
        """Which of ``quota``'s limits this usage has reached, in words, or None."""
        for used, limit, what in (
            (self.events, quota.events, "events in all"),
            (self.bytes, quota.bytes, "bytes in all"),
            (self.events_today, quota.events_per_day, "events today"),
            (self.bytes_today, quota.bytes_per_day, "bytes today"),
        ):
            if limit and used >= limit:
                return f"{used:,} of {limit:,} {what}"
        return None

    def over_in_all(self, quota: Quota) -> bool:
        return bool(
            (quota.events and self.events >= quota.events)
            or (quota.bytes and self.bytes >= quota.bytes)
        )


@dataclass(frozen=True)
class Refusal:
    """Why an owner may not write now, and for how many seconds."""

    reason: str
    retry_after: int


def today(now: dt.datetime | None = None) -> str:
    return (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d")


def seconds_to_midnight(now: dt.datetime | None = None) -> int:
    now = now or dt.datetime.now(dt.UTC)
    midnight = (now + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((midnight - now).total_seconds()) + 1)


class QuotaLedger(ABC):
    """Where owners' counts are kept."""

    @abstractmethod
    def add(self, owner: str, day: str, events: int, size: int) -> Usage:
        """Add to ``owner``'s counts of ``day`` and in all; the counts after."""

    @abstractmethod
    def usage(self, owner: str, day: str) -> Usage:
        """``owner``'s counts of ``day`` and in all."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


class RedisQuotaLedger(QuotaLedger):
    """Counts in Redis hashes: ``<prefix>:{owner}`` (in all) and ``<prefix>:{owner}:<day>``."""

    def __init__(self, client: redis.Redis, prefix: str = "meeple:quota") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str) -> RedisQuotaLedger:
        return cls(redis_client(url))

    def _keys(self, owner: str, day: str) -> tuple[str, str]:
        total = f"{self.prefix}:{{{owner}}}"
        return total, f"{total}:{day}"

    def add(self, owner: str, day: str, events: int, size: int) -> Usage:
        total, daily = self._keys(owner, day)
        pipe = self.client.pipeline(transaction=False)
        pipe.hincrby(total, "events", events)
        pipe.hincrby(total, "bytes", size)
        pipe.expire(total, TOTAL_TTL)
        pipe.hincrby(daily, "events", events)
        pipe.hincrby(daily, "bytes", size)
        pipe.expire(daily, DAY_TTL)
        all_events, all_bytes, _, day_events, day_bytes, _ = pipe.execute()
        return Usage(int(day_events), int(day_bytes), int(all_events), int(all_bytes))

    def usage(self, owner: str, day: str) -> Usage:
        total, daily = self._keys(owner, day)
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(total, "events", "bytes")
        pipe.hmget(daily, "events", "bytes")
        (all_events, all_bytes), (day_events, day_bytes) = pipe.execute()
        return Usage(
            int(day_events or 0), int(day_bytes or 0), int(all_events or 0), int(all_bytes or 0)
        )

    def close(self) -> None:
        self.client.close()


class SQLiteQuotaLedger(QuotaLedger):
    """Counts in a SQLite file: one row per owner and day, and one per owner in all."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS quota_usage (
        owner TEXT NOT NULL,
        day TEXT NOT NULL,
        events INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        PRIMARY KEY (owner, day)
    )
    """
    #: The ``day`` of an owner's row in all.
    ALL = "all"

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self._pool.create(self.SCHEMA)

    def add(self, owner: str, day: str, events: int, size: int) -> Usage:
        with self._pool.connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                for key in (day, self.ALL):
                    db.execute(
                        "INSERT INTO quota_usage VALUES (?, ?, ?, ?) ON CONFLICT (owner, day) "
                        "DO UPDATE SET events = events + excluded.events, "
                        "bytes = bytes + excluded.bytes",
                        (owner, key, events, size),
                    )
                # Days before yesterday are of no use to anyone.
                old = (dt.datetime.strptime(day, "%Y%m%d") - dt.timedelta(days=2)).strftime(
                    "%Y%m%d"
                )
                db.execute(
                    "DELETE FROM quota_usage WHERE owner = ? AND day != ? AND day < ?",
                    (owner, self.ALL, old),
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return self._usage(db, owner, day)

    def usage(self, owner: str, day: str) -> Usage:
        with self._pool.connection() as db:
            return self._usage(db, owner, day)

    def _usage(self, db: sqlite3.Connection, owner: str, day: str) -> Usage:
        rows = dict(
            (row[0], (row[1], row[2]))
            for row in db.execute(
                "SELECT day, events, bytes FROM quota_usage WHERE owner = ? AND day IN (?, ?)",
                (owner, day, self.ALL),
            )
        )
        day_events, day_bytes = rows.get(day, (0, 0))
        all_events, all_bytes = rows.get(self.ALL, (0, 0))
        return Usage(day_events, day_bytes, all_events, all_bytes)

    def close(self) -> None:
        self._pool.close()


def ledger_location(store_url: str, redis_url: str | None) -> str:
    """Where a deployment keeps its quota counts: its jobs Redis, else beside the store."""
    if redis_url:
        return redis_url
    scheme, _, rest = store_url.partition("://")
    if scheme == "sqlite":
        path = Path(rest.removeprefix("/")).with_suffix(".quotas.db")
        return f"sqlite:///{path.as_posix()}"
    return store_url


def open_ledger(store_url: str, redis_url: str | None) -> QuotaLedger:
    location = ledger_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        return SQLiteQuotaLedger(rest.removeprefix("/"))
    if scheme == "redis+cluster":
        raise ValueError("storage quotas need a single Redis for MEEPLE_REDIS_URL")
    return RedisQuotaLedger.from_url(location)


class StorageQuotas:
    """The owners' quotas over one ledger, with what this process knows of who is over.

    A charge is added to the owner's counts here at once and to the ledger in the
    background, every ``flush_interval`` seconds (a request pays no round trip for it): an
    owner can pass a quota by what every process lets through in that time."""

    def __init__(self, ledger: QuotaLedger, quota: Quota, flush_interval: float = 0.5) -> None:
        self.ledger = ledger
        self.quota = quota
        self.flush_interval = flush_interval
        #: owner -> [events, bytes] charged here and not yet added to the ledger
        self._pending: dict[str, list[int]] = {}
        #: owner -> (the ledger's counts when last added to, the day they are of)
        self._known: OrderedDict[str, tuple[Usage, str]] = OrderedDict()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._flusher: threading.Thread | None = None

    @property
    def active(self) -> bool:
        quota = self.quota
        return any((quota.events_per_day, quota.bytes_per_day, quota.events, quota.bytes))

    def usage(self, owner: str, now: float) -> Usage:
        """``owner``'s counts as this process knows them: the ledger's, and its own since."""
        day = today(dt.datetime.fromtimestamp(now, dt.UTC))
        with self._lock:
            known, of = self._known.get(owner, (Usage(), day))
            events, size = self._pending.get(owner, (0, 0))
        if of != day:
            known = Usage(events=known.events, bytes=known.bytes)
        return Usage(
            known.events_today + events,
            known.bytes_today + size,
            known.events + events,
            known.bytes + size,
        )

    def refusal(self, owner: str, now: float) -> Refusal | None:
        """Why ``owner`` may not write now, or None."""
        if not self.active:
            return None
        usage = self.usage(owner, now)
        reason = usage.over(self.quota)
        if reason is None:
            return None
        if usage.over_in_all(self.quota):
            return Refusal(reason, TOTAL_RECHECK)
        return Refusal(reason, seconds_to_midnight(dt.datetime.fromtimestamp(now, dt.UTC)))

    def charge(self, owner: str, envelopes: Sequence[dict[str, Any]], now: float) -> None:
        """Count what was appended for ``owner`` (here now, in the ledger soon)."""
        if not self.active or not envelopes:
            return
        size = sum(len(orjson.dumps(envelope)) for envelope in envelopes)
        with self._lock:
            if self._closed:
                return
            pending = self._pending.setdefault(owner, [0, 0])
            pending[0] += len(envelopes)
            pending[1] += size
            if self._flusher is None:
                self._flusher = threading.Thread(
                    target=self._flush_now_and_then, name="meeple-quotas", daemon=True
                )
                self._flusher.start()

    def charge_current(self, envelopes: Sequence[dict[str, Any]], now: float) -> None:
        """``charge`` to the owner of this context, if any."""
        owner = current_owner()
        if owner is not None:
            self.charge(owner, envelopes, now)

    def flush(self, now: float | None = None) -> None:
        """Add what was charged here to the ledger, and learn the owners' counts there."""
        with self._lock:
            pending, self._pending = self._pending, {}
        day = today(dt.datetime.fromtimestamp(now if now is not None else time.time(), dt.UTC))
        for owner, (events, size) in pending.items():
            try:
                usage = self.ledger.add(owner, day, events, size)
            except (redis.RedisError, sqlite3.Error, StoreError) as error:
                # The events are stored; a count that cannot be kept is logged, and kept here
                # (a full Redis refuses the count too: the store is then full for everyone).
                log.warning("could not count %s events for %s: %s", events, owner, error)
                with self._lock:
                    again = self._pending.setdefault(owner, [0, 0])
                    again[0] += events
                    again[1] += size
                continue
            with self._lock:
                self._known[owner] = (usage, day)
                self._known.move_to_end(owner)
                while len(self._known) > REMEMBERED:
                    self._known.popitem(last=False)

    def _flush_now_and_then(self) -> None:
        while not self._closed:
            self._wake.wait(self.flush_interval)
            try:
                self.flush()
            except Exception:  # never let the counting thread die
                log.exception("storage quota counts could not be flushed")

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join(timeout=5)
        self.flush()
        self.ledger.close()
