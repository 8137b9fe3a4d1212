"""Bot games and their owners: which unfinished games have bots, whose they are and whether they
are paused; the caps on them, per owner and in all; and the pausing of a game of bots only that
nobody attends (docs/operations.md, "Fair shares").

A game becomes a *bot game* when it is created with a bot seat or an open seat is given to a
bot (``service.application.lobby``); whoever made it one is its owner
(``service.application.owners``). While it is *live* it counts under
``MEEPLE_MAX_BOT_GAMES_PER_OWNER`` for its owner and ``MEEPLE_MAX_BOT_GAMES`` in all
(``admit``, atomically: a burst of requests cannot pass a cap together); the admin's count
under neither and are never refused. It stops counting when it ends (the append that ends it
says so: ``service.application.commands.append``) or pauses.

**Pausing.** A game of bots only (no seat a person plays) whose bot turn falls due when nobody
has read it (any ``GET`` of the game or under it) for ``MEEPLE_BOT_GAME_IDLE`` seconds and no
live stream of it is open pauses: the turn is not played, its due mark is cleared, and the
game no longer counts under the caps. The next read or stream of it resumes it if its owner's
caps (and the service's) have room then: its due turn is queued again. One that finds no room
stays paused; a later read tries again. So a forgotten bot game holds no place and no compute,
and nobody can hold more live bot games than the caps by letting some pause and waking them.

The records live where the job state does (Redis with ``MEEPLE_REDIS_URL``, else the SQLite
file beside the event store): operational data, never the game's log, which holds no address.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from events.redis_clients import redis_client
from events.sqlite_pool import SQLitePool
from projections.fold import Game
from service.application.commands import CapReached
from service.application.job_state import job_state_location
from service.application.owners import ADMIN, Owner, unowned

Record = dict[str, Any]

#: Seconds a client is told to wait when a cap on bot games is reached.
CAP_RETRY_AFTER = 60
#: Seconds between two writes of one game's attendance by one process, at most (a quarter
#: of MEEPLE_BOT_GAME_IDLE when that is shorter).
ATTEND_EVERY = 30.0


def clock() -> float:
    """Now, as the records count it (the tests set a clock of their own)."""
    return time.time()


@dataclass(frozen=True)
class Caps:
    """How many live bot games one owner, and the whole service, may have at once."""

    per_owner: int
    total: int


@dataclass(frozen=True)
class Refusal:
    """Which cap refused a bot game (``owner`` or ``service``) and its size."""

    scope: str
    cap: int


class BotGameStore(ABC):
    """The bot games' records: ``game_id, owner, paused, version`` (the one it paused at) and
    ``touched_at`` (when someone last attended it); safe from many threads and processes."""

    def __init__(self) -> None:
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._owners_lock = threading.Lock()

    @abstractmethod
    def admit(self, game_id: str, owner: str, caps: Caps | None, now: float) -> Refusal | None:
        """Make the game live: a new bot game under ``owner``, or a paused one resuming (under
        the owner it has), unless ``caps`` say that owner or the service has as many live
        games already. None when it is live now (it may have been already)."""

    @abstractmethod
    def get(self, game_id: str) -> Record | None:
        """The game's record, or None if it is no bot game known here."""

    @abstractmethod
    def touch(self, game_id: str, now: float) -> Record | None:
        """Someone attends the game now; its record afterwards (None: no record)."""

    @abstractmethod
    def pause(self, game_id: str, version: int, idle_before: float) -> bool:
        """Pause a live game nobody attended since ``idle_before``, at ``version``; whether it
        paused (atomically: an attendance meanwhile keeps it live)."""

    @abstractmethod
    def finish(self, game_id: str) -> None:
        """Forget the game (it ended; or the request that made it a bot game failed)."""

    @abstractmethod
    def live(self, owner: str | None = None) -> list[str]:
        """The live games (of ``owner``)."""

    def owner_of(self, game_id: str) -> str:
        """The game's owner key (kept in memory once known: it never changes); a game with no
        record is its own owner (``owners.unowned``)."""
        with self._owners_lock:
            known = self._owners.get(game_id)
        if known is not None:
            return known
        record = self.get(game_id)
        if record is None:
            return unowned(game_id).key
        with self._owners_lock:
            self._owners[game_id] = record["owner"]
            while len(self._owners) > 4096:
                self._owners.popitem(last=False)
        return str(record["owner"])

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


class SQLiteBotGameStore(BotGameStore):
    """Bot games in a table of the job state's SQLite file."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS bot_games (
        game_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        paused INTEGER NOT NULL,
        version INTEGER,
        touched_at REAL NOT NULL
    );
    CREATE INDEX IF NOT EXISTS bot_games_live ON bot_games (paused, owner);
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__()
        self._pool = SQLitePool(path)
        self._pool.create(self.SCHEMA)

    @staticmethod
    def _record(row: Any) -> Record:
        game_id, owner, paused, version, touched_at = row
        return {
            "game_id": game_id,
            "owner": owner,
            "paused": bool(paused),
            "version": version,
            "touched_at": touched_at,
        }

    def admit(self, game_id: str, owner: str, caps: Caps | None, now: float) -> Refusal | None:
        with self._pool.transaction() as db:  # BEGIN IMMEDIATE: no writer between count and write
            row = db.execute("SELECT owner, paused FROM bot_games WHERE game_id = ?", (game_id,))
            found = row.fetchone()
            if found is not None and not found[1]:
                return None
            owner = found[0] if found is not None else owner
            if caps is not None:
                (mine,) = db.execute(
                    "SELECT COUNT(*) FROM bot_games WHERE paused = 0 AND owner = ?", (owner,)
                ).fetchone()
                if mine >= caps.per_owner:
                    return Refusal("owner", caps.per_owner)
                (total,) = db.execute("SELECT COUNT(*) FROM bot_games WHERE paused = 0").fetchone()
                if total >= caps.total:
                    return Refusal("service", caps.total)
            db.execute(
                "INSERT INTO bot_games (game_id, owner, paused, version, touched_at)"
                " VALUES (?, ?, 0, NULL, ?) ON CONFLICT (game_id) DO UPDATE SET"
                " paused = 0, version = NULL, touched_at = excluded.touched_at",
                (game_id, owner, now),
            )
        return None

    def get(self, game_id: str) -> Record | None:
        rows = self._pool.query(
            "SELECT game_id, owner, paused, version, touched_at FROM bot_games WHERE game_id = ?",
            (game_id,),
        )
        return self._record(rows[0]) if rows else None

    def touch(self, game_id: str, now: float) -> Record | None:
        with self._pool.transaction() as db:
            db.execute(
                "UPDATE bot_games SET touched_at = MAX(touched_at, ?) WHERE game_id = ?",
                (now, game_id),
            )
            row = db.execute(
                "SELECT game_id, owner, paused, version, touched_at FROM bot_games"
                " WHERE game_id = ?",
                (game_id,),
            ).fetchone()
        return self._record(row) if row is not None else None

    def pause(self, game_id: str, version: int, idle_before: float) -> bool:
        with self._pool.transaction() as db:
            changed = db.execute(
                "UPDATE bot_games SET paused = 1, version = ?"
                " WHERE game_id = ? AND paused = 0 AND touched_at <= ?",
                (version, game_id, idle_before),
            )
            return changed.rowcount == 1

    def finish(self, game_id: str) -> None:
        with self._pool.transaction() as db:
            db.execute("DELETE FROM bot_games WHERE game_id = ?", (game_id,))

    def live(self, owner: str | None = None) -> list[str]:
        if owner is None:
            rows = self._pool.query("SELECT game_id FROM bot_games WHERE paused = 0")
        else:
            rows = self._pool.query(
                "SELECT game_id FROM bot_games WHERE paused = 0 AND owner = ?", (owner,)
            )
        return [str(game_id) for (game_id,) in rows]

    def close(self) -> None:
        self._pool.close()


#: KEYS: 1 owners (hash), 2 paused (hash: game -> version), 3 touched (hash), 4 live (set).
#: ARGV: 1 game, 2 owner, 3 per owner (-1: no cap), 4 total (-1), 5 now, 6 the prefix of an
#: owner's set of live games (under the same hash tag). 'live', 'owner' or 'service'.
_ADMIT = """
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 0 then return 'live' end
owner = owner or ARGV[2]
local mine = ARGV[6] .. owner
if tonumber(ARGV[3]) >= 0 and redis.call('SCARD', mine) >= tonumber(ARGV[3]) then
  return 'owner'
end
if tonumber(ARGV[4]) >= 0 and redis.call('SCARD', KEYS[4]) >= tonumber(ARGV[4]) then
  return 'service'
end
redis.call('HSET', KEYS[1], ARGV[1], owner)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('SADD', mine, ARGV[1])
return 'live'
"""

#: KEYS as _ADMIT's. ARGV: 1 game, 2 version, 3 idle before, 4 the owners' sets' prefix.
_PAUSE = """
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if not owner or redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
if tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0') > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[1])
redis.call('SREM', ARGV[4] .. owner, ARGV[1])
return 1
"""

#: KEYS as _ADMIT's. ARGV: 1 game, 2 the owners' sets' prefix.
_FINISH = """
local owner = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
if owner then redis.call('SREM', ARGV[2] .. owner, ARGV[1]) end
return 1
"""


class RedisBotGameStore(BotGameStore):
    """Bot games in Redis, every key under one hash tag::

    meeple:{bot-games}:owners         hash: game -> owner
    meeple:{bot-games}:paused         hash: game -> the version it paused at
    meeple:{bot-games}:touched        hash: game -> when it was last attended
    meeple:{bot-games}:live           set: the live games
    meeple:{bot-games}:live:<owner>   set: an owner's live games
    """

    PREFIX = "meeple:{bot-games}"

    def __init__(self, client: redis.Redis) -> None:
        super().__init__()
        self.client = client
        self._admit = client.register_script(_ADMIT)
        self._pause = client.register_script(_PAUSE)
        self._finish = client.register_script(_FINISH)
        self._keys = [f"{self.PREFIX}:{name}" for name in ("owners", "paused", "touched", "live")]
        self._mine = f"{self.PREFIX}:live:"

    @classmethod
    def from_url(cls, url: str) -> RedisBotGameStore:
        return cls(redis_client(url, decode_responses=True))

    def admit(self, game_id: str, owner: str, caps: Caps | None, now: float) -> Refusal | None:
        per_owner, total = (caps.per_owner, caps.total) if caps is not None else (-1, -1)
        answer = self._admit(
            keys=self._keys, args=[game_id, owner, per_owner, total, repr(now), self._mine]
        )
        if answer == "owner":
            return Refusal("owner", per_owner)
        if answer == "service":
            return Refusal("service", total)
        return None

    def _read(self, pipe: Any, game_id: str) -> None:
        owners, paused, touched, _ = self._keys
        pipe.hget(owners, game_id)
        pipe.hget(paused, game_id)
        pipe.hget(touched, game_id)

    @staticmethod
    def _record(game_id: str, owner: Any, paused: Any, touched: Any) -> Record | None:
        if owner is None:
            return None
        return {
            "game_id": game_id,
            "owner": owner,
            "paused": paused is not None,
            "version": int(paused) if paused is not None else None,
            "touched_at": float(touched or 0.0),
        }

    def get(self, game_id: str) -> Record | None:
        with self.client.pipeline(transaction=False) as pipe:
            self._read(pipe, game_id)
            return self._record(game_id, *pipe.execute())

    def touch(self, game_id: str, now: float) -> Record | None:
        with self.client.pipeline(transaction=True) as pipe:
            self._read(pipe, game_id)
            pipe.hset(self._keys[2], game_id, repr(now))
            owner, paused, touched, _ = pipe.execute()
        if owner is None:
            self.client.hdel(self._keys[2], game_id)  # no bot game: nothing to remember
        return self._record(game_id, owner, paused, max(float(touched or 0.0), now))

    def pause(self, game_id: str, version: int, idle_before: float) -> bool:
        args: list[str | int] = [game_id, version, repr(idle_before), self._mine]
        return bool(self._pause(keys=self._keys, args=args))

    def finish(self, game_id: str) -> None:
        self._finish(keys=self._keys, args=[game_id, self._mine])

    def live(self, owner: str | None = None) -> list[str]:
        key = self._keys[3] if owner is None else self._mine + owner
        return sorted(str(game_id) for game_id in self.client.smembers(key))

    def close(self) -> None:
        self.client.close()


def open_bot_game_store(store_url: str, redis_url: str | None) -> BotGameStore:
    """Where a deployment keeps its bot games: where it keeps its job state."""
    location = job_state_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        return SQLiteBotGameStore(rest.removeprefix("/"))
    return RedisBotGameStore.from_url(location)


# -- the caps --------------------------------------------------------------------------------


def _caps(services: Any, owner: Owner) -> Caps | None:
    if not owner.capped:
        return None
    config = services.config
    return Caps(config.max_bot_games_per_owner, config.max_bot_games)


def _refusal(services: Any, game_id: str, owner: Owner, now: float) -> Refusal | None:
    store: BotGameStore = services.jobs.bot_games
    caps = _caps(services, owner)
    refused = store.admit(game_id, owner.key, caps, now)
    if refused is None:
        return None
    # A game that ended without saying so (its process died between the append and the
    # word) still counts: let such games go, then ask once more.
    counted = store.live(owner.key if refused.scope == "owner" else None)
    rows = services.game_index.get_many(counted)
    ended = [found for found, row in rows.items() if row is not None and row.status == "finished"]
    for finished in ended:
        store.finish(finished)
    return store.admit(game_id, owner.key, caps, now) if ended else refused


def admit(services: Any, game_id: str, owner: Owner) -> None:
    """Count a new bot game under its owner's caps (``CapReached`` 429 ``too_many_bot_games``
    when the owner, or the service, has as many live bot games as it may)."""
    refused = _refusal(services, game_id, owner, clock())
    if refused is None:
        return
    if refused.scope == "owner":
        message = (
            f"You have {refused.cap} games with bots under way, the most one owner (a client "
            "address) may have at once; let one finish, or try again later."
        )
    else:
        message = (
            f"The service has {refused.cap} games with bots under way, the most it takes at "
            "once; try again later."
        )
    raise CapReached("too_many_bot_games", message, retry_after=CAP_RETRY_AFTER)


def let_go(services: Any, game_id: str) -> None:
    """The game counts no more (it ended, or the request that made it a bot game failed)."""
    services.jobs.bot_games.finish(game_id)


# -- pausing ---------------------------------------------------------------------------------


def bots_only(game: Game) -> bool:
    """Whether every seat of the game is a bot's (nobody plays against them)."""
    return all(game.bot_of(seat) for seat in range(len(game.meta["players"])))


def _watched(services: Any, game_id: str) -> bool:
    """Whether a live stream of the game is open (in any process, on Redis)."""
    streams = getattr(services.jobs, "streams", None)
    return streams is not None and streams.slots.count("game", game_id) > 0


def pauses(services: Any, game: Game, version: int) -> bool:
    """Whether the bot turn due after ``version`` pauses its game instead of being played: a
    game of bots only, paused already or not attended for ``MEEPLE_BOT_GAME_IDLE`` seconds
    with no stream open (0: never)."""
    idle = float(services.jobs.settings.bot_game_idle)
    if idle <= 0 or not bots_only(game):
        return False
    store: BotGameStore = services.jobs.bot_games
    game_id = str(game.meta["game_id"])
    now = clock()
    record = store.get(game_id)
    if record is None:
        # A game from before owners were recorded: counted from now on, under its own name.
        store.admit(game_id, unowned(game_id).key, None, now)
        return False
    if record["paused"]:
        return True
    if _watched(services, game_id):
        return False
    return store.pause(game_id, version, now - idle)


class _Attended:
    """When this process last wrote each game's attendance (the latest few thousand)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: OrderedDict[str, float] = OrderedDict()

    def due(self, game_id: str, now: float, every: float) -> bool:
        with self._lock:
            last = self._at.get(game_id)
            if last is not None and 0 <= now - last < every:
                return False
            self._at[game_id] = now
            self._at.move_to_end(game_id)
            while len(self._at) > 4096:
                self._at.popitem(last=False)
            return True


_ATTENDED = _Attended()


def attend(services: Any, game_id: str) -> bool:
    """A request read or streamed the game: a game of bots only is attended now (written at
    most every ``ATTEND_EVERY`` seconds per process), and a paused one resumes if its owner's
    caps have room (its due bot turn is queued again). Whether it resumed."""
    game = services.folder.cached(game_id)  # the request just read it
    if game is None or not bots_only(game):
        return False  # nearly every game: nothing more to ask
    idle = float(services.jobs.settings.bot_game_idle)
    if idle <= 0:
        return False
    now = clock()
    if not _ATTENDED.due(game_id, now, min(ATTEND_EVERY, idle / 4)):
        return False
    store: BotGameStore = services.jobs.bot_games
    record = store.touch(game_id, now)
    if record is None or not record["paused"]:
        return False
    owner = Owner(record["owner"], capped=record["owner"] != ADMIN)
    if _refusal(services, game_id, owner, now) is not None:
        return False  # its owner (or the service) is at the cap: a later read tries again
    latest = services.folder.load(game_id)
    services.jobs.after_append(game_id, latest.version, game=latest)
    return True
