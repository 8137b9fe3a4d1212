"""``GET /games/{id}/stream``: the game's new events as Server-Sent Events, live.

Each event is sent as ``id: <seq>``, ``event: <type>`` and ``data: <envelope JSON>``, the
envelope as this viewer may see it (``service.application.visibility``: no other seat's secrets, the
seed only once the game has ended). A client resumes with ``Last-Event-ID`` (EventSource
sends it by itself on reconnect) or starts from ``?after=N``; without either it gets only
the events appended from now on.

A stream costs memory, not a request thread: ``meeple serve`` and compose run gunicorn's
gevent worker class, so an open stream is a greenlet waiting on its game's feed
(``service.live.hub``): an append wakes the game's streams at once, and they share one read of
the new events per process. Open streams are capped per client address and per game
(``MEEPLE_STREAMS_PER_ADDRESS``, ``MEEPLE_STREAMS_PER_GAME``: 429 ``too_many_streams`` with
``Retry-After``), and within a game each seat and the admin keep ``MEEPLE_STREAMS_PER_SEAT``
of its streams for their own, the most each may open, while spectators share the rest
(``service.live.hub.fair_share``): spectators never take a game's streams from its players.
Every ``MEEPLE_STREAM_CHECK_INTERVAL`` seconds a stream checks that its
client is still connected (a closed connection ends it and frees its slot); a comment line
every ``MEEPLE_STREAM_HEARTBEAT`` seconds of silence keeps proxies from closing the
connection (and a failed write ends the stream too). The stream ends after
``MEEPLE_STREAM_MAX_SECONDS`` (or once a finished game's last event is sent) with a comment
telling the client to reconnect with ``Last-Event-ID``, which misses nothing.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Response, current_app, request
from marshmallow import Schema, ValidationError, fields, validate

from events.envelope import Envelope
from service.application import commands
from service.application.auth import Viewer
from service.application.live_status import GameHistory
from service.application.visibility import seat_changes_hands, visible_envelope
from service.http.errors import ApiError
from service.http.limits import client_address
from service.http.shared import authenticate
from service.live.hub import SPECTATORS, FeedView, Refusal, Slot, fair_share

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


def format_event(envelope: dict[str, Any], standing: dict[str, Any] | None = None) -> str:
    """One SSE message: the event and, beside its members, where the game stands after it
    (``status``, and ``you`` on a seat's stream). JSON has no raw newlines, so ``data`` is
    always one line."""
    data = json.dumps({**envelope, **(standing or {})}, ensure_ascii=False, separators=(",", ":"))
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
      codes: {429: [too_many_streams]}
      tags: [play]
      summary: Live events (Server-Sent Events)
      description: >
        ``text/event-stream`` of the game's events as the viewer may see them: each message
        has ``id`` (the event's seq), ``event`` (its type) and ``data`` (a StreamEvent: the
        envelope as JSON, as ``GET /games/{id}/events`` shows it, with beside its members the
        game's ``status`` after that event and, on a seat's stream, ``you``: whether that seat
        must act then and the decision it faces, as legal-actions describes it). Every stream,
        however it starts, first sends an ``event: turn`` message without ``id`` (a
        StreamTurn: the game's version, ``status`` and ``you`` now). Resume with
        ``Last-Event-ID``; ``after`` starts after a given seq; without either, only new events
        are sent. Lines starting with ``:`` are comments (heartbeats). The server ends a
        stream after a while (``MEEPLE_STREAM_MAX_SECONDS``, with a last comment saying so)
        and once a finished game's last event is sent; reconnect with ``Last-Event-ID``
        (EventSource does so by itself) and nothing is missed. A seat's stream also ends at a
        ``seat_changed`` event of its seat (left, joined, given to a bot, its token renewed):
        its token no longer speaks for the seat. Open streams are capped per client address
        and per game, and a game's are shared fairly: each seat and the admin keep a few
        (``MEEPLE_STREAMS_PER_SEAT``) for their own streams, the most each may open, and
        spectators share the rest. Over a cap or a share, 429 ``too_many_streams`` with
        ``Retry-After``.
      security: [{}, {seatToken: []}, {appKey: []}, {adminKey: []}]
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
                type: string
                description: >
                  Server-Sent Events (read them with an SSE client, not as one document):
                  a first ``retry: <ms>`` message, then ``event: turn`` with ``data: <a
                  StreamTurn as JSON>`` (no ``id``), then one message an event, messages
                  separated by a blank line, each of ``id: <seq>``, ``event: <the event's
                  type>`` and ``data: <a StreamEvent as JSON>`` (the Event, as ``GET
                  /games/{id}/events`` shows it, with ``status`` and, on a seat's stream,
                  ``you`` beside its members); lines starting with ``:`` are comments
                  (heartbeats, and a last one when the server ends the stream).
              example: |
                event: turn
                data: {"game_id": "g1", "version": 2, "status": {"to_act": [1], "...": "..."}}

                id: 3
                event: action
                data: {"game_id": "g1", "seq": 3, "type": "action", "...": "...", "status": {}}

        400: BadRequest
        401: Unauthorized
        429: TooManyRequests
    """
    services = current_app.extensions["meeple"]
    game = commands.load_game(services, game_id)
    viewer = authenticate(game.meta)
    after = _start_after(game.version)
    slot = _take_slot(services, game_id, viewer, len(game.meta["players"]))
    client = request.environ.get("gunicorn.socket") or request.environ.get("werkzeug.socket")
    restore = bound_writes(client, services.jobs.settings)
    events = _events(services, game_id, viewer, after, slot, client)
    return Response(
        StreamBody(events, slot, restore),
        mimetype="text/event-stream",
        headers={
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",  # nginx: pass each message on at once
            "Vary": "Authorization",
        },
    )


def _take_slot(services: Any, game_id: str, viewer: Viewer, seats: int) -> Slot:
    """A place under the caps on open streams, in the viewer's share of the game's, or 429
    too_many_streams."""
    settings = services.jobs.settings
    share = fair_share(
        viewer.seat,
        admin=viewer.admin,
        holder=viewer.holder,
        seats=seats,
        per_game=settings.streams_per_game,
        per_seat=settings.streams_per_seat,
    )
    # With an application's key its streams count against the application, not the address.
    address = client_address(request.remote_addr) if viewer.app is None else f"app:{viewer.app}"
    per_address = settings.streams_per_address if viewer.app is None else settings.app_streams
    taken = services.jobs.streams.slots.acquire(
        address,
        game_id,
        share,
        per_address,
        settings.streams_per_game,
        settings.stream_max_seconds,
    )
    if isinstance(taken, Refusal):
        raise ApiError(
            429,
            "too_many_streams",
            f"{_refused(taken)}; close one or try again in {taken.retry_after} seconds.",
            headers={"Retry-After": str(taken.retry_after)},
        )
    taken.opened()
    return taken


def _refused(refusal: Refusal) -> str:
    """Which cap refused a stream, in words."""
    if refusal.scope == "address":
        return (
            f"{refusal.cap} streams are open from your address (or application), the most allowed"
        )
    if refusal.scope == "game":
        return f"{refusal.cap} streams are open on this game, the most allowed"
    if refusal.owner == SPECTATORS:
        return (
            f"{refusal.cap} spectators' streams are open on this game, the most allowed (the "
            "others are kept for its seats and the admin)"
        )
    kind, _, seat = refusal.owner.partition(":")
    whose = {"admin": "the admin", "holder": "this branch's holder"}.get(kind, f"seat {seat}")
    return f"{refusal.cap} streams of {whose} are open on this game, the most it may hold"


class StreamBody:
    """The response body: the stream's messages; closing it (the server does, however the
    stream ended, even before its first message) gives its slot back."""

    def __init__(
        self, events: Iterator[str], slot: Slot, restore: Callable[[], None] | None = None
    ) -> None:
        self._events = events
        self._slot = slot
        self._restore = restore

    def __iter__(self) -> Iterator[str]:
        return self._events

    def close(self) -> None:
        try:
            close = getattr(self._events, "close", None)
            if close is not None:
                close()
        finally:
            self._slot.release()
            if self._restore is not None:
                self._restore()


def bound_writes(client: Any, settings: Any) -> Callable[[], None] | None:
    """A consumer that stops reading is dropped, not waited for: the stream's socket gets a
    send buffer of ``MEEPLE_STREAM_SEND_BUFFER`` bytes (a stream carries little, and ten
    thousand streams must not hold gigabytes of kernel memory) and its writes a timeout of
    ``MEEPLE_STREAM_WRITE_TIMEOUT`` seconds: a write that waits longer fails, the server
    closes the connection and the stream's slot is free again. Under gevent only the stream's
    own greenlet ever waits, so nobody else is slowed meanwhile. What undoes it (the
    connection may serve another request after the stream), or None without a socket."""
    if client is None or not hasattr(client, "settimeout"):
        return None
    try:
        previous = client.gettimeout()
        client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, settings.stream_send_buffer)
        client.settimeout(settings.stream_write_timeout)
    except OSError:
        return None

    def restore() -> None:
        with contextlib.suppress(OSError):
            client.settimeout(previous)

    return restore


def client_gone(client: Any) -> bool:
    """Whether the client closed its connection: its socket reads as at its end. (A stream's
    client sends nothing after its request, so a readable socket means EOF or an error.)"""
    try:
        fileno = client.fileno()
        if fileno < 0:
            return True
        poller = select.poll()
        poller.register(fileno, select.POLLIN)
        if not poller.poll(0):
            return False
        return not client.recv(1, socket.MSG_PEEK)
    except ValueError:
        return False  # a TLS socket cannot be peeked at: the heartbeat's write tells instead
    except OSError:
        return True


def _events(
    services: Any, game_id: str, viewer: Viewer, after: int, slot: Slot, client: Any
) -> Iterator[str]:
    """The stream's body; runs outside the request context, on the services alone."""
    settings = services.jobs.settings
    began = time.monotonic()
    kind = (viewer.seat, viewer.admin, viewer.holder)

    # A seat's stream ends where its seat changes hands (the admin's and a branch holder's
    # speak for no one seat's token); it alone hears its seat's decisions (``you``).
    mine = viewer.seat if not (viewer.admin or viewer.holder) else None
    #: where the game stood after events older than the feed keeps (a resume from long ago)
    history = GameHistory(services.folder, game_id)

    def message(envelope: Envelope, view: FeedView) -> str:
        found = view.standings.get(envelope["seq"]) or history.standing(envelope["seq"])
        return format_event(
            visible_envelope(
                envelope,
                viewer.seat,
                finished=view.finished,
                admin=viewer.admin,
                sealed=view.sealed,
                every_seat=viewer.holder,
            ),
            found.message(mine),
        )

    def changes_hands(envelope: Envelope) -> bool:
        return seat_changes_hands(envelope, mine)

    watcher = services.jobs.subscribe(game_id)
    notes_seen = watcher.feed.notes_seen
    try:
        yield f"retry: {RECONNECT_MS}\n\n"
        # Whoever opens or resumes a stream first learns whose turn it is now.
        first = watcher.view(services, settings.stream_poll)
        yield watcher.feed.turn_text(kind, first, lambda view: format_turn(game_id, view, mine))
        quiet_since = began
        cursor = after
        while True:
            if watcher.ending:
                yield _goodbye("the server is restarting")
                return
            view = watcher.view(services, settings.stream_poll)
            notes, notes_seen = watcher.feed.notes_after(notes_seen)
            shown = [note for note in notes if _may_see_note(note, viewer, view)]
            if shown:
                yield "".join(format_note(note) for note in shown)
                quiet_since = time.monotonic()
            batch = view.after(cursor)
            if batch is None:  # further behind than the feed keeps: read from the store
                batch = services.store.read(
                    game_id, after=cursor, limit=min(PAGE, view.version - cursor)
                )
                history.through(batch)  # one fold along the page, not one load per event
            if batch:
                feed = watcher.feed
                ends = next((i for i, e in enumerate(batch) if changes_hands(e)), None)
                shown = batch if ends is None else batch[: ends + 1]
                yield "".join(feed.text(envelope, kind, view, message) for envelope in shown)
                if ends is not None:
                    yield _goodbye_seat(viewer.seat)
                    return
                cursor = batch[-1]["seq"]
                quiet_since = time.monotonic()
                if cursor < view.version:
                    continue
            if view.finished and cursor >= view.version:
                return  # nothing more will ever come
            now = time.monotonic()
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
            watcher.wait(min(settings.stream_check_interval, left, until_heartbeat))
    finally:
        watcher.close()
        slot.release()


def format_turn(game_id: str, view: FeedView, seat: int | None) -> str:
    """The ``turn`` message a stream opens with: where the game stands now (no ``id``: it is
    not an event, and Last-Event-ID keeps naming the last event)."""
    current = view.current
    assert current is not None  # the view has been looked at
    data = json.dumps(
        {"game_id": game_id, "version": view.version, **current.message(seat)},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return f"event: turn\ndata: {data}\n\n"


def format_note(note: dict[str, Any]) -> str:
    """An ``analysis`` (or ``review``) message: how an analysis (a game review) stands (no
    ``id``: it is not an event, and Last-Event-ID keeps naming the last event)."""
    kind = "review" if note.get("kind") == "review" else "analysis"
    shown = {name: value for name, value in note.items() if name != "kind"}
    data = json.dumps(shown, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\ndata: {data}\n\n"


def _may_see_note(note: dict[str, Any], viewer: Viewer, view: FeedView) -> bool:
    """An analysis of an unfinished game is its seat's secret (service.http.resources.analyses)."""
    if viewer.admin:
        return True
    if int(note.get("at", 0)) < view.sealed:
        return False
    return view.finished or viewer.holder or viewer.seat == note.get("seat")


def _goodbye(reason: str) -> str:
    """The last lines of a stream the server ends while the game goes on."""
    return f": end of stream: {reason}; reconnect with Last-Event-ID\n\n"


def _goodbye_seat(seat: int | None) -> str:
    """The last lines of a seat's stream once the seat changed hands (``seat_changes_hands``)."""
    return (
        f": end of stream: seat {seat} changed hands; its token no longer speaks for it, "
        "so open a new stream with the seat's token\n\n"
    )
