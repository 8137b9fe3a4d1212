"""``/games/{id}/webhooks``: a seat (or the admin) asks to be told what happens in a game.

A seat's webhook sees what that seat may see and is listed only to that seat; the admin's
sees everything and the admin lists every webhook of the game. How deliveries are signed
and retried: ``service.application.webhooks``. Bodies: ``WebhookCreateSchema`` (request),
``WebhookSchema`` and ``WebhookListSchema`` (responses), documented for openapi.yaml in each
view's docstring (the convention of ``service.http.openapi``).
"""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for
from marshmallow import RAISE, Schema, fields, validate

from service.application import commands
from service.application.auth import AuthError, Viewer
from service.application.webhook_lanes import FAILURES, public_pause
from service.application.webhooks import (
    MAX_URL_LENGTH,
    OUTCOMES,
    WEBHOOK_EVENTS,
    WebhookError,
    new_webhook,
    owner_lane,
    public_delivery,
    public_webhook,
    receiver_of,
    vet_url,
)
from service.http.errors import ApiError
from service.http.limits import client_address
from service.http.shared import authenticate, json_body, services

bp = Blueprint("webhooks", __name__)

#: How many recent deliveries GET lists per webhook.
LISTED_DELIVERIES = 20


class WebhookCreateSchema(Schema):
    """POST /games/{id}/webhooks: where to POST notices, the signing secret, what to send."""

    class Meta:
        unknown = RAISE

    url = fields.String(
        required=True,
        metadata={
            "description": "http(s) URL the deliveries are POSTed to; its host must resolve to "
            "public internet addresses (or be allowed by the operator)",
            "format": "uri",
            "maxLength": MAX_URL_LENGTH,
        },
    )
    secret = fields.String(
        required=True,
        load_only=True,
        validate=validate.Length(min=16, max=256),
        metadata={"description": "Signs each delivery (Meeple-Signature header); never shown"},
    )
    events = fields.List(
        fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)),
        load_default=lambda: list(WEBHOOK_EVENTS),
        validate=validate.Length(min=1, max=len(WEBHOOK_EVENTS)),
        metadata={"description": "What to be told of (default: everything)"},
    )


class WebhookOwnerSchema(Schema):
    seat = fields.Integer(metadata={"description": "The seat that registered it"})
    admin = fields.Boolean(metadata={"description": "Registered with the admin key"})


class DeliveryAttemptSchema(Schema):
    at = fields.String(
        required=True, metadata={"description": "When it started (UTC ISO-8601, to the second)"}
    )
    outcome = fields.String(
        required=True,
        validate=validate.OneOf(OUTCOMES),
        metadata={
            "description": "What came of it: the receiver answered (``http_status``), or did "
            "not in time (``timeout``), or could not be reached (``connection_failed``), or "
            "its host resolves to an address webhooks may not reach now (``forbidden``), or "
            "the webhook was removed (``webhook_removed``). Delivered when ``http_status`` "
            "with a 2xx ``status``."
        },
    )
    status = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "The receiver's HTTP status (``http_status`` only)"},
    )


class DeliverySchema(Schema):
    id = fields.String(required=True, metadata={"description": "Sent as Meeple-Delivery"})
    kind = fields.String(
        required=True,
        validate=validate.OneOf(WEBHOOK_EVENTS),
        metadata={"description": "Sent as Meeple-Event"},
    )
    seq = fields.Integer(required=True, metadata={"description": "The event it is about"})
    status = fields.String(
        required=True, validate=validate.OneOf(["pending", "delivered", "failed"])
    )
    attempts = fields.List(fields.Nested(DeliveryAttemptSchema), required=True)
    next_attempt_at = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "Unix time (seconds) of the next retry"},
    )
    created_at = fields.String(required=True)


class ReceiverPauseSchema(Schema):
    """The webhook's receiver is paused: it timed out or could not be reached too many times
    in a row (``MEEPLE_WEBHOOK_BREAKER_FAILURES``), for whichever webhooks go there."""

    state = fields.String(
        required=True,
        validate=validate.OneOf(["paused", "probing"]),
        metadata={
            "description": "``paused``: its deliveries are put off until ``until``, no attempt "
            "counted; ``probing``: the pause is over and one delivery at a time tries the "
            "receiver; an answer (any HTTP status) ends the pause, another failure pauses it "
            "again for ``MEEPLE_WEBHOOK_BREAKER_SECONDS``"
        },
    )
    reason = fields.String(
        required=True,
        validate=validate.OneOf(FAILURES),
        metadata={"description": "The outcome of its last failed attempt"},
    )
    failures = fields.Integer(
        required=True, metadata={"description": "Attempts in a row that failed so"}
    )
    until = fields.Integer(
        required=True,
        metadata={
            "description": "Unix time (seconds): ``paused``, when a probe may try it; "
            "``probing``, when the probe has its answer at the latest"
        },
    )


class WebhookSchema(Schema):
    id = fields.String(required=True)
    url = fields.String(required=True)
    events = fields.List(fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)), required=True)
    owner = fields.Nested(WebhookOwnerSchema, required=True)
    created_at = fields.String(required=True)
    cursor = fields.Integer(
        required=True, metadata={"description": "The last game version it was notified of"}
    )
    deliveries = fields.List(
        fields.Nested(DeliverySchema),
        metadata={"description": "The latest deliveries, newest first"},
    )
    pause = fields.Nested(
        ReceiverPauseSchema,
        allow_none=True,
        metadata={"description": "Whether its receiver is paused, and why (null: it is not)"},
    )


class WebhookListSchema(Schema):
    webhooks = fields.List(fields.Nested(WebhookSchema), required=True)


def _owner_viewer(game_id: str) -> tuple[Any, Viewer]:
    """The game and a viewer that may own webhooks (a seat or the admin)."""
    found = services()
    game = commands.load_game(found, game_id)
    viewer = authenticate(game.meta)
    if viewer.seat is None and not viewer.admin:
        raise AuthError("missing_token", "Send your seat token as 'Authorization: Bearer <token>'.")
    return game, viewer


def _owned_by(webhook: dict[str, Any], viewer: Viewer) -> bool:
    """A seat's own webhooks; a client application's (``owner.app``) are its own business,
    managed at /apps/me/webhooks (service.application.app_custody)."""
    if viewer.admin:
        return True
    return not webhook["owner"].get("app") and webhook["owner"].get("seat") == viewer.seat


@bp.post("/games/<game_id>/webhooks")
def create_webhook(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Register a webhook for this game.
    ---
    post:
      operationId: createWebhook
      codes:
        409: [too_many_webhooks]
        422: [invalid_webhook_url, invalid_webhook_events, webhook_url_forbidden]
      tags: [notifications]
      summary: Register a webhook
      description: >
        Each delivery is a JSON body POSTed to ``url`` with the headers ``Meeple-Event``,
        ``Meeple-Delivery`` and ``Meeple-Signature: t=<unix>,v1=<hex>`` where ``v1`` is
        HMAC-SHA256 of ``"<t>.<body>"`` under ``secret``. A delivery that is not answered
        with a 2xx is retried with exponential backoff. A seat's webhook sees only what that
        seat may see; ``your_turn`` tells a seat it is awaited. It ends at a ``seat_changed``
        event of its seat (left, joined, given to a bot, its token renewed): nothing after
        it is sent, and the webhook is removed.

        The URL's host is resolved now and again before every delivery, and must resolve
        only to public internet addresses: loopback, private, shared, link-local, multicast,
        reserved and unique-local addresses (in any spelling) are refused unless the
        operator allows the host (``MEEPLE_WEBHOOK_ALLOW_HOSTS``). Redirects are not
        followed. A seat may hold ``MEEPLE_WEBHOOK_MAX_PER_SEAT`` webhooks of a game, and
        a game's seats ``MEEPLE_WEBHOOK_MAX_PER_GAME`` together.

        Every webhook a client registers (from one address, in any game, for any seat)
        shares that client's lane: at most ``MEEPLE_WEBHOOK_PER_OWNER`` of its deliveries
        are in flight at once, and at most ``MEEPLE_WEBHOOK_PER_RECEIVER`` to one receiver
        (scheme, host and port); the lanes take turns. A receiver whose attempts time out
        or cannot connect ``MEEPLE_WEBHOOK_BREAKER_FAILURES`` times in a row is paused for
        ``MEEPLE_WEBHOOK_BREAKER_SECONDS`` (its deliveries wait, no attempt counted), then
        probed by one delivery; ``listWebhooks`` shows the pause (``pause``).
      security: [{seatToken: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: WebhookCreateSchema
      responses:
        201:
          description: Registered; notified of what happens from now on.
          headers:
            Location: Location
          content:
            application/json:
              schema: WebhookSchema
        401: Unauthorized
        409: Conflict
        422: UnprocessableEntity
      callbacks:
        delivery:
          '{$request.body#/url}':
            post:
              operationId: receiveWebhookDelivery
              summary: A delivery, POSTed to the webhook's URL
              description: >
                One JSON body per delivery, its ``kind`` in ``Meeple-Event``; every attempt
                of a delivery sends the same body. Check ``Meeple-Signature`` before trusting
                it: ``v1`` is the hex HMAC-SHA256, under the webhook's ``secret``, of
                ``"<t>.<body>"`` (the body's exact bytes); refuse a ``t`` older than a few
                minutes. A seat's webhook gets events as that seat may see them (a secret
                withheld: ``redacted: true``).
              security: []
              parameters:
                - {in: header, name: Meeple-Event, required: true,
                   schema: {type: string, enum: [action, system, undone, redone, your_turn,
                   game_finished]}}
                - {in: header, name: Meeple-Delivery, required: true, schema: {type: string},
                   description: "The delivery's id (delivery_id), the same on every attempt"}
                - {in: header, name: Meeple-Signature, required: true,
                   schema: {type: string, pattern: "^t=[0-9]+,v1=[0-9a-f]{64}$"},
                   description: "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, t.body)>"}
              requestBody:
                required: true
                content:
                  application/json:
                    schema:
                      $ref: '#/components/schemas/WebhookDelivery'
              responses:
                2XX:
                  description: Received; the delivery is done.
                4XX:
                  description: >
                    Refused: like any answer but a 2xx (or none within
                    ``MEEPLE_WEBHOOK_TIMEOUT``), retried with exponential backoff up to
                    ``MEEPLE_WEBHOOK_MAX_ATTEMPTS`` attempts.
    """
    game, viewer = _owner_viewer(game_id)
    body = WebhookCreateSchema().load(json_body())
    owner = {"admin": True} if viewer.admin else {"seat": viewer.seat}
    # Whose share of delivery it takes: the client's, whichever game and seat it is for.
    lane = owner_lane(None if viewer.admin else client_address(request.remote_addr))
    settings = services().jobs.settings
    try:
        vet_url(body["url"], settings.allow_list)
        webhook = new_webhook(
            game_id, body["url"], body["secret"], body["events"], owner, game.version, lane
        )
    except WebhookError as error:
        raise ApiError(
            422, error.code, error.message, errors={error.field: [error.message]}
        ) from None
    refusal: list[str] = []

    def within_caps(existing: list[dict[str, Any]]) -> bool:
        refusal.clear()
        # The admin is the operator: its webhooks count against no cap.
        if viewer.admin:
            return True
        owners = [hook["owner"] for hook in existing]
        seats = [{"owner": o} for o in owners if "seat" in o and "app" not in o]
        if (
            sum(hook["owner"]["seat"] == viewer.seat for hook in seats)
            >= settings.webhook_max_per_seat
        ):
            refusal.append(f"A seat may have {settings.webhook_max_per_seat} webhooks per game.")
        elif len(seats) >= settings.webhook_max_per_game:
            refusal.append(f"A game's seats may have {settings.webhook_max_per_game} webhooks.")
        return not refusal

    if not services().jobs.state.add_webhook(webhook, fits=within_caps):
        raise ApiError(409, "too_many_webhooks", refusal[0] + " Remove one first.")
    location = url_for("webhooks.list_webhooks", game_id=game_id) + f"#{webhook['id']}"
    shown = {**public_webhook(webhook), "deliveries": [], "pause": None}
    return jsonify(shown), 201, {"Location": location}


@bp.get("/games/<game_id>/webhooks")
def list_webhooks(game_id: str) -> Response:
    """The bearer's webhooks of this game (every one for the admin) with recent deliveries.
    ---
    get:
      operationId: listWebhooks
      tags: [notifications]
      summary: List webhooks and their deliveries
      security: [{seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: >
            The webhooks, oldest first, each with its latest deliveries and its receiver's
            pause, if the receiver is paused.
          content:
            application/json:
              schema: WebhookListSchema
        401: Unauthorized
    """
    _, viewer = _owner_viewer(game_id)
    state = services().jobs.state
    mine = [webhook for webhook in state.webhooks(game_id) if _owned_by(webhook, viewer)]
    breakers = state.receivers(sorted({receiver_of(webhook["url"]) for webhook in mine}))
    now = time.time()
    listed = []
    for webhook in mine:
        deliveries = state.recent_deliveries(game_id, webhook["id"], LISTED_DELIVERIES)
        listed.append(
            {
                **public_webhook(webhook),
                "deliveries": [public_delivery(delivery) for delivery in deliveries],
                "pause": public_pause(breakers.get(receiver_of(webhook["url"])), now),
            }
        )
    return jsonify({"webhooks": listed})


@bp.delete("/games/<game_id>/webhooks/<webhook_id>")
def delete_webhook(game_id: str, webhook_id: str) -> tuple[str, int]:
    """Stop a webhook.
    ---
    delete:
      operationId: deleteWebhook
      codes: {404: [not_found]}
      tags: [notifications]
      summary: Remove a webhook
      security: [{seatToken: []}, {adminKey: []}]
      responses:
        204:
          description: Removed; pending retries are given up.
        401: Unauthorized
    """
    _, viewer = _owner_viewer(game_id)
    state = services().jobs.state
    webhook = next((hook for hook in state.webhooks(game_id) if hook["id"] == webhook_id), None)
    # Another seat's webhook answers like a missing one: its existence is that seat's business.
    if webhook is None or not _owned_by(webhook, viewer):
        raise ApiError(404, "not_found", "This game has no such webhook of yours.")
    state.remove_webhook(game_id, webhook_id)
    return "", 204
