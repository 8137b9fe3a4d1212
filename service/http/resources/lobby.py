"""The lobby: open seats joined later, leaving before the start, seat tokens renewed, and
open seats given to bots (docs/api.md, "Lobby").

A game may be created with open seats (``{"open": true}`` in ``players``) and bot seats
(``{"bot": {...}}``). Its first step waits until no seat is open: until then actions answer
409 ``seats_open``, no automatic step is due and ``status.waiting_for_players`` is true.
Every change of a seat is a ``seat_changed`` event in the log, its public part saying which
seat, what changed and the new name; a new token's sha256 is its secret part (visible to
nobody, as the tokens' hashes in ``game_created``); tokens themselves are never kept.

Who may do what, before the first step (``game_started`` after it):

- ``POST /games/{id}/seats/{seat}/join`` (anyone, no token): takes an open seat under a name
  and answers with the seat's token, once;
- ``POST /games/{id}/seats/{seat}/leave`` (the seat's token, or the admin key): the seat is
  open again and its token stops working;
- ``POST /games/{id}/seats/{seat}/bot`` (any seat's token of the game, or the admin key):
  an open seat is given to a bot;

and at any time ``POST /games/{id}/seats/{seat}/token``: with the seat's own token, a new
token replaces it (rotation); with the admin key, a lost token is re-issued. A branch's seats
are all played by its one token, so it has no lobby (409 ``seats_fixed``).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, url_for
from marshmallow import RAISE, Schema, fields, validate

from projections.fold import Game
from service.application import app_custody, commands
from service.application.auth import AuthError, Viewer
from service.application.bot_seats import BotSchema
from service.application.lobby import (
    SeatChange,
    check_caps,
    join,
    leave,
    renew_token,
    seat_bot,
)
from service.http.app_keys import request_app
from service.http.errors import ApiError
from service.http.schemas import PLAYER_NAME
from service.http.shared import authenticate, json_body, request_owner, services

bp = Blueprint("lobby", __name__)


class JoinSchema(Schema):
    """POST .../join: the name to sit under."""

    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=PLAYER_NAME)


class JoinedSchema(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    version = fields.Integer(required=True)
    token = fields.String(
        required=True, metadata={"description": "The seat's bearer token: shown only once"}
    )


class SeatChangedSchema(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    version = fields.Integer(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["player", "open", "bot"]))
    bot = fields.Nested(BotSchema, allow_none=True, required=True)


def _viewer(game_id: str) -> tuple[Game, Viewer]:
    game = commands.load_game(services(), game_id)
    return game, viewer_of_any(game)


def viewer_of_any(game: Game) -> Viewer:
    """Who asks, by the seat its token is for (never a branch holder's to-act seat)."""
    return authenticate(game.meta)


def _own_seat_or_admin(game_id: str, seat: int) -> tuple[Game, Viewer]:
    """The game, and who asks, when it is ``seat`` itself (its token) or the admin."""
    game, viewer = _viewer(game_id)
    _seat_path(game, seat)
    if not viewer.admin:
        if not viewer.authenticated:
            raise AuthError("missing_token", "Send the seat's token or the admin key.")
        if viewer.app is not None:
            if seat not in viewer.app_seats:
                raise ApiError(403, "seat_not_held", f"Your application does not hold seat {seat}.")
        elif viewer.seat != seat:
            raise ApiError(403, "not_your_seat", "Your token is for another seat.")
    return game, viewer


def _caps_before_change(game: Game, viewer: Viewer, *, opens: bool = False) -> None:
    """A game that a change makes wait for players (a seat left) counts against the cap on
    waiting games as a new game would (``check_caps``); one already counted (an open seat)
    and the admin are not refused. (A seat given to a bot is counted by ``seat_bot``.)"""
    if viewer.admin:
        return
    if opens and not game.open_seats:
        check_caps(services(), [{"open": True}])


def _seat_path(game: Game, seat: int) -> None:
    count = len(game.meta["players"])
    if not 0 <= seat < count:
        raise ApiError(404, "not_found", f"This game has seats 0 to {count - 1}.")


@bp.post("/games/<game_id>/seats/<int:seat>/join")
def join_seat(game_id: str, seat: int) -> tuple[Response, int, dict[str, str]]:
    """Take an open seat; its token is in this response only.
    ---
    post:
      operationId: joinSeat
      codes:
        404: [not_found]
        409: [seat_taken, game_started, seats_fixed, version_conflict]
      tags: [lobby]
      summary: Join an open seat
      description: >
        Anyone may join an open seat (``kind: open`` in the game's ``seats``), without a
        token; the answer holds the seat's bearer token, once. A seat someone else took
        first answers 409 ``seat_taken``. Joined with a client application's key, the seat
        is held by that application from then on (docs/api.md, "Applications").
      security: [{}, {appKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: JoinSchema
      responses:
        201:
          description: The seat is yours; its token.
          headers:
            Location: Location
          content:
            application/json:
              schema: JoinedSchema
        409: Conflict
    """
    body = JoinSchema().load(json_body())
    game = commands.load_game(services(), game_id)
    _seat_path(game, seat)
    joined = join(services(), game_id, seat, body["name"])
    app = request_app()
    if app is not None:
        # Joined with an application's key: the application holds the seat from now on.
        app_custody.hold(services(), app.id, game_id, [seat])
    payload = {
        "id": game_id,
        "seat": seat,
        "name": joined.name,
        "version": joined.version,
        "token": joined.token,
    }
    headers = {"Location": url_for("api.get_game", game_id=game_id), "Cache-Control": "no-store"}
    return jsonify(payload), 201, headers


@bp.post("/games/<game_id>/seats/<int:seat>/leave")
def leave_seat(game_id: str, seat: int) -> Response:
    """Leave a seat before the game starts: it is open again and its token stops working.
    ---
    post:
      operationId: leaveSeat
      codes:
        404: [not_found]
        403: [not_your_seat, seat_not_held]
        409: [game_started, seat_open, seat_is_bot, seats_fixed, version_conflict]
        429: [too_many_open_games]
      tags: [lobby]
      summary: Leave a seat before the start
      description: >
        With the seat's own token, the key of the client application that holds it (which
        then holds it no more), or the admin key (who may open any seat). A game that
        starts to wait for players this way counts against ``MEEPLE_MAX_OPEN_GAMES`` as a
        new one would (429 ``too_many_open_games``; not for the admin).
      security: [{seatToken: []}, {appKey: []}, {adminKey: []}]
      responses:
        200:
          description: The seat, open again.
          content:
            application/json:
              schema: SeatChangedSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    game, viewer = _own_seat_or_admin(game_id, seat)
    _caps_before_change(game, viewer, opens=True)
    left = leave(services(), game_id, seat)
    if viewer.app is not None:
        app_custody.let_go(services(), viewer.app, game_id, seat)
    return jsonify(_seat_answer(game_id, left, "open"))


@bp.post("/games/<game_id>/seats/<int:seat>/token")
def post_seat_token(game_id: str, seat: int) -> tuple[Response, int, dict[str, str]]:
    """A new token for a seat: rotated with its own token, re-issued with the admin key.
    ---
    post:
      operationId: renewSeatToken
      codes:
        404: [not_found]
        403: [not_your_seat, seat_not_held]
        409: [seat_open, seat_is_bot, seats_fixed, version_conflict]
      tags: [lobby]
      summary: Rotate or re-issue a seat's token
      description: >
        With the seat's own token: a new token replaces it (the old one stops working at
        once). With the key of the client application that holds the seat, or the admin
        key: a lost token is re-issued (recovered) the same way. The new token is in this
        response only.
      security: [{seatToken: []}, {appKey: []}, {adminKey: []}]
      responses:
        201:
          description: The seat's new token.
          content:
            application/json:
              schema: JoinedSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    _, viewer = _own_seat_or_admin(game_id, seat)
    renewed = renew_token(
        services(), game_id, seat, by_admin=viewer.admin, by_app=viewer.app is not None
    )
    payload = {
        "id": game_id,
        "seat": seat,
        "name": renewed.name,
        "version": renewed.version,
        "token": renewed.token,
    }
    return jsonify(payload), 201, {"Cache-Control": "no-store"}


@bp.post("/games/<game_id>/seats/<int:seat>/bot")
def post_seat_bot(game_id: str, seat: int) -> Response:
    """Give an open seat to a bot before the game starts.
    ---
    post:
      operationId: seatBot
      codes:
        403: [seat_not_held]
        404: [not_found]
        409: [seat_taken, game_started, seats_fixed, version_conflict]
        429: [too_many_bot_games]
      tags: [lobby]
      summary: Give an open seat to a bot
      description: >
        Any seat of the game (its token, or the key of an application holding one) or the
        admin may fill an open seat with a bot;
        a bot plays its turns in the background as soon as they are due (docs/api.md, "Bots").
        A game's first bot makes it a bot game of whoever gives the seat (its client
        address, or its client application), counted against that owner's
        ``MEEPLE_MAX_BOT_GAMES_PER_OWNER`` and the service's ``MEEPLE_MAX_BOT_GAMES`` as a new
        bot game would (429 ``too_many_bot_games``, whose ``detail`` says which; not for the
        admin).
      security: [{seatToken: []}, {appKey: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: BotSchema
      responses:
        200:
          description: The seat, now a bot's.
          content:
            application/json:
              schema: SeatChangedSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    bot = BotSchema().load(json_body())
    game, viewer = _viewer(game_id)
    _seat_path(game, seat)
    if not viewer.admin and viewer.seat is None and not viewer.app_seats:
        if viewer.app is not None:
            raise ApiError(403, "seat_not_held", "Your application holds no seat of this game.")
        raise AuthError("missing_token", "Send a seat token of this game or the admin key.")
    seated = seat_bot(services(), game_id, seat, bot, viewer, request_owner(viewer))
    return jsonify(_seat_answer(game_id, seated, "bot"))


def _seat_answer(game_id: str, change: SeatChange, kind: str) -> dict[str, Any]:
    return {
        "id": game_id,
        "seat": change.seat,
        "name": change.name,
        "version": change.version,
        "kind": kind,
        "bot": change.bot,
    }
