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

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import NewEvent
from events.store import ConcurrencyConflict
from projections.fold import Game
from service import commands
from service.auth import AuthError, Viewer, new_token, resolve_viewer, token_hash
from service.bootstrap import Services
from service.bots import BotSchema, bot_name
from service.commands import CommandError
from service.errors import ApiError
from service.http import json_body, services
from service.schemas import PLAYER_NAME

bp = Blueprint("lobby", __name__)


# -- commands --------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatChange:
    """A seat after a lobby command: the game's new version, and a new token (shown once)."""

    seat: int
    name: str
    version: int
    token: str | None = None
    bot: dict[str, Any] | None = None


def seat_kind(game: Game, seat: int) -> str:
    """``open``, ``bot`` or ``player``."""
    if seat in game.open_seats:
        return "open"
    return "bot" if game.bot_of(seat) else "player"


def seats_of(game: Game) -> list[dict[str, Any]]:
    """Who sits where: each seat's name, kind and bot (no token, no hash)."""
    return [
        {"seat": seat, "name": name, "kind": seat_kind(game, seat), "bot": game.bot_of(seat)}
        for seat, name in enumerate(game.meta["players"])
    ]


def started(game: Game) -> bool:
    """Whether the game's first step has been played (the lobby is closed then)."""
    return bool(game.effective or game.redo)


def join(found: Services, game_id: str, seat: int, name: str) -> SeatChange:
    """Take open ``seat`` under ``name``; its new token is in the answer only."""
    token = new_token()

    def decide(game: Game) -> NewEvent:
        # Whether the seat is open first: a taken seat is taken, started or not (the answer
        # does not depend on whether the first step has run yet).
        _seat_exists(game, seat)
        _no_branch(game)
        if seat not in game.open_seats:
            raise CommandError(
                "seat_taken", f"Seat {seat} is taken; GET the game to see which are open."
            )
        _before_start(game, seat)
        return seat_event(seat, "joined", {"seat": seat}, name=name, token=token)

    version = _append(found, game_id, decide)
    return SeatChange(seat, name, version, token=token)


def leave(found: Services, game_id: str, seat: int) -> SeatChange:
    """Open ``seat`` again (its token stops working)."""

    def decide(game: Game) -> NewEvent:
        # Who holds the seat first: an open or a bot seat has nobody to leave it, started
        # or not (the answer does not depend on whether the first step has run yet).
        _seat_exists(game, seat)
        _no_branch(game)
        _held(game, seat)
        _before_start(game, seat)
        return seat_event(seat, "left", {"seat": seat})

    version = _append(found, game_id, decide)
    return SeatChange(seat, f"Open seat {seat + 1}", version)


def seat_bot(
    found: Services, game_id: str, seat: int, bot: dict[str, Any], by: Viewer
) -> SeatChange:
    """Give open ``seat`` to a bot."""
    name = bot_name(bot)
    actor = {"seat": by.seat} if by.seat is not None else {"system": "admin"}

    def decide(game: Game) -> NewEvent:
        _seat_exists(game, seat)
        _no_branch(game)
        if seat not in game.open_seats:
            raise CommandError(
                "seat_taken", f"Seat {seat} is taken; only an open seat goes to a bot."
            )
        _before_start(game, seat)
        return seat_event(seat, "bot_seated", actor, name=name, bot=bot)

    version = _append(found, game_id, decide)
    return SeatChange(seat, name, version, bot=bot)


def renew_token(found: Services, game_id: str, seat: int, by_admin: bool) -> SeatChange:
    """A new token for ``seat``: rotated by the seat itself, re-issued by the admin."""
    token = new_token()
    names: list[str] = []

    def decide(game: Game) -> NewEvent:
        _seat_exists(game, seat)
        _no_branch(game)
        _held(game, seat)
        names[:] = [str(game.meta["players"][seat])]
        if by_admin:
            return seat_event(seat, "token_reissued", {"system": "admin"}, token=token)
        return seat_event(seat, "token_rotated", {"seat": seat}, token=token)

    version = _append(found, game_id, decide)
    return SeatChange(seat, names[0], version, token=token)


def seat_event(
    seat: int,
    change: str,
    actor: dict[str, Any],
    *,
    name: str | None = None,
    token: str | None = None,
    bot: dict[str, Any] | None = None,
) -> NewEvent:
    """The ``seat_changed`` event: public who and what; a new token's hash kept secret."""
    data: dict[str, Any] = {"seat": seat, "change": change}
    if name is not None:
        data["name"] = name
    if bot is not None:
        data["bot"] = bot
    secret = None if token is None else {"visible_to": [], "token_hash": token_hash(token)}
    return NewEvent(type="seat_changed", actor=actor, data=data, secret=secret)


def _append(found: Services, game_id: str, decide: Any) -> int:
    """Decide on the latest game and append at its version; a concurrent append is retried
    (on the new game, where the seat may since be taken)."""
    attempts = found.config.action_retries + 1
    for attempt in range(attempts):
        game = commands.load_game(found, game_id)
        event = decide(game)
        try:
            result = commands.append(found, game_id, [event], game.version)
        except ConcurrencyConflict:
            if attempt == attempts - 1:
                raise
            continue
        return result.version
    raise AssertionError("unreachable")  # pragma: no cover


def _seat_exists(game: Game, seat: int) -> None:
    count = len(game.meta["players"])
    if not 0 <= seat < count:
        raise CommandError("no_such_seat", f"This game has seats 0 to {count - 1}.")


def _no_branch(game: Game) -> None:
    if "branch" in game.meta:
        raise CommandError("seats_fixed", "A branch's one token plays every seat; it has no lobby.")


def _before_start(game: Game, seat: int) -> None:
    _seat_exists(game, seat)
    _no_branch(game)
    if started(game):
        raise CommandError("game_started", "The game has started: its seats are settled.")


def _held(game: Game, seat: int) -> None:
    """The seat is a player's (not open, not a bot's)."""
    kind = seat_kind(game, seat)
    if kind == "open":
        raise CommandError("seat_open", f"Seat {seat} is open: nobody holds a token for it.")
    if kind == "bot":
        raise CommandError("seat_is_bot", f"Seat {seat} is played by a bot, which has no token.")


#: Seconds a client is told to wait when a cap on lobbies or bot games is reached.
CAP_RETRY_AFTER = 60


def check_caps(found: Services, seats: list[Any]) -> None:
    """Refuse a new game with an open seat past ``MEEPLE_MAX_OPEN_GAMES`` waiting games, or
    with a bot seat past ``MEEPLE_MAX_BOT_GAMES`` unfinished ones (429): anonymous clients
    may start these, so how many there are at once is bounded. Counted in the game index, a
    moment behind the log."""
    opened = any(isinstance(seat, dict) and seat.get("open") for seat in seats)
    botted = any(isinstance(seat, dict) and seat.get("bot") for seat in seats)
    if not opened and not botted:
        return
    waiting, with_bots = found.game_index.count_lobbies()
    config = found.config
    retry = {"Retry-After": str(CAP_RETRY_AFTER)}
    if opened and waiting >= config.max_open_games:
        raise ApiError(
            429,
            "too_many_open_games",
            f"{waiting} games already wait for players; join one (GET /games?open=true) "
            "or name every player.",
            headers=retry,
        )
    if botted and with_bots >= config.max_bot_games:
        raise ApiError(
            429,
            "too_many_bot_games",
            f"{with_bots} games with bots are under way; try again later.",
            headers=retry,
        )


# -- HTTP ------------------------------------------------------------------------------


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
    authorization = request.headers.get("Authorization")
    return resolve_viewer(game.meta, authorization, services().config.admin_key)


def _own_seat_or_admin(game_id: str, seat: int) -> tuple[Game, Viewer]:
    """The game, and who asks, when it is ``seat`` itself (its token) or the admin."""
    game, viewer = _viewer(game_id)
    _seat_path(game, seat)
    if not viewer.admin:
        if not viewer.authenticated:
            raise AuthError("missing_token", "Send the seat's token or the admin key.")
        if viewer.seat != seat:
            raise ApiError(403, "not_your_seat", "Your token is for another seat.")
    return game, viewer


def _caps_before_change(
    game: Game, viewer: Viewer, *, opens: bool = False, bot: Any = None
) -> None:
    """A game that a change makes wait for players (a seat left) or have a bot (a seat given
    to one) counts against the service-wide caps as a new game would (``check_caps``); one
    already counted (an open seat, a bot already seated) and the admin are not refused."""
    if viewer.admin:
        return
    seats: list[Any] = []
    if opens and not game.open_seats:
        seats.append({"open": True})
    if bot is not None and not any(game.meta.get("bots") or []):
        seats.append({"bot": bot})
    check_caps(services(), seats)


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
        first answers 409 ``seat_taken``.
      security: [{}]
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
        403: [not_your_seat]
        409: [game_started, seat_open, seat_is_bot, seats_fixed, version_conflict]
        429: [too_many_open_games]
      tags: [lobby]
      summary: Leave a seat before the start
      description: >
        With the seat's own token, or the admin key (who may open any seat). A game that
        starts to wait for players this way counts against ``MEEPLE_MAX_OPEN_GAMES`` as a
        new one would (429 ``too_many_open_games``; not for the admin).
      security: [{seatToken: []}, {adminKey: []}]
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
    return jsonify(_seat_answer(game_id, left, "open"))


@bp.post("/games/<game_id>/seats/<int:seat>/token")
def post_seat_token(game_id: str, seat: int) -> tuple[Response, int, dict[str, str]]:
    """A new token for a seat: rotated with its own token, re-issued with the admin key.
    ---
    post:
      operationId: renewSeatToken
      codes:
        404: [not_found]
        403: [not_your_seat]
        409: [seat_open, seat_is_bot, seats_fixed, version_conflict]
      tags: [lobby]
      summary: Rotate or re-issue a seat's token
      description: >
        With the seat's own token: a new token replaces it (the old one stops working at
        once). With the admin key: a lost token is re-issued the same way. The new token is
        in this response only.
      security: [{seatToken: []}, {adminKey: []}]
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
    renewed = renew_token(services(), game_id, seat, by_admin=viewer.admin)
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
        404: [not_found]
        409: [seat_taken, game_started, seats_fixed, version_conflict]
        429: [too_many_bot_games]
      tags: [lobby]
      summary: Give an open seat to a bot
      description: >
        Any seat of the game (its token) or the admin may fill an open seat with a bot;
        a bot plays its turns in the background as soon as they are due (docs/api.md, "Bots").
        A game's first bot counts against ``MEEPLE_MAX_BOT_GAMES`` as a new bot game would
        (429 ``too_many_bot_games``; not for the admin).
      security: [{seatToken: []}, {adminKey: []}]
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
        409: Conflict
    """
    bot = BotSchema().load(json_body())
    game, viewer = _viewer(game_id)
    _seat_path(game, seat)
    if not viewer.admin and viewer.seat is None:
        raise AuthError("missing_token", "Send a seat token of this game or the admin key.")
    _caps_before_change(game, viewer, bot=bot)
    seated = seat_bot(services(), game_id, seat, bot, viewer)
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
