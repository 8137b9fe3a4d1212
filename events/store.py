"""The EventStore contract that every backend implements (tests/contract runs it on each)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from events.envelope import Envelope, NewEvent


class StoreError(Exception):
    """A store could not do what was asked (unreachable, corrupt, misconfigured)."""


class StoreFull(StoreError):
    """The store refuses writes because its memory or disk is full; it still answers reads."""


class ReplicationLag(StoreError):
    """Fewer replicas than asked (``MEEPLE_REDIS_MIN_REPLICAS``) confirmed an append in time.

    The append happened on the primary, whole (the events and the side writes of its one
    script) and it is not acknowledged: if the primary dies before a replica has it, it is
    gone, all of it. ``result`` is what the primary holds; a retry with the same idempotency
    key returns those events (once replicas have them), never a second copy.
    """

    def __init__(self, result: AppendResult, acknowledged: int, wanted: int) -> None:
        super().__init__(
            f"{acknowledged} of the {wanted} replicas asked for confirmed the append in time"
        )
        self.result = result
        self.acknowledged = acknowledged
        self.wanted = wanted


class ConcurrencyConflict(StoreError):
    """An append at a version that is no longer the stream's version; nothing was written."""

    def __init__(self, game_id: str, expected: int, actual: int) -> None:
        super().__init__(f"game {game_id}: expected version {expected}, stream is at {actual}")
        self.game_id = game_id
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True)
class CopiedPrefix:
    """In a game's opening append, after its first event: the first ``length`` events of game
    ``source``, copied (as a branch copies its source's past: docs/history.md).

    Each copy is the envelope ``NewEvent.copy_of`` of the source's event, appended here, would
    be (its type, data, actor, secret, schema_version and recorded_at kept; game_id, seq,
    idempotency key and the chain this game's own), and reads back as such; the store keeps a
    reference to the source's events rather than the copies (events.copies), so what it holds
    does not grow with ``length``. The source's first ``length`` events never change (a log
    only grows), so neither do the copies.
    """

    source: str
    length: int


@dataclass(frozen=True)
class AppendResult:
    """What an append wrote (or, for a repeated idempotency key, what the first one wrote)."""

    version: int
    envelopes: list[Envelope]
    replayed: bool = False
    #: what side writes asked to be told (a backend's own extension: events.redis_store)
    replies: tuple[int, ...] = ()


@dataclass(frozen=True)
class FeedPage:
    """A page of the all-games feed and the position to resume after it."""

    events: list[Envelope]
    position: dict[str, Any]


#: What an append's batch holds: events, and in a game's opening append copied prefixes.
Appended = NewEvent | CopiedPrefix


def check_append(events: Sequence[Appended], expected_version: int, game_id: str = "") -> None:
    """What every backend refuses before it touches storage: an empty batch, a negative
    version, a copied prefix anywhere but after the first event of a game's opening append."""
    if not events:
        raise ValueError("an append needs at least one event")
    if expected_version < 0:
        raise ValueError("expected_version cannot be negative")
    for index, event in enumerate(events):
        if not isinstance(event, CopiedPrefix):
            continue
        if expected_version != 0 or index == 0:
            raise ValueError("a copied prefix may only follow the first event of a game")
        if event.length < 1 or event.source == game_id:
            raise ValueError(f"cannot copy {event.length} events of {event.source!r} here")


class EventStore(ABC):
    """Append-only streams of envelopes, one per game, with snapshots and a feed."""

    @abstractmethod
    def append(
        self,
        game_id: str,
        events: Sequence[Appended],
        expected_version: int,
        idempotency_key: str | None = None,
    ) -> AppendResult:
        """Append all ``events`` at expected_version+1... atomically, or raise ConcurrencyConflict.

        A repeated ``idempotency_key`` for the same game returns the first result and writes
        nothing. A ``CopiedPrefix`` in the batch (see there) stands for the source's events,
        each sealed here in its turn; ``AppendResult.envelopes`` holds them all.
        """

    @abstractmethod
    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        """Envelopes with seq > after, in order, at most ``limit`` of them, exactly as stored
        (byte-identical after a reconnect; upcasting happens above, in events.upcasting); a
        copied prefix's copies exactly as they were sealed when it was appended."""

    @abstractmethod
    def version(self, game_id: str) -> int:
        """The seq of the stream's last event (0 for an unknown game)."""

    @abstractmethod
    def save_snapshot(self, game_id: str, seq: int, payload: dict[str, Any]) -> None:
        """Keep a snapshot of derived data taken after event ``seq`` (an optimisation only)."""

    @abstractmethod
    def load_snapshot(self, game_id: str, at_most: int) -> tuple[int, dict[str, Any]] | None:
        """The latest snapshot with seq <= ``at_most`` as (seq, payload), or None."""

    @abstractmethod
    def read_feed(self, position: dict[str, Any] | None, limit: int = 500) -> FeedPage:
        """Events of every game after ``position`` (None = from the start): each at least once,
        in seq order within a game. ``position`` is opaque; pass back the returned one. A page
        of fewer than ``limit`` events ends the feed as it stood when it was read."""

    @abstractmethod
    def game_ids(self) -> list[str]:
        """Every game with at least one event."""

    def ping(self) -> bool:
        """Whether the store answers."""
        return True

    def accepts_writes(self) -> bool:
        """Whether an append would find room (memory or disk); answering is ``ping``'s."""
        return True

    def close(self) -> None:  # noqa: B027 - optional for backends without resources
        """Release connections and files."""
