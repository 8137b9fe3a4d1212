"""Time travel over HTTP: a game's state after any event (``GET /games/{id}/state?at=N``,
which the games resource hands here) and its timeline of one-line summaries (docs/history.md)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify
from marshmallow import RAISE, Schema, fields, validate

from projections.fold import Game
from projections.history import timeline
from service.http.read_cache import spectators_answer
from service.http.schemas import ActorSchema
from service.http.shared import (
    asker_of,
    at_most,
    etag,
    event_number,
    finished,
    load_game,
    load_query,
    sealed_history,
    services,
    status_of,
)

bp = Blueprint("time_travel", __name__)

# -- time travel -----------------------------------------------------------------------


def state_at(game_id: str, raw_at: str) -> Response:
    """GET /games/{id}/state?at=N (the games resource delegates here when ``at`` is given)."""
    latest = load_game(game_id)
    asker = asker_of(latest)
    if asker.anonymous:
        # Event N never changes, nor what a spectator sees after it: answered once.
        version = event_number(raw_at, "at", latest.version)
        return spectators_answer(
            ("state", game_id, version),
            lambda: state_view(game_id, latest, None, raw_at, False),
        )
    return state_view(game_id, latest, asker.seat, raw_at, asker.admin)


def state_view(
    game_id: str, latest: Game, seat: int | None, raw_at: str | None, admin: bool
) -> Response:
    """The state now or after event ``raw_at``, as ``seat`` (None: a spectator) sees it."""
    game, version = latest, latest.version
    if raw_at is not None:
        version = event_number(raw_at, "at", latest.version)
        if version < latest.sealed_until and not admin:
            raise sealed_history(latest)
        game = load_game(game_id, at=version)
    response = jsonify(
        {
            "id": game_id,
            "version": version,
            "seat": seat,
            "status": status_of(game),
            "state": game.ruleset.view(game.state, seat),
        }
    )
    response.headers["ETag"] = etag(version)  # the version this view is at
    # What this viewer may see depends on the token; event N itself never changes.
    response.headers["Vary"] = "Authorization"
    response.headers["Cache-Control"] = "private, no-cache" if raw_at is None else "private"
    return response


class TimelineQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = fields.Integer(load_default=0, validate=validate.Range(0, 2**53))
    # The upper bound is a setting (MEEPLE_MAX_PAGE), checked by the view.
    limit = fields.Integer(load_default=500, validate=validate.Range(min=1))


class TimelineEntrySchema(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    actor = fields.Nested(
        ActorSchema, required=True, metadata={"description": '{"seat": n} or {"system": name}'}
    )
    round = fields.Integer(required=True, allow_none=True)
    phase = fields.String(required=True, allow_none=True)
    summary = fields.String(required=True, metadata={"description": "One line a person reads"})
    scores = fields.List(
        fields.Float(),
        required=True,
        allow_none=True,
        metadata={"description": "Each seat's public score after the event (null if unknown)"},
    )
    recorded_at = fields.String(required=True)


class TimelineSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "The game's version now"})
    events = fields.List(fields.Nested(TimelineEntrySchema), required=True)
    next_after = fields.Integer(
        required=True, allow_none=True, metadata={"description": "after= of the next page"}
    )


@bp.get("/games/<game_id>/timeline")
def get_timeline(game_id: str) -> Response:
    """Every event with its round, phase, actor, a one-line summary and the scores after it.
    ---
    get:
      operationId: getTimeline
      codes: {422: [limit_too_large]}
      tags: [history]
      summary: The game's timeline
      description: >
        Everything here is public: each event's one-line summary (from the game's rules),
        the round and phase and every seat's public score after it, so a client can draw a
        score chart and jump to any move with ``state?at=N``. Pages of ``limit`` events
        after ``after`` (at most ``MEEPLE_MAX_PAGE``, default 1000: more is 422
        ``limit_too_large``); ``next_after`` is the next page's ``after``. A page folds once,
        from the nearest snapshot.
      security: [{}, {seatToken: []}, {adminKey: []}]
      parameters:
        - {in: query, name: after, schema: {type: integer, minimum: 0, default: 0}}
        - {in: query, name: limit, schema: {type: integer, minimum: 1, maximum: 1000,
           default: 500}}
      responses:
        200:
          description: A page of the timeline.
          content:
            application/json:
              schema: TimelineSchema
        401: Unauthorized
        409: Conflict
        422: UnprocessableEntity
    """
    latest = load_game(game_id)
    asker_of(latest)
    query = load_query(TimelineQuerySchema())
    cap = services().config.max_page
    at_most(query["limit"], cap, "limit", "limit_too_large", "continue with next_after")
    after = min(query["after"], latest.version)
    game = load_game(game_id, at=max(after, 1))
    fetch, rebuild = services().folder.stepper(game_id)
    envelopes = [
        envelope
        for envelope in services().store.read(game_id, after=after, limit=query["limit"])
        if envelope["seq"] <= latest.version
    ]
    reveal = finished(latest) and not latest.sealed_until
    entries = list(timeline(game, envelopes, fetch, rebuild, reveal_secrets=reveal))
    last = entries[-1]["seq"] if entries else after
    return jsonify(
        {
            "id": game_id,
            "version": latest.version,
            "events": entries,
            "next_after": last if last < latest.version else None,
        }
    )
