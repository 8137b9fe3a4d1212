"""Undo, redo, branches, time travel and audits over HTTP (issue 8; semantics in
docs/history.md, the rules themselves in projections/history.py and projections/fold.py).

Who asks is one of: a seat of the game (its token), the holder of a branch (the one token a
branch's creator gets, acting for every seat), the admin (the admin key), or a spectator (no
token). Each view's docstring ends with its OpenAPI operation (service/openapi.py explains
the convention).
"""

from __future__ import annotations

import hmac
import json
import secrets
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask.blueprints import BlueprintSetupState
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import Envelope, NewEvent
from events.sqlite_pool import SQLitePool
from events.store import ConcurrencyConflict
from projections.audit import AuditCache, audit, audit_branch_source, jsonl_lines, read_log
from projections.fold import Game, RulesVersionMismatch
from projections.history import branch_events, redo_event, timeline, undo_event
from projections.ruleset import IllegalAction
from service import commands
from service.api import (
    action_answer,
    action_includes,
    at_most,
    etag,
    json_body,
    legal_actions_body,
    load_action,
    load_query,
    status_of,
    version_tags,
)
from service.auth import (
    AuthError,
    bearer_token,
    is_admin_token,
    new_token,
    resolve_viewer,
    token_hash,
)
from service.bootstrap import Services, game_index_url
from service.errors import ApiError
from service.schemas import ViewField

bp = Blueprint("history", __name__)

#: Idempotency-Key values a client may send (the same rule as for actions).
_KEY_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F))

JSONL_MEDIA_TYPE = "application/jsonl"


# -- who asks --------------------------------------------------------------------------


@dataclass(frozen=True)
class Asker:
    """Whoever a request speaks for, in one game."""

    seat: int | None = None
    admin: bool = False
    #: the holder of a branch: acts for every seat of that sandbox game
    holder: bool = False

    @property
    def anonymous(self) -> bool:
        return self.seat is None and not self.admin and not self.holder


def asker_of(game: Game) -> Asker:
    """The asker for this game's request; a token that is nothing here is refused."""
    header = request.headers.get("Authorization")
    token = bearer_token(header)
    if token is None:
        return Asker()
    if is_admin_token(token, _services().config.admin_key):
        return Asker(admin=True)
    expected = game.meta.get("sandbox_token_hash")
    if expected and hmac.compare_digest(token_hash(token), str(expected)):
        return Asker(holder=True)
    viewer = resolve_viewer(game.meta, header, _services().config.admin_key)
    return Asker(seat=viewer.seat)


def _services() -> Services:
    found: Services = current_app.extensions["meeple"]
    return found


def _load(game_id: str, at: int | None = None) -> Game:
    try:
        return commands.load_game(_services(), game_id, at=at)
    except RulesVersionMismatch as error:
        raise ApiError(
            409,
            "rules_version_mismatch",
            f"This game was {error.reason}; it cannot be replayed or audited here. "
            "An export can be verified with `meeple verify` on a build that has those rules.",
            title="The game was played under other rules",
        ) from None


def _finished(game: Game) -> bool:
    return bool(game.ruleset.status(game.state).get("finished"))


def _status(game: Game) -> dict[str, Any]:
    return status_of(game)


# -- time travel -----------------------------------------------------------------------


def state_at(game_id: str, raw_at: str) -> Response:
    """GET /games/{id}/state?at=N (service.api delegates here when ``at`` is given)."""
    latest = _load(game_id)
    asker = asker_of(latest)
    return _state_view(game_id, latest, asker.seat, raw_at, asker.admin)


def _state_view(
    game_id: str, latest: Game, seat: int | None, raw_at: str | None, admin: bool
) -> Response:
    """The state now or after event ``raw_at``, as ``seat`` (None: a spectator) sees it."""
    game, version = latest, latest.version
    if raw_at is not None:
        version = _event_number(raw_at, "at", latest.version)
        if version < latest.sealed_until and not admin:
            raise _sealed(latest)
        game = _load(game_id, at=version)
    response = jsonify(
        {
            "id": game_id,
            "version": version,
            "seat": seat,
            "status": _status(game),
            "state": game.ruleset.view(game.state, seat),
        }
    )
    response.headers["ETag"] = etag(version)  # the version this view is at
    # What this viewer may see depends on the token; event N itself never changes.
    response.headers["Vary"] = "Authorization"
    response.headers["Cache-Control"] = "private, no-cache" if raw_at is None else "private"
    return response


def _event_number(raw: str, name: str, version: int) -> int:
    if not raw.isdigit() or len(raw) > 18 or not 1 <= int(raw) <= version:
        raise ApiError(
            422,
            "invalid_query",
            f"{name} must be an event of this game, from 1 to {version}.",
            errors={name: [f"From 1 to {version}."]},
        )
    return int(raw)


def _sealed(game: Game) -> ApiError:
    return ApiError(
        403,
        "sealed_history",
        f"Up to event {game.sealed_until} this branch holds the secrets of a game that was "
        "still being played when it was made; only the admin may look there.",
        title="This part of the history is sealed",
    )


class TimelineQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = fields.Integer(load_default=0, validate=validate.Range(0, 2**53))
    # The upper bound is a setting (MEEPLE_MAX_PAGE), checked by the view.
    limit = fields.Integer(load_default=500, validate=validate.Range(min=1))


class TimelineEntrySchema(Schema):
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    actor = fields.Dict(required=True, metadata={"description": '{"seat": n} or {"system": name}'})
    round = fields.Integer(required=True, allow_none=True)
    phase = fields.String(required=True, allow_none=True)
    summary = fields.String(required=True, metadata={"description": "One line a person reads"})
    scores = fields.List(
        fields.Raw(),
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
    latest = _load(game_id)
    asker_of(latest)
    query = load_query(TimelineQuerySchema())
    cap = _services().config.max_page
    at_most(query["limit"], cap, "limit", "limit_too_large", "continue with next_after")
    after = min(query["after"], latest.version)
    game = _load(game_id, at=max(after, 1))
    fetch, rebuild = _services().folder.stepper(game_id)
    envelopes = [
        envelope
        for envelope in _services().store.read(game_id, after=after, limit=query["limit"])
        if envelope["seq"] <= latest.version
    ]
    reveal = _finished(latest) and not latest.sealed_until
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


# -- undo and redo ---------------------------------------------------------------------


class MoveResultSchema(Schema):
    seq = fields.Integer(required=True, metadata={"description": "The undone/redone event"})
    version = fields.Integer(required=True)
    status = fields.Dict(required=True)
    state = ViewField(
        required=True,
        metadata={"description": "The asker's view after it (a spectator's for a branch's holder)"},
    )


@bp.post("/games/<game_id>/undo")
def post_undo(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Take back the last step: appends ``undone``, visible to everyone.
    ---
    post:
      operationId: postUndo
      codes:
        403: [seat_required]
        409: [version_conflict]
        422: [too_many_steps, idempotency_key_reused, nothing_to_undo, before_branch_point,
              not_your_action, turn_over, hidden_information_revealed]
      tags: [history]
      summary: Undo the last step
      description: >
        A seat may undo only its own actions of its current turn, and never across a step
        that revealed hidden information (codes ``nothing_to_undo``, ``not_your_action``,
        ``turn_over``, ``hidden_information_revealed``). A branch's holder may undo any step
        of the branch after its branch point. ``If-Match`` and ``Idempotency-Key`` work as
        for actions.
      security: [{seatToken: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - {in: query, name: steps, schema: {type: integer, minimum: 1, maximum: 100,
           default: 1}, description: "How many steps to undo, last first, in one append (at most
           MEEPLE_MAX_UNDO_STEPS, default 100: more is 422 too_many_steps)"}
      responses:
        201:
          description: Undone; the state after it.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: MoveResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
        422: UnprocessableEntity
    """
    return _undo_or_redo(game_id, "undo")


@bp.post("/games/<game_id>/redo")
def post_redo(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Put back the last undone step: appends ``redone``; the same cards come up again.
    ---
    post:
      operationId: postRedo
      codes:
        403: [seat_required]
        409: [version_conflict]
        422: [too_many_steps, idempotency_key_reused, nothing_to_redo, not_your_action]
      tags: [history]
      summary: Redo the last undone step
      description: >
        A seat may redo only its own undone action (codes ``nothing_to_redo``,
        ``not_your_action``); a new step in between leaves nothing to redo. ``If-Match``
        and ``Idempotency-Key`` work as for actions.
      security: [{seatToken: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - {in: query, name: steps, schema: {type: integer, minimum: 1, maximum: 100,
           default: 1}, description: "How many undone steps to redo, in one append (at most
           MEEPLE_MAX_UNDO_STEPS, default 100: more is 422 too_many_steps)"}
      responses:
        201:
          description: Redone; the state after it.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: MoveResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
        422: UnprocessableEntity
    """
    return _undo_or_redo(game_id, "redo")


def _undo_or_redo(game_id: str, what: str) -> tuple[Response, int, dict[str, str]]:
    found = _services()
    game = _load(game_id)
    asker = asker_of(game)
    if asker.admin:
        raise AuthError("seat_required", f"The admin key acts for no seat; it cannot {what}.", 403)
    if asker.anonymous:
        raise AuthError("missing_token", "Send your seat token as 'Authorization: Bearer <token>'.")
    expected = _if_match()
    key = _idempotency_key()
    steps = load_query(MoveQuerySchema())["steps"]
    cap = found.config.max_undo_steps
    at_most(steps, cap, "steps", "too_many_steps", f"{what} in several requests for more")
    scoped = None if key is None else f"{what}:{asker.seat}:{key}"
    seat = None if asker.holder else asker.seat
    version = game.version
    try:
        if expected is not None and expected != version:
            raise ConcurrencyConflict(game_id, expected, version)
        events = _decide_moves(game, what, seat, steps)
    except (IllegalAction, ConcurrencyConflict):
        # A retry of a request that went through: answer as the first time.
        earlier = None if scoped is None else _earlier(found, game_id, scoped)
        if earlier is None:
            raise
        return _moved(game_id, earlier, asker, replayed=True)
    # One append for all the steps, so the jobs see only where they lead (undoing an
    # automatic step alone would have it run again at once). A repeated key gets the
    # first result from the store, which appends nothing.
    result = commands.append(found, game_id, events, version, scoped)
    return _moved(game_id, result.envelopes[-1], asker, replayed=result.replayed)


class MoveQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    # The upper bound is a setting (MEEPLE_MAX_UNDO_STEPS), checked by the view.
    steps = fields.Integer(load_default=1, validate=validate.Range(min=1))


def _decide_moves(game: Game, what: str, seat: int | None, steps: int) -> list[NewEvent]:
    """The ``undone`` (or ``redone``) events for ``steps`` steps, each decided on the game as
    the ones before it leave it (``game`` is the caller's copy; its stacks move here).

    Deciding needs only the effective history and the redo stack, never the state: the
    state after the undos is rebuilt once, from the nearest snapshot, when it is next read
    (docs/history.md, "What undo and redo cost")."""
    taken, put = (game.effective, game.redo) if what == "undo" else (game.redo, game.effective)
    tops = _services().folder.read_events(str(game.meta["game_id"]), taken[-steps:])
    decide = undo_event if what == "undo" else redo_event
    events = []
    for _ in range(steps):
        events.append(decide(game, tops.get(taken[-1]) if taken else None, seat))
        put.append(taken.pop())
        game.version += 1
    return events


def _moved(
    game_id: str, envelope: Envelope, asker: Asker, replayed: bool
) -> tuple[Response, int, dict[str, str]]:
    seq = int(envelope["seq"])
    after = _load(game_id, at=seq)
    body = {
        "seq": seq,
        "version": seq,
        "status": _status(after),
        "state": after.ruleset.view(after.state, asker.seat),
    }
    headers = {"ETag": f'"{seq}"'}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(body), 201, headers


def _earlier(found: Services, game_id: str, key: str) -> Envelope | None:
    """The last event an earlier request with this Idempotency-Key appended, if any."""
    earlier = None
    for envelope in found.store.read(game_id):
        if envelope.get("idempotency_key") == key:
            earlier = envelope
    return earlier


def _fetch(game_id: str, seq: int) -> Envelope:
    found = _services().store.read(game_id, after=seq - 1, limit=1)
    return found[0]


def _if_match() -> int | None:
    header = request.headers.get("If-Match")
    if header is None:
        return None
    tags = [tag for tag in version_tags(header) if tag != "*"]
    if len(tags) > 1:
        raise ApiError(400, "invalid_header", "If-Match names one version.")
    return int(tags[0]) if tags else None


def _idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= 200 and set(key) <= _KEY_CHARACTERS):
        raise ApiError(
            400, "invalid_header", "An Idempotency-Key is 1 to 200 visible ASCII characters."
        )
    return key


# -- branches --------------------------------------------------------------------------


class BranchRequestSchema(Schema):
    """POST /games/{id}/branches: branch after event ``at``."""

    class Meta:
        unknown = RAISE

    at = fields.Integer(
        required=True,
        strict=True,
        validate=validate.Range(1, 2**53),
        metadata={"description": "The branch holds the source's first ``at`` events"},
    )
    reseed = fields.Boolean(
        load_default=False, metadata={"description": "New luck after the branch point"}
    )
    seat = fields.Integer(
        strict=True,
        validate=validate.Range(0, 63),
        metadata={
            "description": "With reseed: whose view stays, everything else is redrawn "
            "(default: the asking seat, else the first seat the game waits for)"
        },
    )


class BranchCreatedSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    token = fields.String(
        required=True, metadata={"description": "Acts for every seat of the branch; shown once"}
    )
    source = fields.String(required=True)
    at = fields.Integer(required=True)
    reseeded = fields.Boolean(required=True)
    redrawn_for_seat = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "Whose unseen information was redrawn (null: none)"},
    )
    sealed = fields.Boolean(
        required=True,
        metadata={"description": "The source was unfinished: its secrets stay sealed"},
    )
    notice = fields.String(
        required=True, allow_none=True, metadata={"description": "What was redrawn, and why"}
    )


class BranchEntrySchema(Schema):
    id = fields.String(required=True)
    at = fields.Integer(required=True)
    reseeded = fields.Boolean(required=True)
    redrawn_for_seat = fields.Integer(required=True, allow_none=True)
    created_at = fields.String(required=True)


class BranchListSchema(Schema):
    branches = fields.List(fields.Nested(BranchEntrySchema), required=True)


@bp.post("/games/<game_id>/branches")
def post_branch(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Branch a sandbox game off this one after event ``at``.
    ---
    post:
      operationId: postBranch
      codes:
        401: [missing_token]
        422: [branch_point_out_of_range, before_branch_point, redraw_needs_reseed, no_such_seat]
      tags: [history]
      summary: Branch from any move
      description: >
        A new game whose log begins with ``branched_from`` and the source's first ``at``
        events. Its one token (in this response only) acts for every seat, and may undo
        anything after the branch point. Without reseed the same actions reproduce the
        source exactly; with reseed the luck after the branch point is new and everything
        the seat ``seat`` could not see is redrawn. Any seat of the source or the admin may
        branch; anyone once the source has finished. A branch of an unfinished game is always
        reseeded, and a seat's branch redraws everything that seat could not see at ``at``
        (``notice`` says so): the others' secrets stay secret.
      security: [{}, {seatToken: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: BranchRequestSchema
      responses:
        201:
          description: The branch, with its token.
          headers:
            Location: Location
          content:
            application/json:
              schema: BranchCreatedSchema
        401: Unauthorized
        409: Conflict
    """
    found = _services()
    source = _load(game_id)
    asker = asker_of(source)
    body = BranchRequestSchema().load(json_body())
    finished = _finished(source)
    if asker.anonymous and not finished:
        raise AuthError(
            "missing_token",
            "Until this game ends only its seats and the admin may branch it; "
            "send your seat token.",
        )
    at = body["at"]
    if at > source.version:
        raise ApiError(
            422,
            "branch_point_out_of_range",
            f"This game has {source.version} events; branch at one of them.",
            title="The rules forbid this action",
        )
    viewpoint = body.get("seat")
    if body["reseed"] and viewpoint is None:
        viewpoint = asker.seat if asker.seat is not None else _first_to_act(game_id, at)
    if asker.seat is not None and not finished:
        viewpoint = asker.seat
    token = new_token()
    plan = branch_events(
        found.store.read(game_id, after=0, limit=at),
        at,
        new_seed=secrets.token_hex(32),
        sandbox_token_hash=token_hash(token),
        source_finished=finished,
        reseed=bool(body["reseed"]),
        seat=asker.seat,
        admin=asker.admin,
        resample_for=viewpoint if body["reseed"] or not finished else None,
    )
    branch_id = uuid.uuid4().hex
    entry = {
        "id": branch_id,
        "at": at,
        "reseeded": plan.reseeded,
        "redrawn_for_seat": plan.resampled_seat,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    # Listed first: if the append fails, listing skips a branch that never came to be.
    branch_list().add(game_id, entry)
    result = commands.append(found, branch_id, plan.events, 0)
    payload = {
        **{name: entry[name] for name in ("id", "at", "reseeded", "redrawn_for_seat")},
        "version": result.version,
        "token": token,
        "source": game_id,
        "sealed": plan.sealed,
        "notice": _notice(plan.sealed, plan.resampled_seat),
    }
    headers = {"Location": url_for("api.get_game", game_id=branch_id), "Cache-Control": "no-store"}
    return jsonify(payload), 201, headers


def _first_to_act(game_id: str, at: int) -> int:
    game = _load(game_id, at=at)
    to_act = game.ruleset.status(game.state).get("to_act") or [0]
    return int(to_act[0])


def _notice(sealed: bool, seat: int | None) -> str | None:
    if seat is None:
        return "The source is still being played, so the branch has new luck." if sealed else None
    if sealed:
        return (
            f"The source is still being played: everything seat {seat} could not see at the "
            "branch point was redrawn from a fresh seed, so the others' secrets stay secret."
        )
    return f"Everything seat {seat} could not see at the branch point was redrawn."


@bp.get("/games/<game_id>/branches")
def get_branches(game_id: str) -> Response:
    """The games branched off this one, oldest first.
    ---
    get:
      operationId: listBranches
      tags: [history]
      summary: A game's branches
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: Each branch's id, branch point and luck.
          content:
            application/json:
              schema: BranchListSchema
        401: Unauthorized
        409: Conflict
    """
    found = _services()
    asker_of(_load(game_id))
    listed = [
        entry for entry in branch_list().list(game_id) if found.store.version(entry["id"]) > 0
    ]
    return jsonify({"branches": listed})


# -- a branch's holder plays every seat ------------------------------------------------


def _seat_asker(game_id: str, seat: int, acting: bool) -> tuple[Game, Asker]:
    """The game and the asker, when the asker may see (or, ``acting``, act for) ``seat``: a
    branch's holder for any seat, a seat's token for its own, the admin to look only."""
    game = _load(game_id)
    asker = asker_of(game)
    players = len(game.meta["players"])
    if not 0 <= seat < players:
        raise ApiError(404, "not_found", f"This game has seats 0 to {players - 1}.")
    if asker.anonymous:
        raise AuthError("missing_token", "Send the branch's token or your seat token.")
    if asker.admin and acting:
        raise AuthError("seat_required", "The admin key acts for no seat; use a seat's token.", 403)
    if asker.seat is not None and asker.seat != seat:
        raise ApiError(
            403, "not_your_seat", "Your token is for another seat.", title="Not your seat"
        )
    return game, asker


@bp.get("/games/<game_id>/seats/<int:seat>/state")
def get_seat_state(game_id: str, seat: int) -> Response:
    """The game as one seat sees it: for a branch's holder, who plays every seat.
    ---
    get:
      operationId: getSeatState
      codes: {404: [not_found], 403: [not_your_seat, sealed_history]}
      tags: [history]
      summary: The state as a given seat sees it
      description: >
        A branch's token may ask for any seat of its branch; a seat's token for its own seat
        (the same as GET /games/{id}/state); the admin for any seat.
      security: [{seatToken: []}, {adminKey: []}]
      parameters:
        - {in: query, name: at, schema: {type: integer, minimum: 1},
           description: "The state after event N, as that seat could see it"}
      responses:
        200:
          description: The seat's view; ``ETag`` is the version it is at.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: StateSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    game, asker = _seat_asker(game_id, seat, acting=False)
    return _state_view(game_id, game, seat, request.args.get("at"), asker.admin)


@bp.get("/games/<game_id>/seats/<int:seat>/legal-actions")
def get_seat_legal_actions(game_id: str, seat: int) -> Response:
    """What one seat may do now: for a branch's holder, who plays every seat.
    ---
    get:
      operationId: getSeatLegalActions
      codes: {404: [not_found], 403: [not_your_seat], 409: [version_conflict],
              422: [limit_too_large]}
      tags: [history]
      summary: A given seat's legal actions now
      description: The same answer as GET /games/{game_id}/legal-actions, for ``seat``.
      security: [{seatToken: []}, {adminKey: []}]
      parameters:
        - LegalActionsLimit
        - LegalActionsCursor
        - LegalActionsList
      responses:
        200:
          description: The legal actions at this version.
          content:
            application/json:
              schema: LegalActionsSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    game, _ = _seat_asker(game_id, seat, acting=False)
    return jsonify(legal_actions_body(game, seat))


@bp.post("/games/<game_id>/seats/<int:seat>/actions")
def post_seat_action(game_id: str, seat: int) -> tuple[Response, int, dict[str, str]]:
    """Play one action for a given seat: how a branch's holder plays every seat.
    ---
    post:
      operationId: postSeatAction
      codes:
        404: [not_found]
        403: [seat_required, not_your_seat]
        409: [version_conflict, awaiting_system_step, seats_open]
        422: [idempotency_key_reused, game_finished, not_your_turn, illegal_action, rules]
      tags: [history]
      summary: Play an action for a given seat
      description: >
        As POST /games/{id}/actions, for the seat in the path: a branch's token may act for
        any seat of its branch, a seat's token only for its own.
      security: [{seatToken: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - Include
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Action'}
      responses:
        201:
          description: Appended; the game's status and the seat's view after it.
          headers:
            ETag: ETag
            Idempotent-Replayed: IdempotentReplayed
          content:
            application/json:
              schema: ActionResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    game, _ = _seat_asker(game_id, seat, acting=True)
    expected = _if_match()
    key = _idempotency_key()
    include = action_includes()
    action = load_action(game, json_body())
    result = commands.act(_services(), game_id, seat, action, expected, key)
    return action_answer(result, seat, include)


# -- audit and export --------------------------------------------------------------------


class AuditSchema(Schema):
    id = fields.String(required=True)
    ok = fields.Boolean(required=True)
    events = fields.Integer(required=True)
    seq = fields.Integer(
        required=True, allow_none=True, metadata={"description": "The first failing event"}
    )
    reason = fields.String(required=True, allow_none=True)
    finished = fields.Boolean(required=True)
    system_steps_checked = fields.Integer(required=True)
    seed_checked = fields.Boolean(
        required=True, metadata={"description": "The revealed seed matches its commitment"}
    )
    source_checked = fields.Boolean(
        required=True,
        metadata={"description": "A branch: its copy of the source's events was checked"},
    )


@bp.get("/games/<game_id>/audit")
def get_audit(game_id: str) -> Response:
    """Verify the game's log: ``ok``, or the first failing seq and why.
    ---
    get:
      operationId: getAudit
      tags: [history]
      summary: Audit the game
      description: >
        Checks the hash chain, re-folds every event under the rules the game was played
        with, recomputes every automatic step and compares it, and once the game has
        finished checks the revealed seed against its commitment. For a branch, also that it
        copied its source faithfully up to the branch point. ``meeple verify`` does the same
        offline on an export.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The audit's outcome.
          content:
            application/json:
              schema: AuditSchema
        401: Unauthorized
        409: Conflict
    """
    found = _services()
    game = _load(game_id)
    asker_of(game)
    last = found.store.read(game_id, after=game.version - 1, limit=1)
    key = (game_id, game.version, last[0]["hash"] if last else None)
    outcome = audits().get(key, lambda: _audit(game_id, game))
    return jsonify(outcome)


def _audit(game_id: str, game: Game) -> dict[str, Any]:
    found = _services()
    envelopes = found.store.read(game_id, after=0, limit=game.version)
    report = audit(envelopes)
    source_checked = False
    branch = game.meta.get("branch")
    if report.ok and branch is not None:
        source = found.store.read(str(branch["source"]), after=0, limit=int(branch["at"]))
        if source:
            copied = audit_branch_source(envelopes, source)
            source_checked = copied.ok
            if not copied.ok:
                report = copied
    return {"id": game_id, **report.to_dict(), "source_checked": source_checked}


def audits() -> AuditCache:
    """This process's audit outcomes (docs/history.md, "What an audit costs")."""
    found: AuditCache = current_app.extensions["meeple_audits"]
    return found


@bp.get("/games/<game_id>/export")
def get_export(game_id: str) -> Response:
    """The whole log as JSON Lines, secrets included, for ``meeple verify``.
    ---
    get:
      operationId: exportGame
      codes: {403: [game_not_finished, sealed_history]}
      tags: [history]
      summary: Export the log
      description: >
        One canonical JSON envelope a line, exactly as stored, so anyone can check the
        hash chain and replay the game offline. Only once the game has finished (code
        ``game_not_finished`` before), or to the admin; a branch made while its source was
        being played only once that source has finished too (``sealed_history``).
      security: [{}, {adminKey: []}]
      responses:
        200:
          description: The log, as a file named ``<game_id>.jsonl``.
          headers:
            Content-Disposition:
              description: '``attachment; filename="<game_id>.jsonl"``'
              schema: {type: string}
          content:
            application/jsonl:
              schema:
                type: string
                format: binary
                description: >
                  JSON Lines: one event envelope a line (an Event, secrets included,
                  canonical JSON as stored: sorted keys, no spaces), oldest first, each line
                  ending with a newline; read it line by line, not as one JSON document.
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    found = _services()
    game = _load(game_id)
    asker = asker_of(game)
    if not asker.admin:
        if not _finished(game):
            raise ApiError(
                403,
                "game_not_finished",
                "The full log holds every secret, so it is exported only once the game has "
                "ended (or to the admin); GET /games/{id}/events shows what you may see now.",
                title="The game has not finished",
            )
        if game.sealed_until and not _source_finished(game):
            raise _sealed(game)
    # Streamed a page of events at a time: a long log never sits whole in memory.
    lines = jsonl_lines(read_log(found.store, game_id, upto=game.version))
    response = Response(lines, mimetype=JSONL_MEDIA_TYPE)
    response.headers["Content-Disposition"] = f'attachment; filename="{game_id}.jsonl"'
    return response


def _source_finished(game: Game) -> bool:
    """Whether the game a sealed branch keeps secrets of has finished since (then they are
    secrets no more); the sealed levels of a branch of a branch are checked in turn."""
    source = str(game.meta["branch"]["source"])
    try:
        found = _load(source)
    except (commands.GameNotFound, ApiError):
        return False
    return _finished(found) and (not found.sealed_until or _source_finished(found))


# -- where the branch lists live ---------------------------------------------------------


class BranchList(ABC):
    """Each game's branches, kept beside the store (not found by scanning every stream)."""

    @abstractmethod
    def add(self, source: str, entry: dict[str, Any]) -> None: ...

    @abstractmethod
    def list(self, source: str) -> list[dict[str, Any]]: ...


class SQLiteBranchList(BranchList):
    """A small table in its own SQLite file beside the event store's."""

    def __init__(self, path: str | Path) -> None:
        self._pool = SQLitePool(path)
        self.path = self._pool.path
        self._pool.create(
            "CREATE TABLE IF NOT EXISTS branches (ord INTEGER PRIMARY KEY AUTOINCREMENT,"
            " source TEXT NOT NULL, entry TEXT NOT NULL);"
            "CREATE INDEX IF NOT EXISTS branches_by_source ON branches (source, ord)"
        )

    def add(self, source: str, entry: dict[str, Any]) -> None:
        with self._pool.transaction() as connection:
            connection.execute(
                "INSERT INTO branches (source, entry) VALUES (?, ?)", (source, json.dumps(entry))
            )

    def list(self, source: str) -> list[dict[str, Any]]:
        rows = self._pool.query(
            "SELECT entry FROM branches WHERE source = ? ORDER BY ord", (source,)
        )
        return [json.loads(row[0]) for row in rows]


class RedisBranchList(BranchList):
    """A list per source game, in the source's own hash slot on a Redis Cluster."""

    def __init__(self, client: Any, prefix: str = "meeple") -> None:
        self.client = client
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str) -> RedisBranchList:
        import redis
        from redis.cluster import RedisCluster

        if url.startswith("redis+cluster://"):
            address = "redis://" + url.removeprefix("redis+cluster://")
            return cls(RedisCluster.from_url(address, decode_responses=True))
        return cls(redis.Redis.from_url(url, decode_responses=True))

    def _key(self, source: str) -> str:
        return f"{self.prefix}:{{{source}}}:branches"

    def add(self, source: str, entry: dict[str, Any]) -> None:
        self.client.rpush(self._key(source), json.dumps(entry))

    def list(self, source: str) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.client.lrange(self._key(source), 0, -1)]


def open_branch_list(services: Services) -> BranchList:
    """The branch list beside the game index (``var/meeple.db`` -> ``var/meeple.branches.db``;
    a Redis deployment's own Redis)."""
    url = game_index_url(services.config)
    scheme, _, rest = url.partition("://")
    if scheme == "sqlite":
        path = Path(rest.removeprefix("/"))
        return SQLiteBranchList(path.with_name(path.name.replace(".index.db", ".branches.db")))
    return RedisBranchList.from_url(url)


def branch_list() -> BranchList:
    found: BranchList = current_app.extensions["meeple_branches"]
    return found


@bp.record_once
def _open_lists(state: BlueprintSetupState) -> None:
    extensions = state.app.extensions
    extensions["meeple_branches"] = open_branch_list(extensions["meeple"])
    extensions["meeple_audits"] = AuditCache(extensions["meeple"].config.audit_cache_size)
