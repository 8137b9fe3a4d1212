"""The game index: one row per game, for ``GET /games`` (filter by ruleset, status, player).

It is a read model: derived only from the event store's events, never the source of truth,
and rebuilt from scratch by deleting it. ``catch_up`` reads the feed (``read_feed``) after
the position it saved, folds each touched game (through the caller's loader, which caches)
and upserts a summary; a row never goes back to an older version, so two catch-ups running
at once, or an event read twice, leave the same index. Where the store's append can write
it too (a single Redis server), the process that appends a step and holds the game folded
writes the game's row with the append (``RedisGameIndex.row_writes``), the same row a
catch-up would: a catch-up then leaves that game alone.
"""

from __future__ import annotations

import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from events.envelope import Envelope
from events.sqlite_pool import SQLitePool
from events.store import EventStore
from projections.fold import Game, ReplayError

log = logging.getLogger(__name__)

#: ``status`` filter values: a game is ``active`` until it has ``finished``.
STATUSES = ("active", "finished")

Loader = Callable[[str], Game]
#: The game at least as far as the last of some of its events just read from the feed (in
#: order): ``Folder.load_through``, which folds them on from its cache without a read.
ThroughLoader = Callable[[str, list[Envelope]], Game]


@dataclass(frozen=True)
class GameRow:
    """What the index knows of one game."""

    game_id: str
    ruleset: str
    players: list[str]
    version: int
    status: str
    round: Any
    phase: Any
    to_act: list[int]
    awaiting_system: str | None
    created_at: str
    updated_at: str
    #: seats waiting for a player (the lobby), and seats played by bots
    open_seats: list[int] = field(default_factory=list)
    bots: list[int] = field(default_factory=list)
    #: a branch (or another sandbox game), and the game a branch was made from
    sandbox: bool = False
    branch_of: str | None = None
    #: the order games were first seen in (newest first in listings)
    order: int = 0

    def public(self) -> dict[str, Any]:
        """The row's fields but its order (not ``asdict``: no field needs a deep copy, and
        this runs with every append that writes its row)."""
        return {name: getattr(self, name) for name in _PUBLIC_FIELDS}


_PUBLIC_FIELDS = tuple(field.name for field in fields(GameRow) if field.name != "order")


def summarize_game(game: Game, created_at: str, updated_at: str) -> GameRow:
    """The index row of a folded game."""
    status = game.ruleset.status(game.state)
    open_seats = game.open_seats
    branch = game.meta.get("branch") or {}
    return GameRow(
        game_id=str(game.meta["game_id"]),
        ruleset=str(game.meta["ruleset"]),
        players=list(game.meta["players"]),
        version=game.version,
        status="finished" if status.get("finished") else "active",
        round=status.get("round"),
        phase=status.get("phase"),
        to_act=[] if open_seats else list(status.get("to_act", [])),
        awaiting_system=None if open_seats else status.get("awaiting_system"),
        created_at=created_at,
        # A branch's copied events keep the times they were first recorded at, before the
        # branch was made: a row is never updated before it was created.
        updated_at=max(created_at, updated_at),
        open_seats=open_seats,
        bots=[seat for seat in range(len(game.meta["players"])) if game.bot_of(seat)],
        sandbox=bool(game.meta.get("sandbox")),
        branch_of=branch.get("source"),
    )


@dataclass(frozen=True)
class Page:
    rows: list[GameRow]
    #: pass back as ``cursor`` for the next page; None on the last page
    next_cursor: str | None


class GameIndex(ABC):
    """Where the index rows and the feed position live (SQLite file or Redis keys)."""

    def __init__(self) -> None:
        self._catch_up_lock = threading.Lock()

    @abstractmethod
    def position(self) -> dict[str, Any] | None:
        """The feed position after the last event read (None: from the start)."""

    @abstractmethod
    def save(self, rows: list[GameRow], position: dict[str, Any]) -> None:
        """Upsert rows (never to an older version) and remember the feed position."""

    @abstractmethod
    def get(self, game_id: str) -> GameRow | None:
        """The row of one game, if indexed."""

    def get_many(self, game_ids: list[str]) -> dict[str, GameRow | None]:
        """The rows of several games (None: not indexed yet)."""
        return {game_id: self.get(game_id) for game_id in game_ids}

    def versions(self, game_ids: list[str]) -> dict[str, int]:
        """The version each of these games' rows shows (0: not indexed yet)."""
        return {
            game_id: row.version if row is not None else 0
            for game_id, row in self.get_many(game_ids).items()
        }

    @abstractmethod
    def query(
        self,
        ruleset: str | None = None,
        status: str | None = None,
        player: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        *,
        open: bool | None = None,
        sandbox: bool | None = None,
        branch_of: str | None = None,
    ) -> Page:
        """Games matching every given filter, newest first, at most ``limit``: ``open``
        (waiting for players or not), ``sandbox``, ``branch_of`` (a source game's id)."""

    @abstractmethod
    def count_lobbies(self) -> tuple[int, int]:
        """(games waiting for players, unfinished games with a bot seat): the caps on what
        anonymous clients may start (service.http.resources.lobby)."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""

    def catch_up(
        self,
        store: EventStore,
        load: Loader,
        page_size: int = 500,
        through: ThroughLoader | None = None,
    ) -> int:
        """Read the feed to its end, updating the rows of the games it touches.

        Each page costs a fixed number of reads and one write, whatever the number of games
        it touches: the rows are read and saved together, and ``through`` (when given) folds
        each game on with the page's own events instead of reading the store per game. A page
        shorter than ``page_size`` is the feed's end (``EventStore.read_feed``): no read after
        it (where a Redis feed read walks the registry, it asks every game's version: a cluster).
        """
        read = 0
        with self._catch_up_lock:
            while True:
                page = store.read_feed(self.position(), limit=page_size)
                if not page.events:
                    return read
                read += len(page.events)
                touched: dict[str, tuple[str | None, str]] = {}
                events: dict[str, list[Envelope]] = {}
                for envelope in page.events:
                    created = envelope["recorded_at"] if envelope["seq"] == 1 else None
                    earlier = touched.get(envelope["game_id"], (None, ""))
                    touched[envelope["game_id"]] = (
                        earlier[0] or created,
                        max(earlier[1], envelope["recorded_at"]),
                    )
                    events.setdefault(envelope["game_id"], []).append(envelope)
                # A row its game's append wrote already (``RedisGameIndex.row_writes``) is
                # not folded again.
                shown = self.versions(list(touched))
                for game_id in [g for g in touched if shown[g] >= events[g][-1]["seq"]]:
                    del touched[game_id]
                unknown = [game_id for game_id, (created, _) in touched.items() if created is None]
                known = self.get_many(unknown)
                rows = []
                for game_id, (created_at, updated_at) in touched.items():
                    if created_at is None:
                        row = known.get(game_id)
                        created_at = row.created_at if row else updated_at
                    try:
                        if through is None:
                            game = load(game_id)
                        else:
                            game = through(game_id, events[game_id])
                    except KeyError:
                        continue
                    except ReplayError:
                        # One game this build cannot fold (rules it does not have) must not
                        # hold up the index of every other game.
                        log.warning("game %s cannot be folded; left out of the index", game_id)
                        continue
                    rows.append(summarize_game(game, created_at, updated_at))
                self.save(rows, page.position)
                if len(page.events) < page_size:
                    return read


class SQLiteGameIndex(GameIndex):
    """The index in its own SQLite file (beside the event store's file)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS games (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        game_id TEXT NOT NULL UNIQUE,
        ruleset TEXT NOT NULL,
        status TEXT NOT NULL,
        version INTEGER NOT NULL,
        row TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS game_players (
        game_id TEXT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (game_id, name)
    );
    CREATE INDEX IF NOT EXISTS games_by_ruleset ON games (ruleset, ord);
    CREATE INDEX IF NOT EXISTS games_by_status ON games (status, ord);
    CREATE INDEX IF NOT EXISTS players_by_name ON game_players (name);
    CREATE TABLE IF NOT EXISTS feed (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        position TEXT NOT NULL
    );
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self._pool = SQLitePool(path)
        self.path = self._pool.path
        self._pool.create(self.SCHEMA)

    def position(self) -> dict[str, Any] | None:
        rows = self._pool.query("SELECT position FROM feed WHERE id = 1")
        return dict(json.loads(rows[0][0])) if rows else None

    def save(self, rows: list[GameRow], position: dict[str, Any]) -> None:
        with self._pool.transaction() as connection:
            for row in rows:
                text = json.dumps(row.public(), sort_keys=True)
                connection.execute(
                    "INSERT INTO games (game_id, ruleset, status, version, row)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (game_id) DO UPDATE SET"
                    " status = excluded.status, version = excluded.version, row = excluded.row"
                    " WHERE excluded.version > games.version",
                    (row.game_id, row.ruleset, row.status, row.version, text),
                )
                connection.executemany(
                    "INSERT OR IGNORE INTO game_players (game_id, name) VALUES (?, ?)",
                    [(row.game_id, name) for name in row.players],
                )
            connection.execute(
                "INSERT INTO feed (id, position) VALUES (1, ?)"
                " ON CONFLICT (id) DO UPDATE SET position = excluded.position",
                (json.dumps(position, sort_keys=True),),
            )

    def versions(self, game_ids: list[str]) -> dict[str, int]:
        shown = {game_id: 0 for game_id in game_ids}
        for at in range(0, len(game_ids), 500):  # within SQLite's bound on parameters
            chunk = game_ids[at : at + 500]
            marks = ", ".join("?" * len(chunk))
            found = self._pool.query(
                f"SELECT game_id, version FROM games WHERE game_id IN ({marks})", tuple(chunk)
            )
            shown.update({str(game_id): int(version) for game_id, version in found})
        return shown

    def get(self, game_id: str) -> GameRow | None:
        rows = self._pool.query("SELECT ord, row FROM games WHERE game_id = ?", (game_id,))
        return GameRow(**json.loads(rows[0][1]), order=rows[0][0]) if rows else None

    def query(
        self,
        ruleset: str | None = None,
        status: str | None = None,
        player: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
        *,
        open: bool | None = None,
        sandbox: bool | None = None,
        branch_of: str | None = None,
    ) -> Page:
        clauses: list[str] = []
        params: list[Any] = []
        # The lobby and branch columns live in the row's JSON (rows written before they
        # existed read as no open seat, not a sandbox, no source).
        if open is not None:
            clauses.append(
                f"COALESCE(json_array_length(row, '$.open_seats'), 0) {'>' if open else '='} 0"
            )
        if sandbox is not None:
            clauses.append("COALESCE(json_extract(row, '$.sandbox'), 0) = ?")
            params.append(1 if sandbox else 0)
        if branch_of is not None:
            clauses.append("json_extract(row, '$.branch_of') = ?")
            params.append(branch_of)
        if ruleset is not None:
            clauses.append("ruleset = ?")
            params.append(ruleset)
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if player is not None:
            clauses.append("game_id IN (SELECT game_id FROM game_players WHERE name = ?)")
            params.append(player)
        if cursor is not None:
            clauses.append("ord < ?")
            params.append(int(cursor))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        found = self._pool.query(
            f"SELECT ord, row FROM games {where} ORDER BY ord DESC LIMIT ?", (*params, limit + 1)
        )
        rows = [GameRow(**json.loads(text), order=order) for order, text in found[:limit]]
        next_cursor = str(rows[-1].order) if len(found) > limit else None
        return Page(rows, next_cursor)

    def count_lobbies(self) -> tuple[int, int]:
        rows = self._pool.query(
            "SELECT"
            " COALESCE(SUM(COALESCE(json_array_length(row, '$.open_seats'), 0) > 0), 0),"
            " COALESCE(SUM(status = 'active'"
            " AND COALESCE(json_array_length(row, '$.bots'), 0) > 0), 0)"
            " FROM games"
        )
        return int(rows[0][0]), int(rows[0][1])

    def close(self) -> None:
        self._pool.close()
