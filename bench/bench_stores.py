"""Append rate of each event store against the raw write it is built on, in the same run.

- SQLite: ``SQLiteEventStore.append`` (one event per append: version check, hash chain,
  idempotency key, WAL with synchronous=FULL) against a plain ``INSERT`` of the same
  envelope text in one transaction per append, on an equivalent table with the same
  pragmas.
- Redis: ``RedisEventStore.append`` (read the head, seal, one Lua script) against a bare
  ``XADD`` round trip of the same envelope text, on the same redis-server, which the bench
  starts on a free port twice: with AOF ``appendfsync always``, and without persistence.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from bench.__main__ import best_of
from events.envelope import GENESIS_HASH, NewEvent, canonical_json, seal
from events.redis_store import RedisEventStore
from events.sqlite_store import SQLiteEventStore, utc_now
from events.store import EventStore
from tests.redis_servers import RedisServer, free_port

APPENDS = 300
REPEATS = 3
EVENT = NewEvent(type="action", data={"action": {"type": "play", "card": 3}}, actor={"seat": 1})
ENVELOPE_TEXT = canonical_json(
    seal("bench-game", 1, EVENT, GENESIS_HASH, utc_now(), "command-1")
).decode("utf-8")

AOF_ALWAYS = ("--appendonly", "yes", "--appendfsync", "always")

Report = Callable[..., None]


def run(report: Report) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        _sqlite(report, directory)
        _redis(report, directory / "aof", "AOF appendfsync always", AOF_ALWAYS)
        _redis(report, directory / "memory", "no persistence", ())


def _append_rate(store: EventStore) -> float:
    """Appends per second: ``APPENDS`` single-event appends to a fresh game, best of runs."""
    runs = iter(range(REPEATS))

    def appends() -> None:
        game_id = f"bench-{next(runs)}"
        for version in range(APPENDS):
            store.append(game_id, [EVENT], version, idempotency_key=f"command-{version}")

    return APPENDS / best_of(REPEATS, appends)


def _sqlite(report: Report, directory: Path) -> None:
    store = SQLiteEventStore(directory / "store.db")
    try:
        ours = _append_rate(store)
    finally:
        store.close()
    with closing(sqlite3.connect(directory / "raw.db", isolation_level=None)) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute(
            "CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT,"
            " game_id TEXT NOT NULL, seq INTEGER NOT NULL, envelope TEXT NOT NULL,"
            " UNIQUE (game_id, seq))"
        )
        runs = iter(range(REPEATS))

        def inserts() -> None:
            game_id = f"raw-{next(runs)}"
            for seq in range(1, APPENDS + 1):
                connection.execute("BEGIN")
                connection.execute(
                    "INSERT INTO events (game_id, seq, envelope) VALUES (?, ?, ?)",
                    (game_id, seq, ENVELOPE_TEXT),
                )
                connection.execute("COMMIT")

        raw = APPENDS / best_of(REPEATS, inserts)
    report("sqlite append (1 event, WAL, synchronous=FULL)", ours, "appends/s", raw, "INSERT")


def _redis(report: Report, directory: Path, label: str, args: tuple[str, ...]) -> None:
    directory.mkdir(parents=True)
    server = RedisServer(free_port(), directory, args).start()
    try:
        store = RedisEventStore.from_url(server.url)
        try:
            ours = _append_rate(store)
        finally:
            store.close()
        with server.client() as client:
            runs = iter(range(REPEATS))

            def xadds() -> None:
                key = f"raw:{{bench-{next(runs)}}}:events"
                for _ in range(APPENDS):
                    client.xadd(key, {"e": ENVELOPE_TEXT})

            raw = APPENDS / best_of(REPEATS, xadds)
    finally:
        server.stop()
    report(f"redis append (1 event, {label})", ours, "appends/s", raw, "XADD")
