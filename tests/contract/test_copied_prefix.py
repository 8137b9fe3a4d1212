"""Copied prefixes (``CopiedPrefix``, a branch's copy of its source's past): every backend reads
them back as the copies they stand for, and keeps the same few entries however long they are."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from events.copies import MARKS, MIN_SPACING
from events.envelope import GENESIS_HASH, Envelope, NewEvent, canonical_json, seal, verify_chain
from events.redis_store import RedisEventStore
from events.sqlite_store import SQLiteEventStore
from events.store import AppendResult, ConcurrencyConflict, CopiedPrefix, EventStore, StoreError
from tests.contract.conftest import Backend
from tests.contract.test_store_contract import assert_feed_in_game_order, drain, step, steps

BRANCHED_AT = "2026-01-02T03:04:05.000006Z"


def marker(source: str = "src") -> NewEvent:
    """A branch's first event, recorded at a fixed time so the expected log can be sealed."""
    return NewEvent(
        "branched_from", {"source": source}, {"system": "branch"}, recorded_at=BRANCHED_AT
    )


def copied(
    game_id: str, source: list[Envelope], first: NewEvent, key: str | None = None
) -> list[Envelope]:
    """What appending ``first`` and ``NewEvent.copy_of`` of every envelope of ``source`` to a
    new game ``game_id`` would store: the log a copied prefix must read back as."""
    log = [seal(game_id, 1, first, GENESIS_HASH, BRANCHED_AT, key)]
    for seq, envelope in enumerate(source, start=2):
        log.append(seal(game_id, seq, NewEvent.copy_of(envelope), log[-1]["hash"], "", key))
    return log


def stored_entries(store: EventStore, game_id: str) -> int:
    """How many entries the backend itself holds for a game (rows, stream entries)."""
    if isinstance(store, RedisEventStore):
        return int(store.client.xlen(store._key(game_id, "events")))
    assert isinstance(store, SQLiteEventStore)
    return int(store._query("SELECT count(*) FROM events WHERE game_id = ?", (game_id,))[0][0])


def branch(
    store: EventStore, game_id: str, source: str, length: int, key: str | None = None
) -> AppendResult:
    return store.append(game_id, [marker(source), CopiedPrefix(source, length)], 0, key)


def test_a_copied_prefix_reads_back_as_the_copies_it_stands_for(store: EventStore) -> None:
    store.append("src", steps(1, 30), expected_version=0)

    result = branch(store, "b", "src", 20)

    expected = copied("b", store.read("src")[:20], marker())
    assert result.version == 21 and store.version("b") == 21
    assert result.envelopes == expected == store.read("b")
    assert verify_chain(store.read("b"), "b") is None
    assert [e["recorded_at"] for e in expected[1:]] == [
        e["recorded_at"] for e in store.read("src")[:20]
    ]


def test_reads_after_any_seq_up_to_any_limit_are_slices_of_the_whole_log(
    store: EventStore,
) -> None:
    store.append("src", steps(1, 150), expected_version=0)
    branch(store, "b", "src", 140)
    store.append("b", steps(1, 5), expected_version=141)
    whole = store.read("b")
    assert len(whole) == 146

    for after in (*range(0, 12), 63, 64, 65, 70, 127, 128, 129, 139, 140, 141, 142, 145, 146):
        for limit in (None, 1, 2, 5, 64, 200):
            expected = whole[after:] if limit is None else whole[after : after + limit]
            assert store.read("b", after=after, limit=limit) == expected, (after, limit)


def test_appends_after_the_copies_continue_their_chain(store: EventStore) -> None:
    store.append("src", steps(1, 10), expected_version=0)
    branch(store, "b", "src", 10)

    with pytest.raises(ConcurrencyConflict):
        store.append("b", [step(1)], expected_version=2)
    result = store.append("b", steps(1, 2), expected_version=11)

    log = store.read("b")
    assert result.version == 13 and [e["seq"] for e in log] == list(range(1, 14))
    assert log[11]["prev_hash"] == log[10]["hash"]
    assert verify_chain(log, "b") is None


def test_a_repeated_idempotency_key_returns_the_copies_again_and_adds_nothing(
    store: EventStore,
) -> None:
    store.append("src", steps(1, 8), expected_version=0)
    first = branch(store, "b", "src", 8, key="make-b")

    again = branch(store, "b", "src", 8, key="make-b")

    assert again.replayed and again.version == first.version == 9
    assert again.envelopes == first.envelopes == store.read("b")
    assert {e["idempotency_key"] for e in store.read("b")} == {"make-b"}
    assert first.envelopes == copied("b", store.read("src"), marker(), key="make-b")


def test_a_copy_of_a_game_holding_copies_reads_as_a_copy_of_its_log(store: EventStore) -> None:
    store.append("src", steps(1, 100), expected_version=0)
    branch(store, "b1", "src", 90)
    store.append("b1", steps(1, 10), expected_version=91)
    b1 = store.read("b1")

    # Inside b1's copies, at their end, and into b1's own events.
    for number, length in enumerate((1, 2, 50, 91, 92, 101)):
        game_id = f"b2-{number}"
        branch(store, game_id, "b1", length)
        assert store.read(game_id) == copied(game_id, b1[:length], marker("b1")), length
    branch(store, "b3", "b2-5", 102)
    assert store.read("b3") == copied("b3", store.read("b2-5"), marker("b2-5"))
    assert verify_chain(store.read("b3"), "b3") is None


def test_the_entries_stored_for_copies_do_not_grow_with_their_length(store: EventStore) -> None:
    store.append("src", steps(1, 2000), expected_version=0)

    for length in (1, 10, 2000):
        branch(store, f"short-{length}", "src", 1)
        branch(store, f"b-{length}", "src", length)
        assert stored_entries(store, f"b-{length}") == 2  # its own first event and one marker
    # A copy of a copy names what that copy names: its size grows with the depth only.
    branch(store, "bb", "b-2000", 2001)
    assert stored_entries(store, "bb") == 2


def test_a_marker_stays_small_however_long_the_prefix(backend: Backend) -> None:
    store = backend.open()
    store.append("src", steps(1, 5000), expected_version=0)
    branch(store, "b", "src", 5000)
    if isinstance(store, RedisEventStore):
        texts = [f["e"] for _, f in store.client.xrange(store._key("b", "events"))]
    else:
        assert isinstance(store, SQLiteEventStore)
        texts = [t for (t,) in store._query("SELECT envelope FROM events WHERE game_id = 'b'")]
    marker_text = max(texts, key=len)
    assert marker_text.startswith('{"copies":')
    # Its runs, the hash before it and at most MARKS + 1 hashes: a few kilobytes.
    assert len(marker_text) < 200 + (MARKS + 1) * 80
    assert MIN_SPACING * MARKS < 5000


def test_a_new_connection_reads_back_byte_identical_copies(backend: Backend) -> None:
    store = backend.open()
    store.append("src", steps(1, 12), expected_version=0)
    written = branch(store, "b", "src", 12).envelopes

    again = backend.open().read("b")

    assert [canonical_json(e) for e in again] == [canonical_json(e) for e in written]


@pytest.mark.parametrize("limit", [1, 3, 7, 500])
def test_the_feed_delivers_every_copy_in_game_order(store: EventStore, limit: int) -> None:
    store.append("src", steps(1, 20), expected_version=0)
    branch(store, "b1", "src", 15)
    store.append("other", steps(1, 2), expected_version=0)
    store.append("b1", steps(1, 3), expected_version=16)
    branch(store, "b2", "b1", 19)

    delivered, _ = drain(store, None, limit=limit)

    versions = {"src": 20, "b1": 19, "other": 2, "b2": 20}
    assert_feed_in_game_order(delivered, versions)
    first_seen: dict[tuple[str, int], Envelope] = {}
    for envelope in delivered:
        first_seen.setdefault((envelope["game_id"], envelope["seq"]), envelope)
    for game_id in versions:
        assert [first_seen[(game_id, e["seq"])] for e in store.read(game_id)] == store.read(game_id)


def test_the_feed_resumes_inside_copies_on_a_new_connection(backend: Backend) -> None:
    store = backend.open()
    store.append("src", steps(1, 30), expected_version=0)
    branch(store, "b", "src", 30)
    page = store.read_feed(None, limit=40)  # the source's 30, then 10 of the branch's 31

    rest, _ = drain(backend.open(), page.position, limit=6)

    assert_feed_in_game_order(page.events + rest, {"src": 30, "b": 31})


def test_a_copied_prefix_only_follows_the_first_event_of_a_games_opening_append(
    store: EventStore,
) -> None:
    store.append("src", steps(1, 5), expected_version=0)
    store.append("g", [step(1)], expected_version=0)

    with pytest.raises(ValueError):
        store.append("b", [CopiedPrefix("src", 3)], expected_version=0)
    with pytest.raises(ValueError):
        store.append("g", [step(2), CopiedPrefix("src", 3)], expected_version=1)
    with pytest.raises(ValueError):
        store.append("b", [marker(), CopiedPrefix("src", 6)], expected_version=0)
    with pytest.raises(ValueError):
        store.append("b", [marker(), CopiedPrefix("src", 0)], expected_version=0)

    assert store.version("b") == 0 and store.read("b") == []


def test_a_source_event_changed_under_its_copies_is_a_store_error(tmp_path: Path) -> None:
    """On SQLite, whose stored events can be changed in place (a damaged or tampered file):
    a read of copies that passes one of the marker's hashes checks it."""
    store = SQLiteEventStore(tmp_path / "events.db")
    store.append("src", steps(1, 300), expected_version=0)
    branch(store, "b", "src", 300)
    changed = store.read("src")[99]
    changed["data"]["action"]["n"] = -1
    with sqlite3.connect(store.path) as connection:
        connection.execute(
            "UPDATE events SET envelope = ? WHERE game_id = 'src' AND seq = 100",
            (canonical_json(changed).decode("utf-8"),),
        )
    connection.close()
    store.close()

    reopened = SQLiteEventStore(tmp_path / "events.db")
    try:
        with pytest.raises(StoreError, match="no longer match"):
            reopened.read("b")
        assert len(reopened.read("b", limit=101)) == 101  # no mark passed yet: not noticed
    finally:
        reopened.close()
