"""``/games/{id}/analyses``: what-if analysis of a seat's decision over HTTP (docs/analysis.md).

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
seat of a game, per requester (token, else address), per owner (the address, whatever tokens
it sends) and in total (429 ``too_many_analyses``), POST is rate-limited
(``MEEPLE_RATE_LIMIT_ANALYSES``), and results expire after ``MEEPLE_ANALYSIS_TTL`` seconds.
Records live where the job state does (Redis with
``MEEPLE_REDIS_URL``, else the SQLite file beside the event store).
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from flask import Blueprint, Response, jsonify, url_for
from marshmallow import RAISE, Schema, fields, validate

from service.application import commands
from service.application.analyses import (
    ACTIVE,
    DEFAULT_SEED,
    STATUSES,
    Caps,
    Record,
    analysis_id,
    now_text,
    unfinished_now,
)
from service.http.analysis_access import (
    lapsed,
    may_read,
    over_cap,
    refuse,
    requester_of,
    viewer_of,
    within,
)
from service.http.errors import ApiError
from service.http.schemas import ActionField
from service.http.shared import json_body, request_owner
from service.http.shared import services as current_services

log = logging.getLogger(__name__)

bp = Blueprint("analyses", __name__)


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
    action = ActionField(required=True, metadata={"description": "The action, as posted"})
    summary = fields.String(
        allow_none=True,
        metadata={
            "description": "The game's own line for the action, as the analysing seat may "
            "read it (its own secret plan included); no two candidates read alike"
        },
    )
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
    pick = ActionField(
        required=True, metadata={"description": "The most played candidate's action"}
    )
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
    queue_position = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "While queued, its place in the analyses' queue (1: the next one "
            "a worker takes); null once it runs or ends"
        },
    )


def public_analysis(record: Record) -> Record:
    """What GET shows of a record (not who asked, nor the lease), with its place in the queue
    while it waits."""
    shown = {name: record[name] for name in AnalysisSchema().fields if name in record}
    shown["expires_at"] = int(record["expires_at"])
    shown["queue_position"] = None
    if record["status"] == "queued":
        jobs = current_services().jobs
        shown["queue_position"] = jobs.analysis_position(record["id"], record["run"])
    return shown


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
        503: [no_analysis_worker]
      tags: [analysis]
      summary: Analyse a decision
      description: >
        Weighs each of ``seat``'s candidate actions after event ``at`` by information-set
        MCTS (docs/analysis.md). While the game is played, only that seat's token may ask,
        and the search sees the position as that seat saw it; once the game is over anyone
        may. Identical requests (game, at, seat, budget, seed) share one analysis: its id
        is derived from them, so asking again answers with the same ``Location`` (200 once
        it is done, 202 while it is queued or running; a cancelled or failed one, or one
        whose worker died, starts anew). Unfinished analyses are capped per seat of a game
        (``MEEPLE_ANALYSES_PER_GAME``: counted per seat, so no seat learns that a rival is
        analysing), per token or address
        (``MEEPLE_ANALYSES_PER_REQUESTER``), per owner, the client address whatever tokens
        it sends (``MEEPLE_ANALYSES_PER_OWNER``; not for the admin), and in all
        (``MEEPLE_ANALYSES_TOTAL``): 429 ``too_many_analyses`` with ``Retry-After``. Queued
        analyses are taken round-robin across owners. While it waits for a worker,
        ``queue_position`` says its place in the queue; with no worker taking analyses at all
        (a Redis deployment without an analyses worker), 503 ``no_analysis_worker``.
      security: [{}, {seatToken: []}, {appKey: []}, {adminKey: []}]
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
        503: ServiceUnavailable
    """
    services = current_services()
    settings = services.jobs.settings
    latest = commands.load_game(services, game_id)
    body = AnalysisRequestSchema().load(json_body())
    viewer = viewer_of(latest)
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
            raise refuse(latest, viewer, at)
        raise ApiError(
            422, "invalid_body", "Name the seat to analyse.", errors={"seat": ["Required."]}
        )
    if not may_read(latest, viewer, seat, at):
        raise refuse(latest, viewer, at)
    playouts = body.get("playouts", settings.analysis_playouts)
    within("playouts", playouts, settings.analysis_max_playouts)
    seconds = body.get("seconds")
    if seconds is not None:
        within("seconds", seconds, settings.analysis_max_seconds)
    game = latest if at == latest.version else commands.load_game(services, game_id, at=at)
    if not 0 <= seat < len(game.meta["players"]):
        raise ApiError(
            422, "no_such_seat", f"This game has seats 0 to {len(game.meta['players']) - 1}."
        )
    status = game.ruleset.status(game.state)
    if status.get("finished") or not game.ruleset.legal_actions(game.state, seat):
        raise ApiError(422, "no_decision", f"Seat {seat} has no decision to make after event {at}.")
    if not services.jobs.serves("analyses"):
        raise ApiError(
            503,
            "no_analysis_worker",
            "No worker takes analyses now, so this one would never start: the operator runs "
            "`meeple worker` (or `meeple worker --queue analyses`) beside the API.",
            headers={"Retry-After": "60"},
        )
    seed = body.get("seed", DEFAULT_SEED)
    aid = analysis_id(game_id, at, seat, playouts, seconds, seed)
    owner = request_owner(viewer)
    caps = Caps(
        settings.analyses_per_game,
        settings.analyses_per_requester,
        settings.analyses_total,
        settings.analyses_per_owner if owner.capped else None,
    )
    requester = requester_of(viewer)
    now = time.time()
    outcome: dict[str, Any] = {}

    def ask(record: Record | None, unfinished: list[Record]) -> Record | None:
        outcome.clear()
        expired = record is not None and record["status"] in ACTIVE
        expired = expired and record is not None and not unfinished_now(record, now)
        if record is not None and record["status"] not in ("cancelled", "failed") and not expired:
            return None  # the same request: share it
        refusal = over_cap(caps, game_id, seat, requester, owner.key, unfinished)
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
            "created_at": now_text(),
            "started_at": None,
            "finished_at": None,
            "result": None,
            "error": None,
            "requester": requester,
            "owner": owner.key,
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
            outcome["refusal"] + " Wait for one to finish or cancel it (Retry-After says when).",
            headers={"Retry-After": str(retry)},
        )
    assert record is not None
    if outcome.get("started"):
        services.jobs.enqueue_analysis(aid, record["run"])
    location = url_for("analyses.get_analysis", game_id=game_id, analysis_id=aid)
    code = 200 if record["status"] == "done" else 202
    return jsonify(public_analysis(record)), code, {"Location": location}


def _readable(game_id: str, analysis_id: str) -> Record:
    """The analysis, if this request may read it: else 401 (no token while the game is
    played) or 404 (missing, or another seat's: its existence is that seat's business)."""
    services = current_services()
    game = commands.load_game(services, game_id)
    viewer = viewer_of(game)
    finished = bool(game.ruleset.status(game.state).get("finished"))
    if not finished and not viewer.authenticated:
        raise refuse(game, viewer, game.version)
    record = services.jobs.analyses.get(analysis_id, time.time())
    if (
        record is None
        or record.get("kind") == "review"
        or record["game_id"] != game_id
        or not may_read(game, viewer, record["seat"], record["at"])
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
    response = jsonify(public_analysis(lapsed(record)))
    response.headers["Cache-Control"] = "private, no-cache"
    response.headers["Vary"] = "Authorization"
    return response


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
        return {**record, "status": "cancelled", "finished_at": now_text()}

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
