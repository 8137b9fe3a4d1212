"""Fair shares of webhook delivery (docs/security.md, "What each owner may take of webhook
delivery"): deliveries wait in one lane per owner and are handed to the workers in turn, at
most so many in flight per owner and per receiver, and a receiver that keeps timing out or
refusing connections is paused for a while (a circuit breaker).

- An *owner*'s lane (``service.application.webhooks.owner_lane``) is the client address
  that registered the webhook, or the admin: one client's many games and seats share one
  lane, so registering webhooks on more games buys no more of the workers.
- A *receiver* (``service.application.webhooks.receiver_of``) is where a webhook's URL
  points: its scheme, host name and port, known without a lookup (the owner's listing shows
  its pause without resolving it).
- *In flight* is a delivery handed to a worker whose attempt has not ended. Its places under
  the caps are leases (``MemoryLeases`` in one process, ``RedisLeases`` across processes)
  that expire if their holder dies, so a killed worker's share comes back by itself.
- The *breaker* (``Breaker``): after ``failures`` attempts in a row at a receiver that timed
  out or could not connect, it is paused for ``seconds``; then one delivery probes it (the
  breaker is half-open), and an answer, any HTTP status, closes it again while another
  failure pauses it anew.

The clock is always passed in (tests use their own).
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import redis

Item = TypeVar("Item")

#: The attempts' outcomes that say a receiver is not answering at all; any HTTP status is an
#: answer (a 500 comes quickly and costs nothing), and ``forbidden`` or ``webhook_removed``
#: say nothing of the receiver.
FAILURES = ("timeout", "connection_failed")


def fair_order(queues: Mapping[str, Iterable[Item]]) -> Iterator[Item]:
    """The queues' items in turn, round-robin: the first of each queue, then the second of
    each ... (each queue's own order kept), so no queue's backlog stands before another's
    next. Nested, it is fair at two levels: the owners in turn, and each owner's turn goes to
    its receivers in turn (``service.workers.jobs.start_deliveries``)."""
    going = [iter(items) for items in queues.values()]
    while going:
        going_on = []
        for queue in going:
            for item in queue:
                yield item
                going_on.append(queue)
                break
        going = going_on


# -- the circuit breaker ------------------------------------------------------------------

#: What the breaker says of a delivery to a receiver now: it may go; it may go as the probe
#: of a paused receiver (if it takes the probe first); or it waits until the time given.
Verdict = tuple[Literal["go", "probe", "wait"], float | None]


@dataclass(frozen=True)
class Breaker:
    """One receiver's circuit breaker, as a record the job state keeps per receiver
    (``JobState.update_receiver``)::

        {"failures": n, "reason": "timeout" | "connection_failed",
         "paused_until": t | None, "probe_until": t | None}

    No record: the receiver answers (closed). ``paused_until`` set: it is paused until then
    (open), and after that one probe at a time may try it until ``probe_until`` (half-open).
    """

    #: MEEPLE_WEBHOOK_BREAKER_FAILURES: failed attempts in a row that pause a receiver.
    failures: int = 5
    #: MEEPLE_WEBHOOK_BREAKER_SECONDS: how long it is paused before a probe tries it.
    seconds: float = 300.0
    #: How long a probe keeps the receiver to itself: at most its attempt's time.
    probe_seconds: float = 40.0

    def verdict(self, record: Mapping[str, Any] | None, now: float) -> Verdict:
        """Whether a delivery to the receiver may go at ``now``."""
        paused_until = None if record is None else record.get("paused_until")
        if paused_until is None:
            return "go", None
        if now < paused_until:
            return "wait", float(paused_until)
        probe_until = record.get("probe_until") if record is not None else None
        if probe_until is not None and now < probe_until:
            return "wait", float(probe_until)
        return "probe", None

    def probe(self, record: dict[str, Any] | None, now: float) -> dict[str, Any] | None:
        """The record once a probe has taken the receiver at ``now`` (unchanged if no probe
        may go: ``verdict`` says why)."""
        if record is None or self.verdict(record, now)[0] != "probe":
            return record
        return {**record, "probe_until": now + self.probe_seconds}

    def after(
        self, record: dict[str, Any] | None, outcome: str, now: float
    ) -> dict[str, Any] | None:
        """The record after an attempt at the receiver came to ``outcome`` at ``now``."""
        if outcome == "http_status":
            return None  # it answers: whatever it said, it is no black hole
        if outcome not in FAILURES:
            # Nothing learnt of the receiver; a probe that came to this lets the next one go.
            return None if record is None else {**record, "probe_until": None}
        failures = (0 if record is None else int(record["failures"])) + 1
        paused_until = None if record is None else record.get("paused_until")
        if paused_until is not None or failures >= self.failures:
            # Paused from its latest failure (a failed probe pauses it again).
            paused_until = now + self.seconds
        return {
            "failures": failures,
            "reason": outcome,
            "paused_until": paused_until,
            "probe_until": None,
        }


def public_pause(record: Mapping[str, Any] | None, now: float) -> dict[str, Any] | None:
    """A receiver's pause as its webhooks' owner reads it (None: not paused): ``paused``
    until ``until``, or ``probing`` (the pause is over and one delivery at a time tries it;
    ``until``: when the probe now in flight, if any, has its answer at the latest)."""
    if record is None or record.get("paused_until") is None:
        return None
    paused_until = float(record["paused_until"])
    if now < paused_until:
        state, until = "paused", paused_until
    else:
        state, until = "probing", float(record.get("probe_until") or paused_until)
    return {
        "state": state,
        "reason": record["reason"],
        "failures": int(record["failures"]),
        "until": math.ceil(until),
    }


# -- in-flight caps ------------------------------------------------------------------------


class Leases(ABC):
    """Counted places under caps, each held by a token until a time (a semaphore whose
    places expire): a delivery holds one under its owner's cap and one under its receiver's
    while it is in flight."""

    @abstractmethod
    def take(
        self, token: str, caps: Sequence[tuple[str, int]], now: float, until: float
    ) -> str | None:
        """Hold a place under every ``(key, cap)`` for ``token`` until ``until`` (renewed
        where it holds one already), all or none: None when held, else the first key whose
        cap is full (nothing taken)."""

    @abstractmethod
    def release(self, token: str, keys: Sequence[str]) -> None:
        """Give back the token's places (those it does not hold are no matter)."""

    @abstractmethod
    def held(self, key: str, now: float) -> int:
        """How many places under ``key`` are held at ``now``."""


class MemoryLeases(Leases):
    """Leases in this process (the in-process runner: its deliveries run here)."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, float]] = {}
        self._lock = threading.Lock()

    def take(
        self, token: str, caps: Sequence[tuple[str, int]], now: float, until: float
    ) -> str | None:
        with self._lock:
            for key, cap in caps:
                places = self._live(key, now)
                if token not in places and len(places) >= cap:
                    return key
            for key, _ in caps:
                self._held.setdefault(key, {})[token] = until
        return None

    def release(self, token: str, keys: Sequence[str]) -> None:
        with self._lock:
            for key in keys:
                places = self._held.get(key, {})
                places.pop(token, None)
                if not places:
                    self._held.pop(key, None)

    def held(self, key: str, now: float) -> int:
        with self._lock:
            return len(self._live(key, now))

    def _live(self, key: str, now: float) -> dict[str, float]:
        places = self._held.get(key, {})
        for token in [token for token, until in places.items() if until <= now]:
            del places[token]
        return places


class RedisLeases(Leases):
    """Leases in Redis, shared by every worker process: one sorted set per key, each token
    scored by the millisecond its place expires. Times are the callers' clocks (a worker
    whose clock runs ahead lets places go early, by its lead)."""

    PREFIX = "meeple:jobs:in-flight:"
    #: KEYS: the keys' sets. ARGV: 1 the token, 2 now and 3 until (ms), then each key's cap.
    #: 0 when held under every cap; else the number of the first full key (nothing taken).
    TAKE_SCRIPT = """
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[2])
  if not redis.call('ZSCORE', key, ARGV[1])
      and redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then
    return i
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[3], ARGV[1])
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.max(1, math.floor(tonumber(last[2]) - tonumber(ARGV[2]))))
end
return 0
"""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._take = client.register_script(self.TAKE_SCRIPT)

    def take(
        self, token: str, caps: Sequence[tuple[str, int]], now: float, until: float
    ) -> str | None:
        keys = [self.PREFIX + key for key, _ in caps]
        full = int(
            self._take(
                keys=keys,
                args=[token, _ms(now), _ms(until), *(cap for _, cap in caps)],
            )
        )
        return None if full == 0 else caps[full - 1][0]

    def release(self, token: str, keys: Sequence[str]) -> None:
        with self.client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.zrem(self.PREFIX + key, token)
            pipe.execute()

    def held(self, key: str, now: float) -> int:
        return int(self.client.zcount(self.PREFIX + key, f"({_ms(now)}", "+inf"))


def _ms(moment: float) -> int:
    return math.floor(moment * 1000)
