"""Notifications: per-game webhooks, their signed deliveries, and "your turn" (issue 3).

A webhook belongs to a seat or to the admin and sees only what its owner may see: a seat's
webhook gets that seat's view of each event (``service.visibility``), its own "your turn"
notices, and the end of the game. Each delivery is one JSON body POSTed to the webhook's URL
with::

    Meeple-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, f"{t}.{body}")>

(the Stripe scheme: the timestamp is signed with the body, so a receiver can refuse replays
older than a few minutes). A failed attempt (no answer, or not 2xx) is retried after
``retry_base * 2**(attempt - 1)`` seconds, up to ``max_attempts``; every attempt is recorded.

Jobs: ``notify(game_id, version)`` turns the events up to ``version`` into deliveries (each
webhook's ``cursor`` moves atomically with the deliveries it creates, so two runs never make
the same delivery twice); ``deliver(game_id, delivery_id, attempt)`` makes one attempt.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from events.envelope import Envelope
from service.visibility import visible_envelope

if TYPE_CHECKING:
    from service.job_state import Record

#: What a webhook may subscribe to: the log's step events, and two notices.
WEBHOOK_EVENTS = ("action", "system", "undone", "redone", "your_turn", "game_finished")
SIGNATURE_HEADER = "Meeple-Signature"
USER_AGENT = "meeple-ledger-webhooks/1"
MAX_URL_LENGTH = 2048


class WebhookError(ValueError):
    """A webhook registration the service refuses: a stable code and a readable sentence."""

    def __init__(self, code: str, message: str, field: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- registering ------------------------------------------------------------------------


def check_url(url: str) -> str:
    """The URL if a webhook may be sent there: absolute http(s), a host, no credentials."""
    if len(url) > MAX_URL_LENGTH:
        raise WebhookError("invalid_webhook_url", "The URL is too long.", "url")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise WebhookError(
            "invalid_webhook_url", "A webhook URL must start with http:// or https://.", "url"
        )
    if not parts.hostname:
        raise WebhookError("invalid_webhook_url", "A webhook URL must name a host.", "url")
    if parts.username or parts.password:
        # Credentials in a URL would be shown back by GET .../webhooks; use the secret.
        raise WebhookError(
            "invalid_webhook_url", "Put no user or password in a webhook URL.", "url"
        )
    try:
        parts.port  # noqa: B018 - raises on a port out of range
    except ValueError:
        raise WebhookError("invalid_webhook_url", "The URL's port is not valid.", "url") from None
    return url


def new_webhook(
    game_id: str,
    url: str,
    secret: str,
    events: Iterable[str],
    owner: dict[str, Any],
    cursor: int,
) -> Record:
    """A webhook record, notified of what happens after event ``cursor``."""
    wanted = list(dict.fromkeys(events))
    unknown = [name for name in wanted if name not in WEBHOOK_EVENTS]
    if unknown or not wanted:
        raise WebhookError(
            "invalid_webhook_events",
            f"Subscribe to one or more of: {', '.join(WEBHOOK_EVENTS)}.",
            "events",
        )
    return {
        "id": uuid.uuid4().hex,
        "game_id": game_id,
        "url": check_url(url),
        "secret": secret,
        "events": wanted,
        "owner": owner,
        "created_at": utc_now(),
        "cursor": cursor,
    }


def public_webhook(webhook: Record) -> dict[str, Any]:
    """A webhook as its owner reads it back: never its secret."""
    return {
        key: webhook[key]
        for key in ("id", "url", "events", "owner", "created_at", "cursor")
        if key in webhook
    }


def public_delivery(delivery: Record) -> dict[str, Any]:
    return {
        key: delivery[key]
        for key in ("id", "kind", "seq", "status", "attempts", "next_attempt_at", "created_at")
    }


# -- signing ------------------------------------------------------------------------------


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """hex HMAC-SHA256 of ``f"{timestamp}.{body}"`` under the webhook's secret."""
    message = f"{timestamp}.".encode() + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    return f"t={timestamp},v1={signature(secret, timestamp, body)}"


def verify_signature(
    header: str, secret: str, body: bytes, tolerance: float = 300.0, now: float | None = None
) -> bool:
    """What a receiver does: the header's v1 matches the body and its time is recent."""
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, []).append(value)
    try:
        timestamp = int(fields["t"][0])
    except (KeyError, ValueError):
        return False
    moment = time.time() if now is None else now
    if abs(moment - timestamp) > tolerance:
        return False
    expected = signature(secret, timestamp, body)
    return any(hmac.compare_digest(expected, given) for given in fields.get("v1", []))


# -- turning events into deliveries --------------------------------------------------------


def body_bytes(payload: dict[str, Any]) -> str:
    """The exact body text that is signed and sent (kept with the delivery)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def new_delivery(webhook: Record, kind: str, seq: int, payload: dict[str, Any]) -> Record:
    delivery_id = uuid.uuid4().hex
    body = {
        "delivery_id": delivery_id,
        "webhook_id": webhook["id"],
        "game_id": webhook["game_id"],
        "kind": kind,
        "seq": seq,
        **payload,
    }
    return {
        "id": delivery_id,
        "webhook_id": webhook["id"],
        "game_id": webhook["game_id"],
        "kind": kind,
        "seq": seq,
        "body": body_bytes(body),
        "status": "pending",
        "attempts": [],
        "next_attempt_at": time.time(),
        "created_at": utc_now(),
    }


class GameHistory:
    """The statuses of a game at each version of a range, folded only when asked for."""

    def __init__(self, folder: Any, game_id: str) -> None:
        self.folder = folder
        self.game_id = game_id
        self._statuses: dict[int, dict[str, Any]] = {}

    def status(self, version: int) -> dict[str, Any]:
        if version not in self._statuses:
            game = self.folder.load(self.game_id, at=version)
            self._statuses[version] = dict(game.ruleset.status(game.state))
            if self._statuses[version].get("finished"):
                self._statuses[version]["result"] = game.ruleset.result(game.state)
        return self._statuses[version]


def deliveries_for(
    webhook: Record,
    envelopes: list[Envelope],
    history: GameHistory,
    finished: bool,
    sealed: int = 0,
) -> list[Record]:
    """What ``webhook`` is sent for these events (all after its cursor), in order."""
    owner = webhook["owner"]
    seat = owner.get("seat")
    admin = bool(owner.get("admin"))
    wanted = set(webhook["events"])
    made: list[Record] = []
    for envelope in envelopes:
        seq = int(envelope["seq"])
        if envelope["type"] in wanted:
            event = visible_envelope(envelope, seat, finished=finished, admin=admin, sealed=sealed)
            made.append(new_delivery(webhook, envelope["type"], seq, {"event": event}))
        if "your_turn" in wanted:
            before = set(history.status(seq - 1).get("to_act", []))
            after = history.status(seq)
            for entered in sorted(set(after.get("to_act", [])) - before):
                if admin or entered == seat:
                    notice = {"seat": entered, "status": _public_status(after)}
                    made.append(new_delivery(webhook, "your_turn", seq, notice))
        if "game_finished" in wanted:
            after = history.status(seq)
            if after.get("finished") and not history.status(seq - 1).get("finished"):
                payload = {"status": _public_status(after), "result": after.get("result")}
                made.append(new_delivery(webhook, "game_finished", seq, payload))
    return made


def _public_status(status: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in status.items() if key != "result"}


# -- sending -------------------------------------------------------------------------------


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST once, following no redirect; the response's status code."""
    parts = urlsplit(url)
    connection_class = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_class(parts.hostname or "", parts.port, timeout=timeout)
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)
        return int(response.status)
    finally:
        connection.close()


def attempt_delivery(
    delivery: Record, webhook: Record | None, max_attempts: int, retry_base: float, timeout: float
) -> Record:
    """Make one attempt and return the delivery with it recorded and its next step decided."""
    delivery = dict(delivery)
    attempts = list(delivery["attempts"])
    began = time.time()
    status: int | None = None
    error: str | None = None
    if webhook is None:
        error = "the webhook was removed"
    else:
        body = delivery["body"].encode("utf-8")
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "Meeple-Delivery": delivery["id"],
            "Meeple-Event": delivery["kind"],
            SIGNATURE_HEADER: signature_header(webhook["secret"], body, int(began)),
        }
        try:
            status = post(webhook["url"], body, headers, timeout)
            if not 200 <= status < 300:
                error = f"the receiver answered {status}"
        except (OSError, http.client.HTTPException) as failure:
            error = f"{type(failure).__name__}: {failure}"
    attempts.append(
        {
            "at": utc_now(),
            "status": status,
            "error": error,
            "duration_ms": round((time.time() - began) * 1000, 1),
        }
    )
    delivery["attempts"] = attempts
    if error is None:
        delivery["status"], delivery["next_attempt_at"] = "delivered", None
    elif webhook is None or len(attempts) >= max_attempts:
        delivery["status"], delivery["next_attempt_at"] = "failed", None
    else:
        delivery["next_attempt_at"] = time.time() + retry_base * 2 ** (len(attempts) - 1)
    return delivery
