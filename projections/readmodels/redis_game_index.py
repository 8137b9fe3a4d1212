"""The game index in Redis, for deployments whose event store is Redis (compose.yaml).

Every key is under the ``{index}`` hash tag, so on a Redis Cluster the whole index lives on
one slot and each update or query is one Lua script over keys of that slot::

    meeple:{index}:games              hash: game id -> row JSON
    meeple:{index}:orders             hash: game id -> order (first seen = 1, 2, ...)
    meeple:{index}:versions           hash: game id -> the version its row shows
    meeple:{index}:next               counter: the order of the next game first seen
    meeple:{index}:all                sorted set: game id by order (newest = highest)
    meeple:{index}:ruleset:<id>       sorted set per ruleset
    meeple:{index}:status:<status>    sorted set per status (active, finished)
    meeple:{index}:player:<name>      sorted set per player name
    meeple:{index}:open               sorted set: games waiting for players (the lobby)
    meeple:{index}:closed             sorted set: games with no open seat
    meeple:{index}:sandbox            sorted set: branches and other sandbox games
    meeple:{index}:played             sorted set: games that are not sandboxes
    meeple:{index}:branch_of:<id>     sorted set per source game: its branches
    meeple:{index}:bots_active        sorted set: unfinished games with a bot seat
    meeple:{index}:position           the feed position (JSON)
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

from events.redis_store import (
    SKIP_UNLESS_FIELD_BELOW,
    ZADD_SCORED_BY,
    Command,
    database_of,
    same_server,
)
from projections.readmodels.game_index import STATUSES, GameIndex, GameRow, Page

# KEYS: 1 games hash, 2 orders hash, 3 versions hash, 4 next counter, 5 all, 6 ruleset set,
# 7.. the sets a game is in or out of (one per status, in STATUSES order, then open, closed,
# sandbox, played), then the sets it only joins (players, branch_of). ARGV: 1 game id,
# 2 version, 3 row JSON, 4 how many in-or-out sets, 5.. 1 (in) or 0 (out) for each.
# The row is stored as Python wrote it (cjson would turn an empty list into an object).
UPSERT_SCRIPT = """
local current = redis.call('HGET', KEYS[3], ARGV[1])
if current and tonumber(current) >= tonumber(ARGV[2]) then return 0 end
local order = redis.call('HGET', KEYS[2], ARGV[1])
if not order then
  order = redis.call('INCR', KEYS[4])
  redis.call('HSET', KEYS[2], ARGV[1], order)
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[5], order, ARGV[1])
redis.call('ZADD', KEYS[6], order, ARGV[1])
local toggled = tonumber(ARGV[4])
for i = 1, toggled do
  if ARGV[4 + i] == '1' then
    redis.call('ZADD', KEYS[6 + i], order, ARGV[1])
  else
    redis.call('ZREM', KEYS[6 + i], ARGV[1])
  end
end
for i = 7 + toggled, #KEYS do
  redis.call('ZADD', KEYS[i], order, ARGV[1])
end
return 1
"""

# KEYS: 1 games hash, 2 orders hash, 3 a scratch key, 4.. the sets to intersect ("all"
# first, whose score - the order - the intersection keeps). ARGV: 1 highest order
# (exclusive; "+inf" for none), 2 how many. Returns {rows, orders}, newest first.
QUERY_SCRIPT = """
local source = KEYS[4]
if #KEYS > 4 then
  local args = {KEYS[3], #KEYS - 3}
  for i = 4, #KEYS do table.insert(args, KEYS[i]) end
  table.insert(args, 'WEIGHTS')
  for i = 4, #KEYS do table.insert(args, i == 4 and 1 or 0) end
  redis.call('ZINTERSTORE', unpack(args))
  source = KEYS[3]
end
local max = ARGV[1]
if max ~= '+inf' then max = '(' .. max end
local ids = redis.call('ZREVRANGEBYSCORE', source, max, '-inf', 'LIMIT', 0, tonumber(ARGV[2]))
if #KEYS > 4 then redis.call('DEL', KEYS[3]) end
if #ids == 0 then return {{}, {}} end
return {redis.call('HMGET', KEYS[1], unpack(ids)), redis.call('HMGET', KEYS[2], unpack(ids))}
"""


def row_json(row: GameRow) -> str:
    """A row as the index stores it (as Python writes it: cjson would turn an empty list into
    an object)."""
    return json.dumps(row.public(), sort_keys=True)


class RedisGameIndex(GameIndex):
    """The index in Redis keys (a ``redis.Redis`` or ``RedisCluster`` client, decoded replies)."""

    def __init__(self, client: Any, prefix: str = "meeple") -> None:
        super().__init__()
        self.client: Any = client
        self.prefix = prefix
        self._upsert = client.register_script(UPSERT_SCRIPT)
        self._query = client.register_script(QUERY_SCRIPT)
        #: (an event store's client, whether this index shares its server and database)
        self._shares: tuple[Any, bool] | None = None

    @classmethod
    def from_url(cls, url: str, prefix: str = "meeple") -> RedisGameIndex:
        """Any URL ``events.redis_clients`` opens (a server, a Sentinel service, a cluster)."""
        from events.redis_clients import redis_client

        return cls(redis_client(url, decode_responses=True), prefix)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, "{index}", *parts))

    def position(self) -> dict[str, Any] | None:
        text = self.client.get(self._key("position"))
        return None if text is None else dict(json.loads(text))

    def save(self, rows: list[GameRow], position: dict[str, Any]) -> None:
        import redis

        position_json = json.dumps(position, sort_keys=True)
        if isinstance(self.client, redis.Redis):
            # One round trip for the whole page (a catch-up touches many games at once): the
            # script by its hash, loaded again only if the server lost it (a restart). Every
            # upsert is idempotent (never to an older version), so a second try is safe.
            for attempt in range(2):
                with self.client.pipeline(transaction=False) as pipe:
                    for row in rows:
                        keys, args = self._upsert_call(row)
                        pipe.evalsha(self._upsert.sha, len(keys), *keys, *args)
                    pipe.set(self._key("position"), position_json)
                    try:
                        pipe.execute()
                    except redis.exceptions.NoScriptError:
                        if attempt:
                            raise
                        self.client.script_load(UPSERT_SCRIPT)
                        continue
                return
        for row in rows:  # a cluster: one script call per row (all on the index's slot)
            keys, args = self._upsert_call(row)
            self._upsert(keys=keys, args=args)
        self.client.set(self._key("position"), position_json)

    def _sets(self, row: GameRow) -> tuple[dict[str, bool], list[str]]:
        """The sets a row's game is in or out of (key -> whether in), and those it only joins."""
        membership = {
            **{self._key("status", status): row.status == status for status in STATUSES},
            self._key("open"): bool(row.open_seats),
            self._key("closed"): not row.open_seats,
            self._key("sandbox"): row.sandbox,
            self._key("played"): not row.sandbox,
            self._key("bots_active"): bool(row.bots) and row.status == "active",
        }
        joined = [self._key("player", name) for name in sorted(set(row.players))]
        if row.branch_of is not None:
            joined.append(self._key("branch_of", row.branch_of))
        return membership, joined

    def _upsert_call(self, row: GameRow) -> tuple[list[str], list[Any]]:
        """The keys and arguments of ``UPSERT_SCRIPT`` for one row."""
        membership, joined = self._sets(row)
        keys = [
            self._key("games"),
            self._key("orders"),
            self._key("versions"),
            self._key("next"),
            self._key("all"),
            self._key("ruleset", row.ruleset),
            *membership,
            *joined,
        ]
        args = [
            row.game_id,
            row.version,
            row_json(row),
            len(membership),
            *("1" if member else "0" for member in membership.values()),
        ]
        return keys, args

    def row_writes(self, row: GameRow) -> list[Command]:
        """``UPSERT_SCRIPT``'s writes of a row, as side writes of the event store's append
        (``RedisEventStore.append(then=...)``) that brings its game to ``row.version``, for a
        game indexed before (its order known): made only while the row shows an older
        version, and nothing for a game not indexed yet (the next catch-up indexes it)."""
        game_id = row.game_id
        orders = self._key("orders")
        membership, joined = self._sets(row)
        writes: list[Command] = [
            ("HSET", self._key("games"), game_id, row_json(row)),
            ("HSET", self._key("versions"), game_id, row.version),
        ]
        for key, member in membership.items():
            joins = (ZADD_SCORED_BY, key, orders, game_id, game_id)
            writes.append(joins if member else ("ZREM", key, game_id))
        writes += [(ZADD_SCORED_BY, key, orders, game_id, game_id) for key in joined]
        guard = (SKIP_UNLESS_FIELD_BELOW, self._key("versions"), game_id, row.version, len(writes))
        return [guard, *writes]

    def shares_server_with(self, client: Any) -> bool:
        """Whether this index lives in the same database of the same single Redis server as
        ``client`` (an event store's): then its writes may go in that store's scripts. Known
        once per client (asked with every step's append)."""
        known = self._shares
        if known is None or known[0] is not client:
            shares = same_server(self.client, client) and (
                database_of(self.client) == database_of(client)
            )
            known = self._shares = (client, shares)
        return known[1]

    def get(self, game_id: str) -> GameRow | None:
        text = self.client.hget(self._key("games"), game_id)
        if text is None:
            return None
        order = self.client.hget(self._key("orders"), game_id)
        return replace(GameRow(**json.loads(text)), order=int(order or 0))

    def versions(self, game_ids: list[str]) -> dict[str, int]:
        if not game_ids:
            return {}
        shown = self.client.hmget(self._key("versions"), game_ids)
        return {game_id: int(v or 0) for game_id, v in zip(game_ids, shown, strict=True)}

    def get_many(self, game_ids: list[str]) -> dict[str, GameRow | None]:
        if not game_ids:
            return {}
        # Two HMGETs for a whole page of games (both on the index's slot, as a cluster wants).
        texts = self.client.hmget(self._key("games"), game_ids)
        orders = self.client.hmget(self._key("orders"), game_ids)
        return {
            game_id: None
            if text is None
            else replace(GameRow(**json.loads(text)), order=int(order or 0))
            for game_id, text, order in zip(game_ids, texts, orders, strict=True)
        }

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
        sets = [self._key("all")]
        if open is not None:
            sets.append(self._key("open" if open else "closed"))
        if sandbox is not None:
            sets.append(self._key("sandbox" if sandbox else "played"))
        if branch_of is not None:
            sets.append(self._key("branch_of", branch_of))
        if ruleset is not None:
            sets.append(self._key("ruleset", ruleset))
        if status is not None:
            sets.append(self._key("status", status))
        if player is not None:
            sets.append(self._key("player", player))
        scratch = self._key("scratch", uuid.uuid4().hex)
        texts, orders = self._query(
            keys=[self._key("games"), self._key("orders"), scratch, *sets],
            args=["+inf" if cursor is None else int(cursor), limit + 1],
        )
        rows = [
            replace(GameRow(**json.loads(text)), order=int(order))
            for text, order in zip(texts, orders, strict=True)
            if text is not None
        ]
        page = rows[:limit]
        return Page(page, str(page[-1].order) if len(rows) > limit else None)

    def count_lobbies(self) -> tuple[int, int]:
        waiting = self.client.zcard(self._key("open"))
        return int(waiting), int(self.client.zcard(self._key("bots_active")))

    def close(self) -> None:
        self.client.close()
