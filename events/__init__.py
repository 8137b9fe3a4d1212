"""The append-only event log: the envelope, its hash chain and the stores (SQLite, Redis)."""

from events.envelope import (
    GENESIS_HASH,
    Envelope,
    NewEvent,
    canonical_json,
    event_hash,
    seal,
    verify_chain,
)
from events.store import AppendResult, ConcurrencyConflict, EventStore, StoreError

__all__ = [
    "GENESIS_HASH",
    "AppendResult",
    "ConcurrencyConflict",
    "Envelope",
    "EventStore",
    "NewEvent",
    "StoreError",
    "canonical_json",
    "event_hash",
    "seal",
    "verify_chain",
]
