"""The Redis event store: one stream per game, every key of a game under its ``{game_id}``
hash tag, so a whole game lives on one Redis Cluster slot (docs/stores.md).

Keys (``meeple`` is the default prefix)::

    meeple:{G}:events     stream, entry id "<seq>-1", field "e" = the envelope's canonical JSON,
                          or a copy marker standing for a run of copies from its seq on (a
                          branch's copy of its source's past, events.copies)
    meeple:{G}:head       hash: version, hash (the last event's), copied (the markers' seq
                          ranges, JSON, for reads that start inside one)
    meeple:{G}:idem       hash: idempotency key -> "first_seq:last_seq"
    meeple:{G}:snapshots  sorted set of snapshot seqs
    meeple:{G}:snapdata   hash: seq -> snapshot payload (JSON)
    meeple:{G}:confirmed  a string written only to wait for replicas (``await_replicas``),
                          expiring after a minute
    meeple:{games}:set    set of registered game ids
    meeple:{games}:log    stream of registrations, in order (the feed discovers games here)
    meeple:feed           stream, one entry per append: g = game id, f, l = its first and
                          last seq (a single server only; trimmed to about FEED_LENGTH)

An append reads the head (or remembers it from its own last append to the game, or from a
read that reached the end of the stream), seals the batch in Python (hashes need the
previous hash), and runs ONE Lua script that declares the game's three keys and checks the
idempotency key and then the expected version and head hash before it writes anything. A
game is registered (its own script, on the registry's slot) before its first append, so the
walk of the registry (keeping a cursor per game) sees every game that has events. On a single
server the same script also adds the append to the feed stream, and ``read_feed`` reads that
stream, whatever the number of games; a cluster (whose script may not touch a key outside the
game's slot) and a reader the trimmed stream left behind walk the registry instead.

``append(..., then=commands)`` also runs ``commands`` in that script, after the events are
written and only if they were (not on a conflict or a replayed idempotency key): the caller's
side writes (queueing the work an append makes due, announcing it, the game's row in the
game index) cost no round trip of their own. ``then`` may also be a function of the sealed
envelopes that returns the commands (for writes that name the time recorded). The store does
not know what they mean; guards let a caller make some of them conditional
(``SKIP_UNLESS_EXISTS``, ``SKIP_IF_FIELD_IN``, ``SKIP_UNLESS_FIELD_BELOW``),
``ZADD_SCORED_BY`` scores a sorted set's member by a hash field, and ``REPLY_EXISTS`` tells
it whether a key exists (``AppendResult.replies``). Those commands name keys the script does
not declare, so ``then`` is for a single server only (never a cluster).

With ``min_replicas`` (``MEEPLE_REDIS_MIN_REPLICAS``) the script and a ``WAIT`` (``WAITAOF``
where the server has it) go in one pipeline to the game's primary, and an append fewer
replicas confirmed raises ``ReplicationLag``: not acknowledged, though the primary has it
whole, side writes and all, as one script replicates as one unit (docs/stores.md).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import redis
from redis.cluster import RedisCluster

from events.copies import Copies, Entry, Marker, parse_entry
from events.envelope import GENESIS_HASH, Envelope, canonical_json
from events.redis_clients import redis_client, same_place
from events.sqlite_store import utc_now
from events.store import (
    Appended,
    AppendResult,
    ConcurrencyConflict,
    EventStore,
    FeedPage,
    ReplicationLag,
    StoreError,
    StoreFull,
    check_append,
)

#: Milliseconds an append waits for its replicas by default (``MEEPLE_REDIS_REPLICA_TIMEOUT``).
DEFAULT_REPLICA_TIMEOUT = 1000

#: Milliseconds the key that ``await_replicas`` writes lives.
CONFIRMED_KEY_MS = 60_000

#: How many games' heads (version, last hash) an instance remembers from its own appends.
HEADS_REMEMBERED = 10_000

#: ``then`` guard ``(SKIP_UNLESS_EXISTS, key, n)``: skip the next n commands unless key exists.
SKIP_UNLESS_EXISTS = "meeple:skip-unless-exists"
#: ``then`` guard ``(SKIP_IF_FIELD_IN, key, field, n, value...)``: skip the next n commands
#: if the hash field's value is one of the values.
SKIP_IF_FIELD_IN = "meeple:skip-if-field-in"

#: ``then`` guard ``(SKIP_UNLESS_FIELD_BELOW, key, field, number, n)``: skip the next n
#: commands unless the hash field holds a number below ``number``.
SKIP_UNLESS_FIELD_BELOW = "meeple:skip-unless-field-below"

#: ``then`` entry ``(REPLY_EXISTS, key)``: whether key exists (1 or 0) is added to the
#: append's ``replies``, in order (so the caller learns it without a round trip of its own).
REPLY_EXISTS = "meeple:reply-exists"

#: ``then`` entry ``(ZADD_SCORED_BY, key, hash, field, member)``: ``ZADD key score member``
#: with the score the hash field holds (nothing if it holds none).
ZADD_SCORED_BY = "meeple:zadd-scored-by"

#: One Redis command: its name and arguments, as redis-py would send them.
Command = Sequence[str | bytes | int | float]

#: About how many appends the feed stream keeps (``XADD ... MAXLEN ~``: some 60 MB). A reader
#: further behind than that walks the registry once, then reads the stream again.
FEED_LENGTH = 1_000_000


def failure(error: redis.RedisError) -> StoreError:
    """The store's error for a Redis one: ``StoreFull`` when Redis is out of memory (it refuses
    writes past ``maxmemory`` under ``noeviction``), else ``StoreError``."""
    if isinstance(error, redis.exceptions.OutOfMemoryError):
        return StoreFull(f"the Redis event store is full: {error}")
    return StoreError(f"the Redis event store failed: {error}")


#: The share of ``maxmemory`` past which the store reports it no longer accepts writes (Redis
#: refuses a write once the memory it would take crosses ``maxmemory``: a little before).
FULL_AT = 0.95


def _has_room(memory: dict[str, Any]) -> bool:
    limit = int(memory.get("maxmemory") or 0)
    if limit <= 0 or memory.get("maxmemory_policy") != "noeviction":
        return True
    return int(memory.get("used_memory") or 0) < limit * FULL_AT


def same_server(one: Any, other: Any) -> bool:
    """Whether two clients are plain ``redis.Redis`` clients of the same single server (the
    same address and user, or the same Sentinel service; maybe other databases): one's
    script may then write the other's keys, selecting its database. Never a cluster's."""
    return same_place(one, other)


def database_of(client: Any) -> int:
    """The database number a plain ``redis.Redis`` client uses."""
    return int(client.connection_pool.connection_kwargs.get("db", 0) or 0)


APPEND_SCRIPT = """
-- KEYS: 1 events stream, 2 head hash, 3 idempotency hash (all under the game's hash tag),
--       4 the feed stream (a single server only)
-- ARGV: 1 expected version, 2 idempotency key ('' for none), 3 the head hash the batch was
--       sealed on, 4 the batch's last hash, 5 the number of events c the batch appends, 6 the
--       number of entries n it stores (fewer than c when a marker stands for copies), 7..6+2n
--       each entry's seq and canonical JSON in seq order, 7+2n the game id, 8+2n the feed's
--       length (for KEYS[4]) and 9+2n the markers' seq ranges as JSON ('' for none), then
--       the side writes to make after them, each as its number of words followed by the
--       words (guards: see SKIP_* in Python)
if ARGV[2] ~= '' then
  local written = redis.call('HGET', KEYS[3], ARGV[2])
  if written then
    return {'replayed', written}
  end
end
local version = tonumber(redis.call('HGET', KEYS[2], 'version') or '0')
local head = redis.call('HGET', KEYS[2], 'hash') or ARGV[3]
local expected = tonumber(ARGV[1])
if version ~= expected or head ~= ARGV[3] then
  return {'conflict', tostring(version)}
end
local count = tonumber(ARGV[5])
local stored = tonumber(ARGV[6])
for index = 0, stored - 1 do
  redis.call('XADD', KEYS[1], ARGV[7 + 2 * index] .. '-1', 'e', ARGV[8 + 2 * index])
end
local tail = 7 + 2 * stored
local last = expected + count
redis.call('HSET', KEYS[2], 'version', string.format('%d', last), 'hash', ARGV[4])
if ARGV[tail + 2] ~= '' then
  redis.call('HSET', KEYS[2], 'copied', ARGV[tail + 2])
end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[2], string.format('%d:%d', expected + 1, last))
end
if KEYS[4] then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[tail + 1], '*', 'g', ARGV[tail],
    'f', string.format('%d', expected + 1), 'l', string.format('%d', last))
end
local at = tail + 3
local skip = 0
local replies = {'ok', string.format('%d', last)}
while at <= #ARGV do
  local words = tonumber(ARGV[at])
  local command = {unpack(ARGV, at + 1, at + words)}
  at = at + words + 1
  if skip > 0 then
    skip = skip - 1
  elseif command[1] == 'meeple:skip-unless-exists' then
    if redis.call('EXISTS', command[2]) == 0 then
      skip = tonumber(command[3])
    end
  elseif command[1] == 'meeple:reply-exists' then
    table.insert(replies, redis.call('EXISTS', command[2]))
  elseif command[1] == 'meeple:skip-if-field-in' then
    local value = redis.call('HGET', command[2], command[3])
    for index = 5, #command do
      if value == command[index] then
        skip = tonumber(command[4])
      end
    end
  elseif command[1] == 'meeple:skip-unless-field-below' then
    local value = tonumber(redis.call('HGET', command[2], command[3]) or '')
    if not value or value >= tonumber(command[4]) then
      skip = tonumber(command[5])
    end
  elseif command[1] == 'meeple:zadd-scored-by' then
    local score = redis.call('HGET', command[3], command[4])
    if score then
      redis.call('ZADD', command[2], score, command[5])
    end
  else
    redis.call(unpack(command))
  end
end
return replies
"""

REGISTER_SCRIPT = """
-- KEYS: 1 registry set, 2 registry stream (one hash tag). ARGV: 1 game id
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'game', ARGV[1])
end
return 1
"""

SAVE_SNAPSHOT_SCRIPT = """
-- KEYS: 1 snapshot seqs (sorted set), 2 snapshot payloads (hash). ARGV: 1 seq, 2 payload
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1
"""

LOAD_SNAPSHOT_SCRIPT = """
-- KEYS: 1 snapshot seqs (sorted set), 2 snapshot payloads (hash). ARGV: 1 highest seq
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'LIMIT', 0, 1)
if #found == 0 then
  return false
end
return {found[1], redis.call('HGET', KEYS[2], found[1])}
"""


class RedisEventStore(EventStore):
    """Event streams in Redis or a Redis Cluster (pass a ``redis.Redis`` or ``RedisCluster``)."""

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        prefix: str = "meeple",
        *,
        min_replicas: int = 0,
        replica_timeout: int = DEFAULT_REPLICA_TIMEOUT,
    ) -> None:
        if min_replicas < 0 or replica_timeout < 1:
            raise ValueError("min_replicas must be 0 or more and replica_timeout 1 ms or more")
        #: Replicas that must confirm an append before it is acknowledged (0: none asked).
        self.min_replicas = min_replicas
        #: Milliseconds an append waits for them.
        self.replica_timeout = replica_timeout
        #: (the command that waits for replicas: WAIT, or WAITAOF where the server has it,)
        self._wait_command: tuple[tuple[str | int, ...]] | None = None
        # redis-py's annotations cover its sync and async clients at once (every reply typed
        # as "Awaitable | value"), so the client is used untyped; replies are decoded strs.
        self.client: Any = client
        self.prefix = prefix
        self._append_script = client.register_script(APPEND_SCRIPT)
        self._register_script = client.register_script(REGISTER_SCRIPT)
        self._save_snapshot_script = client.register_script(SAVE_SNAPSHOT_SCRIPT)
        self._load_snapshot_script = client.register_script(LOAD_SNAPSHOT_SCRIPT)
        self._heads: OrderedDict[str, tuple[int, str]] = OrderedDict()
        self._heads_lock = threading.Lock()
        self._registry_set = f"{prefix}:{{games}}:set"
        self._registry_log = f"{prefix}:{{games}}:log"
        self._feed_key = f"{prefix}:feed"
        #: (whether appends write the feed stream,), known at the first append or feed read
        self._feeds: tuple[bool] | None = None
        self._copies = Copies(self._read_stored, self._read_entries)

    @classmethod
    def from_url(
        cls,
        url: str,
        prefix: str = "meeple",
        *,
        min_replicas: int = 0,
        replica_timeout: int = DEFAULT_REPLICA_TIMEOUT,
        **options: Any,
    ) -> RedisEventStore:
        """Any URL ``events.redis_clients`` opens: ``redis://host:port/db`` for one server,
        ``redis+sentinel://host:port[,host:port]/service[/db]`` for a Sentinel service's
        primary, ``redis+cluster://host:port`` for a cluster."""
        client = redis_client(url, decode_responses=True, **options)
        return cls(client, prefix, min_replicas=min_replicas, replica_timeout=replica_timeout)

    def _key(self, game_id: str, name: str) -> str:
        return f"{self.prefix}:{{{game_id}}}:{name}"

    # -- the contract --------------------------------------------------------------

    def append(
        self,
        game_id: str,
        events: Sequence[Appended],
        expected_version: int,
        idempotency_key: str | None = None,
        *,
        then: Sequence[Command] | Callable[[list[Envelope]], Sequence[Command]] = (),
    ) -> AppendResult:
        """The contract's append; ``then``: commands run in the same script after a successful
        append, on this server, or a function of the sealed envelopes that gives them (see
        the module docstring)."""
        check_append(events, expected_version, game_id)
        if then and isinstance(self.client, RedisCluster):
            raise ValueError("side writes with an append need a single Redis server")
        head_key = self._key(game_id, "head")
        try:
            if expected_version == 0:
                # Before the first event exists, so the feed can never miss a game.
                self._register_script(keys=[self._registry_set, self._registry_log], args=[game_id])
            version, prev_hash = self._head(game_id, expected_version)
        except redis.RedisError as error:
            raise failure(error) from error
        if version != expected_version and idempotency_key is None:
            raise ConcurrencyConflict(game_id, expected_version, version)
        batch = self._copies.seal_batch(
            game_id, events, expected_version, prev_hash, utc_now(), idempotency_key
        )
        envelopes, chain = batch.envelopes, batch.head_hash
        entries: list[str | int] = [part for seq, text in batch.stored for part in (seq, text)]
        side_writes: list[str | bytes | int | float] = []
        for command in then(envelopes) if callable(then) else then:
            side_writes.append(len(command))
            side_writes.extend(command)
        keys = [self._key(game_id, "events"), head_key, self._key(game_id, "idem")]
        try:
            if self._writes_feed():
                keys.append(self._feed_key)
            args = [
                expected_version,
                idempotency_key or "",
                prev_hash,
                chain,
                len(envelopes),
                len(batch.stored),
                *entries,
                game_id,
                FEED_LENGTH,
                json.dumps(batch.marked) if batch.marked else "",
                *side_writes,
            ]
            if self.min_replicas:
                outcome, acknowledged = self._append_on_replicas(keys, args)
            else:
                outcome, acknowledged = self._append_script(keys=keys, args=args), 0
        except redis.RedisError as error:
            raise failure(error) from error
        verdict, detail = outcome[0], outcome[1]
        if verdict == "ok":
            self._remember_head(game_id, int(detail), chain)
            replies = tuple(int(reply) for reply in outcome[2:])
            result = AppendResult(version=int(detail), envelopes=envelopes, replies=replies)
            if acknowledged < self.min_replicas:
                raise ReplicationLag(result, acknowledged, self.min_replicas)
            return result
        with self._heads_lock:
            self._heads.pop(game_id, None)
        if verdict == "replayed":
            first, last = (int(part) for part in detail.split(":"))
            written = self.read(game_id, after=first - 1, limit=last - first + 1)
            result = AppendResult(version=last, envelopes=written, replayed=True)
            # The first append may not have reached the replicas yet: this answer is an
            # acknowledgement too, so it waits for them as the first one did.
            self.await_replicas(game_id, result)
            return result
        raise ConcurrencyConflict(game_id, expected_version, int(detail))

    def await_replicas(self, game_id: str, result: AppendResult | None = None) -> None:
        """Return once ``min_replicas`` replicas hold everything the primary of ``game_id``
        held when called (at once when none is asked for); else raise ``ReplicationLag``
        (with ``result``, what the caller is about to acknowledge).

        WAIT counts what the replicas confirmed of this connection's own writes, so it
        writes first: a key of the game's own (its slot, on a cluster) that expires.
        """
        if not self.min_replicas:
            return
        touch = ("SET", self._key(game_id, "confirmed"), "1", "PX", CONFIRMED_KEY_MS)
        try:
            _, acknowledged = self._on_replicas(self._key(game_id, "events"), [touch])
        except redis.RedisError as error:
            raise failure(error) from error
        if acknowledged < self.min_replicas:
            found = result or AppendResult(version=self.version(game_id), envelopes=[])
            raise ReplicationLag(found, acknowledged, self.min_replicas)

    def _append_on_replicas(self, keys: list[str], args: list[Any]) -> tuple[Any, int]:
        """The append script, then the wait for replicas, on one connection (WAIT counts
        that connection's writes) of the server that owns the game."""

        def script(pipe: Any) -> None:
            self._append_script(keys=keys, args=args, client=pipe)

        return self._on_replicas(keys[0], [script])

    def _on_replicas(self, key: str, steps: list[Any]) -> tuple[Any, int]:
        """Run ``steps`` (commands, or functions that queue onto a pipeline) then the wait for
        replicas in one pipeline to the primary that owns ``key``: (the first step's reply,
        how many replicas confirmed). On a cluster the pipeline goes to the key's master
        (redis-py's cluster pipeline sends a keyless WAIT anywhere); a reply that the slot
        moved (a failover) refreshes the cluster's map and sends it again, once or twice."""
        attempts = 3 if isinstance(self.client, RedisCluster) else 1
        for attempt in range(attempts):
            node = self._node_client(key)
            try:
                with node.pipeline(transaction=False) as pipe:
                    for step in steps:
                        if callable(step):
                            step(pipe)
                        else:
                            pipe.execute_command(*step)
                    pipe.execute_command(*self._waiting(node))
                    replies = pipe.execute()
            except (
                redis.exceptions.MovedError,
                redis.exceptions.AskError,
                redis.exceptions.TryAgainError,
                redis.exceptions.ClusterDownError,
            ):
                # Nothing ran: the node does not (yet) serve the slot.
                if attempt == attempts - 1:
                    raise
                self.client.nodes_manager.initialize()
                continue
            except (redis.ConnectionError, redis.TimeoutError):
                if isinstance(self.client, RedisCluster):
                    # The master may be gone: learn who serves its slots before the next call.
                    self.client.nodes_manager.initialize()
                raise
            return replies[0], _confirmed(replies[-1])
        raise AssertionError("unreachable")  # pragma: no cover

    def _node_client(self, key: str) -> Any:
        """The plain client of the server that owns ``key`` (this one's, off a cluster)."""
        if not isinstance(self.client, RedisCluster):
            return self.client
        node = self.client.get_node_from_key(key)
        if node.redis_connection is None:
            self.client.nodes_manager.initialize()
            node = self.client.get_node_from_key(key)
        return node.redis_connection

    def _waiting(self, node: Any) -> tuple[str | int, ...]:
        """``WAITAOF 0 n timeout`` where the primary has it (Redis 7.2) and keeps an AOF
        itself (n replicas then hold the append on disk; each needs ``appendonly yes``),
        else ``WAIT n timeout`` (n replicas hold it in memory)."""
        if self._wait_command is None:
            server = node.info("server")
            major, minor = (int(part) for part in str(server["redis_version"]).split(".")[:2])
            # INFO, not CONFIG GET: a managed Redis may refuse CONFIG.
            aof = str(node.info("persistence").get("aof_enabled", 0)) == "1"
            if (major, minor) >= (7, 2) and aof:
                command: tuple[str | int, ...] = ("WAITAOF", 0, self.min_replicas)
            else:
                command = ("WAIT", self.min_replicas)
            self._wait_command = (command,)
        return (*self._wait_command[0], self.replica_timeout)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        if limit is not None and limit <= 0:
            return []
        key = self._key(game_id, "events")
        try:
            # One round trip: the entries, and where runs of copies lie (none, mostly).
            pipeline = self.client.pipeline(transaction=False)
            pipeline.xrange(key, min=f"{after + 1}-0", max="+", count=limit)
            pipeline.hget(self._key(game_id, "head"), "copied")
            entries, copied = pipeline.execute()
            covering = _covering(copied, after + 1)
            if covering is not None:
                # Inside a run of copies: their marker is stored at the run's first seq.
                wanted = None if limit is None else limit + 1
                entries = self.client.xrange(key, min=f"{covering}-0", max="+", count=wanted)
            envelopes = self._resolve(game_id, entries, after, limit)
        except redis.RedisError as error:
            raise failure(error) from error
        if envelopes and (limit is None or len(envelopes) < limit):
            # The stream's end as it stood: the next append to it may well be sealed on it.
            self._remember_head(game_id, envelopes[-1]["seq"], envelopes[-1]["hash"])
        return envelopes

    def version(self, game_id: str) -> int:
        try:
            return int(self.client.hget(self._key(game_id, "head"), "version") or 0)
        except redis.RedisError as error:
            raise failure(error) from error

    def save_snapshot(self, game_id: str, seq: int, payload: dict[str, Any]) -> None:
        keys = [self._key(game_id, "snapshots"), self._key(game_id, "snapdata")]
        try:
            self._save_snapshot_script(keys=keys, args=[seq, canonical_json(payload)])
        except redis.RedisError as error:
            raise failure(error) from error

    def load_snapshot(self, game_id: str, at_most: int) -> tuple[int, dict[str, Any]] | None:
        keys = [self._key(game_id, "snapshots"), self._key(game_id, "snapdata")]
        try:
            found = self._load_snapshot_script(keys=keys, args=[at_most])
        except redis.RedisError as error:
            raise failure(error) from error
        if not found:
            return None
        return int(found[0]), json.loads(found[1])

    def read_feed(self, position: dict[str, Any] | None, limit: int = 500) -> FeedPage:
        """The feed stream after the position, or a walk of the registry where it cannot serve.

        On a single server the position is ``{"feed": the last feed entry id read}``: a read
        costs the same whatever the number of games. A first read (no position), a position
        of an earlier build (``{"registry", "games"}``) and a position older than what the
        trimmed stream still holds walk the registry (``_walk``), noting first where the
        stream ends (``since``); when the walk is done the position becomes ``{"feed":
        since}``, so what was appended meanwhile comes again from the stream (at least once,
        as the contract allows). A cluster always walks.
        """
        position = position or {}
        try:
            if not self._writes_feed():
                return self._walk(position, limit)
            if "feed" in position and not self._feed_trimmed_after(str(position["feed"])):
                return self._read_feed_stream(str(position["feed"]), limit)
            if "walk" in position:
                walk, since = dict(position["walk"]), str(position["since"])
            else:
                # From the start, or on from an earlier build's cursors (never from a feed
                # position the trimming overtook: that one starts over).
                walk = {} if "feed" in position else position
                since = self._feed_end()
            page = self._walk(walk, limit)
        except redis.RedisError as error:
            raise failure(error) from error
        if len(page.events) < limit:
            return FeedPage(events=page.events, position={"feed": since})
        return FeedPage(events=page.events, position={"walk": page.position, "since": since})

    def _read_feed_stream(self, after: str, limit: int) -> FeedPage:
        """Up to ``limit`` appends from the feed stream after entry ``after``, and their events
        (read in one pipeline, a range per run of one game's appends)."""
        entries = self.client.xrange(self._feed_key, min=f"({after}", max="+", count=limit)
        if not entries:
            return FeedPage(events=[], position={"feed": after})
        runs: list[list[Any]] = []  # [game id, first seq, last seq], in feed order
        for _, fields in entries:
            game_id, first, last = fields["g"], int(fields["f"]), int(fields["l"])
            if runs and runs[-1][0] == game_id and runs[-1][2] + 1 == first:
                runs[-1][2] = last
            else:
                runs.append([game_id, first, last])
        pipeline = self.client.pipeline(transaction=False)
        for game_id, first, last in runs:
            pipeline.xrange(self._key(game_id, "events"), min=f"{first}-1", max=f"{last}-1")
        events: list[Envelope] = []
        # An append's first seq is a stored entry's (a marker lies within one append), so
        # each range holds the whole of every marker in it.
        for (game_id, first, _), found in zip(runs, pipeline.execute(), strict=True):
            events.extend(self._resolve(game_id, found, first - 1, None))
        return FeedPage(events=events, position={"feed": entries[-1][0]})

    def _writes_feed(self) -> bool:
        """Whether appends write the feed stream: on a single server of Redis 7 or later (whose
        streams tell the last entry id they trimmed). Asked once."""
        if self._feeds is None:
            if isinstance(self.client, RedisCluster):
                self._feeds = (False,)
            else:
                version = str(self.client.info("server").get("redis_version", "0"))
                self._feeds = (int(version.split(".")[0]) >= 7,)
        return self._feeds[0]

    def _feed_end(self) -> str:
        """The id of the feed stream's last entry ("0-0" before the first)."""
        last = self.client.xrevrange(self._feed_key, count=1)
        return str(last[0][0]) if last else "0-0"

    def _feed_trimmed_after(self, after: str) -> bool:
        """Whether the trimming may have removed an entry after ``after`` (the reader fell
        behind): something was trimmed and the oldest entry left is later than ``after``.
        (Trimming removes from the oldest end; an entry after ``after`` that is gone means
        ``after`` is gone too.)"""
        try:
            info = self.client.xinfo_stream(self._feed_key)
        except redis.ResponseError:
            return False  # no stream yet: nothing was ever trimmed
        if int(info["entries-added"]) == int(info["length"]):
            return False
        oldest = info.get("first-entry")
        if not oldest:  # all trimmed: behind if anything came after
            return _stream_id(str(info["last-generated-id"])) > _stream_id(after)
        return _stream_id(str(oldest[0])) > _stream_id(after)

    def _walk(self, position: dict[str, Any], limit: int) -> FeedPage:
        """Walk the registry of games and each game's stream after its own cursor.

        The position is ``{"registry": last registry entry id read, "games": {game: seq}}``;
        every key read is one game's (or the registry's), so this works on a cluster.
        """
        registry_after = str(position.get("registry", "0-0"))
        cursors = {str(game): int(seq) for game, seq in position.get("games", {}).items()}
        try:
            for entry_id, fields in self.client.xrange(
                self._registry_log, min=f"({registry_after}", max="+"
            ):
                cursors.setdefault(fields["game"], 0)
                registry_after = entry_id
            games = sorted(cursors)
            versions = self._versions(games)
            wanted: list[tuple[str, int]] = []
            remaining = limit
            for game_id, version in zip(games, versions, strict=True):
                if remaining <= 0:
                    break
                if version > cursors[game_id]:
                    count = min(remaining, version - cursors[game_id])
                    wanted.append((game_id, count))
                    remaining -= count
            pipeline = self.client.pipeline(transaction=False)
            for game_id, count in wanted:
                pipeline.xrange(
                    self._key(game_id, "events"),
                    min=f"{cursors[game_id] + 1}-0",
                    max="+",
                    count=count,
                )
            pages = pipeline.execute() if wanted else []
            events: list[Envelope] = []
            for (game_id, count), entries in zip(wanted, pages, strict=True):
                after = cursors[game_id]
                if not entries or _seq_of(entries[0][0]) != after + 1:
                    # The cursor stopped inside a run of copies: read on from their marker.
                    found = self.read(game_id, after=after, limit=count)
                else:
                    found = self._resolve(game_id, entries, after, count)
                events.extend(found)
                if found:
                    cursors[game_id] = found[-1]["seq"]
        except redis.RedisError as error:
            raise failure(error) from error
        return FeedPage(events=events, position={"registry": registry_after, "games": cursors})

    def game_ids(self) -> list[str]:
        try:
            registered = sorted(self.client.smembers(self._registry_set))
            versions = self._versions(registered)
        except redis.RedisError as error:
            raise failure(error) from error
        # A game is registered just before its first append, which may yet have failed.
        return [game for game, version in zip(registered, versions, strict=True) if version]

    def ping(self) -> bool:
        try:
            return bool(self.client.ping())
        except redis.RedisError:
            return False

    def accepts_writes(self) -> bool:
        """False once Redis holds ``FULL_AT`` of its ``maxmemory`` and may not evict (it then
        refuses every write); a Redis without ``maxmemory`` is bounded by its machine only."""
        try:
            memory = self.client.info("memory")
        except redis.RedisError:
            return False
        # A cluster answers for each of its nodes: a full node refuses its games' writes.
        nodes = memory.values() if isinstance(self.client, RedisCluster) else [memory]
        return all(_has_room(node) for node in nodes)

    def close(self) -> None:
        self.client.close()

    # -- helpers -------------------------------------------------------------------

    def _head(self, game_id: str, expected_version: int) -> tuple[int, str]:
        """(version, last hash) of a game: from this process's last append to it when that
        is the version the caller expects, else from Redis. A stale memory costs nothing:
        the append script checks the version and the head hash again before it writes."""
        with self._heads_lock:
            remembered = self._heads.get(game_id)
        if remembered is not None and remembered[0] == expected_version:
            return remembered
        version_text, head_hash = self.client.hmget(self._key(game_id, "head"), ["version", "hash"])
        return int(version_text or 0), head_hash or GENESIS_HASH

    def _remember_head(self, game_id: str, version: int, head_hash: str) -> None:
        with self._heads_lock:
            known = self._heads.get(game_id)
            if known is not None and known[0] > version:
                return  # a read that finished after a later append of ours
            self._heads[game_id] = (version, head_hash)
            self._heads.move_to_end(game_id)
            while len(self._heads) > HEADS_REMEMBERED:
                self._heads.popitem(last=False)

    def _resolve(
        self, game_id: str, entries: list[Any], after: int, limit: int | None
    ) -> list[Envelope]:
        """The envelopes after ``after`` (at most ``limit``) that stream entries stand for."""
        parsed = [parse_entry(_seq_of(entry_id), fields["e"]) for entry_id, fields in entries]
        if any(isinstance(entry, Marker) for entry in parsed):
            return self._copies.resolve(game_id, parsed, after, limit)
        envelopes = [entry for entry in parsed if not isinstance(entry, Marker)]
        return [e for e in envelopes if e["seq"] > after][:limit]

    def _read_stored(self, game_id: str, first: int, last: int) -> list[Envelope]:
        entries = self.client.xrange(
            self._key(game_id, "events"), min=f"{first}-1", max=f"{last}-1"
        )
        return [json.loads(fields["e"]) for _, fields in entries]

    def _read_entries(self, game_id: str, upto: int) -> list[Entry]:
        entries = self.client.xrange(self._key(game_id, "events"), min="-", max=f"{upto}-1")
        return [parse_entry(_seq_of(entry_id), fields["e"]) for entry_id, fields in entries]

    def _versions(self, game_ids: list[str]) -> list[int]:
        if not game_ids:
            return []
        pipeline = self.client.pipeline(transaction=False)
        for game_id in game_ids:
            pipeline.hget(self._key(game_id, "head"), "version")
        return [int(value or 0) for value in pipeline.execute()]


def _confirmed(reply: Any) -> int:
    """How many replicas a WAIT (a count) or a WAITAOF (local, replicas) reply confirms."""
    if isinstance(reply, list | tuple):
        return int(reply[1])
    return int(reply)


def _seq_of(entry_id: str) -> int:
    """The seq an events stream's entry id ("<seq>-1") stands at."""
    return int(entry_id.partition("-")[0])


def _covering(copied: str | None, seq: int) -> int | None:
    """The first seq of the run of copies (the head's ``copied``: JSON [first, last] pairs)
    that holds ``seq`` after its first, if one does."""
    for first, last in json.loads(copied) if copied else ():
        if first < seq <= last:
            return int(first)
    return None


def _stream_id(entry_id: str) -> tuple[int, int]:
    """A stream entry id ("<ms>-<seq>") as a pair that orders as Redis orders ids."""
    millis, _, sequence = entry_id.partition("-")
    return int(millis), int(sequence or 0)
