"""Upcasting: old stored event versions are converted when read, never rewritten.

Each upcaster turns an envelope of (type, schema_version=v) into schema_version v+1.
Hashes are always checked on the envelope as stored, before upcasting.
"""

from __future__ import annotations

from collections.abc import Callable

from events.envelope import Envelope, event_hash
from events.store import EventStore, StoreError

Upcaster = Callable[[Envelope], Envelope]

#: (event type, from schema_version) -> upcaster to the next version
UPCASTERS: dict[tuple[str, int], Upcaster] = {}

#: event type -> the schema_version this build writes
CURRENT_VERSIONS: dict[str, int] = {
    "game_created": 1,
    "action": 1,
    "system": 1,
    "undone": 1,
    "redone": 1,
    "branched_from": 1,
    "seat_changed": 1,
}


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    """Register a function that lifts ``event_type`` from ``from_version`` to the next."""

    def register(function: Upcaster) -> Upcaster:
        UPCASTERS[(event_type, from_version)] = function
        return function

    return register


def upcast(envelope: Envelope) -> Envelope:
    """The envelope lifted to the current schema version of its type (a new dict if changed)."""
    current = CURRENT_VERSIONS.get(envelope["type"], envelope["schema_version"])
    while envelope["schema_version"] < current:
        step = UPCASTERS.get((envelope["type"], envelope["schema_version"]))
        if step is None:
            raise ValueError(f"no upcaster for {envelope['type']} v{envelope['schema_version']}")
        envelope = step(dict(envelope))
    return envelope


def read_upcast(
    store: EventStore, game_id: str, after: int = 0, limit: int | None = None
) -> list[Envelope]:
    """A game's events as this build understands them: each one checked against its hash
    as stored (upcasting changes the envelope, so never the other way round), then upcast."""
    envelopes = store.read(game_id, after=after, limit=limit)
    for envelope in envelopes:
        if event_hash(envelope) != envelope["hash"]:
            raise StoreError(
                f"game {game_id}: stored event {envelope['seq']} does not match its hash"
            )
    return [upcast(envelope) for envelope in envelopes]
