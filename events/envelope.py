"""The event envelope, canonical JSON and the hash chain (DESIGN.md, "Events").

An envelope is a plain dict, stored exactly once and never changed::

    game_id, seq, type, schema_version, actor, data, secret, recorded_at,
    idempotency_key, prev_hash, hash

``hash = sha256(prev_hash + canonical JSON of every other field but hash)``; the first
event of a game chains from GENESIS_HASH.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

GENESIS_HASH = "0" * 64

EVENT_TYPES = (
    "game_created",
    "action",
    "system",
    "undone",
    "redone",
    "branched_from",
    "seat_changed",
)

Envelope = dict[str, Any]

ENVELOPE_FIELDS = (
    "game_id",
    "seq",
    "type",
    "schema_version",
    "actor",
    "data",
    "secret",
    "recorded_at",
    "idempotency_key",
    "prev_hash",
    "hash",
)


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value: sorted keys, no spaces, UTF-8, no NaN."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def event_hash(envelope: Envelope) -> str:
    """The hash an envelope must carry, computed from its prev_hash and other fields."""
    rest = {key: envelope.get(key) for key in ENVELOPE_FIELDS if key not in ("hash", "prev_hash")}
    digest = hashlib.sha256()
    digest.update(envelope["prev_hash"].encode("ascii"))
    digest.update(canonical_json(rest))
    return digest.hexdigest()


@dataclass(frozen=True)
class NewEvent:
    """An event about to be appended: what the caller decides; the store adds the rest."""

    type: str
    data: dict[str, Any]
    actor: dict[str, Any]
    secret: dict[str, Any] | None = None
    schema_version: int = 1
    #: set only when importing an exported log, whose envelopes keep their original times
    recorded_at: str | None = None

    def __post_init__(self) -> None:
        if self.type not in EVENT_TYPES:
            raise ValueError(f"unknown event type {self.type!r}")

    @classmethod
    def copy_of(cls, envelope: Envelope) -> NewEvent:
        """The event an envelope holds, to append again elsewhere (an import, a branch's
        copied history) with its content and recording time unchanged."""
        return cls(
            type=envelope["type"],
            data=envelope["data"],
            actor=envelope["actor"],
            secret=envelope["secret"],
            schema_version=envelope["schema_version"],
            recorded_at=envelope["recorded_at"],
        )


def seal(
    game_id: str,
    seq: int,
    event: NewEvent,
    prev_hash: str,
    recorded_at: str,
    idempotency_key: str | None,
) -> Envelope:
    """The complete envelope for ``event`` at ``seq``, chained after ``prev_hash``."""
    envelope: Envelope = {
        "game_id": game_id,
        "seq": seq,
        "type": event.type,
        "schema_version": event.schema_version,
        "actor": event.actor,
        "data": event.data,
        "secret": event.secret,
        "recorded_at": event.recorded_at or recorded_at,
        "idempotency_key": idempotency_key,
        "prev_hash": prev_hash,
    }
    envelope["hash"] = event_hash(envelope)
    return envelope


def verify_chain(envelopes: list[Envelope], game_id: str | None = None) -> tuple[int, str] | None:
    """The first broken link as (seq, reason), or None when the chain is sound."""
    prev_hash = GENESIS_HASH
    for index, envelope in enumerate(envelopes, start=1):
        seq = envelope.get("seq")
        if set(envelope) != set(ENVELOPE_FIELDS):
            return (index, "envelope fields are not the envelope's fields")
        if seq != index:
            return (index, f"expected seq {index}, found {seq!r}")
        if game_id is not None and envelope["game_id"] != game_id:
            return (index, "event belongs to another game")
        if envelope["prev_hash"] != prev_hash:
            return (index, "prev_hash does not match the previous event's hash")
        if envelope["hash"] != event_hash(envelope):
            return (index, "hash does not match the event's content")
        prev_hash = envelope["hash"]
    return None
