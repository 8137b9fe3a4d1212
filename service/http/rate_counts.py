"""The rate limits' counts: a sliding log per count, in Redis or in the process.

A count lets ``amount`` requests through in any ``window`` seconds, exactly: it keeps the time
of each request it let through (never more than ``amount`` of them, and none older than the
window) and refuses one while ``amount`` of those lie within the last ``window`` seconds. A
refused request is not kept, so refusals cost nothing to remember.

``RedisCounts`` keeps the logs in Redis, shared by every API process: a request is checked
against all of its counts by one script (one round trip), on Redis's clock, atomically, so
a burst over many connections and processes gets no further than the limit. Each log is a
list with a time to live of its window, and the script writes nothing to the AOF or to
replicas (``redis.set_repl``): a count needs no durability (a restarted Redis forgets the
counts, which only lets a client start afresh), and an fsync would cost the request more
than the count itself. ``MemoryCounts`` keeps the same logs in the process (the embedded
shape, and a fallback while Redis is out of reach): at most ``MAX_KEYS`` of them, each
forgotten as soon as its window has passed since its last request, and the one unused for
longest first when a new one needs the room.

A failed authentication is counted by ``fail``: the address whose counts of failed tokens
fill up is locked out for the window of the count that filled (``Lockouts`` remembers that
in each process, so a locked-out request costs no round trip).
"""

from __future__ import annotations

import threading
import time
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from events.redis_clients import redis_client

#: The most logs (and, apart, lock-outs) one process keeps in memory: each holds at most its
#: limit's ``amount`` times of 8 bytes (300 with the default limits), so well under 100 MB.
MAX_KEYS = 20_000


@dataclass(frozen=True)
class Count:
    """One count a request is checked against: where it is kept, what it lets through."""

    key: str
    amount: int
    #: seconds
    window: float


@dataclass(frozen=True)
class Hit:
    """What checking a request against its counts found."""

    #: the position of the count that was full (the request was kept by those before it
    #: only), or None when every count kept it
    over: int | None
    #: of that count, else of the first: the requests it still lets through in its window
    remaining: int
    #: and the seconds until its oldest request leaves the window (a place frees up)
    reset_after: float


class Counts(Protocol):
    def hit(self, counts: Sequence[Count]) -> Hit:
        """Keep this request in ``counts``, in order, until one is full."""
        ...

    def fail(self, lockout: str, counts: Sequence[Count]) -> float | None:
        """Keep a failed authentication in ``counts``; once one is full its owner is locked
        out (under the key ``lockout``) for that count's window. The seconds it stays locked
        out, or None when it is not."""
        ...

    def check(self) -> bool:
        """Whether the counts answer."""
        ...


# -- in Redis -------------------------------------------------------------------------------

#: What both scripts share: Redis's clock in milliseconds, and a log without the times that
#: left its window (its length, and its oldest time left).
_LOG = """
redis.set_repl(redis.REPL_NONE)
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local function trimmed(key, window)
  local oldest = redis.call('LINDEX', key, 0)
  while oldest and tonumber(oldest) <= now - window do
    redis.call('LPOP', key)
    oldest = redis.call('LINDEX', key, 0)
  end
  return redis.call('LLEN', key), tonumber(oldest) or now
end
"""

#: KEYS: one log per count; ARGV: each count's amount and window (ms). Answers the position
#: of the full count (0: none), and its (else the first's) remaining and reset (ms).
_HIT = (
    _LOG
    + """
local remaining, reset
for i, key in ipairs(KEYS) do
  local amount, window = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local used, oldest = trimmed(key, window)
  if used >= amount then
    return {i, 0, oldest + window - now}
  end
  redis.call('RPUSH', key, string.format('%d', now))
  redis.call('PEXPIRE', key, window)
  if i == 1 then
    remaining, reset = amount - used - 1, oldest + window - now
  end
end
return {0, remaining, reset}
"""
)

#: KEYS[1]: the lock-out; KEYS[2...]: the counts of failed authentications; ARGV: each
#: count's amount and window (ms). Answers the ms the owner stays locked out (0: it is not).
_FAIL = (
    _LOG
    + """
local locked = redis.call('PTTL', KEYS[1])
if locked > 0 then
  return locked
end
local lock = 0
for i = 2, #KEYS do
  local amount, window = tonumber(ARGV[2 * i - 3]), tonumber(ARGV[2 * i - 2])
  local used = trimmed(KEYS[i], window)
  if used < amount then
    redis.call('RPUSH', KEYS[i], string.format('%d', now))
    redis.call('PEXPIRE', KEYS[i], window)
    used = used + 1
  end
  if used >= amount and window > lock then
    lock = window
  end
end
if lock > 0 then
  redis.call('SET', KEYS[1], '1', 'PX', lock)
end
return lock
"""
)


class RedisCounts:
    """The counts in Redis, shared by every process that uses it: one script per request."""

    def __init__(self, url: str) -> None:
        self.redis = redis_client(url, socket_timeout=5, socket_connect_timeout=5)
        self._hit = self.redis.register_script(_HIT)
        self._fail = self.redis.register_script(_FAIL)

    def hit(self, counts: Sequence[Count]) -> Hit:
        over, remaining, reset = self._hit(keys=[count.key for count in counts], args=_args(counts))
        return Hit(int(over) - 1 if over else None, int(remaining), int(reset) / 1000)

    def fail(self, lockout: str, counts: Sequence[Count]) -> float | None:
        locked = int(
            self._fail(keys=[lockout, *(count.key for count in counts)], args=_args(counts))
        )
        return locked / 1000 if locked > 0 else None

    def check(self) -> bool:
        return bool(self.redis.ping())

    def close(self) -> None:
        self.redis.close()


def _args(counts: Sequence[Count]) -> list[int]:
    return [value for count in counts for value in (count.amount, round(count.window * 1000))]


# -- in the process -------------------------------------------------------------------------


class MemoryCounts:
    """The counts in this process: at most ``max_keys`` logs, each dropped once its window
    has passed since its last request (on the monotonic ``clock``)."""

    def __init__(self, max_keys: int = MAX_KEYS, clock: Callable[[], float] = time.monotonic):
        self.max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        #: window -> key -> its times, oldest first; each in the order its keys were last
        #: kept, so the first of each is the next to expire
        self._logs: dict[float, OrderedDict[str, array[float]]] = {}
        self._size = 0
        self.lockouts = Lockouts(max_keys, clock)

    def __len__(self) -> int:
        """How many logs and lock-outs this process keeps now."""
        with self._lock:
            self._expire(self._clock())
            return self._size + len(self.lockouts)

    def hit(self, counts: Sequence[Count]) -> Hit:
        with self._lock:
            now = self._clock()
            self._expire(now)
            shown = (0, 0.0)
            for position, count in enumerate(counts):
                log = self._trimmed(count, now)
                oldest = log[0] if log else now
                if len(log) >= count.amount:
                    return Hit(position, 0, oldest + count.window - now)
                self._keep(count, log, now)
                if position == 0:
                    shown = (count.amount - len(log), oldest + count.window - now)
            return Hit(None, *shown)

    def fail(self, lockout: str, counts: Sequence[Count]) -> float | None:
        with self._lock:
            locked = self.lockouts.remaining(lockout)
            if locked is not None:
                return locked
            now = self._clock()
            self._expire(now)
            lock = 0.0
            for count in counts:
                log = self._trimmed(count, now)
                if len(log) < count.amount:
                    self._keep(count, log, now)
                if len(log) >= count.amount:
                    lock = max(lock, count.window)
            if not lock:
                return None
            self.lockouts.lock(lockout, lock)
            return lock

    def check(self) -> bool:
        return True

    def _trimmed(self, count: Count, now: float) -> array[float]:
        """The log of ``count`` without the times that left its window (a new one if none:
        not kept until a request is)."""
        logs = self._logs.get(count.window)
        log = None if logs is None else logs.get(count.key)
        if log is None:
            return array("d")
        del log[: bisect_right(log, now - count.window)]
        return log

    def _keep(self, count: Count, log: array[float], now: float) -> None:
        log.append(now)
        logs = self._logs.setdefault(count.window, OrderedDict())
        if count.key in logs:
            logs.move_to_end(count.key)
            return
        logs[count.key] = log
        self._size += 1
        while self._size > self.max_keys:
            self._forget_longest_unused()

    def _expire(self, now: float) -> None:
        for window, logs in self._logs.items():
            while logs:
                key, log = next(iter(logs.items()))
                if log and log[-1] > now - window:
                    break
                del logs[key]
                self._size -= 1

    def _forget_longest_unused(self) -> None:
        """Make room: forget the log whose last request is the oldest."""
        logs = min(
            (logs for logs in self._logs.values() if logs),
            key=lambda logs: next(iter(logs.values()))[-1],
        )
        logs.popitem(last=False)
        self._size -= 1


class Lockouts:
    """Who is locked out until when, in this process: at most ``max_keys``, each dropped once
    it ends (the oldest first when a new one needs the room)."""

    def __init__(self, max_keys: int = MAX_KEYS, clock: Callable[[], float] = time.monotonic):
        self.max_keys = max_keys
        self._clock = clock
        self._until: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            now = self._clock()
            for key in [key for key, until in self._until.items() if until <= now]:
                del self._until[key]
            return len(self._until)

    def lock(self, key: str, seconds: float) -> None:
        with self._lock:
            self._until.pop(key, None)
            self._until[key] = self._clock() + seconds
            while len(self._until) > self.max_keys:
                self._until.popitem(last=False)

    def remaining(self, key: str) -> float | None:
        """The seconds ``key`` stays locked out, or None."""
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return None
            left = until - self._clock()
            if left > 0:
                return left
            del self._until[key]
            return None
