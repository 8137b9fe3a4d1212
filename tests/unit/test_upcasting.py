"""Old stored event versions are upcast when read, never rewritten; hashes are checked on
the envelope as stored. The version bump here is test-only: monkeypatch puts the real
CURRENT_VERSIONS and UPCASTERS back after each test."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from events import upcasting
from events.envelope import Envelope, NewEvent, canonical_json, verify_chain
from events.sqlite_store import SQLiteEventStore
from events.store import StoreError
from events.upcasting import read_upcast, upcast


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteEventStore]:
    opened = SQLiteEventStore(tmp_path / "events.db")
    yield opened
    opened.close()


@pytest.fixture
def action_v2(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test-only v2 of ``action``: the acting seat moves from ``actor`` into ``data``."""

    def lift(envelope: Envelope) -> Envelope:
        data = {**envelope["data"], "by_seat": envelope["actor"].get("seat")}
        return {**envelope, "data": data, "schema_version": 2}

    monkeypatch.setitem(upcasting.UPCASTERS, ("action", 1), lift)
    monkeypatch.setitem(upcasting.CURRENT_VERSIONS, "action", 2)


def store_v1_action(store: SQLiteEventStore) -> Envelope:
    event = NewEvent(type="action", data={"action": {"type": "draw"}}, actor={"seat": 2})
    (envelope,) = store.append("g1", [event], expected_version=0).envelopes
    return envelope


def test_a_stored_v1_event_is_read_as_v2_through_its_upcaster(
    store: SQLiteEventStore, action_v2: None
) -> None:
    store_v1_action(store)

    (read,) = read_upcast(store, "g1")

    assert read["schema_version"] == 2
    assert read["data"] == {"action": {"type": "draw"}, "by_seat": 2}


def test_upcasting_never_rewrites_the_stored_event(
    store: SQLiteEventStore, action_v2: None, tmp_path: Path
) -> None:
    written = store_v1_action(store)
    read_upcast(store, "g1")

    stored = SQLiteEventStore(tmp_path / "events.db")
    try:
        again = stored.read("g1")
    finally:
        stored.close()

    assert [canonical_json(envelope) for envelope in again] == [canonical_json(written)]
    assert again[0]["schema_version"] == 1
    assert verify_chain(again, "g1") is None


def test_upcasters_chain_from_v1_through_v2_to_v3(
    store: SQLiteEventStore, action_v2: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rename(envelope: Envelope) -> Envelope:
        data = dict(envelope["data"])
        data["seat"] = data.pop("by_seat")
        return {**envelope, "data": data, "schema_version": 3}

    monkeypatch.setitem(upcasting.UPCASTERS, ("action", 2), rename)
    monkeypatch.setitem(upcasting.CURRENT_VERSIONS, "action", 3)
    store_v1_action(store)

    (read,) = read_upcast(store, "g1")

    assert read["schema_version"] == 3
    assert read["data"] == {"action": {"type": "draw"}, "seat": 2}


def test_an_event_already_at_the_current_version_is_returned_as_stored(
    store: SQLiteEventStore,
) -> None:
    written = store_v1_action(store)

    assert upcast(written) is written


def test_an_old_event_without_an_upcaster_is_refused(
    store: SQLiteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(upcasting.CURRENT_VERSIONS, "action", 2)
    store_v1_action(store)

    with pytest.raises(ValueError, match="no upcaster for action v1"):
        read_upcast(store, "g1")


def test_a_stored_event_that_no_longer_matches_its_hash_is_refused_before_upcasting(
    store: SQLiteEventStore, action_v2: None, tmp_path: Path
) -> None:
    store_v1_action(store)
    with closing(sqlite3.connect(tmp_path / "events.db")) as connection, connection:
        (text,) = connection.execute("SELECT envelope FROM events").fetchone()
        tampered = json.loads(text)
        tampered["data"]["action"]["type"] = "play"
        connection.execute("UPDATE events SET envelope = ?", (json.dumps(tampered),))

    with pytest.raises(StoreError, match="does not match its hash"):
        read_upcast(store, "g1")
