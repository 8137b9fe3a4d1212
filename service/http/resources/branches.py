"""Branches over HTTP: what-if games from any event of a game, their list, and the branch
holder playing every seat of one (docs/history.md)."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from flask import Blueprint, Response, current_app, jsonify, request, url_for
from flask.blueprints import BlueprintSetupState
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import Envelope
from projections.fold import Game
from projections.history import plan_branch
from projections.readmodels.branch_list import BranchList, RedisBranchList, SQLiteBranchList
from service.application import commands
from service.application.auth import (
    AuthError,
    new_token,
    token_hash,
)
from service.application.services import Services
from service.config import game_index_url
from service.http.errors import ApiError
from service.http.resources.time_travel import state_view
from service.http.resources.undo import move_offers
from service.http.shared import (
    Asker,
    action_answer,
    action_includes,
    asker_of,
    finished,
    json_body,
    legal_actions_body,
    load_game,
    play_action,
    services,
)

bp = Blueprint("branches", __name__)

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
        403: [seat_required]
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
      security: [{}, {seatToken: []}, {appKey: []}, {adminKey: []}]
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
    found = services()
    source = load_game(game_id)
    asker = asker_of(source)
    body = BranchRequestSchema().load(json_body())
    ended = finished(source)
    if asker.app is not None and asker.seat is None and not ended:
        raise asker.no_single_seat()
    if asker.anonymous and not ended:
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
    if asker.seat is not None and not ended:
        viewpoint = asker.seat
    token = new_token()

    def fetch(seq: int) -> Envelope:
        # The header and event ``at`` only: the branch keeps the rest by reference.
        return found.store.read(game_id, after=seq - 1, limit=1)[0]

    plan = plan_branch(
        fetch,
        at,
        at,
        new_seed=secrets.token_hex(32),
        sandbox_token_hash=token_hash(token),
        source_finished=ended,
        reseed=bool(body["reseed"]),
        seat=asker.seat,
        admin=asker.admin,
        # A seat named without a reseed is passed on, so a finished game's branch refuses it
        # (redraw_needs_reseed) rather than ignore it.
        resample_for=viewpoint if body["reseed"] or not ended or "seat" in body else None,
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
    result = commands.append(found, branch_id, plan.stored, 0)
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
    game = load_game(game_id, at=at)
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
    found = services()
    asker_of(load_game(game_id))
    listed = [
        entry for entry in branch_list().list(game_id) if found.store.version(entry["id"]) > 0
    ]
    return jsonify({"branches": listed})


# -- a branch's holder plays every seat ------------------------------------------------


def _seat_asker(game_id: str, seat: int, acting: bool) -> tuple[Game, Asker]:
    """The game and the asker, when the asker may see (or, ``acting``, act for) ``seat``: a
    branch's holder for any seat, a seat's token for its own, the admin to look only."""
    game = load_game(game_id)
    asker = asker_of(game)
    players = len(game.meta["players"])
    if not 0 <= seat < players:
        raise ApiError(404, "not_found", f"This game has seats 0 to {players - 1}.")
    if asker.app is not None:
        # An application's key speaks for the seats it holds, each at its own address.
        if seat not in asker.app_seats:
            raise ApiError(
                403,
                "seat_not_held",
                f"Your application does not hold seat {seat} of this game.",
            )
        return game, replace(asker, seat=seat)
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
      codes: {404: [not_found], 403: [not_your_seat, seat_not_held, sealed_history]}
      tags: [history]
      summary: The state as a given seat sees it
      description: >
        A branch's token may ask for any seat of its branch; a seat's token for its own seat
        (the same as GET /games/{id}/state); a client application's key for each seat it
        holds (403 ``seat_not_held`` for another); the admin for any seat.
      security: [{seatToken: []}, {appKey: []}, {adminKey: []}]
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
    return state_view(game_id, game, seat, request.args.get("at"), asker.admin)


@bp.get("/games/<game_id>/seats/<int:seat>/legal-actions")
def get_seat_legal_actions(game_id: str, seat: int) -> Response:
    """What one seat may do now: for a branch's holder, who plays every seat.
    ---
    get:
      operationId: getSeatLegalActions
      codes: {404: [not_found], 403: [not_your_seat, seat_not_held], 409: [version_conflict],
              422: [limit_too_large]}
      tags: [history]
      summary: A given seat's legal actions now
      description: >
        The same answer as GET /games/{game_id}/legal-actions, for ``seat``: with a seat's
        token, its own; with a client application's key, each seat it holds.
      security: [{seatToken: []}, {appKey: []}, {adminKey: []}]
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
    game, asker = _seat_asker(game_id, seat, acting=False)
    return jsonify({**legal_actions_body(game, seat), **move_offers(game, asker)})


@bp.post("/games/<game_id>/seats/<int:seat>/actions")
def post_seat_action(game_id: str, seat: int) -> tuple[Response, int, dict[str, str]]:
    """Play one action for a given seat: how a branch's holder plays every seat.
    ---
    post:
      operationId: postSeatAction
      codes:
        404: [not_found]
        403: [seat_required, not_your_seat, seat_not_held]
        409: [version_conflict, awaiting_system_step, seats_open]
        422: [idempotency_key_reused, game_finished, not_your_turn, illegal_action, rules]
      tags: [history]
      summary: Play an action for a given seat
      description: >
        As POST /games/{id}/actions, for the seat in the path: a branch's token may act for
        any seat of its branch, a seat's token only for its own, a client application's key
        for each seat it holds (403 ``seat_not_held`` for any other, another application's
        seat in the same game included). ``Prefer: wait=N`` waits for the automatic steps as
        there (202 with the ``Location`` of this seat's state past N seconds).
      security: [{seatToken: []}, {appKey: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - Prefer
        - Include
        - LegalActionsLimit
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Action'}
      responses:
        201:
          description: Appended; the game's status and the seat's view after it (and after
            the automatic steps it made due, with Prefer wait).
          headers:
            ETag: ETag
            Idempotent-Replayed: IdempotentReplayed
            Preference-Applied: PreferenceApplied
          content:
            application/json:
              schema: ActionResultSchema
        202:
          description: Appended, but its automatic steps were not done within the wait asked
            for (Prefer wait); the seat's view after the action, and where to look next.
          headers:
            ETag: ETag
            Location: Location
            Preference-Applied: PreferenceApplied
            Idempotent-Replayed: IdempotentReplayed
          content:
            application/json:
              schema: ActionResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    game, _ = _seat_asker(game_id, seat, acting=True)
    include = action_includes()
    location = url_for("branches.get_seat_state", game_id=game_id, seat=seat)
    result, code, headers = play_action(game_id, seat, game, True, location)
    return action_answer(result, seat, include, code, headers)


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
def _open_list(state: BlueprintSetupState) -> None:
    extensions = state.app.extensions
    extensions["meeple_branches"] = open_branch_list(extensions["meeple"])
