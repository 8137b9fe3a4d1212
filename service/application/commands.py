"""The application layer: what the HTTP handlers and the background jobs do to games.

A command: load the game (the Folder's cache, else snapshot + fold) -> decide on a copy
-> append at the expected version -> advance the cache -> hand over to the jobs. Errors
are domain errors (IllegalAction, ConcurrencyConflict, GameNotFound, AwaitingSystemStep,
CommandError); ``service.http.errors`` alone maps them to HTTP statuses.

An action costs one durable round trip to a Redis deployment (docs/operations.md,
"Speed"): the game is decided on from the cache when this process knows it is current
(``load_for_action``), the store remembers the head hash it seals on, and what the append
makes due (the automatic step's job, the live announcement, webhook notices, read-model
catch-up) is written by the append's own script (``Jobs.side_writes``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import secrets
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from events.envelope import Envelope, NewEvent
from events.store import Appended, AppendResult, ConcurrencyConflict, ReplicationLag
from projections.fold import (
    STEP_TYPES,
    Game,
    decide_action,
    game_created_event,
    open_seat_name,
    step_action,
)
from projections.readmodels.game_index import summarize_game
from projections.rng import derive_rng
from projections.ruleset import Action, IllegalAction, State, get_ruleset
from service.application.auth import new_token, token_hash
from service.application.bot_seats import bot_name, due_bot_seat
from service.monitoring import metrics

if TYPE_CHECKING:
    from service.application.services import Services

log = logging.getLogger(__name__)

#: What a game id may look like; anything else is no game (and never reaches the store).
GAME_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class GameNotFound(Exception):
    """No game has this id."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"no game {game_id!r}")
        self.game_id = game_id


class AwaitingSystemStep(Exception):
    """The game waits for an automatic step (scoring, a reveal ...); seats wait too."""

    def __init__(self, step: str) -> None:
        super().__init__(f"awaiting the automatic step {step!r}")
        self.step = step


class CommandError(Exception):
    """A request the service refuses before the rules see it (bad players, options ...)."""

    def __init__(self, code: str, message: str, fields: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = fields or {}


class CapReached(CommandError):
    """A cap on what anonymous clients may start at once is reached (games waiting for players,
    games with bots): the service is busy with as many as it takes, so asking again later may
    succeed, after ``retry_after`` seconds."""

    def __init__(self, code: str, message: str, retry_after: int) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class SeatTicket:
    """A seat of a new game and its bearer token (shown once, never stored); an open seat
    and a bot's have no token (``kind`` says which: ``player``, ``open`` or ``bot``)."""

    seat: int
    name: str
    token: str | None
    kind: str = "player"
    bot: dict[str, Any] | None = None


@dataclass(frozen=True)
class CreatedGame:
    game_id: str
    version: int
    seats: list[SeatTicket]


@dataclass(frozen=True)
class ActResult:
    """An accepted action: its event's seq and the game right after it."""

    seq: int
    game: Game
    replayed: bool = False

    @property
    def version(self) -> int:
        return self.game.version


# -- reading -------------------------------------------------------------------------


def load_game(
    services: Services, game_id: str, at: int | None = None, *, shared: bool = False
) -> Game:
    """The game (a copy the caller owns) from the cache or the nearest snapshot; with
    ``shared``, a copy whose state the caller may only read or replace (``Folder.load``)."""
    if not GAME_ID.match(game_id):
        raise GameNotFound(game_id)
    try:
        return services.folder.load(game_id, at=at, shared=shared)
    except KeyError:
        raise GameNotFound(game_id) from None


def load_for_action(services: Services, game_id: str) -> tuple[Game, bool]:
    """The game to decide an action on, and whether it was read from the store just now.

    The cached game is taken as it is, without a read, when the announcements say it is
    the latest (``StreamHub.is_current``: this process appended it last and no later append
    was announced). A decision that refuses the action is made again on a read game before
    it is believed (``act``), and the append checks the version and head hash itself.
    """
    if not GAME_ID.match(game_id):
        raise GameNotFound(game_id)
    streams = getattr(services.jobs, "streams", None)
    cached = services.folder.cached(game_id)
    if cached is not None and streams is not None and streams.is_current(game_id, cached.version):
        return cached, False
    return load_game(services, game_id, shared=True), True


def with_index_row(
    services: Services, game: Game, new_state: State, then: list[Any]
) -> list[Any] | Callable[[list[Envelope]], list[Any]]:
    """``then`` and, before it, the writes of the game's row in the game index after the step
    (``RedisGameIndex.row_writes``), when the index lives on the event store's own Redis: the
    process that holds the game folded writes the row with the append, so no catch-up folds
    the step again. The row names the time the store records (hence a function of the sealed
    envelopes). ``then`` as it is otherwise (the side writes may select another database:
    the row goes first)."""
    index = services.game_index
    created_at = game.meta.get("created_at")
    shares = getattr(index, "shares_server_with", None)
    if created_at is None or shares is None or not shares(getattr(services.store, "client", None)):
        return then
    after = Game(game.ruleset, game.meta, new_state, game.version + 1)

    def writes(envelopes: list[Envelope]) -> list[Any]:
        row = summarize_game(after, str(created_at), str(envelopes[-1]["recorded_at"]))
        return [*index.row_writes(row), *then]  # type: ignore[attr-defined]

    return writes


def catch_up(services: Services) -> int:
    """Bring the game index up to date with the store's feed; how many events it read.

    The jobs call this after appends and periodically; it is safe to run concurrently.
    """
    folder = services.folder
    return services.game_index.catch_up(services.store, folder.load, through=folder.load_through)


# -- creating ------------------------------------------------------------------------


def create_game(
    services: Services,
    ruleset_id: str,
    players: Sequence[str | Mapping[str, Any]],
    options: Mapping[str, Any] | None = None,
    seed: str | None = None,
    sandbox: bool = False,
    game_id: str | None = None,
) -> CreatedGame:
    """Append a new game's ``game_created``; each player's seat gets a fresh token shown only
    here. A seat may instead be ``{"open": True}`` (joined later: service.http.resources.lobby) or
    ``{"bot": {...}, "name": ...}`` (played by a bot: service.application.bots). ``game_id``:
    the id it is to have (one the caller counted under a cap first), else a new one."""
    try:
        ruleset = get_ruleset(ruleset_id)
    except KeyError:
        raise CommandError(
            "unknown_ruleset",
            f"There is no game {ruleset_id!r}; GET /rulesets lists them.",
            {"ruleset": ["Unknown ruleset."]},
        ) from None
    seats = list(players)
    names = [_seat_name(seat, spec) for seat, spec in enumerate(seats)]
    if not ruleset.min_players <= len(names) <= ruleset.max_players:
        raise CommandError(
            "invalid_player_count",
            f"{ruleset.title} is played by {ruleset.min_players} to {ruleset.max_players} "
            f"players, not {len(names)}.",
            {"players": ["Wrong number of players."]},
        )
    merged = _merged_options(ruleset.options, dict(options or {}))
    seed = seed if seed is not None else secrets.token_hex(32)
    try:
        # Set up once before anything is stored, so a bad option can never leave a game
        # whose log cannot be folded.
        ruleset.setup(list(names), dict(merged), derive_rng(seed, 0))
    except IllegalAction as error:
        raise CommandError("invalid_option", error.message, {"options": [error.message]}) from None
    except (ValueError, TypeError, KeyError, IndexError) as error:
        message = f"These options cannot set up a game of {ruleset.title}."
        raise CommandError("invalid_option", message, {"options": [str(error)]}) from None
    tokens = [new_token() if isinstance(spec, str) else None for spec in seats]
    open_seats = [
        seat for seat, spec in enumerate(seats) if isinstance(spec, Mapping) and spec.get("open")
    ]
    bots = [
        dict(spec["bot"]) if isinstance(spec, Mapping) and spec.get("bot") else None
        for spec in seats
    ]
    lobby = {"open_seats": open_seats, "bots": bots} if open_seats or any(bots) else None
    event = game_created_event(
        ruleset,
        names,
        merged,
        seed,
        sandbox=sandbox,
        seat_token_hashes=[token_hash(token) if token else "" for token in tokens],
        lobby=lobby,
    )
    chosen = game_id
    while True:
        game_id = chosen or uuid.uuid4().hex
        try:
            result = append(services, game_id, [event], expected_version=0)
        except ConcurrencyConflict:  # pragma: no cover - a 122-bit collision
            if chosen is not None:
                raise
            continue
        break
    tickets = [
        SeatTicket(
            seat,
            name,
            token,
            "open" if seat in open_seats else "bot" if bots[seat] else "player",
            bots[seat],
        )
        for seat, (name, token) in enumerate(zip(names, tokens, strict=True))
    ]
    return CreatedGame(game_id, result.version, tickets)


def _seat_name(seat: int, spec: str | Mapping[str, Any]) -> str:
    """The name a seat of a new game goes by: a player's own, an open seat's placeholder,
    a bot's (given, or its agent's)."""
    if isinstance(spec, str):
        return spec
    if spec.get("open"):
        return open_seat_name(seat)
    return bot_name(dict(spec["bot"]), spec.get("name"))


def _merged_options(defaults: Mapping[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise CommandError(
            "unknown_option",
            f"Unknown options: {', '.join(unknown)}; GET /rulesets lists each game's options.",
            {"options": {name: ["Unknown option."] for name in unknown}},
        )
    wrong = {
        name: [f"Must be of the same kind as the default {defaults[name]!r}."]
        for name, value in options.items()
        if not _same_kind(value, defaults[name])
    }
    if wrong:
        raise CommandError(
            "invalid_option",
            f"Options of the wrong kind: {', '.join(sorted(wrong))}.",
            {"options": wrong},
        )
    return {**defaults, **options}


def _same_kind(value: Any, default: Any) -> bool:
    if default is None:
        return True
    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(default, bool)
    if isinstance(default, int | float):
        return isinstance(value, int | float)
    return isinstance(value, type(default))


# -- acting --------------------------------------------------------------------------


def act(
    services: Services,
    game_id: str,
    seat: int,
    action: Action,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
    *,
    loaded: Game | None = None,
    checked: bool = True,
) -> ActResult:
    """Apply a seat's action and append it.

    ``expected_version`` (If-Match) pins the version: stale -> ConcurrencyConflict, nothing
    appended. Without it a concurrent append is retried a bounded number of times on the
    new state. A repeated ``idempotency_key`` of this seat returns the first result.
    ``loaded`` is the game as the caller just loaded it (a copy it hands over), which
    saves the first attempt a load; ``checked`` False says it came from the cache unread
    (``load_for_action``), so a refusal is checked on the stored game first.
    """
    # Keys are per seat: another seat reusing a key must never see this seat's response.
    key = f"seat{seat}:{idempotency_key}" if idempotency_key is not None else None
    attempts = services.config.action_retries + 1
    for attempt in range(attempts):
        if attempt == 0 and loaded is not None:
            game = loaded
        else:
            game, checked = load_game(services, game_id, shared=True), True
        try:
            try:
                event, new_state = _decide_at(game, seat, action, expected_version)
            except (IllegalAction, ConcurrencyConflict):
                if checked:
                    raise
                # The cache may be behind (an append announced too late): ask the store.
                # (Not for a pending automatic step: at worst the seat is asked to come back
                # a moment later, and a 409 is not worth a read.)
                game, checked = load_game(services, game_id, shared=True), True
                event, new_state = _decide_at(game, seat, action, expected_version)
        except (IllegalAction, AwaitingSystemStep, ConcurrencyConflict):
            earlier = _earlier_result(services, game_id, seat, key, action)
            if earlier is not None:
                return earlier
            raise
        try:
            result = append(
                services, game_id, [event], game.version, key, game=game, new_state=new_state
            )
        except ConcurrencyConflict:
            if expected_version is not None or attempt == attempts - 1:
                earlier = _earlier_result(services, game_id, seat, key, action)
                if earlier is not None:
                    return earlier
                raise
            continue
        if result.replayed:
            return _replayed(services, game_id, seat, result.envelopes[0], action)
        return ActResult(result.version, game)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Waited:
    """An action answered after waiting for the automatic steps it made due (``act_waiting``).

    ``applied``: whether the wait was granted at all (not over the per-address cap);
    ``settled``: whether no automatic step was pending any more when it was answered.
    """

    result: ActResult
    applied: bool
    settled: bool


class _Waits:
    """How many answers wait at once per client address in this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: Counter[str] = Counter()

    @contextlib.contextmanager
    def admit(self, address: str, cap: int) -> Iterator[bool]:
        with self._lock:
            admitted = self._waiting[address] < cap
            if admitted:
                self._waiting[address] += 1
        try:
            yield admitted
        finally:
            if admitted:
                with self._lock:
                    self._waiting[address] -= 1
                    if not self._waiting[address]:
                        del self._waiting[address]

    def count(self, address: str) -> int:
        with self._lock:
            return self._waiting[address]


_WAITS = _Waits()


def waiting(address: str) -> int:
    """How many answers wait for automatic steps for this client address in this process."""
    return _WAITS.count(address)


def act_waiting(
    services: Services,
    game_id: str,
    seat: int,
    action: Action,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
    *,
    wait: float,
    address: str,
    loaded: Game | None = None,
    checked: bool = True,
) -> Waited:
    """``act``, answered once the automatic steps are done, within ``wait`` seconds.

    The game waits on no step when the seat acts: as ``act``. It awaits one: wait for it,
    then act. After the action, wait for the steps it made due (and the ones they chain), and
    answer with the game after them; past ``wait`` seconds, with the game just after the
    action (``settled`` False). Waiting costs no thread and no polling: it is woken by the
    game's announcements (``service.live.hub``). At most ``MEEPLE_WAITS_PER_ADDRESS`` answers
    wait at once per address in this process; beyond them, as ``act``.
    """
    attempt = functools.partial(
        act, services, game_id, seat, action, expected_version, idempotency_key
    )
    with _WAITS.admit(address, services.config.waits_per_address) as admitted:
        if not admitted or wait <= 0:
            result = attempt(loaded=loaded, checked=checked)
            return Waited(result, applied=admitted, settled=not _awaits_step(result.game))
        deadline = time.monotonic() + wait
        # Watching before anything is read: no announcement can fall between look and wait.
        watcher = services.jobs.subscribe(game_id)
        try:
            while True:
                try:
                    result = attempt(loaded=loaded, checked=checked)
                    break
                except AwaitingSystemStep:
                    remaining = deadline - time.monotonic()
                    if checked and (remaining <= 0 or watcher.ending):
                        raise
                    if checked:
                        # An unchecked cache may await a step appended long ago: ask the
                        # store first, wait only for a step that is really pending.
                        watcher.wait(remaining)
                    loaded, checked = None, True
            game = result.game
            while _awaits_step(game):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or watcher.ending:
                    return Waited(result, applied=True, settled=False)
                if watcher.wait(remaining):
                    game = load_game(services, game_id, shared=True)
            return Waited(ActResult(result.seq, game, result.replayed), True, True)
        finally:
            watcher.close()


def _awaits_step(game: Game) -> bool:
    status = game.ruleset.status(game.state)
    return bool(status.get("awaiting_system")) and not status.get("finished")


def _decide_at(
    game: Game, seat: int, action: Action, expected_version: int | None
) -> tuple[NewEvent, State]:
    """``_decide``, after checking the version the client pinned (If-Match)."""
    if expected_version is not None and expected_version != game.version:
        raise ConcurrencyConflict(game.meta["game_id"], expected_version, game.version)
    return _decide(game, seat, action)


def _decide(game: Game, seat: int, action: Action) -> tuple[NewEvent, State]:
    """The event and the state after it, or the reason the seat may not do this now.

    The rules decide before the turn order is checked, so their own, more telling code wins
    (``already_bid`` ...); then the turn order is guarded once more for every game: a seat
    outside ``to_act`` may only take the free actions ``legal_actions`` lists for it
    (DESIGN.md, the ruleset contract).
    """
    ruleset = game.ruleset
    status = ruleset.status(game.state)
    if status.get("finished"):
        raise IllegalAction("game_finished", "The game is over.")
    if game.open_seats:
        seats = ", ".join(str(open_seat) for open_seat in game.open_seats)
        raise CommandError(
            "seats_open", f"The game waits for its players: seats {seats} are open (the lobby)."
        )
    if status.get("awaiting_system"):
        raise AwaitingSystemStep(str(status["awaiting_system"]))
    event, new_state = decide_action(game, seat, action)
    if seat not in status.get("to_act", []) and not ruleset.legal_actions(game.state, seat):
        raise IllegalAction("not_your_turn", "It is not your turn.")
    return event, new_state


def _earlier_result(
    services: Services, game_id: str, seat: int, key: str | None, action: Action
) -> ActResult | None:
    """The result of an earlier append with this idempotency key, if there was one.

    Only read on the error path: a retry that arrives after the game moved on.
    """
    if key is None:
        return None
    for envelope in services.store.read(game_id):
        if envelope.get("idempotency_key") == key:
            # An answer for it now acknowledges it: the replicas must hold it first, as they
            # may not have when the first answer was a 503 replication_lag.
            await_replicas = getattr(services.store, "await_replicas", None)
            if await_replicas is not None:
                await_replicas(game_id)
            return _replayed(services, game_id, seat, envelope, action)
    return None


def _replayed(
    services: Services, game_id: str, seat: int, envelope: Envelope, action: Action
) -> ActResult:
    first = {name: value for name, value in step_action(envelope).items() if name != "seat"}
    if first != {name: value for name, value in action.items() if name != "seat"}:
        raise CommandError(
            "idempotency_key_reused",
            "This Idempotency-Key was already used for a different action.",
        )
    seq = int(envelope["seq"])
    return ActResult(seq, load_game(services, game_id, at=seq), replayed=True)


def append(
    services: Services,
    game_id: str,
    events: Sequence[Appended],
    expected_version: int,
    idempotency_key: str | None = None,
    *,
    game: Game | None = None,
    new_state: State | None = None,
    take_next_step: bool = False,
) -> AppendResult:
    """Append ``events`` at ``expected_version``, advance the cached game, run the jobs.

    ``game`` (at ``expected_version``, owned by the caller) and ``new_state`` (after the one
    step event being appended) let the cache advance without folding the step again, and
    tell the jobs what the append makes due before it is stored, so the store's append can
    write that too (``Jobs.side_writes``: one round trip on Redis). ``take_next_step``: an
    automatic step that falls due is marked due but not queued, as the caller appends it
    itself (``jobs.system_step``).
    """
    jobs = services.jobs
    due = None
    ends_bot_game = False
    then: list[Any] = []
    writes: list[Any] | Callable[[list[Envelope]], list[Any]] = []
    if (
        game is not None
        and new_state is not None
        and len(events) == 1
        and isinstance(events[0], NewEvent)
        and events[0].type in STEP_TYPES
        and hasattr(jobs, "due_after")
    ):
        status = game.ruleset.status(new_state)
        awaiting = bool(status.get("awaiting_system"))
        ends_bot_game = bool(status.get("finished")) and any(game.meta.get("bots") or ())
        bot = not awaiting and due_bot_seat(game, new_state) is not None
        due = jobs.due_after(game_id, expected_version + 1, awaiting, bot, take_next_step)
        then = jobs.side_writes(due)
        if then:
            writes = with_index_row(services, game, new_state, then)
    began = time.perf_counter()
    try:
        if then:
            result = services.store.append(  # type: ignore[call-arg]
                game_id, list(events), expected_version, idempotency_key, then=writes
            )
        else:
            result = services.store.append(game_id, list(events), expected_version, idempotency_key)
    except ReplicationLag as lag:
        # The primary holds the events; if they survive, what they make due must run, so
        # the jobs are told as after any append (a job's own append waits for the replicas
        # too, and an automatic step is appended once whoever runs it). The caller is not
        # told it succeeded, and the cache keeps the game as it was before.
        try:
            _hand_over(services, game_id, lag.result, due, then)
        except Exception:
            log.exception("could not hand game %s's unconfirmed append to the jobs", game_id)
        raise
    metrics.observe_append(_store_kind(services.store), time.perf_counter() - began)
    if not result.replayed and len(result.envelopes) == 1:
        # One event: a seat's action or an automatic step (a branch's copied past, appended
        # at once, is no new play).
        ruleset = game.ruleset.id if game is not None else _ruleset_of(services, game_id)
        metrics.observe_appended(ruleset, [result.envelopes[0]["type"]])
    quotas = getattr(services, "quotas", None)  # a job's services may have none
    if quotas is not None and not result.replayed:
        quotas.charge_current(result.envelopes, time.time())
    advanced = None
    if (
        not result.replayed
        and game is not None
        and new_state is not None
        and len(result.envelopes) == 1
        and result.envelopes[0]["type"] in STEP_TYPES
    ):
        game.state = new_state
        game.effective.append(result.version)
        game.redo.clear()
        game.version = result.version
        # Handed to the cache as it is: from here on the game is only read (the answer's view).
        services.folder.adopt(game)
        advanced = game
    try:
        _hand_over(services, game_id, result, due, then, advanced)
        streams = getattr(jobs, "streams", None)
        if streams is not None and not result.replayed:
            streams.note_appended(game_id, result.version)
        if ends_bot_game and not result.replayed and hasattr(jobs, "bot_games"):
            # It counts under the bot-game caps no more (service.application.bot_games).
            jobs.bot_games.finish(game_id)
    except Exception:
        # The events are stored whatever happens here; the jobs' periodic sweep catches up.
        log.exception("could not hand game %s version %s to the jobs", game_id, result.version)
    return result


def _hand_over(
    services: Services,
    game_id: str,
    result: AppendResult,
    due: Any,
    then: list[Any],
    advanced: Game | None = None,
) -> None:
    """Tell the jobs what the append makes due (already written with it, when ``then``)."""
    jobs = services.jobs
    if due is not None and not result.replayed and result.version == due.version:
        if then:
            jobs.dispatched(due, result.replies)
        else:
            jobs.dispatch(due)
    else:
        # Handing over the game as it now stands saves the jobs folding it again.
        jobs.after_append(game_id, result.version, game=advanced)


def _store_kind(store: Any) -> str:
    """The store's kind for the append latency's label: ``sqlite``, ``redis``, or its class."""
    name = type(store).__name__
    return {"SQLiteEventStore": "sqlite", "RedisEventStore": "redis"}.get(name, name)


def _ruleset_of(services: Services, game_id: str) -> str:
    """The ruleset of a game this process has folded (appends of a game not at hand, as an
    undo's, come after a load); ``unknown`` otherwise, rather than a read of its own."""
    cached = services.folder.cached(game_id)
    return cached.ruleset.id if cached is not None else "unknown"
