"""What the live streams (``GET /games/{id}/stream``) of one process share.

- ``StreamHub``: one ``GameFeed`` per game that has an open stream in this process. An append
  marks the game's feed stale and wakes its streams; the first stream to look reads the new
  events from the store and folds the game once, and every other stream of the game takes
  them from the feed (fan-out): 1,000 streams of a game cost one read per append, not 1,000
  reads and refolds. Appends in other processes arrive through Redis pub/sub on one
  connection per process (a pattern subscription to every game's channel), started with the
  first stream. A cheap check of the store's version every ``MEEPLE_STREAM_POLL`` seconds
  per game (not per stream) backs the push up, so a lost wake-up only delays an event.
- ``StreamSlots``: the caps on open streams per client address and per game, and within a
  game each stream's share (``fair_share``: what each seat and the admin keep of it, what
  spectators may take). In one process (the embedded default) they are counted in memory;
  with ``MEEPLE_REDIS_URL`` they are counted in Redis (``RedisStreamSlots``), each slot a
  lease that its stream renews, so the caps and the shares hold across every API process and
  a crashed process's slots expire by themselves.

The same announcements tell each process when its cached games are current
(``StreamHub.is_current``): a game this process appended last, with no later append announced
since, is decided on from the cache without reading the store first (the append's own check
of the version and head hash catches the rare announcement still in flight).

Nothing here blocks a thread for long: under gunicorn's gevent worker (``meeple serve``,
compose) the locks and events are gevent's, and a stream waiting for news is a greenlet.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from events.envelope import Envelope
from projections.fold import Game
from service.application import request_shares
from service.application.live_status import Standing, fold_standings, standing
from service.application.visibility import sealed_until
from service.monitoring import metrics

log = logging.getLogger(__name__)

#: How many of the events appended since a feed started it keeps, for its streams that are
#: a little behind; a stream further behind (a resume from long ago, a start from ``after``)
#: reads its way up from the store. A feed starts empty: an idle game's costs next to nothing.
KEEP = 64

#: Pub/sub messages on a game's channel that start with this carry a note (JSON) for its
#: streams instead of a version: an analysis's progress (service.http.resources.analyses).
NOTE_PREFIX = "note "
#: How many games' announced versions a process keeps; beyond it, it forgets them all and
#: trusts no cached game until its own next append to it.
ANNOUNCED_KEPT = 100_000

#: The pub/sub channel an append to a game is announced on, and the pattern for all games.
CHANNEL = "meeple:{{{game_id}}}:appended"
PATTERN = "meeple:{*}:appended"

_hubs: weakref.WeakSet[StreamHub] = weakref.WeakSet()


def appended_channel(game_id: str) -> str:
    """The pub/sub channel an append to the game is announced on."""
    return CHANNEL.format(game_id=game_id)


def end_all_streams() -> None:
    """Ask every open stream of this process to end now (the server is shutting down)."""
    for hub in list(_hubs):
        hub.end_streams()


# -- the fan-out -----------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedView:
    """A feed as one stream sees it at one moment: the folded version, whether the game is
    over, its sealed part, its latest events (contiguous, ending at ``version``), and where
    the game stood after each of them and stands now (``service.application.live_status``)."""

    version: int
    finished: bool
    sealed: int
    recent: tuple[Envelope, ...]
    #: seq -> where the game stood after that event, for the events of ``recent``
    standings: dict[int, Standing] = field(default_factory=dict)
    #: where the game stands at ``version`` (None before the feed's first look)
    current: Standing | None = None

    def after(self, cursor: int) -> list[Envelope] | None:
        """The events after ``cursor``, or None when they are older than the feed keeps."""
        if cursor >= self.version:
            return []
        if not self.recent or cursor < self.recent[0]["seq"] - 1:
            return None
        return list(self.recent[cursor - self.recent[0]["seq"] + 1 :])


class GameFeed:
    """One game's latest events, read once per append for every stream of it in the process."""

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self.watchers: set[Watcher] = set()
        self._lock = threading.Lock()
        self._stale = True
        self._started = False
        self._checked = 0.0
        self._view = FeedView(0, False, 0, ())
        #: the game at ``_view.version``, this feed's own: the next look folds its new events
        #: on from it, recording where the game stood after each
        self._game: Game | None = None
        #: (seq, viewer key) -> the SSE message, and (version, viewer key, "turn") -> the turn
        #: message: each viewer kind's text is made once.
        self._texts: dict[tuple[Any, ...], str] = {}
        #: The latest notes (not events: an analysis's progress) and how many came in all.
        self.notes: list[dict[str, Any]] = []
        self.notes_seen = 0

    def add_note(self, note: dict[str, Any]) -> None:
        """Keep a note for the streams (the latest KEEP of them)."""
        with self._lock:
            self.notes = [*self.notes, note][-KEEP:]
            self.notes_seen += 1

    def notes_after(self, seen: int) -> tuple[list[dict[str, Any]], int]:
        """The notes that came after the first ``seen`` (those still kept), and the count."""
        with self._lock:
            fresh = min(self.notes_seen - seen, len(self.notes))
            return (self.notes[len(self.notes) - fresh :] if fresh > 0 else []), self.notes_seen

    def mark_stale(self, version: int | None = None) -> None:
        """An append happened (at ``version`` when known): the next look reads the store."""
        if version is None or version > self._view.version:
            self._stale = True

    def view(self, services: Any, recheck: float) -> FeedView:
        """The feed, brought up to date first if an append marked it stale (or, every
        ``recheck`` seconds, if the store's version moved without a wake-up)."""
        with self._lock:
            now = time.monotonic()
            if not self._stale and now - self._checked >= recheck:
                self._checked = now
                self._stale = services.store.version(self.game_id) != self._view.version
            if self._stale:
                # Cleared before reading: an append from now on marks the feed again.
                self._stale = False
                self._checked = now
                try:
                    self._refresh(services)
                except BaseException:
                    self._stale = True
                    raise
            return self._view

    def text(
        self,
        envelope: Envelope,
        viewer: tuple[Any, ...],
        view: FeedView,
        make: Callable[[Envelope, FeedView], str],
    ) -> str:
        """The message ``make`` makes of ``envelope`` for this kind of ``viewer`` (what decides
        what it may see), made once for all the streams of such viewers."""
        if view is not self._view:
            return make(envelope, view)  # made from an older look: not worth keeping
        key = (envelope["seq"], viewer)
        found = self._texts.get(key)
        if found is None:
            found = make(envelope, view)
            if view.recent and envelope["seq"] >= view.recent[0]["seq"]:
                self._texts[key] = found
        return found

    def turn_text(
        self, viewer: tuple[Any, ...], view: FeedView, make: Callable[[FeedView], str]
    ) -> str:
        """The ``turn`` message ``make`` makes of where the game stands at ``view`` for this
        kind of ``viewer``, made once for all the streams of such viewers that open meanwhile."""
        if view is not self._view:
            return make(view)
        key = (view.version, viewer, "turn")
        found = self._texts.get(key)
        if found is None:
            found = self._texts[key] = make(view)
        return found

    def _refresh(self, services: Any) -> None:
        old = self._view
        game = services.folder.load(self.game_id)
        finished = bool(game.ruleset.status(game.state).get("finished"))
        standings: dict[int, Standing] = {}
        if self._started:
            start = max(old.version, game.version - KEEP)
            fresh = services.store.read(self.game_id, after=start, limit=game.version - start)
            contiguous = start == old.version
            recent = [*old.recent, *fresh] if contiguous else fresh
            standings = dict(old.standings) if contiguous else {}
            standings.update(self._standings(services, fresh, game))
        else:
            self._started = True
            recent = []
        recent = recent[-KEEP:]
        oldest = recent[0]["seq"] if recent else game.version + 1
        kept = {seq: found for seq, found in standings.items() if seq >= oldest}
        current = kept.get(game.version) or standing(game)
        self._view = FeedView(
            game.version, finished, sealed_until(game.meta), tuple(recent), kept, current
        )
        self._game = game
        if finished != old.finished:
            self._texts.clear()  # every secret is shown once the game has ended
        else:
            for key in [key for key in self._texts if key[0] < oldest]:
                del self._texts[key]

    def _standings(self, services: Any, fresh: list[Envelope], game: Game) -> dict[int, Standing]:
        """Where the game stood after each new event: the last is ``game`` itself; those
        before it are folded on from the game this feed held (or loaded where they begin)."""
        if not fresh or fresh[-1]["seq"] != game.version:
            return {}
        earlier = fresh[:-1]
        found: dict[int, Standing] = {}
        if earlier:
            first = earlier[0]["seq"]
            base = self._game
            if base is None or base.version != first - 1:
                base = services.folder.load(self.game_id, at=first - 1)
            fetch, rebuild = services.folder.stepper(self.game_id)
            found = fold_standings(base, earlier, fetch, rebuild)
        found[game.version] = standing(game)
        return found


class Watcher:
    """One stream's handle on its game's feed: ``wait`` returns when the game may have news."""

    def __init__(
        self, hub: StreamHub, feed: GameFeed, event: threading.Event | None = None
    ) -> None:
        self.hub = hub
        self.feed = feed
        #: what an append wakes: the stream's own, or one shared by the watchers of one
        #: stream that follows many games (an application's, ``/apps/me/stream``)
        self._event = event if event is not None else threading.Event()
        self.ending = False

    def wake(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Whether news came (or the server asks streams to end) within ``timeout`` seconds.

        The wake-up is used up: an append after this returns wakes the next wait. A request
        that waits here gives its place in the process back meanwhile (``request_shares``)."""
        with request_shares.aside():
            came = self._event.wait(max(0.0, timeout))
        self._event.clear()
        return bool(came)

    def view(self, services: Any, recheck: float) -> FeedView:
        """The game's feed, brought up to date (see ``GameFeed.view``)."""
        return self.feed.view(services, recheck)

    def close(self) -> None:
        self.hub.unwatch(self)


class StreamHub:
    """The feeds of the games this process streams, and the wake-ups that reach them."""

    def __init__(
        self, connection: redis.Redis | None = None, slots: StreamSlots | None = None
    ) -> None:
        self.slots: StreamSlots = slots if slots is not None else StreamSlots()
        self.feeds: dict[str, GameFeed] = {}
        self._lock = threading.Lock()
        self._connection = connection
        self._listener: threading.Thread | None = None
        self._listening = threading.Event()
        self._closed = False
        self._ending = False
        #: game -> the highest version announced by any process (since the subscription)
        self._versions_heard: dict[str, int] = {}
        #: game -> the version this process appended last, while no later one was announced
        self._current: dict[str, int] = {}
        #: whether the subscription is up now (it was lost, and not yet made again: False)
        self._hearing = False
        _hubs.add(self)

    def listen(self) -> bool:
        """Start following every game's announcements (once per process); whether they are
        being heard now (never without Redis: then nothing is trusted to be current)."""
        if self._connection is None:
            return False
        with self._lock:
            start = self._listener is None and not self._closed
            if start:
                self._listener = threading.Thread(
                    target=self._listen, name="meeple-stream-listener", daemon=True
                )
        if start and self._listener is not None:
            self._listener.start()
        return self._hearing

    def note_appended(self, game_id: str, version: int) -> None:
        """This process appended the game up to ``version``: its cache is current until
        another append is announced (noted only while the announcements are heard: a process
        that does not follow them, a worker, never trusts its cache this way)."""
        if not self._hearing:
            return
        with self._lock:
            if self._versions_heard.get(game_id, 0) <= version:
                self._current[game_id] = version

    def is_current(self, game_id: str, version: int) -> bool:
        """Whether ``version`` is the game's latest as far as the announcements tell."""
        if not self._hearing:
            return False
        with self._lock:
            return (
                self._current.get(game_id) == version
                and self._versions_heard.get(game_id, 0) <= version
            )

    def watch(self, game_id: str, event: threading.Event | None = None) -> Watcher:
        """Follow a game: the returned watcher is woken by every append to it from now on
        (setting ``event``, when given: one stream may follow many games)."""
        with self._lock:
            feed = self.feeds.get(game_id)
            if feed is None:
                feed = self.feeds[game_id] = GameFeed(game_id)
            watcher = Watcher(self, feed, event)
            watcher.ending = self._ending
            feed.watchers.add(watcher)
        self.listen()
        if self._connection is not None and not self._listening.wait(5):
            log.warning("live streams: not subscribed to Redis yet; relying on the store check")
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        with self._lock:
            feed = watcher.feed
            feed.watchers.discard(watcher)
            if not feed.watchers and self.feeds.get(feed.game_id) is feed:
                del self.feeds[feed.game_id]  # nothing is kept for games nobody streams

    def wake(self, game_id: str, version: int | None = None) -> None:
        """An append to the game (at ``version`` when known): its streams look at the feed."""
        with self._lock:
            feed = self.feeds.get(game_id)
            if feed is None:
                return
            feed.mark_stale(version)
            watchers = list(feed.watchers)
        for watcher in watchers:
            watcher.wake()

    def note(self, game_id: str, note: dict[str, Any]) -> None:
        """A note for the game's streams (nothing was appended): they send it to whoever may
        see it."""
        with self._lock:
            feed = self.feeds.get(game_id)
            if feed is None:
                return
            feed.add_note(note)
            watchers = list(feed.watchers)
        for watcher in watchers:
            watcher.wake()

    def end_streams(self) -> None:
        """Have every stream end at its next look (the server is shutting down)."""
        with self._lock:
            self._ending = True
            watchers = [w for feed in self.feeds.values() for w in feed.watchers]
        for watcher in watchers:
            watcher.ending = True
            watcher.wake()

    def close(self) -> None:
        self.end_streams()
        self._closed = True
        listener = self._listener
        if listener is not None and listener is not threading.current_thread():
            listener.join(timeout=5)

    def _listen(self) -> None:
        """Every game's appends, from every process, on one pub/sub connection."""
        assert self._connection is not None
        while not self._closed:
            pubsub = self._connection.pubsub()
            try:
                pubsub.psubscribe(PATTERN)
                while not self._closed:
                    message = pubsub.get_message(timeout=1.0)
                    if message is None:
                        continue
                    if message["type"] == "psubscribe":
                        with self._lock:
                            # Announcements may have been missed: trust no cache until the
                            # process appends again.
                            self._current.clear()
                        self._hearing = True
                        self._listening.set()
                        # Appends made while (re)subscribing may have been missed: look again.
                        for game_id in list(self.feeds):
                            self.wake(game_id)
                    elif message["type"] == "pmessage":
                        self._announced(message["channel"], message["data"])
            except (redis.RedisError, OSError) as error:
                self._hearing = False
                if not self._closed:
                    log.warning("live streams: Redis pub/sub failed (%s); reconnecting", error)
                    time.sleep(1.0)
            finally:
                pubsub.close()

    def _announced(self, channel: bytes | str, data: bytes | str) -> None:
        name = channel.decode() if isinstance(channel, bytes) else channel
        game_id = name[len("meeple:{") : -len("}:appended")]
        text = data.decode() if isinstance(data, bytes) else str(data)
        if text.startswith(NOTE_PREFIX):
            try:
                self.note(game_id, json.loads(text[len(NOTE_PREFIX) :]))
            except ValueError:
                log.warning("live streams: a malformed note on %s", name)
            return
        try:
            version: int | None = int(data)
        except (TypeError, ValueError):
            version = None
        with self._lock:
            if version is None or len(self._versions_heard) >= ANNOUNCED_KEPT:
                self._versions_heard.clear()
                self._current.clear()
            if version is not None:
                self._versions_heard[game_id] = max(version, self._versions_heard.get(game_id, 0))
                if self._current.get(game_id, version) < version:
                    del self._current[game_id]
        self.wake(game_id, version)


# -- the caps --------------------------------------------------------------------------------

#: The share of a game's streams that every stream without a place of its own there is
#: counted in: no token, or a token that speaks for no seat of the game.
SPECTATORS = "spectators"


@dataclass(frozen=True)
class Share:
    """The part of a game's streams a stream is counted in, and how many that part may hold at
    once: one owner's own (``seat:<n>``, ``admin``, ``holder``) or the spectators'."""

    owner: str
    cap: int


def fair_share(
    seat: int | None, *, admin: bool, holder: bool, seats: int, per_game: int, per_seat: int
) -> Share:
    """Where a stream is counted on a game of ``seats`` seats whose cap is ``per_game``: each
    seat and the admin keep ``per_seat`` of the game's streams for their own (a branch's
    holder, who plays every seat, keeps every seat's), and spectators share the rest. However
    many streams spectators open, every seat and the admin still find theirs; together the
    shares never exceed the game's cap (spectators get none when it is smaller than what is
    kept)."""
    if admin:
        return Share("admin", per_seat)
    if holder:
        return Share("holder", per_seat * seats)
    if seat is not None:
        return Share(f"seat:{seat}", per_seat)
    return Share(SPECTATORS, max(0, per_game - per_seat * (seats + 1)))


@dataclass
class Refusal:
    """A stream refused by a cap: which one, its size, and when a slot frees at the latest."""

    scope: str  # "address", "share" (the stream's share of the game) or "game"
    cap: int
    retry_after: int
    #: the owner of the stream's share (``Share.owner``)
    owner: str = SPECTATORS


@dataclass
class Slot:
    """An open stream's place under the caps; ``release`` gives it back (twice is harmless)."""

    slots: StreamSlots
    address: str
    game_id: str
    #: the owner of the share of the game it is counted in (``Share.owner``)
    owner: str
    name: str
    ends_at: float
    released: bool = False
    renewed_at: float = field(default_factory=time.monotonic)
    #: counted among the open streams (``opened``) until released
    counted_open: bool = False

    @property
    def counted(self) -> tuple[tuple[str, ...], ...]:
        """What it counts under, in the order the caps are checked: its client's address, its
        share of the game, the whole game."""
        return (
            ("address", self.address),
            ("share", self.game_id, self.owner),
            ("game", self.game_id),
        )

    def renew(self) -> None:
        """Tell the counter the stream is still open (Redis leases); cheap when not due."""
        self.slots.renew(self)

    def opened(self) -> None:
        """The stream it was taken for is open: counted in ``meeple_open_streams``."""
        if not self.counted_open and not self.released:
            self.counted_open = True
            metrics.stream_opened()

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.slots.release(self)
            if self.counted_open:
                metrics.stream_closed()


def retry_after(ends: list[float], now: float) -> int:
    """Seconds until the first of these streams reaches its lifetime (at least 1)."""
    return max(1, math.ceil(min(ends, default=now + 1) - now))


class StreamSlots:
    """The caps counted in this process (the embedded default: one process serves all)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, ...], dict[str, float]] = {}

    def acquire(
        self,
        address: str,
        game_id: str,
        share: Share,
        per_address: int,
        per_game: int,
        lifetime: float,
    ) -> Slot | Refusal:
        """A place for a stream from ``address`` on the game, counted in ``share`` of it."""
        now = time.time()
        slot = Slot(self, address, game_id, share.owner, uuid.uuid4().hex, now + lifetime)
        caps = dict(zip(slot.counted, (per_address, share.cap, per_game), strict=True))
        with self._lock:
            for counted, cap in caps.items():
                held = self._held.get(counted, {})
                if len(held) >= cap:
                    ends = list(held.values())
                    return Refusal(counted[0], cap, retry_after(ends, now), share.owner)
            for counted in caps:
                self._held.setdefault(counted, {})[slot.name] = slot.ends_at
        return slot

    def renew(self, slot: Slot) -> None:
        """Nothing to renew: a slot in memory lives as long as the process."""

    def release(self, slot: Slot) -> None:
        with self._lock:
            for counted in slot.counted:
                held = self._held.get(counted)
                if held is not None:
                    held.pop(slot.name, None)
                    if not held:
                        del self._held[counted]

    def count(self, scope: str, *key: str) -> int:
        """Open streams under one cap: ``("address", address)``, ``("share", game_id, owner)``
        or ``("game", game_id)``."""
        with self._lock:
            return len(self._held.get((scope, *key), {}))


#: Takes a slot under every cap in KEYS (sorted sets of slots scored by their lease's expiry)
#: or under none: drops expired leases, then adds the member to each set if all have room.
#: ARGV: now, lease expiry, member, key ttl (seconds), then each key's cap in turn.
#: Returns {1} when taken, else {0, i, member...}: the first full cap (from 1) and its holders
#: (for Retry-After).
_ACQUIRE = """
for _, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
end
for i, key in ipairs(KEYS) do
  if redis.call('ZCARD', key) >= tonumber(ARGV[4 + i]) then
    local held = redis.call('ZRANGE', key, 0, -1)
    table.insert(held, 1, i)
    table.insert(held, 1, 0)
    return held
  end
end
for _, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[3])
  redis.call('EXPIRE', key, ARGV[4])
end
return {1}
"""


class RedisStreamSlots(StreamSlots):
    """The caps counted in Redis, shared by every API process.

    Each cap is a sorted set of the open streams' slots scored by the time their lease
    expires; a stream renews its lease when a third of it has passed while it is open, and
    removes it when it ends, so a slot of a crashed process is free again within its lease
    (``MEEPLE_STREAM_SLOT_LEASE``). The address's set is taken first, then the game's two (the
    stream's share and the whole game) at once: they share the game's hash tag, so one script
    checks both on a Redis Cluster too, where the address's set lives in another slot. A
    refusal by the game's gives the address's back.
    """

    def __init__(
        self, connection: redis.Redis, prefix: str = "meeple", lease: float = 60.0
    ) -> None:
        super().__init__()
        self.connection = connection
        self.prefix = prefix
        #: Seconds a slot stays held without its stream renewing it.
        self.lease = lease
        self._fallback = StreamSlots()
        self._acquire = connection.register_script(_ACQUIRE)

    def key(self, counted: tuple[str, ...]) -> str:
        """The sorted set of one cap (``Slot.counted``)."""
        scope, key = counted[0], counted[1]
        if scope == "address":
            return f"{self.prefix}:streams:address:{key}"
        game = f"{self.prefix}:{{{key}}}:streams"
        return game if scope == "game" else f"{game}:{counted[2]}"

    def acquire(
        self,
        address: str,
        game_id: str,
        share: Share,
        per_address: int,
        per_game: int,
        lifetime: float,
    ) -> Slot | Refusal:
        try:
            return self._take(address, game_id, share, per_address, per_game, lifetime)
        except redis.RedisError as error:
            # Redis is out of reach (the health check says so): count in this process
            # meanwhile rather than refuse every stream or answer 500.
            log.warning("live streams: counting in this process, Redis failed (%s)", error)
            return self._fallback.acquire(address, game_id, share, per_address, per_game, lifetime)

    def _take(
        self,
        address: str,
        game_id: str,
        share: Share,
        per_address: int,
        per_game: int,
        lifetime: float,
    ) -> Slot | Refusal:
        now = time.time()
        slot = Slot(self, address, game_id, share.owner, "", now + lifetime)
        slot.name = f"{slot.ends_at:.0f}:{uuid.uuid4().hex}"
        # The address's cap alone, then the game's two at once (in one hash slot): each step
        # its caps in the order of ``slot.counted``.
        caps = list(zip(slot.counted, (per_address, share.cap, per_game), strict=True))
        ttl = math.ceil(self.lease * 2)
        taken: list[str] = []
        for step in (caps[:1], caps[1:]):
            keys = [self.key(counted) for counted, _ in step]
            answer = self._acquire(
                keys=keys, args=[now, now + self.lease, slot.name, ttl, *(cap for _, cap in step)]
            )
            if int(answer[0]) != 1:
                for done in taken:
                    self.connection.zrem(done, slot.name)
                (scope, *_), cap = step[int(answer[1]) - 1]
                ends = [float(member.split(b":", 1)[0]) for member in answer[2:]]
                return Refusal(scope, cap, retry_after(ends, now), share.owner)
            taken += keys
        return slot

    def renew(self, slot: Slot) -> None:
        if slot.released or time.monotonic() - slot.renewed_at < self.lease / 3:
            return
        slot.renewed_at = time.monotonic()
        expiry = time.time() + self.lease
        try:
            with self.connection.pipeline(transaction=False) as pipe:
                for counted in slot.counted:
                    pipe.zadd(self.key(counted), {slot.name: expiry}, xx=True)
                    pipe.expire(self.key(counted), math.ceil(self.lease * 2))
                pipe.execute()
        except redis.RedisError as error:
            log.warning("live streams: could not renew a slot (%s)", error)

    def release(self, slot: Slot) -> None:
        try:
            with self.connection.pipeline(transaction=False) as pipe:
                for counted in slot.counted:
                    pipe.zrem(self.key(counted), slot.name)
                pipe.execute()
        except redis.RedisError as error:
            # Its lease runs out by itself.
            log.warning("live streams: could not release a slot (%s)", error)

    def count(self, scope: str, *key: str) -> int:
        name = self.key((scope, *key))
        return int(self.connection.zcount(name, time.time(), "+inf"))
