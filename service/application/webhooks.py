"""Webhooks: who may register one, where one may be sent, what each delivery carries and how
it is signed (docs/api.md, "Webhooks"; docs/security.md); ``service.workers.delivery`` sends.

A webhook belongs to a seat or to the admin and sees only what its owner may see: a seat's
webhook gets that seat's view of each event (``service.application.visibility``), its own
"your turn" notices (after every event after which it must act, and reminders while it does
not: ``service.workers.jobs.sweep``), and the end of the game. Each delivery is one JSON body
POSTed to the webhook's URL with::

    Meeple-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, f"{t}.{body}")>

(the Stripe scheme: the timestamp is signed with the body, so a receiver can refuse replays
older than a few minutes). A failed attempt (no answer, or not 2xx) is retried after
``retry_base * 2**(attempt - 1)`` seconds, up to ``max_attempts``; every attempt is recorded.

Where a webhook may be sent (docs/security.md): its URL's host is resolved when it is registered and
again before every attempt, and every address it has must be public (``is_public``) unless the
operator allows it (``AllowList``, ``MEEPLE_WEBHOOK_ALLOW_HOSTS``); the connection then goes
to the address vetted (``Destination``), never through a second lookup that DNS rebinding
could answer differently, and no redirect is followed. Each attempt is recorded as a generic
outcome (``OUTCOMES``) and the time it started, to the second: never an error's text or a
duration, which would map the network behind a receiver.

Jobs: ``notify(game_id, version)`` turns the events up to ``version`` into deliveries (each
webhook's ``cursor`` moves atomically with the deliveries it creates, so two runs never make
the same delivery twice); ``deliver(game_id, delivery_id, attempt)`` makes one attempt.
Every delivery waits in its owner's lane (``owner_lane``: the client address that registered
the webhook) for its receiver (``receiver_of``); how the lanes share the workers, and when a
receiver is paused: ``service.application.webhook_lanes``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import math
import re
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from events.envelope import Envelope
from service.application.live_status import GameHistory
from service.application.visibility import seat_changes_hands, seat_left, visible_envelope

if TYPE_CHECKING:
    from service.application.job_state import Record

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


# -- where a webhook may be sent ----------------------------------------------------------

#: What may appear in a webhook URL: RFC 3986's characters, nothing else (no whitespace, no
#: control character, no backslash, no raw non-ASCII: percent-encode it).
_URL_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")
#: A host name: dot-separated labels of letters, digits, '-' and '_' (IP literals pass too).
_HOST_NAME = re.compile(
    r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*"
)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: IPv6 ranges that carry an IPv4 address or lead nowhere public, beyond what ``ipaddress``
#: already calls private or reserved (its answers differ between Python versions).
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")


@dataclass(frozen=True)
class WebhookURL:
    """A webhook URL taken apart: where to connect and what to ask for."""

    url: str
    scheme: str
    host: str  # lower case, no trailing dot, an IPv6 literal without brackets
    port: int
    target: str  # path and query, as sent in the request line


def parse_url(url: str) -> WebhookURL:
    """The URL taken apart if it is one a webhook may use: absolute http(s), a host, no
    credentials, no whitespace or control characters, at most ``MAX_URL_LENGTH`` long.
    Raises ``WebhookError`` (``invalid_webhook_url``) naming what is wrong."""

    def refuse(message: str) -> WebhookError:
        return WebhookError("invalid_webhook_url", message, "url")

    if len(url) > MAX_URL_LENGTH:
        raise refuse(f"A webhook URL is at most {MAX_URL_LENGTH} characters long.")
    if not _URL_CHARACTERS.fullmatch(url):
        raise refuse(
            "A webhook URL holds no whitespace, control or non-ASCII characters "
            "(percent-encode them)."
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise refuse("The URL cannot be read (its host or port is malformed).") from None
    if parts.scheme not in ("http", "https"):
        raise refuse("A webhook URL must start with http:// or https://.")
    if "@" in parts.netloc:
        # Credentials in a URL would be shown back by GET .../webhooks; use the secret.
        raise refuse("Put no user or password in a webhook URL.")
    host = (parts.hostname or "").removesuffix(".")
    if not host:
        raise refuse("A webhook URL must name a host.")
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise refuse("The URL's IPv6 address is not valid.") from None
        if "%" in host:
            raise refuse("A webhook URL's address has no zone.")
    elif len(host) > 253 or not _HOST_NAME.fullmatch(host):
        raise refuse("The URL's host is not a valid name.")
    target = parts.path or "/"
    if parts.query:
        target = f"{target}?{parts.query}"
    default = 443 if parts.scheme == "https" else 80
    return WebhookURL(url, parts.scheme, host, port or default, target)


def is_public(address: IPAddress) -> bool:
    """Whether an address is on the public internet: not loopback, private, shared
    (100.64/10), link-local, multicast, unspecified, reserved, documentation, unique-local
    or site-local, and no IPv6 form that carries such an IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None or address in _IPV4_COMPATIBLE:
            return False  # ::ffff:a.b.c.d and ::a.b.c.d reach IPv4 hosts directly
        embedded = address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
        if address in _NAT64_LOCAL or address.teredo is not None or address.is_site_local:
            return False
    return address.is_global and not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
    )


@dataclass(frozen=True)
class AllowList:
    """The operator's trusted receivers (``MEEPLE_WEBHOOK_ALLOW_HOSTS``): host names, and
    addresses or networks in CIDR notation, that webhooks may reach although not public."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str) -> AllowList:
        """From a comma- or space-separated list (``hooks.internal, 10.1.0.0/16, ::1``)."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in re.split(r"[\s,]+", text.strip().lower()):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = entry.removesuffix(".")
            if not _HOST_NAME.fullmatch(name) or name.replace(".", "").isdigit():
                raise ValueError(
                    f"MEEPLE_WEBHOOK_ALLOW_HOSTS: {entry!r} is neither a host name nor an "
                    "address or network (CIDR)"
                )
            hosts.add(name)
        return cls(frozenset(hosts), tuple(networks))

    def permits(self, host: str, address: IPAddress) -> bool:
        return host in self.hosts or any(address in network for network in self.networks)


def resolve_host(host: str, port: int) -> list[str]:
    """Every address the host name (or literal) resolves to, as the system resolver says."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


@dataclass(frozen=True)
class Destination:
    """A webhook URL and the one address it was vetted at: the address connected to."""

    url: WebhookURL
    address: str


def vet_url(url: str, allow: AllowList = AllowList()) -> Destination:
    """Resolve the URL's host once and check every address it has; the destination to
    connect to. Raises ``WebhookError``: ``invalid_webhook_url`` for a malformed URL,
    ``webhook_url_forbidden`` for a host that does not resolve or has an address that is
    not public and not allowed (one answer for both: the API is no oracle of internal DNS).
    """
    parsed = parse_url(url)
    forbidden = WebhookError(
        "webhook_url_forbidden",
        "Webhooks are sent only to hosts that resolve to public internet addresses.",
        "url",
    )
    try:
        found = [ipaddress.ip_address(text) for text in resolve_host(parsed.host, parsed.port)]
    except (OSError, UnicodeError, ValueError):
        raise forbidden from None
    if not found or not all(
        is_public(address) or allow.permits(parsed.host, address) for address in found
    ):
        raise forbidden
    # All vetted; connecting to the first, and only to it, leaves DNS no second say.
    return Destination(parsed, str(found[0]))


def receiver_of(url: str) -> str:
    """The receiver a webhook URL points at, ``scheme://host:port`` (an IPv6 host in
    brackets): what the in-flight cap per receiver and its circuit breaker count
    (``service.application.webhook_lanes``). Named, not resolved: two names of one address
    are two receivers, and the owner's listing shows a receiver's pause without a lookup."""
    parsed = parse_url(url)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    return f"{parsed.scheme}://{host}:{parsed.port}"


def owner_lane(client_address: str | None) -> str:
    """The delivery lane of a webhook registered from ``client_address`` (None: with the
    admin key): every webhook one client registers, in any game for any seat, shares it."""
    return "admin" if client_address is None else f"address:{client_address}"


def webhook_lane(webhook: Record) -> str:
    """A webhook's delivery lane; one registered before lanes were kept has its seat's own."""
    lane = webhook.get("lane")
    if lane:
        return str(lane)
    owner = webhook["owner"]
    return "admin" if owner.get("admin") else f"game:{webhook['game_id']}:seat:{owner.get('seat')}"


def new_webhook(
    game_id: str,
    url: str,
    secret: str,
    events: Iterable[str],
    owner: dict[str, Any],
    cursor: int,
    lane: str | None = None,
) -> Record:
    """A webhook record, notified of what happens after event ``cursor``; its deliveries go
    in ``lane`` (``owner_lane``; None: the seat's own)."""
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
        "url": parse_url(url).url,
        "secret": secret,
        "events": wanted,
        "owner": owner,
        "created_at": utc_now(),
        "cursor": cursor,
        **({"lane": lane} if lane else {}),
    }


def public_webhook(webhook: Record) -> dict[str, Any]:
    """A webhook as its owner reads it back: never its secret."""
    return {
        key: webhook[key]
        for key in ("id", "url", "events", "owner", "created_at", "cursor")
        if key in webhook
    }


def public_delivery(delivery: Record) -> dict[str, Any]:
    """A delivery as its webhook's owner reads it: each attempt's generic outcome, times to
    the second (older records, which kept an error's text and a duration, are shown so too).
    """
    shown = {key: delivery[key] for key in ("id", "kind", "seq", "status", "created_at")}
    shown["attempts"] = [public_attempt(attempt) for attempt in delivery["attempts"]]
    due = delivery["next_attempt_at"]
    shown["next_attempt_at"] = None if due is None else math.ceil(due)
    return shown


def public_attempt(attempt: Record) -> dict[str, Any]:
    status = attempt.get("status")
    outcome = attempt.get("outcome")
    if outcome not in OUTCOMES:
        outcome = "http_status" if status is not None else "connection_failed"
    return {"at": str(attempt["at"])[:19] + "Z", "outcome": outcome, "status": status}


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
        # An application's webhook (service.application.app_custody) is named by its own id.
        "webhook_id": webhook.get("app_webhook") or webhook["id"],
        "game_id": webhook["game_id"],
        "kind": kind,
        "seq": seq,
        **payload,
    }
    return {
        "id": delivery_id,
        "webhook_id": webhook["id"],
        "game_id": webhook["game_id"],
        "lane": webhook_lane(webhook),
        "receiver": receiver_of(webhook["url"]),
        "kind": kind,
        "seq": seq,
        "body": body_bytes(body),
        "status": "pending",
        "attempts": [],
        "next_attempt_at": time.time(),
        "created_at": utc_now(),
    }


def deliveries_for(
    webhook: Record,
    envelopes: list[Envelope],
    history: GameHistory,
    finished: bool,
    sealed: int = 0,
) -> list[Record]:
    """What ``webhook`` is sent for these events (all after its cursor), in order; a seat's
    webhook gets nothing after its seat changes hands (``webhook_ends``)."""
    owner = webhook["owner"]
    seat = owner.get("seat")
    admin = bool(owner.get("admin"))
    wanted = set(webhook["events"])
    history.through(envelopes)
    made: list[Record] = []
    for envelope in envelopes:
        seq = int(envelope["seq"])
        after = history.standing(seq)
        # Beside its event, each delivery says where the game stands after it, and a seat's
        # webhook whether that seat must act now (its own decision only: it may name its hand).
        standing = after.message(None if admin else seat)
        if envelope["type"] in wanted:
            event = visible_envelope(envelope, seat, finished=finished, admin=admin, sealed=sealed)
            made.append(new_delivery(webhook, envelope["type"], seq, {"event": event, **standing}))
        if "your_turn" in wanted:
            # Level-triggered: after every event after which the seat must act, not only
            # when it becomes due, so a notice lost, or refused while a step was pending,
            # is made up by the next one.
            for due in sorted(after.decisions):
                if admin or due == seat:
                    notice = {**standing, "seat": due}
                    made.append(new_delivery(webhook, "your_turn", seq, notice))
        ended = after.status.get("finished") and not history.status(seq - 1).get("finished")
        if "game_finished" in wanted and ended:
            payload = {**standing, "result": after.status.get("result")}
            made.append(new_delivery(webhook, "game_finished", seq, payload))
        if _ends_at(webhook, envelope):
            break
    return made


def webhook_ends(webhook: Record, envelopes: list[Envelope]) -> bool:
    """Whether a seat's webhook ends among these events: its seat changed hands (left,
    joined, given to a bot, its token renewed), so the token that registered it no longer
    speaks for the seat, and the webhook is removed
    (``service.application.visibility.seat_changes_hands``).
    """
    return any(_ends_at(webhook, envelope) for envelope in envelopes)


def _ends_at(webhook: Record, envelope: Envelope) -> bool:
    """A seat's webhook ends where its seat changes hands; an application's where the seat is
    left (the application holds it whoever holds its token)."""
    seat = webhook["owner"].get("seat")
    if webhook["owner"].get("app"):
        return seat_left(envelope, seat)
    return seat_changes_hands(envelope, seat)


#: What an attempt came to, as the delivery list shows it: never an exception's text, never
#: a duration (either would map the network behind a receiver).
OUTCOMES = ("http_status", "timeout", "connection_failed", "forbidden", "webhook_removed")
