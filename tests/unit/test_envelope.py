"""The envelope, canonical JSON and the hash chain."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given

from events.envelope import GENESIS_HASH, NewEvent, canonical_json, seal, verify_chain
from tests import json_strategies

#: A JSON string literal as canonical_json writes it (quotes and backslashes escaped inside).
STRING_LITERAL = re.compile(rb'"(?:[^"\\]|\\.)*"')

json_values = json_strategies.json_values(floats=False)


def chain(count: int) -> list[dict]:
    envelopes: list[dict] = []
    prev = GENESIS_HASH
    for seq in range(1, count + 1):
        event = NewEvent("action", {"action": {"type": "x", "n": seq}}, {"seat": seq % 2})
        envelope = seal("g1", seq, event, prev, "2026-11-29T00:00:00.000000Z", None)
        envelopes.append(envelope)
        prev = envelope["hash"]
    return envelopes


@given(json_values)
@example({": ": None, "a\n": [" , "]})  # drawn once from a fresh clone: separators inside keys
def test_canonical_json_is_one_byte_form_whatever_the_key_order(value: object) -> None:
    encoded = canonical_json(value)
    if isinstance(value, dict):
        assert canonical_json(dict(reversed(list(value.items())))) == encoded
    assert json.loads(encoded) == value and canonical_json(json.loads(encoded)) == encoded
    # Whitespace may stand inside a string (a key may well be ": "), never between tokens.
    between_strings = STRING_LITERAL.sub(b'""', encoded)
    assert not re.search(rb"\s", between_strings), encoded


def test_canonical_json_refuses_nan() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_first_event_chains_from_the_genesis_hash() -> None:
    assert chain(1)[0]["prev_hash"] == GENESIS_HASH == "0" * 64


def test_a_sound_chain_verifies() -> None:
    assert verify_chain(chain(5), "g1") is None


def test_a_changed_field_breaks_the_chain_at_that_seq() -> None:
    envelopes = chain(5)
    envelopes[2]["data"]["action"]["n"] = 99
    assert verify_chain(envelopes) == (3, "hash does not match the event's content")


def test_a_removed_event_breaks_the_chain_where_it_was() -> None:
    envelopes = chain(5)
    del envelopes[1]
    assert verify_chain(envelopes) == (2, "expected seq 2, found 3")


def test_swapped_events_break_the_chain() -> None:
    envelopes = chain(5)
    envelopes[1], envelopes[2] = envelopes[2], envelopes[1]
    broken = verify_chain(envelopes)
    assert broken is not None and broken[0] == 2


def test_an_event_of_another_game_breaks_the_chain() -> None:
    assert verify_chain(chain(2), "other") == (1, "event belongs to another game")


def test_unknown_event_types_cannot_be_made() -> None:
    with pytest.raises(ValueError):
        NewEvent("deleted", {}, {"seat": 0})
