"""Background jobs: automatic steps, notifications and read-model catch-up (DESIGN.md, "Service").

Two runners execute the same job functions:

- ``InProcessJobs`` (no ``MEEPLE_REDIS_URL``): a small thread pool inside the API process, so
  the embedded default needs nothing else running;
- ``RQJobs`` (``MEEPLE_REDIS_URL`` set): jobs go to RQ queues on Redis and ``meeple worker``
  processes (``run_worker``) run them.

A job function takes the process's ``Services`` first and plain JSON arguments after it, so
RQ can carry its arguments and the in-process runner can call it directly.

``system_step(game_id, version)`` appends the automatic step due at ``version`` exactly
once: it appends at the expected version with an idempotency key derived from
``(game_id, version)``, so a second run (a retry, a duplicate enqueue, a second worker, the
sweeper) either replays the first append or meets a conflict, and appends nothing.

Nothing is lost with a job: every step due is also written to the job state
(``service.application.job_state``) before its job is enqueued, and a *sweep* (every
``MEEPLE_SWEEP_INTERVAL`` seconds in each worker, and in the in-process runner) runs any step
left due longer than ``MEEPLE_STEP_GRACE`` seconds - a worker killed with SIGKILL mid-job
leaves its step due, and the next sweep appends it. The sweep also starts webhook retries
whose time has come and catches the read models up.

Webhook deliveries wait in one lane per owner (``service.application.webhook_lanes``) and are
handed to the notification queue by ``start_deliveries``: the lanes in turn, each owner and
each receiver with at most so many in flight (counted in Redis under RQ, so across every
worker), and none to a receiver its circuit breaker paused.
"""

from __future__ import annotations

import contextvars
import functools
import heapq
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields, replace
from datetime import UTC
from pathlib import Path
from typing import Any

from events.redis_clients import redis_client
from events.redis_store import (
    REPLY_EXISTS,
    SKIP_IF_FIELD_IN,
    Command,
    RedisEventStore,
    database_of,
    same_server,
)
from events.sqlite_store import SQLiteEventStore
from events.store import ConcurrencyConflict
from projections.fold import Game, decide_system
from service.application import analyses, bots, commands, webhook_lanes
from service.application import webhooks as notifications
from service.application.bot_games import BotGameStore, open_bot_game_store
from service.application.bot_seats import due_bot_seat
from service.application.job_state import (
    JobState,
    RedisJobState,
    SQLiteJobState,
    delivery_lane,
    open_job_state,
)
from service.application.services import Progress
from service.application.visibility import sealed_until
from service.live.hub import NOTE_PREFIX, RedisStreamSlots, StreamHub, Watcher, appended_channel
from service.monitoring import logs, metrics
from service.workers import compute
from service.workers import delivery as webhook_delivery
from service.workers.analyses import run_analysis
from service.workers.fair import FairPool, RedisFairQueue, Share

log = logging.getLogger(__name__)

#: RQ queues, in the order a worker serves them: steps first, so slow webhook receivers
#: never hold up a game's scoring.
STEPS_QUEUE = "meeple-steps"
NOTIFICATIONS_QUEUE = "meeple-notifications"
#: Bot seats' turns (service.application.bots): below automatic steps, and apart from them.
BOTS_QUEUE = "meeple-bots"
QUEUES = (STEPS_QUEUE, NOTIFICATIONS_QUEUE, BOTS_QUEUE)
#: Analyses (service.workers.analyses) have a queue of their own, served only by workers started
#: with ``--queue analyses``: a search of up to MEEPLE_ANALYSIS_MAX_SECONDS never holds a
#: worker that steps or notifications wait for.
ANALYSES_QUEUE = "meeple-analyses"
#: The statuses of an RQ job that has not started yet: one such is not enqueued again.
WAITING = ("queued", "deferred", "scheduled")
#: The jobs that compute, and their queues: they wait in a fair order, round-robin across
#: their owners (service.workers.fair), not first come, first served. On RQ a webhook
#: attempt waits in its owner's turn too, beside the notices: behind one FIFO, an honest
#: owner's delivery waited for every notice another owner's games had queued before it.
FAIR_JOBS = {"bot_turn": "bots", "analysis": "analyses", "notify": "notify", "deliver": "notify"}
#: ``notify``'s version for "the game's version when the job runs": one job a game waits in
#: the fair order, however many events it has to tell (RQJobs: its pushes are all the same).
LATEST = -1
#: Seconds a fair job's lease on its owner's place outlives the RQ job's timeout.
FAIR_LEASE_MARGIN = 30.0
#: The runners' queues as the CLI (``--queue``) and the metrics name them.
QUEUE_NAMES = {"steps": "steps", "notify": "notifications", "bots": "bots", "analyses": "analyses"}
#: The jobs whose first argument is a game id (their log line names the game).
GAME_JOBS = frozenset({"system_step", "notify", "deliver", "bot_turn"})
#: When the automatic step a ``system_step`` job appends fell due (its job was queued with the
#: append that made it due), for ``meeple_step_latency_seconds``; None when not known (the
#: sweep's).
STEP_DUE_SINCE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "meeple_step_due_since", default=None
)


@dataclass(frozen=True)
class JobSettings:
    """How the jobs run; each field has a ``MEEPLE_*`` variable (docs/operations.md)."""

    #: MEEPLE_JOB_THREADS: threads of the in-process runner for automatic steps.
    job_threads: int = 4
    #: MEEPLE_NOTIFY_THREADS: threads of the in-process runner for notices, webhook
    #: deliveries and read-model catch-up (apart, so automatic steps never wait behind them).
    notify_threads: int = 8
    #: MEEPLE_BOT_PROCESSES: child processes of the in-process runner for bot seats' turns
    #: (service.workers.compute: a bot thinking never holds a request or a step).
    bot_processes: int = 2
    #: MEEPLE_BOT_MAX_SECONDS: a bot's search plays the best it found after this long.
    bot_max_seconds: float = 30.0
    #: MEEPLE_BOT_TURNS_PER_OWNER: bot turns of one owner's games computing at once (in
    #: the in-process runner's processes, or across every bots worker on RQ); the others
    #: wait their turn in the fair order (service.workers.fair).
    bot_turns_per_owner: int = 1
    #: MEEPLE_BOT_GAME_IDLE: a game of bots only that nobody read or streamed for this many
    #: seconds pauses at its next bot turn, until it is read again
    #: (service.application.bot_games); 0 never pauses one.
    bot_game_idle: float = 600.0
    #: MEEPLE_SWEEP_INTERVAL: seconds between two sweeps.
    sweep_interval: float = 2.0
    #: MEEPLE_STEP_GRACE: a step due longer than this is run by the sweep.
    step_grace: float = 10.0
    #: MEEPLE_WEBHOOK_MAX_ATTEMPTS: attempts of one delivery before it is marked failed.
    webhook_max_attempts: int = 8
    #: MEEPLE_WEBHOOK_RETRY_BASE: seconds before the first retry; doubled for each next one.
    webhook_retry_base: float = 5.0
    #: MEEPLE_WEBHOOK_TIMEOUT: seconds one attempt may take in all (connect, send, answer).
    webhook_timeout: float = 10.0
    #: MEEPLE_WEBHOOK_CONNECT_TIMEOUT: seconds to open the connection to a receiver.
    webhook_connect_timeout: float = 3.0
    #: MEEPLE_WEBHOOK_PER_RECEIVER: deliveries in flight at once to one receiver (the URL's
    #: scheme, host and port), in this process (in-process runner) or across every worker
    #: (RQ); the others wait in their lanes without holding a thread or a worker.
    webhook_per_receiver: int = 2
    #: MEEPLE_WEBHOOK_PER_OWNER: deliveries in flight at once for one owner (the client address
    #: that registered the webhooks, or the admin), whatever its games, seats and receivers;
    #: keep it below MEEPLE_NOTIFY_THREADS, and below the notification workers under RQ.
    webhook_per_owner: int = 4
    #: MEEPLE_WEBHOOK_BREAKER_FAILURES: attempts in a row at a receiver that timed out or could
    #: not connect after which it is paused (its deliveries put off, no attempt counted).
    webhook_breaker_failures: int = 5
    #: MEEPLE_WEBHOOK_BREAKER_SECONDS: how long a receiver stays paused before one delivery
    #: probes it again.
    webhook_breaker_seconds: float = 300.0
    #: MEEPLE_WEBHOOK_ALLOW_HOSTS: host names and addresses or networks (CIDR), comma- or
    #: space-separated, that webhooks may reach although they are not public (trusted
    #: internal receivers). Empty: only public internet addresses.
    webhook_allow_hosts: str = ""
    #: MEEPLE_WEBHOOK_MAX_PER_SEAT: webhooks one seat may have in one game.
    webhook_max_per_seat: int = 5
    #: MEEPLE_WEBHOOK_MAX_PER_GAME: webhooks the seats of one game may have together.
    webhook_max_per_game: int = 20
    #: MEEPLE_YOUR_TURN_REMINDER: seconds after a your_turn before a seat that has not acted
    #: is reminded (doubled for each next reminder); 0 sends no reminders.
    your_turn_reminder: float = 60.0
    #: MEEPLE_YOUR_TURN_REMINDERS: how many reminders one your_turn may bring at most.
    your_turn_reminders: int = 5
    #: MEEPLE_STREAM_POLL: seconds between two checks of a streamed game's version in the
    #: store, per game and process (the backup of the push; a lost wake-up only delays).
    stream_poll: float = 10.0
    #: MEEPLE_STREAM_HEARTBEAT: seconds of silence after which a stream sends a comment.
    stream_heartbeat: float = 10.0
    #: MEEPLE_STREAM_MAX_SECONDS: a stream ends after this long; clients reconnect with
    #: Last-Event-ID (EventSource does so by itself).
    stream_max_seconds: float = 300.0
    #: MEEPLE_STREAM_CHECK_INTERVAL: seconds between two checks that a stream's client is
    #: still connected (a closed connection ends the stream and frees its slot).
    stream_check_interval: float = 2.0
    #: MEEPLE_STREAM_WRITE_TIMEOUT: seconds a stream's write may wait for a client that does
    #: not read; past them the stream is dropped (service.http.resources.stream.bound_writes).
    stream_write_timeout: float = 30.0
    #: MEEPLE_STREAM_SEND_BUFFER: bytes of a stream socket's send buffer.
    stream_send_buffer: int = 65536
    #: MEEPLE_STREAMS_PER_ADDRESS: open streams allowed from one client address.
    streams_per_address: int = 32
    #: MEEPLE_APP_STREAMS: open streams allowed with one client application's key (its
    #: ``/apps/me/stream`` and its games' streams together), counted instead of its address's.
    app_streams: int = 4
    #: MEEPLE_STREAMS_PER_GAME: open streams allowed on one game.
    streams_per_game: int = 256
    #: MEEPLE_STREAMS_PER_SEAT: streams of one game kept for each of its seats and for the
    #: admin (a branch's holder keeps every seat's), the most each may open there; spectators
    #: share what is left of MEEPLE_STREAMS_PER_GAME (service.live.hub.fair_share).
    streams_per_seat: int = 4
    #: MEEPLE_STREAM_SLOT_LEASE: with Redis, seconds a stream's slot under the caps outlives
    #: its last renewal (a crashed process's slots are free again after this).
    stream_slot_lease: float = 60.0
    #: MEEPLE_ANALYSIS_PROCESSES: child processes of the in-process runner for analyses
    #: (service.workers.compute: a search never holds a request, a step or a bot).
    analysis_processes: int = 1
    #: MEEPLE_ANALYSIS_PLAYOUTS: playouts of an analysis that asks for no number.
    analysis_playouts: int = analyses.DEFAULT_PLAYOUTS
    #: MEEPLE_ANALYSIS_MAX_PLAYOUTS: the most playouts one analysis may ask for.
    analysis_max_playouts: int = 5000
    #: MEEPLE_ANALYSIS_MAX_SECONDS: every analysis stops after this long, whatever it asked.
    analysis_max_seconds: float = 30.0
    #: MEEPLE_ANALYSES_PER_GAME: analyses queued or running at once for one seat of one game
    #: (counted per seat: a seat never learns that a rival is analysing).
    analyses_per_game: int = 2
    #: MEEPLE_ANALYSES_PER_REQUESTER: analyses queued or running at once for one token (or,
    #: without a token, one client address).
    analyses_per_requester: int = 2
    #: MEEPLE_ANALYSES_PER_OWNER: analyses queued or running at once for one owner (a client
    #: address, whatever tokens it sends: tokens are free); the admin excepted.
    analyses_per_owner: int = 4
    #: MEEPLE_ANALYSES_RUNNING_PER_OWNER: analyses of one owner searching at once; the others
    #: wait their turn in the fair order (service.workers.fair).
    analyses_running_per_owner: int = 1
    #: MEEPLE_ANALYSES_TOTAL: analyses queued or running at once in the whole service.
    analyses_total: int = 16
    #: MEEPLE_ANALYSIS_TTL: seconds an analysis (and its result) is kept after it is asked for.
    analysis_ttl: float = 3600.0
    #: MEEPLE_REVIEW_MAX_SECONDS: every game review stops after this long (what it reviewed
    #: by then is kept, ``complete`` false).
    review_max_seconds: float = 600.0
    #: MEEPLE_REVIEW_MAX_PLAYOUTS: the most search playouts a review may ask for a decision.
    review_max_playouts: int = 500
    #: MEEPLE_ANALYSIS_LEASE: seconds, beyond MEEPLE_ANALYSIS_MAX_SECONDS, an analysis may wait
    #: in its queue and run; past it, one whose worker died counts as failed and frees its cap.
    analysis_lease: float = 600.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, **overrides: Any) -> JobSettings:
        values: dict[str, Any] = {}
        for field in fields(cls):
            raw = env.get(f"MEEPLE_{field.name.upper()}", "").strip()
            if raw:
                kind = {"int": int, "str": str}.get(str(field.type), float)
                try:
                    values[field.name] = kind(raw)
                except ValueError:
                    raise ValueError(
                        f"MEEPLE_{field.name.upper()} must be a number, not {raw!r}"
                    ) from None
        return replace(cls(), **{**values, **overrides})

    def __post_init__(self) -> None:
        self.allow_list  # noqa: B018 - a malformed allow-list stops the process at start
        if self.streams_per_seat < 1:
            # Its seats would have no stream on their own game at all.
            raise ValueError("MEEPLE_STREAMS_PER_SEAT must be at least 1")
        for name in ("webhook_per_receiver", "webhook_per_owner", "webhook_breaker_failures"):
            if getattr(self, name) < 1:
                # No delivery could ever go (or every receiver would be paused at once).
                raise ValueError(f"MEEPLE_{name.upper()} must be at least 1")

    @property
    def allow_list(self) -> notifications.AllowList:
        return _allow_list(self.webhook_allow_hosts)

    def delivery_policy(self) -> webhook_delivery.DeliveryPolicy:
        return webhook_delivery.DeliveryPolicy(
            allow=self.allow_list,
            max_attempts=self.webhook_max_attempts,
            retry_base=self.webhook_retry_base,
            connect_timeout=min(self.webhook_connect_timeout, self.webhook_timeout),
            timeout=self.webhook_timeout,
            busy_delay=min(1.0, self.webhook_retry_base),
        )

    def breaker(self) -> webhook_lanes.Breaker:
        """Every receiver's circuit breaker (``MEEPLE_WEBHOOK_BREAKER_*``)."""
        return webhook_lanes.Breaker(
            failures=self.webhook_breaker_failures,
            seconds=self.webhook_breaker_seconds,
            probe_seconds=self.webhook_timeout + DELIVERY_LEASE_MARGIN,
        )

    def in_flight_caps(self, lane: str, receiver: str | None) -> list[tuple[str, int]]:
        """The caps a delivery of ``lane`` to ``receiver`` holds a place under while in
        flight (``webhook_lanes.Leases``; a delivery from before receivers were kept: its
        owner's alone, until its attempt knows the receiver)."""
        caps = [(f"owner:{lane}", self.webhook_per_owner)]
        if receiver:
            caps.append((f"receiver:{receiver}", self.webhook_per_receiver))
        return caps


@functools.lru_cache(maxsize=8)
def _allow_list(text: str) -> notifications.AllowList:
    return notifications.AllowList.parse(text)


@dataclass(frozen=True)
class Due:
    """What one append makes due: the automatic step after ``version`` (if ``step``), the
    webhook notices (whenever the game has webhooks), a read-model catch-up (if ``catch_up``),
    and waking the game's live streams (always)."""

    game_id: str
    version: int
    step: bool
    catch_up: bool
    #: a bot seat is to act after ``version`` (service.application.bots)
    bot: bool = False
    #: the step is marked due but not queued: the appender (``system_step``, going on with the
    #: steps that follow one another) takes it itself; if it dies first, the sweep does
    taken: bool = False


@dataclass(frozen=True)
class StepOutcome:
    """What one run of ``system_step`` did (for logs and tests)."""

    appended: bool
    version: int
    reason: str


#: Seconds beyond MEEPLE_WEBHOOK_TIMEOUT that a delivery stays taken by the attempt making
#: it (resolving the host comes first); a worker that dies mid-attempt leaves it due after.
DELIVERY_LEASE_MARGIN = 30.0


def system_step_key(game_id: str, version: int) -> str:
    """The idempotency key (and job id) of the automatic step due after event ``version``.

    RQ job ids allow letters, digits, ``_`` and ``-``; game ids too, and the version is the
    part after the last dash, so distinct steps never share a key."""
    return f"system_step-{game_id}-{version}"


def analysis_job_id(analysis_id: str, run: int) -> str:
    """The job id of run number ``run`` of an analysis."""
    return f"analysis-{analysis_id}-{run}"


# -- job functions -------------------------------------------------------------------


#: How many automatic steps that follow one another one ``system_step`` run appends at most;
#: past them it queues the next as a job of its own, so a long run of steps never keeps a
#: worker from the other games' steps for long.
STEPS_PER_JOB = 8


def system_step(services: Any, game_id: str, version: int) -> StepOutcome:
    """Append the automatic step due after event ``version``, once; then the steps that follow
    it while no seat is to act (up to ``STEPS_PER_JOB``), each as its own job would: at its
    version, with its idempotency key, its due mark written with the append before it (so a
    worker that dies mid-run leaves the rest due for the sweep). One job, not one a step: RQ's
    bookkeeping of a job costs more than the step."""
    state: JobState = services.jobs.state
    try:
        # Shared: the step is decided on a copy and the append replaces the state.
        game: Game = services.folder.load(game_id, shared=True)
    except KeyError:
        state.clear_due(game_id, version)
        return StepOutcome(False, 0, "no_game")
    if game.version != version:
        # Someone appended since this job was enqueued: either this very step (a duplicate
        # run) or the game moved on; whoever appended enqueued whatever is due now.
        state.clear_due(game_id, version)
        return StepOutcome(False, game.version, "stale")
    appended = False
    due_since = STEP_DUE_SINCE.get()
    for taken in range(STEPS_PER_JOB):
        decided = decide_system(game)
        if decided is None:
            if taken == 0:
                state.clear_due(game_id, version)
                return StepOutcome(False, game.version, "nothing_due")
            break
        event, new_state = decided
        try:
            # The application layer's append: it advances the cached game and runs what the
            # step makes due; the next step is left to this run (``take_next_step``) but on
            # the last of its turns, which queues it as a job.
            result = commands.append(
                services,
                game_id,
                [event],
                version,
                system_step_key(game_id, version),
                game=game,
                new_state=new_state,
                take_next_step=taken < STEPS_PER_JOB - 1,
            )
        except ConcurrencyConflict as conflict:
            state.clear_due(game_id, version)
            return StepOutcome(appended, conflict.actual, "appended" if appended else "conflict")
        if result.replayed or not services.jobs.clears_due_with_append:
            state.clear_due(game_id, version)
        if result.replayed:
            return StepOutcome(appended, result.version, "appended" if appended else "replayed")
        appended = True
        if due_since is not None:
            metrics.observe_step_latency(game.ruleset.id, due_since)
        # The next step fell due with this one's append.
        due_since = time.time()
        # The appended game is the cache's now: go on with a game of this run's own.
        game, version = game.share(), result.version
    return StepOutcome(True, version, "appended")


def notify(services: Any, game_id: str, version: int = LATEST) -> int:
    """Create the deliveries of every webhook of the game up to ``version`` (at least; the
    game's version now for ``LATEST``), and start them; how many it created."""
    jobs: Jobs = services.jobs
    game: Game | None = None
    if version == LATEST:
        game = services.folder.load(game_id)
        version = game.version
    hooks = [hook for hook in jobs.state.webhooks(game_id) if hook["cursor"] < version]
    if not hooks:
        return 0
    game = game or services.folder.load(game_id)
    upto = game.version
    finished = bool(game.ruleset.status(game.state).get("finished"))
    envelopes = services.store.read(game_id, after=min(hook["cursor"] for hook in hooks))
    envelopes = [envelope for envelope in envelopes if envelope["seq"] <= upto]
    history = notifications.GameHistory(services.folder, game_id)
    created = 0
    lanes: set[str] = set()
    for hook in hooks:
        # Another notify run may move the cursor between our read and our claim (it read an
        # older version of the game); then claim what is left after its cursor.
        for _ in range(10):
            if hook["cursor"] >= upto:
                break
            mine = [envelope for envelope in envelopes if envelope["seq"] > hook["cursor"]]
            deliveries = notifications.deliveries_for(
                hook, mine, history, finished, sealed_until(game.meta)
            )
            if jobs.state.claim(hook, upto, deliveries):
                created += len(deliveries)
                if deliveries:
                    lanes.add(notifications.webhook_lane(hook))
                _remind_later(jobs, hook, history.standing(upto))
                if notifications.webhook_ends(hook, mine):
                    # Its seat changed hands: what came before is sent, nothing after.
                    jobs.state.remove_webhook(game_id, hook["id"])
                break
            again = [found for found in jobs.state.webhooks(game_id) if found["id"] == hook["id"]]
            if not again:
                break  # removed meanwhile
            hook = again[0]
    if lanes:
        start_deliveries(services, sorted(lanes))
    return created


def _remind_later(jobs: Jobs, hook: dict[str, Any], standing: Any) -> None:
    """A seat's webhook that was just told ``your_turn`` is reminded later unless the seat
    acts first; one whose seat need not act now is reminded of nothing."""
    seat = hook["owner"].get("seat")
    if seat is None or "your_turn" not in hook["events"]:
        return
    settings = jobs.settings
    if standing.must_act(seat) and settings.your_turn_reminder > 0 and settings.your_turn_reminders:
        due_at = time.time() + settings.your_turn_reminder
        jobs.state.set_reminder(hook["game_id"], hook["id"], seat, standing.version, due_at)
    else:
        jobs.state.clear_reminder(hook["game_id"], hook["id"], seat)


def remind(services: Any, reminder: dict[str, Any], now: float) -> bool:
    """Send a due reminder (a ``your_turn`` with ``reminder``: its number), once, if the seat
    still has not acted and the game has not moved on; whether it was sent."""
    jobs: Jobs = services.jobs
    settings = jobs.settings
    game_id, seat, version = reminder["game_id"], reminder["seat"], reminder["version"]
    hook = next(
        (h for h in jobs.state.webhooks(game_id) if h["id"] == reminder["webhook_id"]), None
    )
    if (
        hook is None
        or reminder["sent"] >= settings.your_turn_reminders
        or services.store.version(game_id) != version
    ):
        jobs.state.clear_reminder(game_id, reminder["webhook_id"], seat, version)
        return False
    number = reminder["sent"] + 1
    # Taken first: of the sweeps that read it, one alone sends it.
    if not jobs.state.take_reminder(reminder, now + settings.your_turn_reminder * 2**number):
        return False
    standing = notifications.GameHistory(services.folder, game_id).standing(version)
    if not standing.must_act(seat):
        jobs.state.clear_reminder(game_id, hook["id"], seat, version)
        return False
    notice = {**standing.message(seat), "seat": seat, "reminder": number}
    delivery = notifications.new_delivery(hook, "your_turn", version, notice)
    # Stored as notify stores its deliveries; a cursor moved meanwhile means the game moved on.
    if not jobs.state.claim(hook, hook["cursor"], [delivery]):
        return False
    start_deliveries(services, [delivery_lane(delivery)])
    return True


#: How many of one owner's due deliveries to one receiver ``start_deliveries`` looks at, for
#: each place the receiver has in flight (the others wait for the next look).
LOOK_AHEAD = 2


def start_deliveries(services: Any, lanes: list[str] | None = None) -> int:
    """Hand the deliveries due to the notification workers, fairly: the owners' lanes in turn,
    one delivery of each at a time, and each owner's turn to its receivers in turn
    (``webhook_lanes.fair_order``), each while its owner and its receiver have a place in
    flight left. The place is taken here, for the delivery's job, so the queue never holds
    more of one owner's deliveries than its share: another owner's next delivery waits behind
    at most that many, and a receiver's backlog never stands before its owner's other
    receivers. A delivery to a paused receiver is put off until the pause ends, with no
    attempt counted. Every lane's, or those of ``lanes``; how many deliveries it started."""
    jobs: Jobs = services.jobs
    settings = jobs.settings
    now = time.time()
    due = jobs.state.due_by_lane(now, LOOK_AHEAD * settings.webhook_per_receiver, lanes)
    if not due:
        return 0
    breakers = jobs.state.receivers(sorted({r for queues in due.values() for r in queues if r}))
    breaker = settings.breaker()
    lease = now + settings.webhook_timeout + DELIVERY_LEASE_MARGIN
    full: set[str] = set()  # caps with no place left now, and receivers with a probe sent
    started = 0
    fair = webhook_lanes.fair_order
    for delivery in fair({lane: fair(queues) for lane, queues in due.items()}):
        attempts = len(delivery["attempts"])
        receiver = delivery.get("receiver")
        caps = settings.in_flight_caps(delivery_lane(delivery), receiver)
        if any(key in full for key, _ in caps):
            continue
        token = _in_flight_token(delivery["id"], attempts + 1)
        verdict, until = breaker.verdict(breakers.get(receiver or ""), now)
        if verdict == "wait" and until is not None:
            # Out of the way until the receiver may be tried again (a take moves its time).
            # Taken so, it is in no run's hands: the places an earlier look took for its job
            # (queued before the pause) are free, and that job will find it not due.
            if jobs.state.take_delivery(delivery["game_id"], delivery["id"], attempts, now, until):
                jobs.leases.release(token, [key for key, _ in caps])
            continue
        if verdict == "probe":
            full.add(caps[-1][0])  # one probe at a time: the others wait for its answer
        at_cap = jobs.leases.take(token, caps, now, lease)
        if at_cap is not None:
            full.add(at_cap)
            continue
        jobs.enqueue_delivery(delivery["game_id"], delivery["id"], attempts + 1)
        started += 1
    return started


def deliver(services: Any, game_id: str, delivery_id: str, attempt: int) -> str:
    """Make attempt number ``attempt`` of a delivery (once), if its owner and its receiver
    still have room and the receiver is not paused (else it is put off, no attempt counted);
    then start its lane's next delivery. Its status afterwards."""
    jobs: Jobs = services.jobs
    settings = jobs.settings
    now = time.time()
    token = _in_flight_token(delivery_id, attempt)
    # Taken atomically, for as long as an attempt may last: a duplicate run of this attempt
    # (enqueued again by a sweep while it goes, or by another worker) finds it taken.
    lease = now + settings.webhook_timeout + DELIVERY_LEASE_MARGIN
    delivery = jobs.state.take_delivery(game_id, delivery_id, attempt - 1, now, lease)
    if delivery is None:
        found = jobs.state.delivery(game_id, delivery_id)
        if found is not None and (
            found["status"] != "pending" or len(found["attempts"]) != attempt - 1
        ):
            # This attempt has been made: the places taken for it are free (a run making it
            # now keeps them: it may still be under way).
            made = settings.in_flight_caps(delivery_lane(found), found.get("receiver"))
            jobs.leases.release(token, [key for key, _ in made])
        return "missing" if found is None else str(found["status"])
    webhook = next(
        (hook for hook in jobs.state.webhooks(game_id) if hook["id"] == delivery["webhook_id"]),
        None,
    )
    lane = delivery_lane(delivery)
    receiver = None if webhook is None else notifications.receiver_of(webhook["url"])
    caps = settings.in_flight_caps(lane, receiver or delivery.get("receiver"))
    keys = [key for key, _ in caps]
    try:
        breaker = None if receiver is None else jobs.state.receivers([receiver]).get(receiver)
        put_off = (
            None if receiver is None else _admit(jobs, token, caps, receiver, breaker, now, lease)
        )
        if put_off is not None:
            jobs.state.save_delivery({**delivery, "next_attempt_at": put_off})
            jobs.wake_sweeper(put_off)
            return "pending"
        done = webhook_delivery.attempt_delivery(delivery, webhook, settings.delivery_policy())
        jobs.state.save_delivery(done)
        outcome = done["attempts"][-1]["outcome"]
        # A receiver that had no record and answers needs none (its success is not written:
        # a failure of another delivery meanwhile then stays counted, which is no matter).
        if receiver is not None and (breaker is not None or outcome in webhook_lanes.FAILURES):
            judge = settings.breaker()
            jobs.state.update_receiver(
                receiver, lambda record: judge.after(record, outcome, time.time())
            )
    finally:
        jobs.leases.release(token, keys)
    if done["status"] == "pending":
        # Retries start from the sweep once their time has come (no scheduler needed).
        jobs.wake_sweeper(done["next_attempt_at"])
    start_deliveries(services, [lane])  # the lane's next, now that this one's place is free
    return str(done["status"])


def _admit(
    jobs: Jobs,
    token: str,
    caps: list[tuple[str, int]],
    receiver: str,
    breaker_record: dict[str, Any] | None,
    now: float,
    lease: float,
) -> float | None:
    """Whether an attempt to ``receiver`` may be made now (None), holding its places in
    flight; else when to try again: when the receiver's pause ends or its probe has its
    answer, or shortly when its owner or receiver has no place left."""
    settings = jobs.settings
    breaker = settings.breaker()
    verdict, until = breaker.verdict(breaker_record, now)
    if verdict == "wait" and until is not None:
        return until
    busy = now + settings.delivery_policy().busy_delay
    if jobs.leases.take(token, caps, now, lease) is not None:
        return busy
    if verdict == "probe":
        won = False

        def take_probe(record: dict[str, Any] | None) -> dict[str, Any] | None:
            nonlocal won
            changed = breaker.probe(record, now)
            won = changed is not record
            return changed

        record = jobs.state.update_receiver(receiver, take_probe)
        if not won:
            return breaker.verdict(record, now)[1] or busy
    return None


def _in_flight_token(delivery_id: str, attempt: int) -> str:
    """What holds a delivery's places in flight for one attempt: taken when its job is
    queued, renewed when the attempt starts, given back when it ends."""
    return f"{delivery_id}:{attempt}"


def catch_up(services: Any) -> int:
    """Bring the read models up to date with the store's feed, if it is this process's turn
    (``Jobs.catch_up_turn``); how many events it read."""
    if getattr(services, "game_index", None) is None or not services.jobs.catch_up_turn():
        return 0
    return int(commands.catch_up(services))


def sweep(services: Any) -> dict[str, int]:
    """Run what a lost job left undone: steps due too long, your_turn reminders and retries
    whose time has come; then catch the read models up. Safe to run anywhere, any number of
    times at once."""
    jobs: Jobs = services.jobs
    now = time.time()
    steps = bot_turns = 0
    for game_id, version in jobs.state.due_since_before(now - jobs.settings.step_grace):
        try:
            if jobs.bot_turn_waits(game_id, version):
                # A bot's turn waiting for its fair turn (or running) is not lost: looked at
                # again after another grace, so it never hides lost steps from the sweep.
                jobs.state.clear_due(game_id, version)
                jobs.state.mark_due(game_id, version, now)
                continue
            outcome = system_step(services, game_id, version)
            if outcome.reason == "nothing_due":
                # Marked due by a bot's turn rather than an automatic step
                # (service.application.bots): queued again, to be played in its fair turn.
                bot_turns += jobs.bot_turn_overdue(game_id, version)
            steps += outcome.appended
        except Exception:
            log.exception("sweep: the step of game %s after %s failed", game_id, version)
    reminded = 0
    for reminder in jobs.state.reminders_due_before(now):
        try:
            reminded += remind(services, reminder, now)
        except Exception:
            log.exception("sweep: the reminder of game %s failed", reminder["game_id"])
    try:
        retries = start_deliveries(services)
    except Exception:
        log.exception("sweep: the deliveries due could not be started")
        retries = 0
    try:
        read = catch_up(services)
    except Exception:
        log.exception("sweep: the read models could not catch up")
        read = 0
    return {
        "steps": steps,
        "bot_turns": bot_turns,
        "retries": retries,
        "read": read,
        "reminded": reminded,
    }


def fair_turn(services: Any, queue: str) -> Any:
    """Run the job the fair order says is next on ``queue`` (``bots``, ``analyses``, ``notify``),
    whichever job this one was queued with (an RQ job of those queues is a turn to take, not a
    job of its own: service.workers.fair); what it answered."""
    return services.jobs.take_fair_turn(queue)


def run_observed(
    function: Callable[..., Any],
    services: Any,
    args: tuple[Any, ...],
    *,
    name: str,
    queue: str,
    request_id: str | None,
    due_since: float | None = None,
) -> Any:
    """Run a job as part of the request that caused it (``request_id``): counted in
    ``meeple_jobs`` by outcome, and one log line (service.monitoring.logs)."""
    began = time.perf_counter()
    ok = False
    with logs.request_id_of(request_id):
        token = STEP_DUE_SINCE.set(due_since if name == "system_step" else None)
        try:
            result = function(services, *args)
            ok = True
            return result
        finally:
            STEP_DUE_SINCE.reset(token)
            metrics.observe_job(name, ok)
            game_id = str(args[0]) if name in GAME_JOBS and args else None
            logs.log_job(name, queue, ok, began, game_id)


JOB_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "system_step": system_step,
    "notify": notify,
    "deliver": deliver,
    "catch_up": catch_up,
    "analysis": run_analysis,
    "bot_turn": bots.bot_turn,
    "fair_turn": fair_turn,
}


# -- runners ---------------------------------------------------------------------------


class Jobs:
    """What the application layer calls after every append; subclasses say where jobs run."""

    def __init__(self, services: Any, state: JobState, settings: JobSettings) -> None:
        self.services = services
        self.state = state
        self.settings = settings
        #: The live streams of this process: one feed per streamed game, and the caps.
        self.streams = self.stream_hub()
        self._analyses: analyses.AnalysisStore | None = None
        self._bot_games: BotGameStore | None = None
        self._analyses_lock = threading.Lock()
        #: The places deliveries hold in flight under their owner's and receiver's caps.
        self.leases = self.delivery_leases()

    def after_append(self, game_id: str, version: int, game: Game | None = None) -> None:
        """Enqueue what an append makes due: the next automatic step, webhook notices, the
        read models' catch-up; and wake the game's live streams.

        ``game``, when the caller holds the game at ``version``, saves reading it again.
        """
        if game is None or game.version != version:
            try:
                game = self.services.folder.load(game_id)
            except KeyError:
                return
        awaiting = game.version == version and game.ruleset.status(game.state).get(
            "awaiting_system"
        )
        bot = game.version == version and not awaiting and due_bot_seat(game) is not None
        self.dispatch(self.due_after(game_id, version, bool(awaiting), bot))

    def due_after(
        self,
        game_id: str,
        version: int,
        awaiting_system: bool,
        bot: bool = False,
        taken: bool = False,
    ) -> Due:
        """What an append that brings the game to ``version`` makes due, known before it is
        stored (from the state after it): the one place that decides what is enqueued.
        ``taken``: the appender takes a step that falls due itself (``system_step``)."""
        return Due(
            game_id,
            version,
            step=awaiting_system,
            catch_up=self.catch_up_due(),
            bot=bot,
            taken=awaiting_system and taken,
        )

    def dispatch(self, due: Due) -> None:
        """Enqueue what ``due`` says, after its append (each its own call: the fallback of
        ``side_writes``)."""
        if due.step or due.bot:
            # Written down first: if the job is lost, the sweep still finds the step (or the
            # bot's turn) due.
            self.state.mark_due(due.game_id, due.version, time.time())
        self._start(due)

    def _start(self, due: Due) -> None:
        """Enqueue the jobs ``due`` says, its due mark already written."""
        if due.step and not due.taken:
            self.enqueue(
                "system_step",
                due.game_id,
                due.version,
                job_id=system_step_key(due.game_id, due.version),
            )
        if self.announce(due.game_id, due.version):
            self.enqueue(
                "notify", due.game_id, due.version, job_id=f"notify-{due.game_id}", queue="notify"
            )
        if due.bot:
            self.enqueue(
                "bot_turn",
                due.game_id,
                due.version,
                job_id=bots.bot_turn_key(due.game_id, due.version),
                queue="bots",
            )
        if due.catch_up:
            self.catch_up_soon()

    def side_writes(self, due: Due) -> list[Any]:
        """``due`` as side writes the event store can make with the append itself (a Redis
        store: commands for its script, one round trip for the append and all it makes due;
        a SQLite store: statements for its transaction); empty when it cannot (then
        ``dispatch`` runs after the append)."""
        return []

    #: Whether ``side_writes`` also clear the due mark the append fulfils (so the step's
    #: job need not clear it in a write of its own).
    clears_due_with_append = False

    def dispatched(self, due: Due, replies: tuple[int, ...] = ()) -> None:
        """``side_writes(due)`` ran with the append (``replies``: what it was told): what is
        left to do in this process."""
        self.streams.wake(due.game_id, due.version)
        if replies and replies[0]:
            self.enqueue(
                "notify", due.game_id, due.version, job_id=f"notify-{due.game_id}", queue="notify"
            )

    def catch_up_due(self) -> bool:
        """Whether this append should ask the read models to catch up (batched: see RQJobs)."""
        return True

    def announce(self, game_id: str, version: int) -> bool:
        """Wake the game's live streams; whether the game has webhooks to notify."""
        self.publish(game_id, version)
        return self.state.has_webhooks(game_id)

    def catch_up_turn(self) -> bool:
        """Whether this process catches the read models up now (one process here)."""
        return True

    def catch_up_soon(self) -> None:
        """Have the read models catch up with the appends so far."""
        self.enqueue("catch_up", job_id="catch_up", queue="notify")

    def enqueue_delivery(self, game_id: str, delivery_id: str, attempt: int) -> None:
        job_id = f"deliver-{delivery_id}-{attempt}"
        self.enqueue("deliver", game_id, delivery_id, attempt, job_id=job_id, queue="notify")

    @property
    def analyses(self) -> analyses.AnalysisStore:
        """Analyses asked for and their results (service.application.analyses), beside the job
        state; opened on first use."""
        with self._analyses_lock:
            if self._analyses is None:
                config = self.services.config
                self._analyses = analyses.open_analysis_store(config.store_url, config.redis_url)
            return self._analyses

    @property
    def bot_games(self) -> BotGameStore:
        """The bot games, their owners and pauses (service.application.bot_games), beside the
        job state; opened on first use."""
        with self._analyses_lock:
            if self._bot_games is None:
                config = self.services.config
                self._bot_games = open_bot_game_store(config.store_url, config.redis_url)
            return self._bot_games

    def share_of(self, name: str, args: tuple[Any, ...]) -> Share:
        """Whose compute a fair job is, and for which game: a bot turn's game's owner
        (service.application.bot_games), an analysis's asker's (its record), a game's notice
        its first webhook's owner (its lane: who registered it), a webhook attempt its
        delivery's lane."""
        if name == "deliver":
            game_id = str(args[0])
            delivery = self.state.delivery(game_id, str(args[1]))
            lane = delivery_lane(delivery) if delivery is not None else f"game:{game_id}"
            return Share(lane, game_id)
        if name == "notify":
            game_id = str(args[0])
            hooks = self.state.webhooks(game_id)
            lane = notifications.webhook_lane(hooks[0]) if hooks else f"game:{game_id}"
            return Share(lane, game_id)
        if name == "bot_turn":
            game_id = str(args[0])
            return Share(self.bot_games.owner_of(game_id), game_id)
        analysis_id = str(args[0])
        record = self.analyses.get(analysis_id, time.time())
        if record is None:
            return Share(f"analysis:{analysis_id}", analysis_id)
        return Share(str(record.get("owner") or record["requester"]), str(record["game_id"]))

    def per_owner(self, queue: str) -> int:
        """How many of one owner's jobs of a fair queue may run at once."""
        if queue == "bots":
            return max(1, self.settings.bot_turns_per_owner)
        if queue == "notify":
            return max(1, self.settings.webhook_per_owner)
        return max(1, self.settings.analyses_running_per_owner)

    def bot_turn_waits(self, game_id: str, version: int) -> bool:
        """Whether the bot turn due after ``version`` waits for its fair turn or runs (so the
        sweep leaves it be)."""
        return False

    def bot_turn_overdue(self, game_id: str, version: int) -> int:
        """The sweep found a bot turn due too long, and neither waiting nor running (its job
        was lost): marked due again and queued, to be played in its fair turn."""
        self.state.mark_due(game_id, version, time.time())
        self.enqueue(
            "bot_turn",
            game_id,
            version,
            job_id=bots.bot_turn_key(game_id, version),
            queue="bots",
        )
        return 1

    def enqueue_analysis(self, analysis_id: str, run: int) -> None:
        """Run run number ``run`` of an analysis, on the analyses' own queue."""
        job_id = analysis_job_id(analysis_id, run)
        self.enqueue("analysis", analysis_id, run, job_id=job_id, queue="analyses")

    def analysis_position(self, analysis_id: str, run: int) -> int | None:
        """Where run ``run`` of an analysis waits in the analyses' queue (1: next)."""
        return self.queue_position("analyses", analysis_job_id(analysis_id, run))

    def announce_analysis(self, game_id: str, record: dict[str, Any]) -> None:
        """Tell the game's live streams how an analysis stands (those that may see it send
        an ``analysis`` message; service.http.resources.stream)."""
        self.streams.note(game_id, analyses.stream_note(record))

    def enqueue(
        self, name: str, *args: Any, job_id: str | None = None, queue: str = "steps"
    ) -> None:
        """Run job ``name`` in the background; a job id already waiting is not queued twice."""
        raise NotImplementedError

    def compute(
        self,
        queue: str,
        name: str,
        args: tuple[Any, ...],
        seconds: float,
        on_progress: Progress | None = None,
    ) -> Any:
        """Run a computation of the ``queue``'s job (a bot's search, an analysis): here, in
        this process, as an RQ worker does (a process of its own, serving the queues it was
        started for; RQ's job timeout bounds it)."""
        return compute.run_here(name, args, on_progress)

    def wake_sweeper(self, at: float) -> None:
        """A hint that a sweep is worth running at ``at`` (a retry's time)."""

    def serves(self, queue: str) -> bool:
        """Whether something takes the ``queue``'s jobs now (this process does)."""
        return True

    def queue_position(self, queue: str, job_id: str) -> int | None:
        """Where a waiting job stands in its queue (1: the next one taken); None if it is
        not waiting (running, done, unknown)."""
        return None

    def delivery_leases(self) -> webhook_lanes.Leases:
        """Where deliveries hold their places in flight (``webhook_lanes``): in this process
        (subclasses share them across processes)."""
        return webhook_lanes.MemoryLeases()

    # live streams -----------------------------------------------------------------------

    def stream_hub(self) -> StreamHub:
        """The live streams' hub: in memory (subclasses share it across processes)."""
        return StreamHub()

    def publish(self, game_id: str, version: int) -> None:
        """Wake this process's streams of the game (subclasses reach other processes too)."""
        self.streams.wake(game_id, version)

    def subscribe(self, game_id: str, event: threading.Event | None = None) -> Watcher:
        """A handle to wait for the game's next append and read its new events (the feed
        shared by every stream of the game in this process); ``event``, when given, is set
        by every append (a stream following many games shares one)."""
        return self.streams.watch(game_id, event)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether every job enqueued so far (and what they chained) finished within
        ``timeout`` (for tests and tools)."""
        raise NotImplementedError

    def ping(self) -> bool:
        """Whether the queue answers."""
        return True

    def queues_reachable(self) -> bool:
        """Whether the job queues take jobs now (``GET /ready``)."""
        return True

    def scraped(self) -> dict[str, Any]:
        """What ``GET /metrics`` reads when scraped (service.monitoring.metrics.Scraped):
        ``queues``: name -> (jobs waiting, when the oldest was queued or None);
        ``compute``: (``bots`` | ``analyses``, ``running`` | ``queued``) -> jobs."""
        return {}

    def close(self) -> None:
        """Stop taking jobs and release threads and connections."""
        self.streams.close()
        self.state.close()
        with self._analyses_lock:
            if self._analyses is not None:
                self._analyses.close()
            if self._bot_games is not None:
                self._bot_games.close()


class InProcessJobs(Jobs):
    """Jobs on thread pools in this process (the embedded default).

    Pools as RQ has queues: automatic steps on one, notices, webhook deliveries and
    read-model catch-up on another, so a slow receiver never holds up a game's scoring.
    At most ``webhook_per_owner`` deliveries of one owner and ``webhook_per_receiver`` to one
    receiver are in flight (``start_deliveries``); the others wait in their lanes instead of
    holding a thread, so an owner's webhooks at receivers that never answer take at most
    that many of the notification threads. Bot turns and analyses have a ``FairPool`` each,
    a thread per child process: the next job is always the fair order's
    (service.workers.fair), with at most ``bot_turns_per_owner``
    (``analyses_running_per_owner``) of one owner's at once.

    A job id that is waiting in a pool is not queued again (one that is already running
    may be: it might have read the game just before the latest append). A sweeper thread
    sweeps every ``sweep_interval`` seconds, and sooner when a retry falls due.
    """

    def __init__(self, services: Any, state: JobState, settings: JobSettings) -> None:
        super().__init__(services, state, settings)
        self._pools = {
            "steps": ThreadPoolExecutor(
                max_workers=settings.job_threads, thread_name_prefix="meeple-step"
            ),
            "notify": ThreadPoolExecutor(
                max_workers=settings.notify_threads, thread_name_prefix="meeple-notify"
            ),
        }
        # These threads only wait: their jobs compute in child processes (``compute``).
        self._fair_pools = {
            queue: FairPool(queue, size, functools.partial(self.per_owner, queue))
            for queue, size in (
                ("bots", settings.bot_processes),
                ("analyses", settings.analysis_processes),
            )
        }
        #: The child processes bots and analyses compute in, started on first use.
        self.compute_pools = {
            "bots": compute.ComputePool("bots", settings.bot_processes),
            "analyses": compute.ComputePool("analyses", settings.analysis_processes),
        }
        self._changed = threading.Condition()
        self._waiting: set[str] = set()
        #: queue -> its waiting job ids, in the order they were queued (a queue's position).
        self._order: dict[str, list[str]] = {name: [] for name in self._pools}
        #: queue -> when each of its waiting jobs was queued (by a ticket of its own)
        self._queued: dict[str, dict[str, float]] = {name: {} for name in self._pools}
        self._active = 0
        self._closed = False
        self._wakeups: list[float] = []
        self._fused: tuple[Callable[..., list[Any]] | None] | None = None
        self._sweeper = threading.Thread(
            target=self._sweep_forever, name="meeple-sweeper", daemon=True
        )
        self._sweeper.start()

    def enqueue(
        self, name: str, *args: Any, job_id: str | None = None, queue: str = "steps"
    ) -> None:
        function = JOB_FUNCTIONS[name]
        if queue in self._fair_pools:
            self._enqueue_fair(queue, name, function, args, job_id or uuid.uuid4().hex)
            return
        pool = self._pools[queue]
        ticket = uuid.uuid4().hex
        with self._changed:
            if self._closed or (job_id is not None and job_id in self._waiting):
                return
            if job_id is not None:
                self._waiting.add(job_id)
                self._order[queue].append(job_id)
            self._active += 1
            queued_at = self._queued[queue][ticket] = time.time()
        run = _Run(name, queue, logs.current_request_id(), queued_at, ticket)
        try:
            pool.submit(self._run, function, args, job_id, run)
        except RuntimeError:  # the pool shut down between the check and the submit
            with self._changed:
                self._queued[queue].pop(ticket, None)
            self._finished()

    def _enqueue_fair(
        self,
        queue: str,
        name: str,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        job_id: str,
    ) -> None:
        """Queue a bot turn or an analysis in its pool's fair order (a job id waiting there
        already is not queued twice)."""
        if self._closed:
            return
        share = self.share_of(name, args)
        with self._changed:
            if self._closed:
                return
            self._active += 1
        observed = _Run(name, queue, logs.current_request_id(), time.time())
        run = functools.partial(self._run, function, args, None, observed)
        if not self._fair_pools[queue].submit(job_id, share, run):
            self._finished()

    def bot_turn_waits(self, game_id: str, version: int) -> bool:
        return self._fair_pools["bots"].busy(bots.bot_turn_key(game_id, version))

    def compute(
        self,
        queue: str,
        name: str,
        args: tuple[Any, ...],
        seconds: float,
        on_progress: Progress | None = None,
    ) -> Any:
        """In one of the queue's child processes: under ``meeple serve`` this process serves
        every request on one gevent loop, and a search here would hold them all."""
        return self.compute_pools[queue].run(name, args, seconds, on_progress)

    def side_writes(self, due: Due) -> list[Any]:
        """On the embedded default (a SQLite store, the due steps in its file): the due mark
        of the step or bot turn ``due`` brings, and the clearing of the one the append
        fulfils, as statements of the append's own transaction (one commit for all)."""
        statements = self._due_statements()
        if statements is None:
            return []
        since = time.time() if due.step or due.bot else None
        return statements(due.game_id, due.version, since, due.version - 1)

    def _due_statements(self) -> Callable[..., list[Any]] | None:
        """``SQLiteJobState.due_statements`` when the event store is SQLite and holds the due
        steps in its own file, else None (known once)."""
        if self._fused is None:
            store = getattr(self.services, "store", None)
            due_path = getattr(self.state, "due_path", None)
            fused = (
                isinstance(store, SQLiteEventStore)
                and isinstance(self.state, SQLiteJobState)
                and due_path is not None
                and Path(due_path).resolve() == Path(store.path).resolve()
            )
            self._fused = (SQLiteJobState.due_statements if fused else None,)
        return self._fused[0]

    @property
    def clears_due_with_append(self) -> bool:  # type: ignore[override]
        return self._due_statements() is not None

    def dispatched(self, due: Due, replies: tuple[int, ...] = ()) -> None:
        """The due mark was committed with the append: start the jobs."""
        self._start(due)

    def _run(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        job_id: str | None,
        run: _Run,
    ) -> None:
        with self._changed:
            self._waiting.discard(job_id or "")
            for order in self._order.values():
                if job_id in order:
                    order.remove(job_id)
            if run.ticket is not None:
                self._queued.get(run.queue, {}).pop(run.ticket, None)
        try:
            run_observed(
                function,
                self.services,
                args,
                name=run.name,
                queue=QUEUE_NAMES.get(run.queue, run.queue),
                request_id=run.request_id,
                due_since=run.queued_at,
            )
        except Exception:
            # A failed job must not kill the pool; what it left due, the sweep runs.
            log.exception("job %s%r failed", function.__name__, args)
        finally:
            self._finished()

    def _finished(self) -> None:
        with self._changed:
            self._active -= 1
            self._changed.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._active == 0, timeout)

    def queue_position(self, queue: str, job_id: str) -> int | None:
        if queue in self._fair_pools:
            return self._fair_pools[queue].position(job_id)
        with self._changed:
            order = self._order.get(queue, [])
            return order.index(job_id) + 1 if job_id in order else None

    def wake_sweeper(self, at: float) -> None:
        with self._changed:
            heapq.heappush(self._wakeups, at)
            self._changed.notify_all()

    def queues_reachable(self) -> bool:
        return not self._closed

    def scraped(self) -> dict[str, Any]:
        queues: dict[str, tuple[int, float | None]] = {}
        with self._changed:
            for queue, queued in self._queued.items():
                queues[QUEUE_NAMES[queue]] = (len(queued), min(queued.values(), default=None))
        compute: dict[tuple[str, str], int] = {}
        for queue, pool in self._fair_pools.items():
            waiting, running, oldest = pool.counts()
            queues[queue] = (waiting, oldest)
            compute[(queue, "queued")], compute[(queue, "running")] = waiting, running
        return {"queues": queues, "compute": compute}

    def _sweep_forever(self) -> None:
        next_sweep = time.time() + self.settings.sweep_interval
        while True:
            with self._changed:
                while not self._closed:
                    soonest = min([next_sweep, *self._wakeups[:1]])
                    delay = soonest - time.time()
                    if delay <= 0:
                        break
                    self._changed.wait(delay)
                if self._closed:
                    return
                while self._wakeups and self._wakeups[0] <= time.time():
                    heapq.heappop(self._wakeups)
            try:
                sweep(self.services)
            except Exception:
                log.exception("the in-process sweep failed")
            next_sweep = time.time() + self.settings.sweep_interval

    def close(self) -> None:
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
        # The searches first: their threads end as soon as their children do.
        for computing in self.compute_pools.values():
            computing.close()
        for fair in self._fair_pools.values():
            for _ in fair.shutdown():
                self._finished()
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._sweeper.join(timeout=30)
        super().close()


class RQJobs(Jobs):
    """Jobs on RQ queues in Redis, run by ``meeple worker`` processes (``run_worker``)."""

    #: How long RQ keeps a finished job's result, and a failed one (seconds).
    RESULT_TTL = 300
    FAILURE_TTL = 24 * 3600
    #: A job running longer than this is stopped by its worker (seconds).
    JOB_TIMEOUT = 120
    #: Seconds between two catch-up jobs enqueued by one process.
    CATCH_UP_EVERY = 0.5
    #: Seconds a worker keeps the catch-up its own after its last one (``catch_up_turn``).
    CATCH_UP_TURN = 10.0
    CATCH_UP_TURN_KEY = "meeple:catch-up-turn"
    #: KEYS: the turn's key. ARGV: 1 this process, 2 milliseconds. 1 if the turn is (still)
    #: this process's, now for ARGV[2] ms more; 0 if another's.
    TAKE_TURN_SCRIPT = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

    def __init__(
        self, services: Any, state: JobState, settings: JobSettings, redis_url: str
    ) -> None:
        self.connection = redis_client(redis_url)
        super().__init__(services, state, settings)
        from rq import Queue

        self._catch_up_lock = threading.Lock()
        self._next_catch_up = 0.0
        self._take_turn = self.connection.register_script(self.TAKE_TURN_SCRIPT)
        self._me = uuid.uuid4().hex
        self._fusable: tuple[int | None] | None = None
        self.queues = {
            "steps": Queue(STEPS_QUEUE, connection=self.connection),
            "notify": Queue(NOTIFICATIONS_QUEUE, connection=self.connection),
            "analyses": Queue(ANALYSES_QUEUE, connection=self.connection),
            "bots": Queue(BOTS_QUEUE, connection=self.connection),
        }
        #: The fair order of the bots' and analyses' jobs, shared by every process.
        self.fair = {
            name: RedisFairQueue(self.connection, name) for name in ("bots", "analyses", "notify")
        }
        # The API follows the announcements from its start (service.app: they tell it which
        # cached games are current, commands.load_for_action); a worker never asks, and
        # hearing every append of every game would cost it for nothing.

    def enqueue(
        self, name: str, *args: Any, job_id: str | None = None, queue: str = "steps"
    ) -> None:
        if name not in JOB_FUNCTIONS:
            raise KeyError(name)
        if name == "notify":
            # A game's notice waits in the fair order of its webhooks' owners (one a game, for
            # every event not told yet), so one owner's busy games never hold back another
            # owner's notices on the notification workers, which take them turn by turn.
            self._enqueue_fair_notice(str(args[0]))
            return
        if job_id is not None:
            status = self.connection.hget(f"rq:job:{job_id}", "status")
            if isinstance(status, bytes):
                status = status.decode()
            if status in WAITING:
                return
        if name in FAIR_JOBS:
            # The job waits in the fair order; the RQ job is a turn to take its next job.
            job_id = job_id or uuid.uuid4().hex
            with self.connection.pipeline(transaction=False) as pipe:
                # RQ's first (it opens the pipeline's transaction): both go in it together.
                self._enqueue_turn(FAIR_JOBS[name], job_id, pipe)
                for command in self._fair_push(name, args, job_id):
                    pipe.execute_command(*command)
                pipe.execute()
            return
        self.queues[queue].enqueue(
            run_job,
            name,
            *args,
            job_id=job_id,
            result_ttl=self.RESULT_TTL,
            failure_ttl=self.FAILURE_TTL,
            job_timeout=self._timeout(queue),
            meta=_job_meta(),
        )

    def _enqueue_fair_notice(self, game_id: str) -> None:
        """Push the game's notice into the fair order (idempotent: it waits there once), and
        queue a turn to take it unless the game's turn waits already (any turn takes the
        order's next job; one that ends with jobs left and too few turns queues another)."""
        job_id = f"notify-{game_id}"
        args = (game_id, LATEST)
        status = self.connection.hget(f"rq:job:{job_id}", "status")
        if isinstance(status, bytes):
            status = status.decode()
        with self.connection.pipeline(transaction=False) as pipe:
            if status not in WAITING:
                self._enqueue_turn("notify", job_id, pipe)
            for command in self._fair_push("notify", args, job_id):
                pipe.execute_command(*command)
            pipe.execute()

    def _timeout(self, queue: str) -> int:
        if queue == "analyses":  # a search stops by itself after its most seconds
            longest = max(self.settings.analysis_max_seconds, self.settings.review_max_seconds)
            return max(self.JOB_TIMEOUT, math.ceil(longest) + 60)
        return self.JOB_TIMEOUT

    def _fair_push(self, name: str, args: tuple[Any, ...], job_id: str) -> list[Command]:
        """The commands that put a bot turn or an analysis in its fair order."""
        job = {"name": name, "args": list(args)}
        fair = self.fair[FAIR_JOBS[name]]
        return fair.push_commands(job_id, self.share_of(name, args), job, time.time())

    def _enqueue_turn(self, queue: str, job_id: str, pipeline: Any = None) -> None:
        """An RQ job on ``queue`` that takes the fair order's next job there."""
        self.queues[queue].enqueue(
            run_job,
            "fair_turn",
            queue,
            job_id=job_id,
            result_ttl=self.RESULT_TTL,
            failure_ttl=self.FAILURE_TTL,
            job_timeout=self._timeout(queue),
            pipeline=pipeline,
            meta=_job_meta(),
        )

    def take_fair_turn(self, queue: str) -> Any:
        """Run the fair order's next job of ``queue`` here, under a lease on its owner's place
        (beyond the RQ job's timeout: a worker that dies mid-job frees it then); what it
        answered, or ``nothing_to_take`` when every waiting job's owner is at its limit (the
        end of one of their running jobs takes the next turn). A job that ends with jobs left
        waiting and too few turns queued for them queues one more."""
        fair = self.fair[queue]
        lease = self._timeout(queue) + FAIR_LEASE_MARGIN
        taken = fair.pop(self.per_owner(queue), time.time(), lease)
        if taken is None:
            return "nothing_to_take"
        try:
            job = taken.item
            name = str(job["name"])
            return run_observed(
                JOB_FUNCTIONS[name],
                self.services,
                tuple(job["args"]),
                name=name,
                queue=QUEUE_NAMES.get(queue, queue),
                request_id=_turn_request_id(taken.job_id),
            )
        finally:
            if fair.done(taken) and self.queues[queue].count < len(fair):
                self._enqueue_turn(queue, f"fair_turn-{queue}-{uuid.uuid4().hex}")

    def bot_turn_waits(self, game_id: str, version: int) -> bool:
        """A bot turn that runs, or waits while its owner has a job running (whose end takes
        the next turn); one that waits with nothing of its owner's running may have lost its
        turn (a worker died): the sweep queues one."""
        fair, job_id, now = self.fair["bots"], bots.bot_turn_key(game_id, version), time.time()
        if fair.running(job_id, now):
            return True
        owner = fair.owner_of(job_id)
        return owner is not None and fair.owner_running(owner, now) > 0

    def catch_up_due(self) -> bool:
        """At most one catch-up job per ``CATCH_UP_EVERY`` seconds from this process: under
        load one catch-up reads many appends at once, and every worker's sweep catches up
        too, so the read models trail the log by a moment at most."""
        now = time.monotonic()
        with self._catch_up_lock:
            if now < self._next_catch_up:
                return False
            self._next_catch_up = now + self.CATCH_UP_EVERY
        return True

    def catch_up_turn(self) -> bool:
        """Whether this worker catches the read models up now: one worker at a time does,
        the one that did last, for as long as it goes on doing so (its sweep does every
        ``sweep_interval`` seconds); another takes over ``CATCH_UP_TURN`` seconds after it
        stopped (a worker that died). Each worker folds the games it catches up on its own
        cache: with every worker catching up, each folded every event again (under the HTTP
        bench's load, 13-22% of two RQ workers' CPU, 23-26% of four's). A catch-up job that
        comes to another worker ends at once; what it would have read, the turn's holder
        reads at its next catch-up, within ``sweep_interval`` seconds."""
        turn = max(self.CATCH_UP_TURN, 3 * self.settings.sweep_interval)
        taken = self._take_turn(keys=[self.CATCH_UP_TURN_KEY], args=[self._me, int(turn * 1000)])
        return bool(taken)

    def side_writes(self, due: Due) -> list[Command]:
        """Everything ``dispatch`` would do, as commands for the append's script, when the
        event store is a single Redis server that also holds the queues (another database
        of it is fine: the script selects it, which never changes the caller's)."""
        database = self._fusable_database()
        if database is None:
            return []
        commands: list[Command] = []
        if database >= 0:
            commands.append(("SELECT", database))
        # The due mark this append fulfils (an automatic step's, a bot turn's), if any: cleared
        # with it (``clears_due_with_append``), not by a round trip of its own after it.
        commands.append(("ZREM", RedisJobState.DUE_STEPS, f"{due.game_id}:{due.version - 1}"))
        if due.step:
            member = f"{due.game_id}:{due.version}"
            commands.append(("ZADD", RedisJobState.DUE_STEPS, "NX", repr(time.time()), member))
            if not due.taken:
                job_id = system_step_key(due.game_id, due.version)
                commands += self._enqueue_once(
                    "system_step", due.game_id, due.version, job_id=job_id
                )
        if due.bot:
            member = f"{due.game_id}:{due.version}"
            commands.append(("ZADD", RedisJobState.DUE_STEPS, "NX", repr(time.time()), member))
            job_id = bots.bot_turn_key(due.game_id, due.version)
            # In the fair order, with a turn to take it (both skipped while one waits).
            fair = self._fair_push("bot_turn", (due.game_id, due.version), job_id)
            commands += self._enqueue_once(
                "fair_turn", "bots", job_id=job_id, queue="bots", first=fair
            )
        commands.append(("PUBLISH", appended_channel(due.game_id), str(due.version)))
        # Whether the game has webhooks (rare): its notice is enqueued after, if so.
        commands.append((REPLY_EXISTS, RedisJobState.webhooks_key(due.game_id)))
        if due.catch_up:
            commands += self._enqueue_once("catch_up", job_id="catch_up", queue="notify")
        return commands

    def _enqueue_once(
        self,
        name: str,
        *args: Any,
        job_id: str,
        queue: str = "steps",
        first: list[Command] | None = None,
    ) -> list[Command]:
        """The commands RQ sends to enqueue a job (after ``first``), behind a guard that skips
        them all while a job of that id waits (as ``enqueue`` checks)."""
        with self.connection.pipeline(transaction=False) as pipe:
            self.queues[queue].enqueue(
                run_job,
                name,
                *args,
                job_id=job_id,
                result_ttl=self.RESULT_TTL,
                failure_ttl=self.FAILURE_TTL,
                job_timeout=self.JOB_TIMEOUT,
                pipeline=pipe,
                meta=_job_meta(),
            )
            enqueue: list[Command] = [*(first or []), *(tuple(a) for a, _ in pipe.command_stack)]
        guard = (SKIP_IF_FIELD_IN, f"rq:job:{job_id}", "status", len(enqueue), *WAITING)
        return [guard, *enqueue]

    @property
    def clears_due_with_append(self) -> bool:  # type: ignore[override]
        return self._fusable_database() is not None

    def _fusable_database(self) -> int | None:
        """The database number of the queues, if the event store's script can reach them
        (-1: the store's own database), else None. Known once per process."""
        if self._fusable is not None:
            return self._fusable[0]
        store = getattr(self.services, "store", None)
        found: int | None = None
        if isinstance(store, RedisEventStore) and same_server(self.connection, store.client):
            database = database_of(self.connection)
            found = -1 if database == database_of(store.client) else database
        self._fusable = (found,)
        return found

    def publish(self, game_id: str, version: int) -> None:
        super().publish(game_id, version)
        self.connection.publish(appended_channel(game_id), str(version))

    def announce_analysis(self, game_id: str, record: dict[str, Any]) -> None:
        # Every process's streams, this one's included, hear it through pub/sub.
        note = analyses.stream_note(record)
        self.connection.publish(appended_channel(game_id), NOTE_PREFIX + json.dumps(note))

    def announce(self, game_id: str, version: int) -> bool:
        if not isinstance(self.state, RedisJobState):
            return super().announce(game_id, version)
        # One round trip for both questions: this runs after every append.
        Jobs.publish(self, game_id, version)
        with self.state.client.pipeline(transaction=False) as pipe:
            pipe.publish(appended_channel(game_id), str(version))
            pipe.exists(self.state.webhooks_key(game_id))
            _, webhooks = pipe.execute()
        return bool(webhooks)

    def delivery_leases(self) -> webhook_lanes.Leases:
        """In Redis: every worker's deliveries count under the same caps."""
        return webhook_lanes.RedisLeases(self.connection)

    def stream_hub(self) -> StreamHub:
        """Wake-ups from every process by Redis pub/sub, the caps counted in Redis."""
        lease = self.settings.stream_slot_lease
        return StreamHub(self.connection, RedisStreamSlots(self.connection, lease=lease))

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether the queues are empty and no job runs, within ``timeout``."""
        from rq.registry import StartedJobRegistry

        deadline = time.monotonic() + timeout
        while True:
            busy = sum(
                queue.count + StartedJobRegistry(queue=queue).count
                for queue in self.queues.values()
            ) + sum(len(fair) for fair in self.fair.values())
            if busy == 0:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)

    def ping(self) -> bool:
        return bool(self.connection.ping())

    def queues_reachable(self) -> bool:
        """Every queue's length is read (one round trip)."""
        with self.connection.pipeline(transaction=False) as pipe:
            for queue in self.queues.values():
                pipe.llen(queue.key)
            return all(isinstance(length, int) for length in pipe.execute())

    def scraped(self) -> dict[str, Any]:
        """The RQ queues' lengths and the enqueue time of each one's first job (the jobs of
        the notifications', bots' and analyses' queues are turns to take the fair order's
        next); the bots' and analyses' fair orders' waiting and running jobs."""
        from rq.utils import utcparse

        names = list(self.queues)
        with self.connection.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.llen(self.queues[name].key)
                pipe.lindex(self.queues[name].key, 0)
            found = pipe.execute()
        lengths, firsts = found[0::2], found[1::2]
        with self.connection.pipeline(transaction=False) as pipe:
            for first in firsts:
                job_id = first.decode() if isinstance(first, bytes) else str(first)
                pipe.hget(f"rq:job:{job_id}", "enqueued_at")
            enqueued = pipe.execute()
        queues: dict[str, tuple[int, float | None]] = {}
        for name, length, first, at in zip(names, lengths, firsts, enqueued, strict=True):
            oldest = None
            if first is not None and at:
                text = at.decode() if isinstance(at, bytes) else str(at)
                oldest = utcparse(text).replace(tzinfo=UTC).timestamp()
            queues[QUEUE_NAMES[name]] = (int(length), oldest)
        compute: dict[tuple[str, str], int] = {}
        now = time.time()
        for name, fair in self.fair.items():
            if name not in ("bots", "analyses"):
                continue  # notices: counted in their queue's depth
            compute[(name, "queued")] = len(fair)
            compute[(name, "running")] = fair.running_now(now)
        return {"queues": queues, "compute": compute}

    def serves(self, queue: str) -> bool:
        """Whether a live ``meeple worker`` listens on the queue (RQ's registry of workers per
        queue; a worker killed without a word leaves it when its key expires)."""
        from rq.worker_registration import get_keys

        keys = list(get_keys(self.queues[queue], connection=self.connection))
        if not keys:
            return False
        with self.connection.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.exists(key)
            return any(pipe.execute())

    def queue_position(self, queue: str, job_id: str) -> int | None:
        found = self.queues[queue].get_job_position(job_id)
        return None if found is None else int(found) + 1

    def close(self) -> None:
        super().close()
        self.connection.close()


def make_jobs(services: Any, settings: JobSettings | None = None) -> Jobs:
    """The runner the configuration asks for: RQ when MEEPLE_REDIS_URL is set, else in-process.

    Its state lives where the deployment keeps its data (``service.application.job_state``).
    """
    config = services.config
    settings = settings if settings is not None else JobSettings.from_env()
    state = open_job_state(config.store_url, config.redis_url)
    if config.redis_url:
        return RQJobs(services, state, settings, config.redis_url)
    return InProcessJobs(services, state, settings)


# -- the worker process -----------------------------------------------------------------

_process_services: Any = None
_process_lock = threading.Lock()


def run_job(name: str, *args: Any) -> Any:
    """The function RQ runs: the named job with this process's services, as part of the
    request that queued it (its meta's ``request_id``); a fair turn's job is observed as it
    is taken (``RQJobs.take_fair_turn``)."""
    services = worker_services()
    if name == "fair_turn":
        return JOB_FUNCTIONS[name](services, *args)
    from rq import get_current_job

    job = get_current_job()
    meta = job.meta if job is not None else {}
    queued_at = None
    if job is not None and job.enqueued_at is not None:
        at = job.enqueued_at
        queued_at = (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()
    origin = job.origin if job is not None else ""
    return run_observed(
        JOB_FUNCTIONS[name],
        services,
        args,
        name=name,
        queue=_QUEUE_OF_RQ.get(origin, origin),
        request_id=logs.valid_request_id(meta.get("request_id")),
        due_since=queued_at,
    )


#: The RQ queues by the names the metrics and the logs give them.
_QUEUE_OF_RQ = {
    STEPS_QUEUE: "steps",
    NOTIFICATIONS_QUEUE: "notifications",
    BOTS_QUEUE: "bots",
    ANALYSES_QUEUE: "analyses",
}


def _turn_request_id(job_id: str) -> str | None:
    """The request id of the job a fair turn took, when the turn is that job's own (queued
    with it, under its id, by the request that queued it); a turn that took another owner's
    job, queued by another request, knows none."""
    from rq import get_current_job

    turn = get_current_job()
    if turn is None or turn.id != job_id:
        return None
    return logs.valid_request_id((turn.meta or {}).get("request_id"))


def _job_meta() -> dict[str, Any] | None:
    """An RQ job's meta: the request id of the request queuing it, if any."""
    request_id = logs.current_request_id()
    return {"request_id": request_id} if request_id is not None else None


@dataclass(frozen=True)
class _Run:
    """What the in-process runner keeps of a queued job for its run: its name and queue, the
    request that queued it, when, and its place among the queue's waiting (``ticket``)."""

    name: str
    queue: str
    request_id: str | None
    queued_at: float
    ticket: str | None = None


def worker_services() -> Any:
    """This worker process's services, installed by ``run_worker`` before it takes a job."""
    with _process_lock:
        if _process_services is None:
            raise RuntimeError(
                "no services in this process: run the queues' jobs with `meeple worker`"
            )
        return _process_services


#: A worker's heartbeat that would leave its key's expiry less than this many seconds short
#: of what RQ asks is sent; a later one is not (``worker_class``).
HEARTBEAT_SLACK = 10.0
#: Seconds between two checks whether ``rq suspend`` suspended the workers.
SUSPENSION_CHECK_EVERY = 1.0


@functools.cache
def worker_class() -> type[Any]:
    """RQ's ``SimpleWorker`` (no fork per job), with fewer writes of its own bookkeeping.

    With the AOF fsync'd on every write, each of RQ's writes waits for the disk, and a job
    waited for some 18 of them; a worker is busy with them rather than with its jobs. RQ
    sends a worker's heartbeat (its ``last_heartbeat``, its key's expiry: minutes ahead)
    three times a job, the job's own ``last_heartbeat`` once more as it ends, and asks
    whether the workers are suspended once a job. Here a heartbeat's two writes go together,
    and one goes only when the last one sent leaves the key's expiry more than
    ``HEARTBEAT_SLACK`` seconds short of what RQ asks (so a busy worker sends one every few
    seconds, and its key never expires sooner than RQ wants, less the slack); the job's last
    heartbeat is not written; the suspension is checked at most once every
    ``SUSPENSION_CHECK_EVERY`` seconds (``rq suspend`` stops the workers within it). And
    the worker's state "idle", written twice between two jobs, is written once. A job costs
    its worker 9 round trips of RQ's bookkeeping instead of 14 (tests/api/test_round_trips).
    """
    from rq import SimpleWorker
    from rq.utils import now as rq_now

    class StepWorker(SimpleWorker):
        _expires_at = 0.0
        _suspension_checked_at = -math.inf
        #: The seconds its heartbeats and suspension checks go by (a test sets its own).
        clock: Callable[[], float] = staticmethod(time.monotonic)

        def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
            wanted = timeout or self.worker_ttl + 60
            left = self._expires_at - self.clock()
            if pipeline is not None:
                # Written with other bookkeeping anyway; never shortens the key's life (RQ
                # asks for the job's timeout here, less than the key has between jobs).
                wanted = max(wanted, math.ceil(left))
                super().heartbeat(wanted, pipeline=pipeline)
            elif left >= wanted - HEARTBEAT_SLACK:
                return
            else:
                with self.connection.pipeline(transaction=False) as together:
                    super().heartbeat(wanted, pipeline=together)
                    together.execute()
            self._expires_at = self.clock() + wanted

        def handle_execution_ended(self, job: Any, queue: Any, heartbeat_ttl: int) -> None:
            # RQ writes the job's ``last_heartbeat`` once more here, a round trip of its own
            # that nothing reads (the job's result is written next).
            job.ended_at = rq_now()

        def check_for_suspension(self, burst: bool) -> None:
            checked = self.clock()
            if checked - self._suspension_checked_at < SUSPENSION_CHECK_EVERY:
                return
            super().check_for_suspension(burst)
            self._suspension_checked_at = checked

        def request_stop(self, signum: int, frame: Any) -> None:
            # A bot's search or an analysis running here ends now rather than after its whole
            # budget (compute.STOPPING): its job stays due and is played again.
            compute.STOPPING.set()
            super().request_stop(signum, frame)

        def set_state(self, state: str, pipeline: Any = None) -> None:
            if pipeline is None and state == self.get_state():
                return
            super().set_state(state, pipeline=pipeline)

    return StepWorker


def run_worker(
    services: Any,
    *,
    burst: bool = False,
    settings: JobSettings | None = None,
    queues: list[str] | None = None,
) -> int:
    """An RQ worker for the service's queues, with the sweep in a thread: what ``meeple
    worker`` runs once the composition root has built ``services`` (``queues``: a choice of
    ``steps``, ``notify``, ``bots`` and ``analyses``; default the first three, steps first).

    The worker does not fork per job (RQ's SimpleWorker): the folded games it caches stay
    warm from one job to the next, and no fork ever copies the sweeper's locks. A worker
    killed mid-job loses nothing: its step stays due and any worker's sweep appends it.
    """
    global _process_services
    if settings is not None:
        services.jobs.settings = settings
    with _process_lock:
        _process_services = services
    jobs: RQJobs = services.jobs
    stop = threading.Event()

    def sweep_forever() -> None:
        while not stop.wait(jobs.settings.sweep_interval):
            try:
                sweep(services)
            except Exception:
                log.exception("the worker's sweep failed")

    sweeper = threading.Thread(target=sweep_forever, name="meeple-sweeper", daemon=True)
    sweeper.start()
    # Listed in this order, RQ takes a waiting step before any notification.
    wanted = queues or ["steps", "notify", "bots"]
    if set(wanted) <= {"bots", "analyses"}:
        compute.be_nice()  # a worker that only thinks yields the CPU to steps and requests
    order = ("steps", "notify", "bots", "analyses")
    served = [jobs.queues[name] for name in order if name in wanted]
    worker = worker_class()(served, connection=jobs.connection)
    json_lines = services.config.log_format == "json"
    if json_lines:
        # One line per job is this module's (``run_observed``); RQ's own only past INFO.
        logs.use_json()
    try:
        worker.work(burst=burst, logging_level="WARNING" if json_lines else "INFO")
    finally:
        stop.set()
        sweeper.join(timeout=30)
        services.close()
    return 0
