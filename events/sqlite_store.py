"""The embedded event store: one SQLite file in WAL mode, committed means durable.

Tables (created on first open):

- ``events``: one row per envelope, ``position`` is a global autoincrement (the feed's
  order), ``(game_id, seq)`` is unique, ``envelope`` is the canonical JSON text, returned
  byte-identical; or one row for a copied prefix (a branch's copy of its source's past), a
  copy marker at the seq of its first copy, whose copies reads re-seal from the source's
  rows (events.copies).
- ``streams``: one row per game, its version and head hash (the append's version check).
- ``idempotency``: which seqs an idempotency key wrote, unique per game.
- ``snapshots``: derived data after a seq, as JSON.

An append is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's write lock before it
reads the version, so two writers (threads or processes) can never both pass the check.

``append(..., then=statements)`` also runs ``statements`` (SQL and its parameters) in that
transaction, after the events are written: the embedded job runner keeps its records in this
file (service.application.job_state), so an append and the automatic step it makes due are committed
together, or not at all (as the Redis store does in its script).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from events.copies import Copies, Entry, Marker, is_marker_text, parse_entry
from events.envelope import GENESIS_HASH, Envelope, canonical_json
from events.sqlite_pool import BUSY_TIMEOUT, SQLitePool
from events.store import (
    Appended,
    AppendResult,
    ConcurrencyConflict,
    CopiedPrefix,
    EventStore,
    FeedPage,
    StoreError,
    check_append,
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    envelope TEXT NOT NULL,
    UNIQUE (game_id, seq)
);
CREATE TABLE IF NOT EXISTS streams (
    game_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    head_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS idempotency (
    game_id TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    PRIMARY KEY (game_id, idempotency_key)
);
CREATE TABLE IF NOT EXISTS snapshots (
    game_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (game_id, seq)
);
"""


#: Free bytes the disk under the database must keep for the store to report it takes writes
#: (SQLite itself fails an append only when the disk is quite full: ``StoreFull``).
MIN_FREE_BYTES = 16 * 1024 * 1024

#: A side write of ``append(..., then=...)``: one SQL statement and its parameters.
Statement = tuple[str, tuple[Any, ...]]


def utc_now() -> str:
    """The recorded_at form: UTC ISO-8601 with microseconds and a ``Z``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SQLiteEventStore(EventStore):
    """Event streams in one SQLite file; safe from many threads and several processes."""

    def __init__(self, path: str | Path, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self._pool = SQLitePool(path, busy_timeout)
        self.path = self._pool.path
        # Threads of one process queue here rather than in SQLite's busy handler, which
        # sleeps in steps of up to 100 ms; other processes still meet SQLite's own lock.
        self._write_lock = threading.Lock()
        with self._write_lock:
            self._pool.create(SCHEMA)
        self._copies = Copies(self._read_stored, self._read_entries)

    def _connection(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._pool.connection()

    def _transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._pool.transaction()

    # -- the contract --------------------------------------------------------------

    def append(
        self,
        game_id: str,
        events: Sequence[Appended],
        expected_version: int,
        idempotency_key: str | None = None,
        *,
        then: Sequence[Statement] = (),
    ) -> AppendResult:
        """The contract's append; ``then``: statements run in the same transaction after a
        successful append (none when it replays or conflicts)."""
        check_append(events, expected_version, game_id)
        batch = None
        if any(isinstance(event, CopiedPrefix) for event in events):
            # Sealed before the write lock is taken: copying reads and hashes the whole prefix,
            # and it happens only in a game's opening append, which chains from the genesis.
            batch = self._copies.seal_batch(
                game_id, events, 0, GENESIS_HASH, utc_now(), idempotency_key
            )
        with self._write_lock, self._transaction() as connection:
            if idempotency_key is not None:
                first = connection.execute(
                    "SELECT first_seq, last_seq FROM idempotency"
                    " WHERE game_id = ? AND idempotency_key = ?",
                    (game_id, idempotency_key),
                ).fetchone()
                if first is not None:
                    envelopes = self._read(
                        connection, game_id, first[0] - 1, first[1] - first[0] + 1
                    )
                    return AppendResult(version=first[1], envelopes=envelopes, replayed=True)
            row = connection.execute(
                "SELECT version, head_hash FROM streams WHERE game_id = ?", (game_id,)
            ).fetchone()
            version, head_hash = row if row is not None else (0, GENESIS_HASH)
            if version != expected_version:
                raise ConcurrencyConflict(game_id, expected_version, version)
            if batch is None:
                batch = self._copies.seal_batch(
                    game_id, events, version, head_hash, utc_now(), idempotency_key
                )
            connection.executemany(
                "INSERT INTO events (game_id, seq, envelope) VALUES (?, ?, ?)",
                [(game_id, seq, text) for seq, text in batch.stored],
            )
            new_version = version + len(batch.envelopes)
            connection.execute(
                "INSERT INTO streams (game_id, version, head_hash) VALUES (?, ?, ?)"
                " ON CONFLICT (game_id) DO UPDATE"
                " SET version = excluded.version, head_hash = excluded.head_hash",
                (game_id, new_version, batch.head_hash),
            )
            if idempotency_key is not None:
                connection.execute(
                    "INSERT INTO idempotency (game_id, idempotency_key, first_seq, last_seq)"
                    " VALUES (?, ?, ?, ?)",
                    (game_id, idempotency_key, version + 1, new_version),
                )
            for sql, parameters in then:
                connection.execute(sql, parameters)
        return AppendResult(version=new_version, envelopes=batch.envelopes)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        with self._connection() as connection:
            return self._read(connection, game_id, after, limit)

    def version(self, game_id: str) -> int:
        rows = self._query("SELECT version FROM streams WHERE game_id = ?", (game_id,))
        return int(rows[0][0]) if rows else 0

    def save_snapshot(self, game_id: str, seq: int, payload: dict[str, Any]) -> None:
        text = canonical_json(payload).decode("utf-8")
        with self._write_lock, self._transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO snapshots (game_id, seq, payload) VALUES (?, ?, ?)",
                (game_id, seq, text),
            )

    def load_snapshot(self, game_id: str, at_most: int) -> tuple[int, dict[str, Any]] | None:
        rows = self._query(
            "SELECT seq, payload FROM snapshots WHERE game_id = ? AND seq <= ?"
            " ORDER BY seq DESC LIMIT 1",
            (game_id, at_most),
        )
        if not rows:
            return None
        return int(rows[0][0]), json.loads(rows[0][1])

    def read_feed(self, position: dict[str, Any] | None, limit: int = 500) -> FeedPage:
        """Rows in the order they were written (``position``); a marker's row gives the copies
        it stands for, and a page that ends inside them says how many it gave (``partial``:
        [the row's position, copies given]), so the next page goes on from there."""
        # Appends hold the write lock from the version check to the commit, so positions
        # become visible in increasing order: resuming after the last one seen misses nothing.
        position = position or {}
        after = int(position.get("after", 0))
        partial = position.get("partial")
        rows = self._query(
            "SELECT position, game_id, seq, envelope FROM events WHERE position > ?"
            " ORDER BY position LIMIT ?",
            (after, limit),
        )
        events: list[Envelope] = []
        for row, game_id, seq, text in rows:
            if len(events) >= limit:
                break
            if not is_marker_text(text):
                events.append(json.loads(text))
                after = int(row)
                continue
            marker = parse_entry(int(seq), text)
            assert isinstance(marker, Marker)
            given = int(partial[1]) if partial is not None and int(partial[0]) == row else 0
            take = min(marker.count - given, limit - len(events))
            low = marker.first + given
            events.extend(self._copies.expand(str(game_id), marker, low, low + take - 1))
            if given + take < marker.count:
                return FeedPage(
                    events=events, position={"after": after, "partial": [row, given + take]}
                )
            after = int(row)
        return FeedPage(events=events, position={"after": after})

    def game_ids(self) -> list[str]:
        return [str(row[0]) for row in self._query("SELECT game_id FROM streams ORDER BY game_id")]

    def ping(self) -> bool:
        try:
            self._query("SELECT 1")
        except StoreError:
            return False
        return True

    def accepts_writes(self) -> bool:
        """False once the disk under the database has less than ``MIN_FREE_BYTES`` free."""
        try:
            free = shutil.disk_usage(self._pool.path.parent).free
        except OSError:
            return False
        return free >= MIN_FREE_BYTES

    def close(self) -> None:
        """Close the idle connections now and the ones in use when their block ends."""
        self._pool.close()

    # -- helpers -------------------------------------------------------------------

    def _query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        return self._pool.query(sql, parameters)

    def _read(
        self, connection: sqlite3.Connection, game_id: str, after: int, limit: int | None
    ) -> list[Envelope]:
        # From the row at or before seq ``after + 1``: a marker there may stand for it.
        rows = connection.execute(
            "SELECT seq, envelope FROM events WHERE game_id = ?1 AND seq >= coalesce("
            "(SELECT max(seq) FROM events WHERE game_id = ?1 AND seq <= ?2), ?2)"
            " ORDER BY seq LIMIT ?3",
            (game_id, after + 1, -1 if limit is None else limit + 1),
        ).fetchall()
        entries: list[Entry] = []
        marked = False
        for seq, text in rows:
            if is_marker_text(text):
                entries.append(parse_entry(int(seq), text))
                marked = True
            elif seq > after:
                entries.append(json.loads(text))
        if marked:
            return self._copies.resolve(game_id, entries, after, limit)
        return [entry for entry in entries[:limit] if not isinstance(entry, Marker)]

    def _read_stored(self, game_id: str, first: int, last: int) -> list[Envelope]:
        rows = self._query(
            "SELECT envelope FROM events WHERE game_id = ? AND seq BETWEEN ? AND ? ORDER BY seq",
            (game_id, first, last),
        )
        return [json.loads(text) for (text,) in rows]

    def _read_entries(self, game_id: str, upto: int) -> list[Entry]:
        rows = self._query(
            "SELECT seq, envelope FROM events WHERE game_id = ? AND seq <= ? ORDER BY seq",
            (game_id, upto),
        )
        return [parse_entry(int(seq), text) for seq, text in rows]
