"""Client applications (docs/api.md, "Applications"; docs/security.md, "Application keys").

An application registers once (``POST /apps``) and gets a secret key, ``mla_<random>``,
shown once; the service keeps only its sha256 (``key_hash``), next to the application's id.
A key is sent as ``Authorization: Bearer mla_...``; it is never a seat token (a seat token
never starts with ``mla_``, ``service.application.auth.new_token``), and a seat token is never
looked up as a key.

Custody: a game created with a key belongs to its application, which holds the seats it
named there and the seats it joins with the key. The registry keeps, per application, the
games it holds in the order it took them (``Held.number``, from 1: the app stream's cursor
names games by it) and the seats of each; and per game, which application holds each seat,
so another application's key is refused there. A held seat that is left is let go.

The registry lives where the job state lives: the jobs' Redis when ``MEEPLE_REDIS_URL`` is
set (every process sees a revoked key at once), else a SQLite file beside the embedded store.
Nothing here is ever in a game's log: which application holds a seat is nobody else's business.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from events.redis_clients import redis_client
from events.sqlite_pool import SQLitePool
from service.application.auth import APP_KEY_PREFIX

#: How every application key starts: a key is told from a seat token by it alone.
KEY_PREFIX = APP_KEY_PREFIX


class AppError(Exception):
    """A request about applications that cannot be done: ``code`` stable, ``message`` readable."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def new_key() -> str:
    """A fresh application key (256 bits of randomness after its prefix)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def is_app_key(token: str | None) -> bool:
    return token is not None and token.startswith(KEY_PREFIX)


def key_hash(key: str) -> str:
    """What the registry keeps of a key: its sha256 hex digest."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class App:
    """A registered application (never its key)."""

    id: str
    name: str
    created_at: float
    #: the client address it was registered from (its cap ``MEEPLE_MAX_APPS_PER_ADDRESS``)
    address: str

    @property
    def owner(self) -> str:
        """Its owner key for the caps, quotas and shares (service.application.owners)."""
        return f"app:{self.id}"


@dataclass(frozen=True)
class Held:
    """A game an application holds: the order it took it in (from 1), and its seats."""

    game_id: str
    number: int
    seats: tuple[int, ...] = field(default_factory=tuple)


class AppRegistry(ABC):
    """Applications, their key hashes and their custody of seats."""

    @abstractmethod
    def register(self, app: App, hashed: str) -> None: ...

    @abstractmethod
    def count_from(self, address: str) -> int:
        """How many applications registered from ``address`` are not revoked."""

    @abstractmethod
    def by_key(self, hashed: str) -> App | None: ...

    @abstractmethod
    def replace_key(self, app_id: str, old_hash: str, new_hash: str) -> None: ...

    @abstractmethod
    def revoke(self, app: App, hashed: str) -> None:
        """Forget the application: its key stops working at once, its custody ends."""

    @abstractmethod
    def hold(self, app_id: str, game_id: str, seats: list[int]) -> Held:
        """Take ``seats`` of the game into the application's custody (added to those held)."""

    @abstractmethod
    def let_go(self, app_id: str, game_id: str, seat: int) -> None: ...

    @abstractmethod
    def holders(self, game_id: str) -> dict[int, str]:
        """seat -> the application holding it, for every held seat of the game."""

    @abstractmethod
    def held(self, app_id: str) -> list[Held]:
        """Every game the application holds, in the order it took them."""

    @abstractmethod
    def add_webhook(self, app_id: str, webhook: dict[str, Any], most: int) -> bool:
        """Keep an application webhook (its secret included), unless it has ``most`` already."""

    @abstractmethod
    def webhooks(self, app_id: str) -> list[dict[str, Any]]:
        """The application's webhooks, oldest first."""

    @abstractmethod
    def remove_webhook(self, app_id: str, webhook_id: str) -> bool: ...

    def held_seats(self, app_id: str, game_id: str) -> frozenset[int]:
        return frozenset(seat for seat, holder in self.holders(game_id).items() if holder == app_id)

    def check(self) -> bool:
        """Whether the registry answers (``/ready``)."""
        return True

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


def app_of_key(registry: AppRegistry, key: str) -> App | None:
    """The application of ``key`` (None: unknown or revoked), looked up by its hash: the key
    itself is never kept, and a lookup by a 256-bit digest tells a timing nothing useful."""
    return registry.by_key(key_hash(key))


def register_app(
    registry: AppRegistry, name: str, address: str, per_address: int
) -> tuple[App, str]:
    """A new application and its key (the only time the key is seen), or AppError
    ``too_many_apps`` past ``per_address`` applications from that address (0: no cap)."""
    if per_address and registry.count_from(address) >= per_address:
        raise AppError(
            "too_many_apps",
            f"{per_address} applications are registered from your address, the most allowed; "
            "revoke one (DELETE /apps/me) or use the key you have.",
            429,
        )
    app = App(uuid.uuid4().hex, name, time.time(), address)
    key = new_key()
    registry.register(app, key_hash(key))
    return app, key


def rotate_key(registry: AppRegistry, app: App, old_key: str) -> str:
    """A new key for the application; the old one stops working at once."""
    key = new_key()
    registry.replace_key(app.id, key_hash(old_key), key_hash(key))
    return key


# -- SQLite ------------------------------------------------------------------------------------


class SQLiteAppRegistry(AppRegistry):
    """The registry in a SQLite file (the embedded default)."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS apps (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        created_at REAL NOT NULL,
        address TEXT NOT NULL,
        games INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS apps_by_address ON apps (address);
    CREATE TABLE IF NOT EXISTS app_games (
        app_id TEXT NOT NULL,
        game_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        PRIMARY KEY (app_id, game_id)
    );
    CREATE TABLE IF NOT EXISTS app_webhooks (
        app_id TEXT NOT NULL,
        id TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (app_id, id)
    );
    CREATE TABLE IF NOT EXISTS app_seats (
        game_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        app_id TEXT NOT NULL,
        PRIMARY KEY (game_id, seat)
    )
    """

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self._pool.create(self.SCHEMA)

    def register(self, app: App, hashed: str) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "INSERT INTO apps (id, key_hash, name, created_at, address) VALUES (?, ?, ?, ?, ?)",
                (app.id, hashed, app.name, app.created_at, app.address),
            )

    def count_from(self, address: str) -> int:
        rows = self._pool.query("SELECT COUNT(*) FROM apps WHERE address = ?", (address,))
        return int(rows[0][0])

    def by_key(self, hashed: str) -> App | None:
        rows = self._pool.query(
            "SELECT id, name, created_at, address FROM apps WHERE key_hash = ?", (hashed,)
        )
        return App(*rows[0]) if rows else None

    def replace_key(self, app_id: str, old_hash: str, new_hash: str) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "UPDATE apps SET key_hash = ? WHERE id = ? AND key_hash = ?",
                (new_hash, app_id, old_hash),
            )

    def revoke(self, app: App, hashed: str) -> None:
        with self._pool.transaction() as db:
            db.execute("DELETE FROM apps WHERE id = ?", (app.id,))
            db.execute("DELETE FROM app_games WHERE app_id = ?", (app.id,))
            db.execute("DELETE FROM app_seats WHERE app_id = ?", (app.id,))
            db.execute("DELETE FROM app_webhooks WHERE app_id = ?", (app.id,))

    def hold(self, app_id: str, game_id: str, seats: list[int]) -> Held:
        with self._pool.transaction() as db:
            found = db.execute(
                "SELECT number FROM app_games WHERE app_id = ? AND game_id = ?", (app_id, game_id)
            ).fetchone()
            if found is None:
                db.execute("UPDATE apps SET games = games + 1 WHERE id = ?", (app_id,))
                (number,) = db.execute("SELECT games FROM apps WHERE id = ?", (app_id,)).fetchone()
                db.execute("INSERT INTO app_games VALUES (?, ?, ?)", (app_id, game_id, number))
            else:
                (number,) = found
            for seat in seats:
                db.execute(
                    "INSERT INTO app_seats VALUES (?, ?, ?) ON CONFLICT (game_id, seat) "
                    "DO UPDATE SET app_id = excluded.app_id",
                    (game_id, seat, app_id),
                )
            held = db.execute(
                "SELECT seat FROM app_seats WHERE game_id = ? AND app_id = ? ORDER BY seat",
                (game_id, app_id),
            ).fetchall()
        return Held(game_id, int(number), tuple(row[0] for row in held))

    def let_go(self, app_id: str, game_id: str, seat: int) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "DELETE FROM app_seats WHERE game_id = ? AND seat = ? AND app_id = ?",
                (game_id, seat, app_id),
            )

    def holders(self, game_id: str) -> dict[int, str]:
        rows = self._pool.query("SELECT seat, app_id FROM app_seats WHERE game_id = ?", (game_id,))
        return {int(seat): str(app_id) for seat, app_id in rows}

    def held(self, app_id: str) -> list[Held]:
        rows = self._pool.query(
            "SELECT g.game_id, g.number, s.seat FROM app_games g LEFT JOIN app_seats s "
            "ON s.game_id = g.game_id AND s.app_id = g.app_id WHERE g.app_id = ? "
            "ORDER BY g.number, s.seat",
            (app_id,),
        )
        found: dict[str, tuple[int, list[int]]] = {}
        for game_id, number, seat in rows:
            entry = found.setdefault(game_id, (int(number), []))
            if seat is not None:
                entry[1].append(int(seat))
        return [Held(game, number, tuple(seats)) for game, (number, seats) in found.items()]

    def add_webhook(self, app_id: str, webhook: dict[str, Any], most: int) -> bool:
        with self._pool.transaction() as db:
            (count,) = db.execute(
                "SELECT COUNT(*) FROM app_webhooks WHERE app_id = ?", (app_id,)
            ).fetchone()
            if count >= most:
                return False
            db.execute(
                "INSERT INTO app_webhooks VALUES (?, ?, ?)",
                (app_id, webhook["id"], json.dumps(webhook)),
            )
        return True

    def webhooks(self, app_id: str) -> list[dict[str, Any]]:
        rows = self._pool.query(
            "SELECT record FROM app_webhooks WHERE app_id = ? ORDER BY rowid", (app_id,)
        )
        return [json.loads(row[0]) for row in rows]

    def remove_webhook(self, app_id: str, webhook_id: str) -> bool:
        with self._pool.transaction() as db:
            done = db.execute(
                "DELETE FROM app_webhooks WHERE app_id = ? AND id = ?", (app_id, webhook_id)
            )
            return bool(done.rowcount)

    def close(self) -> None:
        self._pool.close()


# -- Redis -------------------------------------------------------------------------------------


class RedisAppRegistry(AppRegistry):
    """The registry in Redis: ``<prefix>:key:<hash>`` -> the application (JSON),
    ``<prefix>:address:<address>`` its address's applications, ``<prefix>:{<id>}:games`` (game ->
    number) and ``:count``, and ``<prefix>:seats:{<game>}`` (seat -> application)."""

    def __init__(self, client: redis.Redis, prefix: str = "meeple:apps") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str) -> RedisAppRegistry:
        return cls(redis_client(url))

    def _key(self, hashed: str) -> str:
        return f"{self.prefix}:key:{hashed}"

    def _address(self, address: str) -> str:
        return f"{self.prefix}:address:{address}"

    def _games(self, app_id: str) -> str:
        return f"{self.prefix}:{{{app_id}}}:games"

    def _count(self, app_id: str) -> str:
        return f"{self.prefix}:{{{app_id}}}:count"

    def _webhooks(self, app_id: str) -> str:
        return f"{self.prefix}:{{{app_id}}}:webhooks"

    def _seats(self, game_id: str) -> str:
        return f"{self.prefix}:seats:{{{game_id}}}"

    def register(self, app: App, hashed: str) -> None:
        record = json.dumps(
            {"id": app.id, "name": app.name, "created_at": app.created_at, "address": app.address}
        )
        pipe = self.client.pipeline(transaction=False)
        pipe.set(self._key(hashed), record)
        pipe.sadd(self._address(app.address), app.id)
        pipe.execute()

    def count_from(self, address: str) -> int:
        return int(self.client.scard(self._address(address)))

    def by_key(self, hashed: str) -> App | None:
        raw = self.client.get(self._key(hashed))
        if raw is None:
            return None
        found = json.loads(raw)
        return App(found["id"], found["name"], float(found["created_at"]), found["address"])

    def replace_key(self, app_id: str, old_hash: str, new_hash: str) -> None:
        raw = self.client.get(self._key(old_hash))
        if raw is None or json.loads(raw)["id"] != app_id:
            return
        pipe = self.client.pipeline(transaction=True)
        pipe.set(self._key(new_hash), raw)
        pipe.delete(self._key(old_hash))
        pipe.execute()

    def revoke(self, app: App, hashed: str) -> None:
        self.client.delete(self._key(hashed))
        self.client.srem(self._address(app.address), app.id)
        for held in self.held(app.id):
            for seat in held.seats:
                self.let_go(app.id, held.game_id, seat)
        self.client.delete(self._games(app.id), self._count(app.id), self._webhooks(app.id))

    def hold(self, app_id: str, game_id: str, seats: list[int]) -> Held:
        found = self.client.hget(self._games(app_id), game_id)
        if found is None:
            taken = int(self.client.incr(self._count(app_id)))
            if not self.client.hsetnx(self._games(app_id), game_id, taken):
                found = self.client.hget(self._games(app_id), game_id)
            number = taken if found is None else int(found)
        else:
            number = int(found)
        if seats:
            self.client.hset(self._seats(game_id), mapping={str(seat): app_id for seat in seats})
        return Held(game_id, number, tuple(sorted(self.held_seats(app_id, game_id))))

    def let_go(self, app_id: str, game_id: str, seat: int) -> None:
        # Only the application's own hold: a script would make it atomic; a seat is let go by
        # its holder alone, so a read then a delete cannot drop another's.
        if self.client.hget(self._seats(game_id), str(seat)) in (app_id, app_id.encode()):
            self.client.hdel(self._seats(game_id), str(seat))

    def holders(self, game_id: str) -> dict[int, str]:
        found = self.client.hgetall(self._seats(game_id))
        return {int(seat): _text(app) for seat, app in found.items()}

    def held(self, app_id: str) -> list[Held]:
        games = self.client.hgetall(self._games(app_id))
        ordered = sorted(((int(number), _text(game)) for game, number in games.items()))
        pipe = self.client.pipeline(transaction=False)
        for _, game_id in ordered:
            pipe.hgetall(self._seats(game_id))
        seats_of = pipe.execute() if ordered else []
        found = []
        for (number, game_id), seats in zip(ordered, seats_of, strict=True):
            mine = sorted(int(seat) for seat, app in seats.items() if _text(app) == app_id)
            found.append(Held(game_id, number, tuple(mine)))
        return found

    def add_webhook(self, app_id: str, webhook: dict[str, Any], most: int) -> bool:
        # One list per application, in one hash slot: the count and the push in one script.
        added = self.client.eval(
            "if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end "
            "redis.call('RPUSH', KEYS[1], ARGV[2]) return 1",
            1,
            self._webhooks(app_id),
            most,
            json.dumps(webhook),
        )
        return bool(added)

    def webhooks(self, app_id: str) -> list[dict[str, Any]]:
        return [json.loads(raw) for raw in self.client.lrange(self._webhooks(app_id), 0, -1)]

    def remove_webhook(self, app_id: str, webhook_id: str) -> bool:
        found: list[Any] = list(self.client.lrange(self._webhooks(app_id), 0, -1))
        for raw in found:
            if json.loads(raw)["id"] == webhook_id:
                return bool(self.client.lrem(self._webhooks(app_id), 1, raw))
        return False

    def check(self) -> bool:
        return bool(self.client.ping())

    def close(self) -> None:
        self.client.close()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def registry_location(store_url: str, redis_url: str | None) -> str:
    """Where a deployment keeps its applications: its jobs Redis, else beside the store."""
    if redis_url:
        return redis_url
    scheme, _, rest = store_url.partition("://")
    if scheme == "sqlite":
        path = Path(rest.removeprefix("/")).with_suffix(".apps.db")
        return f"sqlite:///{path.as_posix()}"
    return store_url


def open_registry(store_url: str, redis_url: str | None) -> AppRegistry:
    location = registry_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        return SQLiteAppRegistry(rest.removeprefix("/"))
    if scheme == "redis+cluster":
        raise ValueError("client applications need a single Redis for MEEPLE_REDIS_URL")
    return RedisAppRegistry.from_url(location)
