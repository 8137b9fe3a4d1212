"""``GET /games/{id}/stream``: the game's new events as Server-Sent Events, live.

Each event is sent as ``id: <seq>``, ``event: <type>`` and ``data: <envelope JSON>``, the
envelope as this viewer may see it (``service.visibility``: no other seat's secrets, the
seed only once the game has ended). A client resumes with ``Last-Event-ID`` (EventSource
sends it by itself on reconnect) or starts from ``?after=N``; without either it gets only
the events appended from now on.

An append wakes the stream at once (``Jobs.subscribe``: an in-process condition, and Redis
pub/sub when several processes serve the API); a read of the store every
``MEEPLE_STREAM_POLL`` seconds backs that push up, so a lost wake-up only delays an event.
A comment line every ``MEEPLE_STREAM_HEARTBEAT`` seconds of silence keeps proxies from
closing the connection; the stream ends after ``MEEPLE_STREAM_MAX_SECONDS`` (or once a
finished game's last event is sent) and the client reconnects where it left off.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, request
from marshmallow import Schema, ValidationError, fields, validate

from events.envelope import Envelope
from service import commands
from service.auth import resolve_viewer
from service.errors import ApiError
from service.visibility import sealed_until, visible_envelope

bp = Blueprint("stream", __name__)

#: What EventSource waits before reconnecting (milliseconds), sent once per stream.
RECONNECT_MS = 2000
#: How many events one read of the store takes.
PAGE = 200


class StreamQuerySchema(Schema):
    after = fields.Integer(
        strict=False,
        validate=validate.Range(min=0),
        metadata={"description": "Start after this seq (Last-Event-ID wins when both are sent)"},
    )


def format_event(envelope: dict[str, Any]) -> str:
    """One SSE message; JSON has no raw newlines, so ``data`` is always one line."""
    data = json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))
    return f"id: {envelope['seq']}\nevent: {envelope['type']}\ndata: {data}\n\n"


def _start_after(version: int) -> int:
    header = request.headers.get("Last-Event-ID")
    if header is not None and header.strip():
        try:
            after = int(header.strip())
        except ValueError:
            raise ApiError(
                400, "invalid_header", "Last-Event-ID is the seq of the last event received."
            ) from None
        if after < 0:
            raise ApiError(400, "invalid_header", "Last-Event-ID cannot be negative.")
        return after
    try:
        query = StreamQuerySchema().load(request.args.to_dict())
    except ValidationError as error:
        raise ApiError(
            422, "invalid_query", "Invalid query parameters: after.", errors=error.messages
        ) from None
    return int(query.get("after", version))


@bp.get("/games/<game_id>/stream")
def stream(game_id: str) -> Response:
    """New events of the game, live, as this viewer may see them.
    ---
    get:
      operationId: streamEvents
      tags: [play]
      summary: Live events (Server-Sent Events)
      description: >
        ``text/event-stream`` of the game's events as the viewer may see them: each message
        has ``id`` (the event's seq), ``event`` (its type) and ``data`` (the envelope as
        JSON, as ``GET /games/{id}/events`` shows it). Resume with ``Last-Event-ID``;
        ``after`` starts after a given seq; without either, only new events are sent. Lines
        starting with ``:`` are heartbeats. The server ends a stream after a while (and once a
        finished game's last event is sent); reconnect with ``Last-Event-ID``.
      security: [{}, {seatToken: []}, {adminKey: []}]
      parameters:
        - {in: header, name: Last-Event-ID, required: false, schema: {type: string},
           description: "The seq of the last event received"}
        - {in: query, name: after, required: false, schema: {type: integer, minimum: 0},
           description: "Send the events with seq greater than this"}
      responses:
        200:
          description: The stream.
          content:
            text/event-stream:
              schema:
                type: object
                description: One message of the stream.
                properties:
                  id: {type: string, description: The event's seq.}
                  event: {type: string, description: The event's type.}
                  data: {type: string, description: The envelope as JSON.}
                  retry: {type: string}
        400: BadRequest
        401: Unauthorized
    """
    services = current_app.extensions["meeple"]
    game = commands.load_game(services, game_id)
    viewer = resolve_viewer(
        game.meta, request.headers.get("Authorization"), services.config.admin_key
    )
    after = _start_after(game.version)
    events = _events(services, game_id, viewer.seat, viewer.admin, after)
    return Response(
        events,
        mimetype="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",  # nginx: pass each message on at once
            "Vary": "Authorization",
        },
    )


def _events(
    services: Any, game_id: str, seat: int | None, admin: bool, after: int
) -> Iterator[str]:
    """The stream's body; runs outside the request context, on the services alone."""
    settings = services.jobs.settings
    began = time.monotonic()
    subscription = services.jobs.subscribe(game_id)
    try:
        yield f"retry: {RECONNECT_MS}\n\n"
        quiet_since = time.monotonic()
        cursor = after
        while True:
            envelopes: list[Envelope] = services.store.read(game_id, after=cursor, limit=PAGE)
            game = services.folder.load(game_id)
            finished = bool(game.ruleset.status(game.state).get("finished"))
            for envelope in envelopes:
                if envelope["seq"] > game.version:
                    break  # not folded yet; sent on the next round, with the right visibility
                yield format_event(
                    visible_envelope(
                        envelope,
                        seat,
                        finished=finished,
                        admin=admin,
                        sealed=sealed_until(game.meta),
                    )
                )
                cursor = envelope["seq"]
                quiet_since = time.monotonic()
            if len(envelopes) == PAGE:
                continue
            if finished and cursor >= game.version:
                return  # nothing more will ever come
            now = time.monotonic()
            left = settings.stream_max_seconds - (now - began)
            if left <= 0:
                return
            if now - quiet_since >= settings.stream_heartbeat:
                yield ": heartbeat\n\n"
                quiet_since = now
            until_heartbeat = settings.stream_heartbeat - (now - quiet_since)
            subscription.wait(max(0.0, min(settings.stream_poll, left, until_heartbeat)))
    finally:
        subscription.close()
