"""Rate-limit counts kept in each API process and shared through Redis in the background.

Counting every limited request in Redis costs it two round trips of its own (the count, then
the ``X-RateLimit-*`` headers), each behind the AOF's fsync: as much as the action's append.
``SyncedCounts`` (the ``limits`` storage ``meeple+redis://``) counts in memory instead, as
``memory://`` does, and every ``sync_interval`` seconds one pipeline per process adds the
hits it took to Redis and reads back every process's totals for the keys it uses. A request
is decided on its own process's hits plus the others' as last read: the limit holds across
processes up to the hits the other processes took in the last interval (docs/operations.md,
"Limits"); it costs the request no round trip; and when Redis is out of reach, counting goes
on in the process and catches up later.

``MEEPLE_RATE_LIMIT_SYNC_MS=0`` counts in Redis on every request instead (exact, slower).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from typing import Any

import redis
from limits.storage import MemoryStorage

log = logging.getLogger(__name__)

#: The prefix of the shared counts' keys in Redis.
PREFIX = "meeple-rate-counts:"


class SyncedCounts(MemoryStorage):
    """``limits`` storage: in-memory counts, added up across processes through Redis."""

    STORAGE_SCHEME = ["meeple+redis", "meeple+rediss"]

    def __init__(self, uri: str, sync_interval: float = 0.2, **options: Any) -> None:
        super().__init__(None)
        self.redis = redis.Redis.from_url(
            uri.removeprefix("meeple+"), socket_timeout=5, socket_connect_timeout=5
        )
        self.sync_interval = float(sync_interval)
        self._sync_lock = threading.Lock()
        #: key -> (hits not yet added to Redis, the key's lifetime)
        self._pending: dict[str, tuple[int, float]] = {}
        #: key -> the hits of this process already added to Redis
        self._flushed: Counter[str] = Counter()
        #: key -> the other processes' hits, as last read
        self._others: dict[str, int] = {}
        #: key -> until when it is worth reading (its lifetime)
        self._watched: dict[str, float] = {}
        self._stop = threading.Event()
        self._syncer: threading.Thread | None = None

    # -- what ``limits`` asks -------------------------------------------------------------

    def get(self, key: str) -> int:
        return int(super().get(key)) + self._others.get(key, 0)

    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        mine = int(super().incr(key, expiry, amount))
        self._count(key, amount, expiry)
        return mine + self._others.get(key, 0)

    def decr(self, key: str, amount: int = 1) -> int:
        mine = int(super().decr(key, amount))
        self._count(key, -amount, None)
        return mine + self._others.get(key, 0)

    def clear(self, key: str) -> None:
        super().clear(key)
        with self._sync_lock:
            self._pending.pop(key, None)
            self._flushed.pop(key, None)
            self._others.pop(key, None)
        try:
            self.redis.delete(PREFIX + key)
        except redis.RedisError as error:
            log.warning("rate limits: could not clear a shared count (%s)", error)

    def reset(self) -> int | None:
        with self._sync_lock:
            self._pending.clear()
            self._flushed.clear()
            self._others.clear()
            self._watched.clear()
        return super().reset()

    def close(self) -> None:
        self._stop.set()
        self.redis.close()

    def _MemoryStorage__schedule_expiry(self) -> None:
        """``MemoryStorage`` starts a timer thread to drop expired counts after almost every
        count it takes (a thread per request, a fifth of a request's time); ``get`` never
        returns an expired count anyway, so the sync thread drops them instead."""

    # -- sharing --------------------------------------------------------------------------

    def _count(self, key: str, amount: int, expiry: float | None) -> None:
        with self._sync_lock:
            pending, lifetime = self._pending.get(key, (0, expiry or 0.0))
            lifetime = expiry or lifetime
            self._pending[key] = (pending + amount, lifetime)
            self._watched[key] = max(self._watched.get(key, 0.0), time.time() + lifetime)
            start = self._syncer is None
            if start:
                self._syncer = threading.Thread(
                    target=self._sync_forever, name="meeple-rate-counts", daemon=True
                )
        if start and self._syncer is not None:
            self._syncer.start()

    def _sync_forever(self) -> None:
        while not self._stop.wait(self.sync_interval):
            try:
                self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
                self.sync()
            except Exception:  # the counts stay in memory; the next round tries again
                log.exception("rate limits: the shared counts could not be synced")

    def sync(self) -> None:
        """Add this process's new hits to Redis and read every process's totals (one
        pipeline); a failure keeps the hits for the next round."""
        with self._sync_lock:
            pending, self._pending = self._pending, {}
            now = time.time()
            self._watched = {key: until for key, until in self._watched.items() if until > now}
            watched = list(self._watched)
            for gone in [key for key in self._flushed if key not in self._watched]:
                del self._flushed[gone]
                self._others.pop(gone, None)
        if not watched:
            return
        try:
            with self.redis.pipeline(transaction=False) as pipe:
                for key, (amount, lifetime) in pending.items():
                    pipe.incrby(PREFIX + key, amount)
                    pipe.expire(PREFIX + key, max(1, int(lifetime) + 1))
                # One MGET for every count it reads (not a GET each: the sync runs in the
                # API process, and packing commands is most of its cost there).
                pipe.mget([PREFIX + key for key in watched])
                answers = pipe.execute()
        except redis.RedisError:
            with self._sync_lock:
                for key, (amount, lifetime) in pending.items():
                    more, _ = self._pending.get(key, (0, lifetime))
                    self._pending[key] = (more + amount, lifetime)
            raise
        totals = answers[-1]
        with self._sync_lock:
            for key, (amount, _) in pending.items():
                self._flushed[key] += amount
            for key, total in zip(watched, totals, strict=True):
                self._others[key] = max(0, int(total or 0) - self._flushed.get(key, 0))
