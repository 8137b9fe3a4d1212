"""``/games/{id}/analyses``: what-if analysis of a seat's decision over HTTP (issue 13, point 4).

``POST`` asks for the analysis of ``seat``'s decision after event ``at`` within a budget; it
runs as a background job on its own queue (``analyses``, below automatic steps and
notifications) and ``GET`` shows its progress, then its result: for each candidate action
the playouts, win rate, mean score and margin with 95 % intervals, and the agent's pick
(``projections.agents.analysis.analyze``; docs/analysis.md says how to read it).

Identical requests share one result: an analysis's id is a hash of its inputs (game, event,
seat, budget, seed), so asking again returns the same resource. The search's seed comes from
the request alone, never from the game's secret seed.

Secrecy: while a game is being played an analysis is its seat's secret. Only that seat's
token (or the admin key, or a branch's holder past its sealed part) may ask for it or read
it, and the search sees the position only as that seat saw it (it redraws what the seat
could not see with ``resample_hidden``). Once the game is over anyone may analyse any seat.
The live stream (``GET /games/{id}/stream``) sends progress as ``analysis`` messages to the
streams that may read the analysis.

Bounds: budgets are capped (``MEEPLE_ANALYSIS_MAX_PLAYOUTS``, ``MEEPLE_ANALYSIS_MAX_SECONDS``:
every analysis stops after that long whatever it asked), unfinished analyses are capped per
game, per requester (token, else address) and in total (429 ``too_many_analyses``), POST is
rate-limited (``MEEPLE_RATE_LIMIT_ANALYSES``), and results expire after
``MEEPLE_ANALYSIS_TTL`` seconds. Records live where the job state does (Redis with
``MEEPLE_REDIS_URL``, else the SQLite file beside the event store).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

import redis
from flask import Blueprint, Response, jsonify, request, url_for
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import canonical_json
from events.sqlite_pool import SQLitePool
from projections.agents.analysis import analyze
from projections.agents.budget import Budget
from projections.fold import Game
from service import commands
from service.auth import AuthError, Viewer, bearer_token, resolve_viewer
from service.errors import ApiError
from service.http import client_address, json_body
from service.http import services as current_services
from service.job_state import job_state_location
from service.limits import token_key

log = logging.getLogger(__name__)

bp = Blueprint("analyses", __name__)

Record = dict[str, Any]

#: What an analysis may be doing; the first two are unfinished (counted under the caps).
STATUSES = ("queued", "running", "done", "cancelled", "failed")
ACTIVE = ("queued", "running")
#: The seed of a request that names none.
DEFAULT_SEED = "0"
#: How often a running analysis writes its progress down and asks whether it was cancelled.
PROGRESS_EVERY = 0.5


@dataclass(frozen=True)
class Caps:
    """How many unfinished analyses one game, one requester and the service may have."""

    per_game: int
    per_requester: int
    total: int


def analysis_id(game_id: str, at: int, seat: int, playouts: int, seconds: float | None,
                seed: str) -> str:  # fmt: skip
    """The id of the analysis with these inputs: identical requests share it (and its result)."""
    inputs = {"game": game_id, "at": at, "seat": seat, "playouts": playouts}
    inputs |= {"seconds": seconds, "seed": seed}
    return hashlib.sha256(b"meeple analysis\0" + canonical_json(inputs)).hexdigest()[:32]


def search_seed(record: Record) -> str:
    """The search's seed: the request's inputs alone (public), never the game's seed."""
    return f"analysis:{record['at']}:{record['seat']}:{record['seed']}"


# -- storage ---------------------------------------------------------------------------------


class AnalysisStore(ABC):
    """Analysis records (plain dicts, JSON on disk), safe from many threads and processes.

    ``change(analysis_id, decide)`` is the one way to write: atomically, ``decide(record,
    unfinished)`` sees the record (None when missing or expired) and the unfinished records
    of every game (for the caps), and returns the new record or None to leave it as it is.
    """

    @abstractmethod
    def get(self, analysis_id: str, now: float) -> Record | None:
        """The record, or None when there is none (or it expired)."""

    @abstractmethod
    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        """Apply ``decide`` atomically; the record as it stands afterwards."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


def unfinished_now(record: Record, now: float) -> bool:
    """Whether the record counts under the caps: queued or running, within its lease (a
    worker that died mid-analysis leaves it unfinished only until the lease ends)."""
    return record["status"] in ACTIVE and float(record["lease_until"]) > now


class SQLiteAnalysisStore(AnalysisStore):
    """Analyses in a table of the job state's SQLite file; expired rows are deleted as new
    analyses are asked for."""

    SCHEMA = """
    CREATE TABLE IF NOT EXISTS analyses (
        id TEXT PRIMARY KEY,
        active INTEGER NOT NULL,
        expires_at REAL NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS analyses_active ON analyses (active);
    CREATE INDEX IF NOT EXISTS analyses_expiry ON analyses (expires_at);
    """

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self._pool.create(self.SCHEMA)

    def get(self, analysis_id: str, now: float) -> Record | None:
        rows = self._pool.query(
            "SELECT record FROM analyses WHERE id = ? AND expires_at > ?", (analysis_id, now)
        )
        return dict(json.loads(rows[0][0])) if rows else None

    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        # BEGIN IMMEDIATE: no other writer between the count under the caps and the write.
        with self._pool.transaction() as db:
            db.execute("DELETE FROM analyses WHERE expires_at <= ?", (now,))
            row = db.execute("SELECT record FROM analyses WHERE id = ?", (analysis_id,)).fetchone()
            record = None if row is None else dict(json.loads(row[0]))
            active = [
                json.loads(raw)
                for (raw,) in db.execute("SELECT record FROM analyses WHERE active = 1")
            ]
            changed = decide(record, [r for r in active if unfinished_now(r, now)])
            if changed is None:
                return record
            db.execute(
                "INSERT OR REPLACE INTO analyses (id, active, expires_at, record)"
                " VALUES (?, ?, ?, ?)",
                (
                    analysis_id,
                    int(changed["status"] in ACTIVE),
                    changed["expires_at"],
                    json.dumps(changed),
                ),
            )
            return changed

    def close(self) -> None:
        self._pool.close()


class RedisAnalysisStore(AnalysisStore):
    """Analyses in Redis: one string per record (expiring with it) and one hash of the
    unfinished ones, all under one hash tag so a transaction may touch them together."""

    ACTIVE_KEY = "meeple:{analyses}:active"

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    @classmethod
    def from_url(cls, url: str) -> RedisAnalysisStore:
        return cls(redis.Redis.from_url(url, decode_responses=True))

    @staticmethod
    def key(analysis_id: str) -> str:
        return f"meeple:{{analyses}}:analysis:{analysis_id}"

    def get(self, analysis_id: str, now: float) -> Record | None:
        raw = self.client.get(self.key(analysis_id))
        return None if raw is None else dict(json.loads(raw))

    def change(
        self,
        analysis_id: str,
        decide: Callable[[Record | None, list[Record]], Record | None],
        now: float,
    ) -> Record | None:
        key = self.key(analysis_id)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    # Watched: another change meanwhile fails the transaction; decide again.
                    pipe.watch(key, self.ACTIVE_KEY)
                    raw = pipe.get(key)
                    record = None if raw is None else dict(json.loads(raw))
                    active = [json.loads(value) for value in pipe.hvals(self.ACTIVE_KEY)]
                    stale = [r["id"] for r in active if not unfinished_now(r, now)]
                    changed = decide(record, [r for r in active if unfinished_now(r, now)])
                    pipe.multi()
                    if stale:
                        pipe.hdel(self.ACTIVE_KEY, *stale)
                    if changed is not None:
                        ttl = max(1, math.ceil(float(changed["expires_at"]) - now))
                        pipe.set(key, json.dumps(changed), ex=ttl)
                        if changed["status"] in ACTIVE:
                            pipe.hset(self.ACTIVE_KEY, analysis_id, json.dumps(changed))
                        else:
                            pipe.hdel(self.ACTIVE_KEY, analysis_id)
                    pipe.execute()
                    return changed if changed is not None else record
                except redis.WatchError:
                    continue

    def close(self) -> None:
        self.client.close()


def open_analysis_store(store_url: str, redis_url: str | None) -> AnalysisStore:
    """Where a deployment keeps its analyses: where it keeps its job state."""
    location = job_state_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        return SQLiteAnalysisStore(rest.removeprefix("/"))
    return RedisAnalysisStore.from_url(location)


# -- the job ---------------------------------------------------------------------------------


def _let_others_run() -> None:
    """Between two playouts: under ``meeple serve`` (gevent's worker, in-process jobs) this
    job's thread is a greenlet, and a search that never yields holds every request of the
    process, a cancel included, until it ends. It waits for the event loop to be idle (every
    request that can go on has gone on); in an RQ worker or a plain thread it does nothing."""
    if _cooperative():
        import gevent

        gevent.idle()


def _cooperative() -> bool:
    """Whether the standard library's threads are gevent's greenlets in this process."""
    import sys

    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("threading"))


def run_analysis(services: Any, analysis_id: str, run: int) -> str:
    """Run run number ``run`` of an analysis (the job); its status afterwards.

    The search reports its progress and asks whether it was cancelled at most every
    ``PROGRESS_EVERY`` seconds; it stops after ``MEEPLE_ANALYSIS_MAX_SECONDS`` whatever the
    request asked.
    """
    jobs = services.jobs
    store: AnalysisStore = jobs.analyses
    settings = jobs.settings

    def mine(record: Record | None) -> TypeGuard[Record]:
        return record is not None and record["run"] == run

    def start(record: Record | None, _: list[Record]) -> Record | None:
        if not mine(record) or record is None or record["status"] != "queued":
            return None
        lease = time.time() + settings.analysis_max_seconds + settings.analysis_lease
        return {**record, "status": "running", "started_at": _now(), "lease_until": lease}

    record = store.change(analysis_id, start, time.time())
    if not mine(record) or record is None or record["status"] != "running":
        return "gone" if record is None else str(record["status"])
    game_id = record["game_id"]
    announce = getattr(jobs, "announce_analysis", None)
    try:
        game: Game = services.folder.load(game_id, at=record["at"])
        seconds = min(record["budget"]["seconds"] or math.inf, settings.analysis_max_seconds)
        budget = Budget(record["budget"]["playouts"], seconds, time.monotonic)
        reported = {"at": time.monotonic(), "cancelled": False}

        def progress(done: int) -> None:
            _let_others_run()
            now = time.monotonic()
            if now - reported["at"] < PROGRESS_EVERY:
                return
            reported["at"] = now
            current = store.change(analysis_id, _progress(run, done), time.time())
            # Stopped when cancelled, or when a new run of it replaced this one.
            reported["cancelled"] = not (mine(current) and current["status"] == "running")
            if announce is not None and mine(current):
                announce(game_id, current)

        result = analyze(
            game.ruleset,
            game.state,
            record["seat"],
            budget,
            search_seed(record),
            progress=progress,
            cancelled=lambda: bool(reported["cancelled"]),
        )
        outcome = result.to_dict()
        for candidate in outcome["candidates"]:
            candidate["summary"] = _describe(game, record["seat"], candidate["action"])
        final = store.change(analysis_id, _finish(run, outcome, None), time.time())
    except Exception:
        log.exception("analysis %s of game %s failed", analysis_id, game_id)
        failure = "The analysis failed; asking again starts it anew."
        final = store.change(analysis_id, _finish(run, None, failure), time.time())
    if announce is not None and final is not None:
        announce(game_id, final)
    return "gone" if final is None else str(final["status"])


def _progress(run: int, done: int) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] != "running":
            return None
        return {**record, "progress": {**record["progress"], "done": done}}

    return decide


def _finish(
    run: int, outcome: dict[str, Any] | None, error: str | None
) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] not in (*ACTIVE, "cancelled"):
            return None
        if record["status"] == "cancelled":
            # Cancelled meanwhile: it stays cancelled, with what was found before it stopped.
            return {**record, "result": outcome} if record.get("result") is None else None
        status = "failed" if error is not None else "done"
        done = outcome["playouts"] if outcome is not None else record["progress"]["done"]
        return {
            **record,
            "status": status,
            "progress": {**record["progress"], "done": done},
            "result": outcome,
            "error": error,
            "finished_at": _now(),
        }

    return decide


def _describe(game: Game, seat: int, action: dict[str, Any]) -> str | None:
    """The game's own line for a candidate, if it has one (a courtesy: the action says all)."""
    try:
        return str(game.ruleset.summarize(game.state, {**action, "seat": seat}))
    except Exception:
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- HTTP --------------------------------------------------------------------------------------


class AnalysisRequestSchema(Schema):
    """POST /games/{id}/analyses: which decision to weigh, within what budget."""

    class Meta:
        unknown = RAISE

    at = fields.Integer(
        strict=True,
        validate=validate.Range(min=1),
        metadata={"description": "The decision after this event (default: the game's version)"},
    )
    seat = fields.Integer(
        strict=True,
        validate=validate.Range(min=0),
        metadata={"description": "The deciding seat (default: the token's seat)"},
    )
    playouts = fields.Integer(
        strict=True,
        validate=validate.Range(min=1),
        metadata={
            "description": "Playouts of the search (default MEEPLE_ANALYSIS_PLAYOUTS, at "
            "most MEEPLE_ANALYSIS_MAX_PLAYOUTS)"
        },
    )
    seconds = fields.Float(
        validate=validate.Range(min=0, min_inclusive=False),
        metadata={
            "description": "Stop after this long as well (at most MEEPLE_ANALYSIS_MAX_SECONDS, "
            "which bounds every analysis)"
        },
    )
    seed = fields.String(
        validate=validate.Regexp(r"^[\x21-\x7e]{1,64}$"),
        metadata={"description": "The search's seed (default \"0\"); the same seed and a "
                  "budget in playouts give the same analysis"},
    )  # fmt: skip


class AnalysisBudgetSchema(Schema):
    playouts = fields.Integer(required=True)
    seconds = fields.Float(required=True, allow_none=True)


class AnalysisProgressSchema(Schema):
    done = fields.Integer(required=True, metadata={"description": "Playouts done so far"})
    total = fields.Integer(required=True, metadata={"description": "Playouts asked for"})


class CandidateSchema(Schema):
    action = fields.Dict(required=True, metadata={"description": "The action, as posted"})
    summary = fields.String(allow_none=True, metadata={"description": "The game's own line"})
    playouts = fields.Integer(required=True)
    win_rate = fields.Float(required=True, metadata={"description": "Share of the wins"})
    win_interval = fields.List(
        fields.Float(), required=True, metadata={"description": "Wilson's 95 % interval"}
    )
    mean_score = fields.Float(required=True)
    score_interval = fields.List(
        fields.Float(),
        required=True,
        allow_none=True,
        metadata={"description": "Normal 95 % interval (null below 2 playouts)"},
    )
    mean_margin = fields.Float(
        required=True, metadata={"description": "Score minus the best other score"}
    )
    margin_interval = fields.List(fields.Float(), required=True, allow_none=True)


class AnalysisResultSchema(Schema):
    seat = fields.Integer(required=True)
    playouts = fields.Integer(required=True, metadata={"description": "Playouts made"})
    complete = fields.Boolean(
        required=True, metadata={"description": "False when it was cancelled before the end"}
    )
    pick = fields.Dict(required=True, metadata={"description": "The most played candidate"})
    candidates = fields.List(
        fields.Nested(CandidateSchema),
        required=True,
        metadata={"description": "The candidates tried, most played first"},
    )


class AnalysisSchema(Schema):
    id = fields.String(required=True)
    game_id = fields.String(required=True)
    at = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    budget = fields.Nested(AnalysisBudgetSchema, required=True)
    seed = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    progress = fields.Nested(AnalysisProgressSchema, required=True)
    created_at = fields.String(required=True)
    finished_at = fields.String(required=True, allow_none=True)
    expires_at = fields.Integer(
        required=True, metadata={"description": "Unix time (seconds) it is forgotten at"}
    )
    result = fields.Nested(
        AnalysisResultSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Once done (and what was found when cancelled)"},
    )
    error = fields.String(required=True, allow_none=True)


def public_analysis(record: Record) -> Record:
    """What GET shows of a record (not who asked, nor the lease)."""
    shown = {name: record[name] for name in AnalysisSchema().fields if name in record}
    shown["expires_at"] = int(record["expires_at"])
    return shown


def _viewer(game: Game) -> Viewer:
    return resolve_viewer(
        game.meta, request.headers.get("Authorization"), current_services().config.admin_key
    )


def _may_read(game: Game, viewer: Viewer, seat: int, at: int) -> bool:
    """Whether ``viewer`` may ask for or read ``seat``'s analysis after event ``at``."""
    if viewer.admin:
        return True
    if at < game.sealed_until:
        return False
    finished = bool(game.ruleset.status(game.state).get("finished"))
    return finished or viewer.holder or viewer.seat == seat


def _refuse(game: Game, viewer: Viewer, at: int) -> ApiError | AuthError:
    if at < game.sealed_until and not viewer.admin:
        return ApiError(
            403,
            "sealed_history",
            f"Up to event {game.sealed_until} this branch holds the secrets of a game that "
            "was still being played when it was made; only the admin may analyse there.",
        )
    if not viewer.authenticated:
        return AuthError(
            "missing_token",
            "While the game is played only a seat may analyse its own decisions: send its "
            "token as 'Authorization: Bearer <token>'.",
        )
    return ApiError(
        403,
        "not_your_seat",
        "While the game is played a seat may analyse only its own decisions.",
    )


def _requester(viewer: Viewer) -> str:
    """Whom the per-requester cap counts: the token (hashed), else the client's address."""
    try:
        token = bearer_token(request.headers.get("Authorization"))
    except AuthError:
        token = None
    if token is not None:
        return f"token:{token_key(token)}"
    return f"address:{client_address(request.remote_addr)}"


@bp.post("/games/<game_id>/analyses")
def post_analysis(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Ask for the analysis of a seat's decision (a background job).
    ---
    post:
      operationId: createAnalysis
      codes:
        403: [not_your_seat, sealed_history]
        422: [budget_too_large, no_decision]
        429: [too_many_analyses]
      tags: [analysis]
      summary: Analyse a decision
      description: >
        Weighs each of ``seat``'s candidate actions after event ``at`` by information-set
        MCTS (docs/analysis.md). While the game is played, only that seat's token may ask,
        and the search sees the position as that seat saw it; once the game is over anyone
        may. Identical requests (game, at, seat, budget, seed) share one analysis: its id
        is derived from them, so asking again answers with the same ``Location`` (200 once
        it is done, 202 while it is queued or running; a cancelled or failed one, or one
        whose worker died, starts anew). Unfinished analyses are capped per game
        (``MEEPLE_ANALYSES_PER_GAME``), per token or address
        (``MEEPLE_ANALYSES_PER_REQUESTER``) and in all (``MEEPLE_ANALYSES_TOTAL``): 429
        ``too_many_analyses`` with ``Retry-After``.
      security: [{}, {seatToken: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: AnalysisRequestSchema
      responses:
        200:
          description: The same request was analysed already; here is its result.
          headers:
            Location: Location
          content:
            application/json:
              schema: AnalysisSchema
        202:
          description: Queued or running; follow ``Location``.
          headers:
            Location: Location
          content:
            application/json:
              schema: AnalysisSchema
        401: Unauthorized
        403: Forbidden
        422: UnprocessableEntity
        429: TooManyRequests
    """
    services = current_services()
    settings = services.jobs.settings
    latest = commands.load_game(services, game_id)
    body = AnalysisRequestSchema().load(json_body())
    viewer = _viewer(latest)
    at = body.get("at", latest.version)
    if at > latest.version:
        raise ApiError(
            422,
            "invalid_body",
            f"at must be an event of this game, from 1 to {latest.version}.",
            errors={"at": [f"From 1 to {latest.version}."]},
        )
    seat = body.get("seat", viewer.seat)
    finished = bool(latest.ruleset.status(latest.state).get("finished"))
    if seat is None:
        if not (finished or viewer.authenticated):
            raise _refuse(latest, viewer, at)
        raise ApiError(
            422, "invalid_body", "Name the seat to analyse.", errors={"seat": ["Required."]}
        )
    if not _may_read(latest, viewer, seat, at):
        raise _refuse(latest, viewer, at)
    playouts = body.get("playouts", settings.analysis_playouts)
    _within("playouts", playouts, settings.analysis_max_playouts)
    seconds = body.get("seconds")
    if seconds is not None:
        _within("seconds", seconds, settings.analysis_max_seconds)
    game = latest if at == latest.version else commands.load_game(services, game_id, at=at)
    if not 0 <= seat < len(game.meta["players"]):
        raise ApiError(
            422, "no_such_seat", f"This game has seats 0 to {len(game.meta['players']) - 1}."
        )
    status = game.ruleset.status(game.state)
    if status.get("finished") or not game.ruleset.legal_actions(game.state, seat):
        raise ApiError(422, "no_decision", f"Seat {seat} has no decision to make after event {at}.")
    seed = body.get("seed", DEFAULT_SEED)
    aid = analysis_id(game_id, at, seat, playouts, seconds, seed)
    caps = Caps(
        settings.analyses_per_game, settings.analyses_per_requester, settings.analyses_total
    )
    requester = _requester(viewer)
    now = time.time()
    outcome: dict[str, Any] = {}

    def ask(record: Record | None, unfinished: list[Record]) -> Record | None:
        outcome.clear()
        lapsed = record is not None and record["status"] in ACTIVE
        lapsed = lapsed and record is not None and not unfinished_now(record, now)
        if record is not None and record["status"] not in ("cancelled", "failed") and not lapsed:
            return None  # the same request: share it
        refusal = _over_cap(caps, game_id, requester, unfinished)
        if refusal is not None:
            outcome["refusal"] = refusal
            return None
        outcome["started"] = True
        return {
            "id": aid,
            "game_id": game_id,
            "at": at,
            "seat": seat,
            "budget": {"playouts": playouts, "seconds": seconds},
            "seed": seed,
            "status": "queued",
            "progress": {"done": 0, "total": playouts},
            "created_at": _now(),
            "started_at": None,
            "finished_at": None,
            "result": None,
            "error": None,
            "requester": requester,
            "run": (record["run"] + 1) if record is not None else 1,
            "lease_until": now + settings.analysis_lease + settings.analysis_max_seconds,
            "expires_at": now + settings.analysis_ttl,
        }

    record = services.jobs.analyses.change(aid, ask, now)
    if "refusal" in outcome:
        retry = max(1, math.ceil(settings.analysis_max_seconds))
        raise ApiError(
            429,
            "too_many_analyses",
            outcome["refusal"] + f" Wait for one to finish or cancel it (try in {retry} s).",
            headers={"Retry-After": str(retry)},
        )
    assert record is not None
    if outcome.get("started"):
        services.jobs.enqueue_analysis(aid, record["run"])
    location = url_for("analyses.get_analysis", game_id=game_id, analysis_id=aid)
    code = 200 if record["status"] == "done" else 202
    return jsonify(public_analysis(record)), code, {"Location": location}


def _within(name: str, value: float, cap: float) -> None:
    if value > cap:
        raise ApiError(
            422,
            "budget_too_large",
            f"{name} may be at most {cap:g}.",
            errors={name: [f"At most {cap:g}."]},
            maximum=cap,
        )


def _over_cap(caps: Caps, game_id: str, requester: str, unfinished: list[Record]) -> str | None:
    if sum(r["requester"] == requester for r in unfinished) >= caps.per_requester:
        return f"You have {caps.per_requester} analyses queued or running, the most allowed."
    if sum(r["game_id"] == game_id for r in unfinished) >= caps.per_game:
        return f"This game has {caps.per_game} analyses queued or running, the most allowed."
    if len(unfinished) >= caps.total:
        return f"The service runs {caps.total} analyses, the most it allows at once."
    return None


def _readable(game_id: str, analysis_id: str) -> Record:
    """The analysis, if this request may read it: else 401 (no token while the game is
    played) or 404 (missing, or another seat's: its existence is that seat's business)."""
    services = current_services()
    game = commands.load_game(services, game_id)
    viewer = _viewer(game)
    finished = bool(game.ruleset.status(game.state).get("finished"))
    if not finished and not viewer.authenticated:
        raise _refuse(game, viewer, game.version)
    record = services.jobs.analyses.get(analysis_id, time.time())
    if (
        record is None
        or record["game_id"] != game_id
        or not _may_read(game, viewer, record["seat"], record["at"])
    ):
        raise ApiError(404, "not_found", "This game has no such analysis you may read.")
    return record


@bp.get("/games/<game_id>/analyses/<analysis_id>")
def get_analysis(game_id: str, analysis_id: str) -> Response:
    """An analysis: its progress, then its result.
    ---
    get:
      operationId: getAnalysis
      codes: {404: [not_found]}
      tags: [analysis]
      summary: An analysis and its result
      description: >
        ``status`` is ``queued``, ``running`` (``progress``: playouts done of the total),
        ``done`` (``result``: each candidate's playouts, win rate, mean score and margin with
        95 % intervals, most played first, and the pick), ``cancelled`` (with what was found
        until then) or ``failed``. While the game is played only the analysed seat may read
        it (another seat gets 404). It is forgotten at ``expires_at``.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The analysis.
          content:
            application/json:
              schema: AnalysisSchema
        401: Unauthorized
    """
    record = _readable(game_id, analysis_id)
    response = jsonify(public_analysis(_lapsed(record)))
    response.headers["Cache-Control"] = "private, no-cache"
    response.headers["Vary"] = "Authorization"
    return response


def _lapsed(record: Record) -> Record:
    """A record left unfinished past its lease (its worker died) reads as failed."""
    if record["status"] in ACTIVE and not unfinished_now(record, time.time()):
        return {**record, "status": "failed", "error": "The analysis stopped; ask again."}
    return record


@bp.delete("/games/<game_id>/analyses/<analysis_id>")
def delete_analysis(game_id: str, analysis_id: str) -> Response:
    """Cancel an analysis.
    ---
    delete:
      operationId: cancelAnalysis
      codes: {404: [not_found]}
      tags: [analysis]
      summary: Cancel an analysis
      description: >
        A queued or running analysis stops within a second, keeping what it found so far
        (``result.complete`` false); a finished one is left as it is. Whoever may read an
        analysis may cancel it.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The analysis after the request.
          content:
            application/json:
              schema: AnalysisSchema
        401: Unauthorized
    """
    _readable(game_id, analysis_id)
    services = current_services()

    def cancel(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["status"] not in ACTIVE:
            return None
        return {**record, "status": "cancelled", "finished_at": _now()}

    record = services.jobs.analyses.change(analysis_id, cancel, time.time())
    if record is None:
        raise ApiError(404, "not_found", "This game has no such analysis you may read.")
    announce = getattr(services.jobs, "announce_analysis", None)
    if announce is not None and record["status"] == "cancelled":
        announce(game_id, record)
    return jsonify(public_analysis(record))


@bp.post("/games/<game_id>/analyses/<analysis_id>/cancel")
def post_cancel_analysis(game_id: str, analysis_id: str) -> Response:
    """Cancel an analysis (for clients that cannot send DELETE).
    ---
    post:
      operationId: postCancelAnalysis
      codes: {404: [not_found]}
      tags: [analysis]
      summary: Cancel an analysis
      description: The same as ``DELETE /games/{game_id}/analyses/{analysis_id}``.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The analysis after the request.
          content:
            application/json:
              schema: AnalysisSchema
        401: Unauthorized
    """
    return delete_analysis(game_id, analysis_id)


# -- the live stream -----------------------------------------------------------------------------


def stream_note(record: Record) -> Record:
    """What an ``analysis`` message of the live stream carries (the record without its result:
    GET it once ``status`` says it is done), and the seat that may see it."""
    return {
        "id": record["id"],
        "seat": record["seat"],
        "at": record["at"],
        "status": record["status"],
        "progress": record["progress"],
    }
