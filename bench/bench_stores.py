"""Append rate of each event store against the raw write it is built on, in the same run.

- SQLite: ``SQLiteEventStore.append`` (one event per append: version check, hash chain,
  idempotency key, WAL with synchronous=FULL) against a plain ``INSERT`` of the same
  envelope text in one transaction per append, on an equivalent table with the same
  pragmas.
- Redis: ``RedisEventStore.append`` (read the head, seal, one Lua script) against a bare
  ``XADD`` round trip of the same envelope text, on the same redis-server, which the bench
  starts on a free port twice: with AOF ``appendfsync always``, and without persistence.
- The Redis feed (``read_feed``, what the game index catches up with): a read after one
  append among 5,000 games, against the same among 10 games (the stream's cost does not grow
  with the games), and against the walk of the registry a cluster reads (every game's version
  asked, a cursor per game in the position).
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
#: Games registered for the feed's bench, and the few it is compared with.
MANY_GAMES = 5_000
FEW_GAMES = 10
FEED_READS = 50
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
        _redis_feed(report, directory / "feed")


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


def _redis_feed(report: Report, directory: Path) -> None:
    directory.mkdir(parents=True)
    server = RedisServer(free_port(), directory, ()).start()
    stores = {
        games: RedisEventStore.from_url(server.url, prefix=f"bench{games}")
        for games in (FEW_GAMES, MANY_GAMES)
    }
    try:
        # Both sets of games exist before either is measured: the same server, the same
        # process, whichever is measured first.
        positions = {games: _register(store, games) for games, store in stores.items()}
        rates = {
            games: _feed_reads(store, games, positions[games]) for games, store in stores.items()
        }
    finally:
        for store in stores.values():
            store.close()
        server.stop()
    (few, _), (many, walk) = rates[FEW_GAMES], rates[MANY_GAMES]
    report(f"redis feed read after 1 append, {MANY_GAMES:,} games", many, "reads/s",
           few, f"{FEW_GAMES} games")  # fmt: skip
    report(f"redis feed read after 1 append, {MANY_GAMES:,} games", many, "reads/s",
           walk, "walk")  # fmt: skip


def _register(store: RedisEventStore, games: int) -> dict[str, object]:
    """``games`` games of one event each; the feed position after them."""
    for number in range(games):
        store.append(f"g{number}", [EVENT], 0)
    return store.read_feed(None, limit=games + 1).position


def _feed_reads(
    store: RedisEventStore, games: int, position: dict[str, object]
) -> tuple[float, float]:
    """Feed reads per second that each find one new append among ``games`` games: through
    the stream (``read_feed``), and by walking the registry (``_walk``)."""
    at = {"stream": position}
    versions = iter(range(1, 2 * REPEATS * FEED_READS + 1))

    def reads(kind: str) -> None:
        for _ in range(FEED_READS):
            store.append("g0", [EVENT], next(versions))
            if kind == "stream":
                page = store.read_feed(at[kind])
            else:
                page = store._walk(at[kind], limit=500)
            assert len(page.events) == 1, "each read finds the one new append"
            at[kind] = page.position

    stream = FEED_READS / best_of(REPEATS, lambda: reads("stream"))
    at["walk"] = store._walk({}, limit=2 * REPEATS * FEED_READS + games).position
    walk = FEED_READS / best_of(REPEATS, lambda: reads("walk"))
    return stream, walk
