"""``/games/{id}/reviews``: a review of one seat's whole game (docs/analysis.md, "Game review").

``POST`` asks for it: one job on the analyses' queue, counted once under the analyses' caps and
rate limit, that judges every decision of the seat up to now (the move played, the best move
found, the evaluation before and after, the loss and a mark) and evaluates the position after
every event. ``GET`` shows its progress and the partial result as it grows, then the whole.

The review is a read model of the game's events: its id is a hash of the game, the seat, the
last event it covers and the budget, so a finished game's review is computed once and kept
(not expiring) for everyone who asks; a live game's is its seat's secret and expires like an
analysis. Who may ask and read is as for analyses (service.http.resources.analyses).
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from flask import Blueprint, Response, jsonify, url_for
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import canonical_json
from projections.agents.review import EVALUATIONS, MARKS, SEARCH_PLAYOUTS
from service.application import commands
from service.application.analyses import (
    ACTIVE,
    DEFAULT_SEED,
    STATUSES,
    Caps,
    Record,
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
from service.http.shared import json_body, request_owner
from service.http.shared import services as current_services

bp = Blueprint("reviews", __name__)

#: The most paired playouts a review may ask for one evaluation.
MAX_EVALUATIONS = 64
#: The first event a review covers (every review covers the game from its start).
COVERS_FROM = 1
#: How long a finished game's review is kept: for good (ten years), it never changes.
FINISHED_KEPT = 10 * 365 * 86400.0


def review_id(game_id: str, seat: int, at: int, playouts: int, evaluations: int,
              seed: str) -> str:  # fmt: skip
    """The id of the review with these inputs: identical requests share it (and its result)."""
    inputs = {"game": game_id, "seat": seat, "at": at, "playouts": playouts}
    inputs |= {"evaluations": evaluations, "seed": seed}
    return hashlib.sha256(b"meeple review\0" + canonical_json(inputs)).hexdigest()[:32]


class ReviewRequestSchema(Schema):
    """POST /games/{id}/reviews: whose game to review, within what budget."""

    class Meta:
        unknown = RAISE

    seat = fields.Integer(
        strict=True,
        validate=validate.Range(min=0),
        metadata={"description": "The reviewed seat (default: the token's seat)"},
    )
    playouts = fields.Integer(
        strict=True,
        validate=validate.Range(min=1),
        metadata={
            "description": f"Search playouts of each decision (default {SEARCH_PLAYOUTS}, at "
            "most MEEPLE_REVIEW_MAX_PLAYOUTS)"
        },
    )
    evaluations = fields.Integer(
        strict=True,
        validate=validate.Range(min=1),
        metadata={
            "description": f"Paired playouts of each evaluation (default {EVALUATIONS}, at "
            f"most {MAX_EVALUATIONS})"
        },
    )
    seed = fields.String(
        validate=validate.Regexp(r"^[\x21-\x7e]{1,64}$"),
        metadata={"description": 'The searches\' seed (default "0")'},
    )


class WorthSchema(Schema):
    win = fields.Float(required=True, metadata={"description": "Expected share of the win"})
    margin = fields.Float(
        required=True, metadata={"description": "Expected final score minus the best other's"}
    )


class EvaluationPointSchema(WorthSchema):
    seq = fields.Integer(required=True, metadata={"description": "After this event"})
    proven = fields.Boolean(
        required=True, metadata={"description": "The game's own final result, not an estimate"}
    )


class ReviewMoveSchema(Schema):
    seq = fields.Integer(required=True, metadata={"description": "The event of the move"})
    played = fields.Dict(required=True, metadata={"description": "The action played"})
    played_summary = fields.String(required=True)
    best = fields.Dict(required=True, metadata={"description": "The best action found"})
    best_summary = fields.String(required=True)
    forced = fields.Boolean(required=True, metadata={"description": "Only one action was legal"})
    before = fields.Nested(
        WorthSchema, required=True, metadata={"description": "The position's worth: the best's"}
    )
    after = fields.Nested(
        WorthSchema, required=True, metadata={"description": "The worth of the move played"}
    )
    loss = fields.Float(
        required=True, metadata={"description": "Expected margin lost against the best"}
    )
    win_lost = fields.Float(required=True, metadata={"description": "Share of a win lost"})
    mark = fields.String(
        required=True, allow_none=True, validate=validate.OneOf(MARKS),
        metadata={"description": "By the game's thresholds on ``loss``"},
    )  # fmt: skip
    accuracy = fields.Float(required=True, metadata={"description": "0-100, from win_lost"})


class MarkCountsSchema(Schema):
    inaccuracy = fields.Integer(required=True)
    mistake = fields.Integer(required=True)
    blunder = fields.Integer(required=True)


class ThresholdsSchema(Schema):
    inaccuracy = fields.Float(required=True)
    mistake = fields.Float(required=True)
    blunder = fields.Float(required=True)


class ReviewResultSchema(Schema):
    seat = fields.Integer(required=True)
    complete = fields.Boolean(
        required=True, metadata={"description": "False while it runs, or when it was stopped"}
    )
    accuracy = fields.Float(
        required=True, allow_none=True, metadata={"description": "Mean of the unforced moves'"}
    )
    marks = fields.Nested(MarkCountsSchema, required=True)
    decisions = fields.Integer(required=True, metadata={"description": "Moves reviewed so far"})
    thresholds = fields.Nested(
        ThresholdsSchema,
        required=True,
        metadata={"description": "Margin lost from which each mark is given (this game's)"},
    )
    moves = fields.List(fields.Nested(ReviewMoveSchema), required=True)
    evaluations = fields.List(
        fields.Nested(EvaluationPointSchema),
        required=True,
        metadata={"description": "The reviewed seat's evaluation after every event"},
    )


class ReviewBudgetSchema(Schema):
    playouts = fields.Integer(required=True)
    evaluations = fields.Integer(required=True)


class ReviewProgressSchema(Schema):
    done = fields.Integer(required=True, metadata={"description": "Events reviewed so far"})
    total = fields.Integer(required=True, metadata={"description": "Events to review"})


class ReviewSchema(Schema):
    id = fields.String(required=True)
    game_id = fields.String(required=True)
    at = fields.Integer(required=True, metadata={"description": "The last event it covers"})
    seat = fields.Integer(required=True)
    budget = fields.Nested(ReviewBudgetSchema, required=True)
    seed = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    progress = fields.Nested(ReviewProgressSchema, required=True)
    created_at = fields.String(required=True)
    finished_at = fields.String(required=True, allow_none=True)
    expires_at = fields.Integer(
        required=True, metadata={"description": "Unix time (seconds) it is forgotten at"}
    )
    result = fields.Nested(
        ReviewResultSchema,
        required=True,
        allow_none=True,
        metadata={"description": "What was reviewed so far (partial while it runs)"},
    )
    error = fields.String(required=True, allow_none=True)


def public_review(record: Record) -> Record:
    shown = {name: record[name] for name in ReviewSchema().fields if name in record}
    shown["expires_at"] = int(record["expires_at"])
    return shown


@bp.post("/games/<game_id>/reviews")
def post_review(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Ask for the review of a seat's game (a background job).
    ---
    post:
      operationId: createReview
      codes:
        403: [not_your_seat, sealed_history]
        422: [budget_too_large, no_such_seat]
        429: [too_many_analyses]
        503: [no_analysis_worker]
      tags: [analysis]
      summary: Review a seat's game
      description: >
        One job, counted once under the analyses' caps and rate limit, that judges every
        decision of ``seat`` up to the game's current event (the move played, the best move
        found, the evaluation before and after, the loss and a mark by the game's thresholds)
        and evaluates the position after every event, as that seat saw it
        (docs/analysis.md, "Game review"). While the game is played only that seat's token
        may ask; once it is over anyone may, for any seat, and the review is kept for good:
        identical requests share it (200 once it is done, 202 while it runs).
      security: [{}, {seatToken: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: ReviewRequestSchema
      responses:
        200:
          description: The same review was made already; here it is.
          headers:
            Location: Location
          content:
            application/json:
              schema: ReviewSchema
        202:
          description: Queued or running; follow ``Location``.
          headers:
            Location: Location
          content:
            application/json:
              schema: ReviewSchema
        401: Unauthorized
        403: Forbidden
        422: UnprocessableEntity
        429: TooManyRequests
        503: ServiceUnavailable
    """
    services = current_services()
    settings = services.jobs.settings
    game = commands.load_game(services, game_id)
    body = ReviewRequestSchema().load(json_body())
    viewer = viewer_of(game)
    at = game.version
    finished = bool(game.ruleset.status(game.state).get("finished"))
    seat = body.get("seat", viewer.seat)
    if seat is None:
        if not (finished or viewer.authenticated):
            raise refuse(game, viewer, at)
        raise ApiError(
            422, "invalid_body", "Name the seat to review.", errors={"seat": ["Required."]}
        )
    # A review covers the game from its first event: in a branch whose first events hold the
    # secrets of a game still played (its sealed part), only the admin may review.
    if not may_read(game, viewer, seat, COVERS_FROM):
        raise refuse(game, viewer, COVERS_FROM)
    if not 0 <= seat < len(game.meta["players"]):
        raise ApiError(
            422, "no_such_seat", f"This game has seats 0 to {len(game.meta['players']) - 1}."
        )
    playouts = body.get("playouts", SEARCH_PLAYOUTS)
    within("playouts", playouts, settings.review_max_playouts)
    evaluations = body.get("evaluations", EVALUATIONS)
    within("evaluations", evaluations, MAX_EVALUATIONS)
    if not services.jobs.serves("analyses"):
        raise ApiError(
            503,
            "no_analysis_worker",
            "No worker takes analyses now, so this review would never start: the operator "
            "runs `meeple worker` (or `meeple worker --queue analyses`) beside the API.",
            headers={"Retry-After": "60"},
        )
    seed = body.get("seed", DEFAULT_SEED)
    rid = review_id(game_id, seat, at, playouts, evaluations, seed)
    owner = request_owner(viewer)
    caps = Caps(
        settings.analyses_per_game,
        settings.analyses_per_requester,
        settings.analyses_total,
        settings.analyses_per_owner if owner.capped else None,
    )
    requester = requester_of(viewer)
    now = time.time()
    kept = FINISHED_KEPT if finished else settings.analysis_ttl
    outcome: dict[str, Any] = {}

    def ask(record: Record | None, unfinished: list[Record]) -> Record | None:
        outcome.clear()
        expired = record is not None and record["status"] in ACTIVE
        expired = expired and record is not None and not unfinished_now(record, now)
        if record is not None and record["status"] not in ("cancelled", "failed") and not expired:
            return None  # the same review: share it
        refusal = over_cap(caps, game_id, seat, requester, owner.key, unfinished)
        if refusal is not None:
            outcome["refusal"] = refusal
            return None
        outcome["started"] = True
        return {
            "id": rid,
            "kind": "review",
            "game_id": game_id,
            "at": at,
            "seat": seat,
            "budget": {"playouts": playouts, "evaluations": evaluations},
            "seed": seed,
            "status": "queued",
            "progress": {"done": 0, "total": at},
            "created_at": now_text(),
            "started_at": None,
            "finished_at": None,
            "result": None,
            "error": None,
            "requester": requester,
            "owner": owner.key,
            "run": (record["run"] + 1) if record is not None else 1,
            "lease_until": now + settings.analysis_lease + settings.review_max_seconds,
            "expires_at": now + kept,
        }

    record = services.jobs.analyses.change(rid, ask, now)
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
        services.jobs.enqueue_analysis(rid, record["run"])
    location = url_for("reviews.get_review", game_id=game_id, review_id=rid)
    code = 200 if record["status"] == "done" else 202
    return jsonify(public_review(record)), code, {"Location": location}


def _readable(game_id: str, review_id: str) -> Record:
    services = current_services()
    game = commands.load_game(services, game_id)
    viewer = viewer_of(game)
    finished = bool(game.ruleset.status(game.state).get("finished"))
    if not finished and not viewer.authenticated:
        raise refuse(game, viewer, game.version)
    record = services.jobs.analyses.get(review_id, time.time())
    if (
        record is None
        or record.get("kind") != "review"
        or record["game_id"] != game_id
        or not may_read(game, viewer, record["seat"], COVERS_FROM)
    ):
        raise ApiError(404, "not_found", "This game has no such review you may read.")
    return record


@bp.get("/games/<game_id>/reviews/<review_id>")
def get_review(game_id: str, review_id: str) -> Response:
    """A review: its progress and partial result, then the whole.
    ---
    get:
      operationId: getReview
      codes: {404: [not_found]}
      tags: [analysis]
      summary: A game review
      description: >
        ``status`` as for analyses; ``result`` grows while it runs (``complete`` false) and
        holds every move of the seat once done. While the game is played only the reviewed
        seat may read it (another seat gets 404).
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The review.
          content:
            application/json:
              schema: ReviewSchema
        401: Unauthorized
    """
    record = _readable(game_id, review_id)
    response = jsonify(public_review(lapsed(record)))
    response.headers["Cache-Control"] = "private, no-cache"
    response.headers["Vary"] = "Authorization"
    return response


@bp.delete("/games/<game_id>/reviews/<review_id>")
def delete_review(game_id: str, review_id: str) -> Response:
    """Cancel a review.
    ---
    delete:
      operationId: cancelReview
      codes: {404: [not_found]}
      tags: [analysis]
      summary: Cancel a review
      description: >
        A queued or running review stops after the event it is reviewing, keeping what it
        found (``result.complete`` false); a finished one is left as it is.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The review after the request.
          content:
            application/json:
              schema: ReviewSchema
        401: Unauthorized
    """
    _readable(game_id, review_id)
    services = current_services()

    def cancel(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["status"] not in ACTIVE:
            return None
        return {**record, "status": "cancelled", "finished_at": now_text()}

    record = services.jobs.analyses.change(review_id, cancel, time.time())
    if record is None:
        raise ApiError(404, "not_found", "This game has no such review you may read.")
    announce = getattr(services.jobs, "announce_analysis", None)
    if announce is not None and record["status"] == "cancelled":
        announce(game_id, record)
    return jsonify(public_review(record))
