"""Client applications (service.application.apps; docs/api.md, "Applications"): registering
one, its key (rotated, revoked), what it uses of its limits, its games, and its one stream of
every event of every game it holds.

``GET /apps/me/stream`` is the live streams' work (``service.http.resources.stream``) over many
games at once: a watcher per held game on the process's shared feeds (``service.live.hub``),
all waking the one stream; each event sent once, as each seat the application holds may see
it (``visibility.visible_envelope``, the per-seat streams' own redaction) with where the game
stands after it (``live_status``). Its messages' ``id`` is a cursor over every game it follows:
``<N>;<n>:<seq>,...`` (``N``: the number of the last game the application took that the
stream knew of; then each followed game's number and the last seq sent), so ``Last-Event-ID``
resumes all of them, nothing lost or repeated: a game numbered above ``N`` is new to the
client and starts from its first event, a game at or below ``N`` that is not listed was over
and wholly sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, request
from marshmallow import Schema, fields, validate

from events.envelope import Envelope
from projections.fold import Game
from service.application import app_custody, apps, commands, request_shares
from service.application.auth import AuthError
from service.application.commands import GameNotFound
from service.application.live_status import GameHistory, Standing, must_act, public_status
from service.application.lobby import seats_of
from service.application.visibility import seat_left, visible_envelope
from service.application.webhooks import WebhookError, new_webhook, vet_url
from service.http.app_keys import forget_request_app, request_app, request_key
from service.http.errors import ApiError
from service.http.limits import RULES, client_address
from service.http.resources.stream import (
    PAGE,
    RECONNECT_MS,
    StreamBody,
    bound_writes,
    client_gone,
)
from service.http.resources.webhooks import WebhookCreateSchema
from service.http.schemas import GameStatusSchema
from service.http.shared import json_body, load_query, services
from service.live.hub import FeedView, Refusal, Share, Slot

bp = Blueprint("apps", __name__)

#: The most games one page of GET /apps/me/games holds.
MAX_PAGE = 100
#: The longest Last-Event-ID an application stream takes (a cursor of some 1,000 games).
MAX_CURSOR = 16_000
_CURSOR = re.compile(r"^(\d{1,9})(?:;((?:\d{1,9}:\d{1,18})(?:,\d{1,9}:\d{1,18})*)?)?$")


# -- schemas -----------------------------------------------------------------------------------


class AppCreateSchema(Schema):
    name = fields.String(
        required=True,
        validate=validate.Length(min=1, max=64),
        metadata={"description": "What the application calls itself (shown to it alone)"},
    )


class AppCreatedSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    created_at = fields.Float(required=True, metadata={"description": "Unix time"})
    key = fields.String(
        required=True,
        metadata={"description": "The application's secret key (mla_...): shown only once"},
    )


class AppKeySchema(Schema):
    id = fields.String(required=True)
    key = fields.String(
        required=True, metadata={"description": "The new key: shown only once; the old one is dead"}
    )


class AppUsageSchema(Schema):
    games = fields.Integer(required=True, metadata={"description": "Games it holds seats of"})
    active_games = fields.Integer(required=True, metadata={"description": "Of those, unfinished"})
    open_games = fields.Integer(
        required=True, metadata={"description": "Of those, waiting for players"}
    )
    bot_games = fields.Integer(
        required=True, metadata={"description": "Its games with bots under way"}
    )
    streams = fields.Integer(required=True, metadata={"description": "Its open streams"})


class AppLimitsSchema(Schema):
    bot_games = fields.Integer(
        required=True, metadata={"description": "MEEPLE_MAX_BOT_GAMES_PER_OWNER"}
    )
    analyses = fields.Integer(required=True, metadata={"description": "MEEPLE_ANALYSES_PER_OWNER"})
    streams = fields.Integer(required=True, metadata={"description": "MEEPLE_APP_STREAMS"})
    rate_limits = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "Each rate limit counted per application (its scope -> the "
            "limits, like 30/minute;300/hour)"
        },
    )


class AppSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    created_at = fields.Float(required=True, metadata={"description": "Unix time"})
    usage = fields.Nested(AppUsageSchema, required=True)
    limits = fields.Nested(AppLimitsSchema, required=True)


class AppGamesQuerySchema(Schema):
    status = fields.String(validate=validate.OneOf(["active", "finished"]))
    my_turn = fields.Boolean(
        metadata={"description": "true: games where one of its seats must act now"}
    )
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_PAGE))
    cursor = fields.String(validate=validate.Regexp(r"^[0-9]{1,9}$"))


class AppSeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    must_act = fields.Boolean(required=True, metadata={"description": "The game awaits it now"})


class AppGameSchema(Schema):
    id = fields.String(required=True)
    ruleset = fields.String(required=True)
    version = fields.Integer(required=True)
    players = fields.List(fields.String(), required=True)
    status = fields.Nested(GameStatusSchema, required=True)
    seats = fields.List(
        fields.Nested(AppSeatSchema), required=True, metadata={"description": "The seats it holds"}
    )
    my_turn = fields.Boolean(required=True, metadata={"description": "One of its seats must act"})


class AppGameListSchema(Schema):
    games = fields.List(fields.Nested(AppGameSchema), required=True)
    next_cursor = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Pass as ?cursor= for the next page; null on the last"},
    )


class AppWebhookSchema(Schema):
    id = fields.String(required=True)
    url = fields.String(required=True)
    events = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)


class AppWebhookListSchema(Schema):
    webhooks = fields.List(fields.Nested(AppWebhookSchema), required=True)


# -- who asks ----------------------------------------------------------------------------------


def _app() -> apps.App:
    """The application whose key the request sends, or 401."""
    if request_key() is None:
        raise AuthError(
            "missing_token", "Send your application's key as 'Authorization: Bearer mla_...'."
        )
    app = request_app()
    if app is None:
        raise AuthError("invalid_token", "This application key is unknown or was revoked.")
    return app


# -- endpoints ---------------------------------------------------------------------------------


@bp.post("/apps")
def register_app() -> tuple[Response, int, dict[str, str]]:
    """Register a client application; its key is in this response only.
    ---
    post:
      operationId: registerApp
      codes: {429: [too_many_apps]}
      tags: [apps]
      summary: Register a client application
      description: >
        Anyone may register an application (rate-limited per client address,
        ``MEEPLE_RATE_LIMIT_APPS``, and at most ``MEEPLE_MAX_APPS_PER_ADDRESS`` of them per
        address: 429 ``too_many_apps``). The answer holds its secret key, once; the service
        keeps only its hash. Send it as ``Authorization: Bearer mla_...``: the games it
        creates are its own, it holds the seats it names or joins, and it follows them all
        on one stream (docs/api.md, "Applications").
      requestBody:
        required: true
        content:
          application/json:
            schema: AppCreateSchema
      responses:
        201:
          description: The application, with its key.
          headers:
            Location: Location
          content:
            application/json:
              schema: AppCreatedSchema
    """
    body = AppCreateSchema().load(json_body())
    found = services()
    try:
        app, key = apps.register_app(
            found.apps,
            body["name"],
            client_address(request.remote_addr),
            found.config.max_apps_per_address,
        )
    except apps.AppError as error:
        raise ApiError(
            error.status, error.code, error.message, headers={"Retry-After": "3600"}
        ) from None
    payload = {"id": app.id, "name": app.name, "created_at": app.created_at, "key": key}
    return jsonify(payload), 201, {"Location": "/apps/me", "Cache-Control": "no-store"}


@bp.get("/apps/me")
def get_app() -> Response:
    """The application whose key is sent: what it uses of its limits.
    ---
    get:
      operationId: getApp
      tags: [apps]
      summary: The application, its usage and its limits
      description: >
        What the application's key counts against (each limit counts per application where
        its key is sent, not per address or token): the games it holds, its bot games, its
        open streams, and the limits they count against.
      security: [{appKey: []}]
      responses:
        200:
          description: The application.
          content:
            application/json:
              schema: AppSchema
        401: Unauthorized
    """
    app = _app()
    found = services()
    settings = found.jobs.settings
    games = [game for _, game in _held_games(app)]
    statuses = [public_status(game) for game in games]
    usage = {
        "games": len(games),
        "active_games": sum(not status["finished"] for status in statuses),
        "open_games": sum(bool(status["waiting_for_players"]) for status in statuses),
        "bot_games": len(found.jobs.bot_games.live(app.owner)),
        "streams": found.jobs.streams.slots.count("address", app.owner),
    }
    config = found.config
    rate_limits = {
        rule.scope: getattr(config, rule.setting)
        for rule in RULES
        if rule.per_app and not rule.only_anonymous  # a key is never anonymous
    }
    limits = {
        "bot_games": config.max_bot_games_per_owner,
        "analyses": settings.analyses_per_owner,
        "streams": settings.app_streams,
        "rate_limits": rate_limits,
    }
    return jsonify(
        {
            "id": app.id,
            "name": app.name,
            "created_at": app.created_at,
            "usage": usage,
            "limits": limits,
        }
    )


@bp.post("/apps/me/key")
def rotate_app_key() -> tuple[Response, int, dict[str, str]]:
    """A new key for the application; the old one stops working at once.
    ---
    post:
      operationId: rotateAppKey
      tags: [apps]
      summary: Rotate the application's key
      description: >
        The new key is in this response only; from now on the old one gets 401
        ``invalid_token``. What the application holds stays its own.
      security: [{appKey: []}]
      responses:
        201:
          description: The new key.
          content:
            application/json:
              schema: AppKeySchema
        401: Unauthorized
    """
    app = _app()
    old = request_key()
    assert old is not None
    key = apps.rotate_key(services().apps, app, old)
    forget_request_app()
    return jsonify({"id": app.id, "key": key}), 201, {"Cache-Control": "no-store"}


@bp.delete("/apps/me")
def revoke_app() -> tuple[str, int]:
    """Revoke the application: its key stops working at once and it holds nothing more.
    ---
    delete:
      operationId: revokeApp
      tags: [apps]
      summary: Revoke the application
      description: >
        The key gets 401 ``invalid_token`` from now on, in every process at once. Its games
        go on: their seat tokens keep working for whoever holds them.
      security: [{appKey: []}]
      responses:
        204:
          description: Revoked.
        401: Unauthorized
    """
    app = _app()
    key = request_key()
    assert key is not None
    app_custody.revoke(services(), app, apps.key_hash(key))
    forget_request_app()
    return "", 204


@bp.get("/apps/me/games")
def list_app_games() -> Response:
    """The games the application holds seats of, newest first.
    ---
    get:
      operationId: listAppGames
      tags: [apps]
      summary: The application's games
      description: >
        Each game with its status, the seats the application holds there and whether each
        must act now; ``my_turn=true`` keeps the games where one of them must. Pages of
        ``limit`` games, newest first (``next_cursor``).
      security: [{appKey: []}]
      parameters:
        - {in: query, name: status, schema: {type: string, enum: [active, finished]}}
        - {in: query, name: my_turn, schema: {type: boolean},
           description: "true: the games where one of its seats must act now; false: the others"}
        - {in: query, name: limit, schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
        - {in: query, name: cursor, schema: {type: string, pattern: '^[0-9]{1,9}$'},
           description: "next_cursor of the previous page"}
      responses:
        200:
          description: A page of its games.
          content:
            application/json:
              schema: AppGameListSchema
        401: Unauthorized
    """
    app = _app()
    query = load_query(AppGamesQuerySchema())
    before = int(query["cursor"]) if "cursor" in query else None
    rows: list[dict[str, Any]] = []
    next_cursor = None
    last_number = 0
    for held, game in reversed(_held_games(app, before)):
        row = app_game(game, held.seats)
        finished = row["status"]["finished"]
        if "status" in query and (query["status"] == "finished") != finished:
            continue
        if "my_turn" in query and query["my_turn"] != row["my_turn"]:
            continue
        if len(rows) == query["limit"]:
            next_cursor = str(last_number)
            break
        rows.append(row)
        last_number = held.number
    return jsonify({"games": rows, "next_cursor": next_cursor})


def app_game(game: Game, seats: tuple[int, ...]) -> dict[str, Any]:
    """A held game as GET /apps/me/games lists it."""
    status = public_status(game)
    names = seats_of(game)
    mine = [
        {"seat": seat, "name": names[seat]["name"], "must_act": must_act(status, seat)}
        for seat in seats
    ]
    return {
        "id": game.meta["game_id"],
        "ruleset": game.ruleset.id,
        "version": game.version,
        "players": [str(name) for name in game.meta["players"]],
        "status": status,
        "seats": mine,
        "my_turn": any(seat["must_act"] for seat in mine),
    }


def _held_games(app: apps.App, before: int | None = None) -> list[tuple[apps.Held, Game]]:
    """The games the application holds a seat of (numbered below ``before``), oldest first."""
    found = services()
    games = []
    for held in found.apps.held(app.id):
        if not held.seats or (before is not None and held.number >= before):
            continue
        try:
            games.append((held, commands.load_game(found, held.game_id)))
        except GameNotFound:
            continue
    return games


# -- the application's webhooks ---------------------------------------------------------------


def _public(hook: dict[str, Any]) -> dict[str, Any]:
    return {key: hook[key] for key in ("id", "url", "events", "created_at")}


@bp.post("/apps/me/webhooks")
def create_app_webhook() -> tuple[Response, int, dict[str, str]]:
    """Register a webhook for every game the application holds.
    ---
    post:
      operationId: createAppWebhook
      codes:
        409: [too_many_webhooks]
        422: [invalid_webhook_url, invalid_webhook_events, webhook_url_forbidden]
      tags: [apps]
      summary: Register an application webhook
      description: >
        The same deliveries as a seat's webhook (``POST /games/{id}/webhooks``, signed the
        same way with ``secret``), for every seat the application holds, in every game it
        holds now or takes later: one delivery per event and held seat, the event as that
        seat may see it, with the game's status and ``you``; ``webhook_id`` is this
        webhook's id. An application may have ``MEEPLE_WEBHOOK_MAX_PER_SEAT`` of them (409
        ``too_many_webhooks``).
      security: [{appKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: WebhookCreateSchema
      responses:
        201:
          description: The webhook (never its secret).
          content:
            application/json:
              schema: AppWebhookSchema
        401: Unauthorized
        409: Conflict
        422: UnprocessableEntity
    """
    app = _app()
    body = WebhookCreateSchema().load(json_body())
    found = services()
    settings = found.jobs.settings
    try:
        vet_url(body["url"], settings.allow_list)
        made = new_webhook("", body["url"], body["secret"], body["events"], {"app": app.id}, 0)
    except WebhookError as error:
        raise ApiError(
            422, error.code, error.message, errors={error.field: [error.message]}
        ) from None
    hook = {key: made[key] for key in ("id", "url", "secret", "events", "created_at")}
    if not app_custody.add_webhook(found, app.id, hook, settings.webhook_max_per_seat):
        raise ApiError(
            409,
            "too_many_webhooks",
            f"An application may have {settings.webhook_max_per_seat} webhooks. Remove one first.",
        )
    return jsonify(_public(hook)), 201, {"Location": f"/apps/me/webhooks#{hook['id']}"}


@bp.get("/apps/me/webhooks")
def list_app_webhooks() -> Response:
    """The application's webhooks.
    ---
    get:
      operationId: listAppWebhooks
      tags: [apps]
      summary: List the application's webhooks
      security: [{appKey: []}]
      responses:
        200:
          description: Its webhooks, oldest first (never their secrets).
          content:
            application/json:
              schema: AppWebhookListSchema
        401: Unauthorized
    """
    app = _app()
    return jsonify({"webhooks": [_public(hook) for hook in services().apps.webhooks(app.id)]})


@bp.delete("/apps/me/webhooks/<webhook_id>")
def delete_app_webhook(webhook_id: str) -> tuple[str, int]:
    """Remove one of the application's webhooks.
    ---
    delete:
      operationId: deleteAppWebhook
      codes: {404: [not_found]}
      tags: [apps]
      summary: Remove an application webhook
      security: [{appKey: []}]
      responses:
        204:
          description: Removed, from every game; pending retries are given up.
        401: Unauthorized
    """
    app = _app()
    if not app_custody.remove_webhook(services(), app.id, webhook_id):
        raise ApiError(404, "not_found", "Your application has no such webhook.")
    return "", 204


# -- the application's stream ------------------------------------------------------------------


@dataclass
class Followed:
    """A game the stream follows: its number, the seats held, the last seq sent, its watcher."""

    number: int
    seats: frozenset[int]
    cursor: int
    watcher: Any
    history: GameHistory


def parse_cursor(raw: str) -> tuple[int, dict[int, int]]:
    """A Last-Event-ID of this stream: the last game number known, and each game's last seq."""
    match = _CURSOR.match(raw.strip()) if len(raw) <= MAX_CURSOR else None
    if match is None:
        raise ApiError(
            400,
            "invalid_header",
            "Last-Event-ID is the id of the last message of this stream, like '3;1:12,3:4'.",
        )
    positions: dict[int, int] = {}
    for part in (match.group(2) or "").split(","):
        if part:
            number, _, seq = part.partition(":")
            positions[int(number)] = int(seq)
    return int(match.group(1)), positions


def format_cursor(known: int, followed: dict[str, Followed]) -> str:
    parts = sorted((entry.number, entry.cursor) for entry in followed.values())
    return f"{known};" + ",".join(f"{number}:{seq}" for number, seq in parts)


@bp.get("/apps/me/stream")
def app_stream() -> Response:
    """Every event of every game the application holds, live, as each held seat may see it.
    ---
    get:
      operationId: streamAppEvents
      codes: {429: [too_many_streams]}
      tags: [apps]
      summary: One stream of all its games (Server-Sent Events)
      description: >
        ``text/event-stream``: one message per event of each game the application holds
        seats of (games it takes meanwhile included, from their first event): ``event``
        is the event's type, ``data`` an AppStreamEvent (the ``game_id``, the game's
        ``status`` after the event, and for each held seat the event as that seat may see it
        with ``you``: whether it must act then and the decision it faces). Each stream first
        sends an ``event: turn`` message (no ``id``) per game it follows: where it stands now.
        ``id`` is a cursor over every game (``<N>;<n>:<seq>,...``): resume with
        ``Last-Event-ID`` (EventSource does so by itself) and nothing is lost or repeated in
        any game. Without it only new events are sent. Lines starting with ``:`` are
        comments (heartbeats, and a last one when the server ends the stream after
        ``MEEPLE_STREAM_MAX_SECONDS``). At most ``MEEPLE_APP_STREAMS`` streams per
        application (its games' own streams with its key included): 429
        ``too_many_streams``.
      security: [{appKey: []}]
      parameters:
        - {in: header, name: Last-Event-ID, required: false, schema: {type: string},
           description: "The id of the last message received"}
      responses:
        200:
          description: The stream.
          content:
            text/event-stream:
              schema:
                type: string
                description: >
                  Server-Sent Events: a first ``retry: <ms>``, an ``event: turn`` per
                  followed game (``data``: an AppStreamTurn as JSON), then one message per
                  event, each of ``id: <cursor>``, ``event: <the event's type>`` and
                  ``data: <an AppStreamEvent as JSON>``.
              example: |
                event: turn
                data: {"game_id": "g1", "version": 2, "status": {}, "seats": []}

                id: 1;1:3
                event: action
                data: {"game_id": "g1", "seq": 3, "type": "action", "status": {}, "seats": []}

        400: BadRequest
        401: Unauthorized
        429: TooManyRequests
    """
    app = _app()
    found = services()
    header = request.headers.get("Last-Event-ID")
    resumed = parse_cursor(header) if header is not None and header.strip() else None
    slot = _take_app_slot(found, app)
    client = request.environ.get("gunicorn.socket") or request.environ.get("werkzeug.socket")
    restore = bound_writes(client, found.jobs.settings)
    events = _app_events(found, app, resumed, slot, client)
    return Response(
        StreamBody(events, slot, restore),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Vary": "Authorization"},
    )


def _take_app_slot(found: Any, app: apps.App) -> Slot:
    settings = found.jobs.settings
    cap = settings.app_streams
    taken = found.jobs.streams.slots.acquire(
        app.owner, f"app-{app.id}", Share("app", cap), cap, cap, settings.stream_max_seconds
    )
    if isinstance(taken, Refusal):
        raise ApiError(
            429,
            "too_many_streams",
            f"{cap} streams of your application are open, the most allowed; close one or try "
            f"again in {taken.retry_after} seconds.",
            headers={"Retry-After": str(taken.retry_after)},
        )
    taken.opened()
    return taken


def _app_events(
    found: Any,
    app: apps.App,
    resumed: tuple[int, dict[int, int]] | None,
    slot: Slot,
    client: Any,
) -> Iterator[str]:
    """The stream's body; runs outside the request context, on the services alone."""
    settings = found.jobs.settings
    began = time.monotonic()
    woken = threading.Event()
    followed: dict[str, Followed] = {}
    known = resumed[0] if resumed is not None else 0
    positions = resumed[1] if resumed is not None else {}
    fresh = resumed is None

    def follow(held: apps.Held, cursor: int) -> None:
        watcher = found.jobs.subscribe(held.game_id, woken)
        history = GameHistory(found.folder, held.game_id)
        followed[held.game_id] = Followed(
            held.number, frozenset(held.seats), cursor, watcher, history
        )

    def look_at_custody() -> list[str]:
        """Follow the games taken since, let go of those let go; the turn messages of the new."""
        nonlocal known, fresh
        turns = []
        holding = {held.game_id: held for held in found.apps.held(app.id) if held.seats}
        for game_id in [g for g in followed if g not in holding]:
            followed.pop(game_id).watcher.close()
        for game_id, held in holding.items():
            entry = followed.get(game_id)
            if entry is not None:
                entry.seats = frozenset(held.seats)
                continue
            if held.number <= known:
                if held.number not in positions:
                    continue  # over, and wholly sent before
                cursor = positions.pop(held.number)
            elif fresh:
                cursor = found.store.version(game_id)  # a new stream: only what comes
            else:
                cursor = 0  # a game new to the client: from its first event
            follow(held, cursor)
            entry = followed[game_id]
            view = entry.watcher.view(found, settings.stream_poll)
            if view.finished and cursor >= view.version:
                followed.pop(game_id).watcher.close()
                continue
            turns.append(_turn(game_id, view, entry.seats))
        known = max([known, *(held.number for held in holding.values())])
        fresh = False
        return turns

    try:
        yield f"retry: {RECONNECT_MS}\n\n"
        yield "".join(look_at_custody())
        looked = time.monotonic()
        quiet_since = began
        while True:
            if any(entry.watcher.ending for entry in followed.values()):
                yield _goodbye("the server is restarting")
                return
            if time.monotonic() - looked >= settings.stream_check_interval:
                turns = look_at_custody()
                looked = time.monotonic()
                if turns:
                    yield "".join(turns)
            sent = False
            for game_id in list(followed):
                text = _game_messages(found, game_id, followed, known)
                if text:
                    yield text
                    sent = True
            now = time.monotonic()
            if sent:
                quiet_since = now
                continue
            left = settings.stream_max_seconds - (now - began)
            if left <= 0:
                yield _goodbye("this stream reached its lifetime")
                return
            if now - quiet_since >= settings.stream_heartbeat:
                yield ": heartbeat\n\n"
                quiet_since = now
            if client is not None and client_gone(client):
                return
            slot.renew()
            until_heartbeat = settings.stream_heartbeat - (now - quiet_since)
            with request_shares.aside():
                woken.wait(max(0.0, min(settings.stream_check_interval, left, until_heartbeat)))
            woken.clear()
    finally:
        for entry in followed.values():
            entry.watcher.close()
        slot.release()


def _game_messages(found: Any, game_id: str, followed: dict[str, Followed], known: int) -> str:
    """The messages of one followed game's events since its cursor (a page at most); a game
    over and wholly sent is followed no more."""
    entry = followed[game_id]
    view = entry.watcher.view(found, found.jobs.settings.stream_poll)
    batch = view.after(entry.cursor)
    if batch is None:  # further behind than the feed keeps: read from the store
        batch = found.store.read(
            game_id, after=entry.cursor, limit=min(PAGE, view.version - entry.cursor)
        )
        entry.history.through(batch)
    texts = []
    for envelope in batch:
        seq = int(envelope["seq"])
        after = view.standings.get(seq) or entry.history.standing(seq)
        if any(seat_left(envelope, seat) for seat in entry.seats):
            # Its seat is open again: whoever joins next is not the application.
            entry.seats = entry.seats - {int(envelope["data"]["seat"])}
        entry.cursor = seq
        if view.finished and seq >= view.version:
            followed.pop(game_id).watcher.close()
        texts.append(_message(game_id, envelope, view, after, entry.seats, known, followed))
        if not entry.seats:
            followed.pop(game_id, None)
            entry.watcher.close()
            break
    return "".join(texts)


def _message(
    game_id: str,
    envelope: Envelope,
    view: FeedView,
    after: Standing,
    seats: frozenset[int],
    known: int,
    followed: dict[str, Followed],
) -> str:
    """One event as every held seat may see it, with the game's status after it."""
    data = {
        "game_id": game_id,
        "seq": envelope["seq"],
        "type": envelope["type"],
        "status": after.status,
        "seats": [
            {
                "seat": seat,
                "event": visible_envelope(
                    envelope, seat, finished=view.finished, sealed=view.sealed
                ),
                "you": after.you(seat),
            }
            for seat in sorted(seats)
        ],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    cursor = format_cursor(known, followed)
    return f"id: {cursor}\nevent: {envelope['type']}\ndata: {text}\n\n"


def _goodbye(reason: str) -> str:
    """The last lines of a stream the server ends (a resume with Last-Event-ID misses nothing)."""
    return f": end of stream: {reason}; reconnect with Last-Event-ID\n\n"


def _turn(game_id: str, view: FeedView, seats: frozenset[int]) -> str:
    """Where a followed game stands now, for each held seat (no ``id``: not an event)."""
    current = view.current
    assert current is not None
    data = {
        "game_id": game_id,
        "version": view.version,
        "status": current.status,
        "seats": [current.you(seat) for seat in sorted(seats)],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: turn\ndata: {text}\n\n"
