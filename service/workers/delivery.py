"""Webhook delivery: one signed attempt POSTed to the vetted address of a receiver, no redirect
followed, its outcome recorded as a generic code (docs/security.md, "Webhooks").
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.application.job_state import Record

#: What a webhook may subscribe to: the log's step events, and two notices.
from service.application.webhooks import (
    SIGNATURE_HEADER,
    USER_AGENT,
    AllowList,
    Destination,
    WebhookError,
    is_public,
    signature_header,
    vet_url,
)
from service.monitoring import metrics


@dataclass(frozen=True)
class DeliveryPolicy:
    """How deliveries are made (``JobSettings`` fills it from ``MEEPLE_WEBHOOK_*``)."""

    allow: AllowList = field(default_factory=AllowList)
    max_attempts: int = 8
    retry_base: float = 5.0
    #: seconds to open the connection
    connect_timeout: float = 3.0
    #: seconds for the whole attempt: connect, send, and the answer's status and headers
    timeout: float = 10.0
    #: seconds to wait before trying again when the owner or the receiver already has its
    #: share of deliveries in flight (no attempt is counted)
    busy_delay: float = 1.0


def _open_socket(
    address: str, port: int, connect_timeout: float, timeout: float | None
) -> socket.socket:
    # A numeric address: create_connection asks no resolver.
    sock = socket.create_connection((address, port), timeout=connect_timeout)
    sock.settimeout(timeout)
    return sock


class _VettedHTTPConnection(http.client.HTTPConnection):
    """HTTP to the vetted address; the Host header keeps the URL's name."""

    def __init__(self, destination: Destination, connect_timeout: float, timeout: float) -> None:
        super().__init__(destination.url.host, destination.url.port, timeout=timeout)
        self.address = destination.address
        self.connect_timeout = connect_timeout

    def connect(self) -> None:
        self.sock = _open_socket(self.address, self.port, self.connect_timeout, self.timeout)


class _VettedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to the vetted address; SNI and the certificate check keep the URL's name."""

    def __init__(self, destination: Destination, connect_timeout: float, timeout: float) -> None:
        self.tls = ssl.create_default_context()
        super().__init__(
            destination.url.host, destination.url.port, timeout=timeout, context=self.tls
        )
        self.address = destination.address
        self.connect_timeout = connect_timeout

    def connect(self) -> None:
        raw = _open_socket(self.address, self.port, self.connect_timeout, self.timeout)
        try:
            self.sock = self.tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


def post(
    destination: Destination,
    body: bytes,
    headers: dict[str, str],
    connect_timeout: float,
    timeout: float,
) -> int:
    """POST once to the vetted address, following no redirect; the answer's status code.
    The whole exchange gets ``timeout`` seconds: a receiver that answers a byte at a time
    is cut off then (``TimeoutError``)."""
    connection_class = (
        _VettedHTTPSConnection if destination.url.scheme == "https" else _VettedHTTPConnection
    )
    connection = connection_class(destination, connect_timeout, timeout)
    expired = threading.Event()

    def cut_off() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    deadline = threading.Timer(timeout, cut_off)
    deadline.daemon = True
    deadline.start()
    try:
        connection.request("POST", destination.url.target, body=body, headers=headers)
        # Only the status line and headers are read: the body is not wanted.
        status = int(connection.getresponse().status)
    except (OSError, http.client.HTTPException):
        if expired.is_set():
            raise TimeoutError("the receiver took too long") from None
        raise
    else:
        if expired.is_set():
            # Cut off mid-answer: what was read before the cut is no answer.
            raise TimeoutError("the receiver took too long")
        return status
    finally:
        deadline.cancel()
        connection.close()


def attempt_delivery(delivery: Record, webhook: Record | None, policy: DeliveryPolicy) -> Record:
    """Make one attempt and return the delivery with it recorded and its next step decided.

    The URL's host is resolved and vetted again first (it may resolve elsewhere today) and
    the connection goes to that address. Whether the attempt may be made now (its owner's
    and its receiver's share, the receiver's breaker) was decided before
    (``service.workers.jobs.deliver``).
    """
    delivery = dict(delivery)
    began = time.time()
    status: int | None = None
    receiver = "none"
    if webhook is None:
        outcome = "webhook_removed"
    else:
        try:
            destination = vet_url(webhook["url"], policy.allow)
        except WebhookError:
            outcome = "forbidden"
        else:
            receiver = receiver_class(destination)
            outcome, status = _send(delivery, webhook, destination, policy, began)
    metrics.observe_delivery(_counted_outcome(outcome, status), receiver)
    attempts = [*delivery["attempts"], {"at": _whole_second(began), "outcome": outcome}]
    attempts[-1]["status"] = status
    delivery["attempts"] = attempts
    if outcome == "http_status" and status is not None and 200 <= status < 300:
        delivery["status"], delivery["next_attempt_at"] = "delivered", None
    elif webhook is None or len(attempts) >= policy.max_attempts:
        delivery["status"], delivery["next_attempt_at"] = "failed", None
    else:
        # Counted from the attempt's start, so the time shown says nothing of its length.
        delivery["next_attempt_at"] = began + policy.retry_base * 2 ** (len(attempts) - 1)
    return delivery


def receiver_class(destination: Destination) -> str:
    """What kind of receiver an attempt went to, for the metrics: ``public`` (an internet
    address) or ``allowed`` (one MEEPLE_WEBHOOK_ALLOW_HOSTS lets webhooks reach)."""
    return "public" if is_public(ipaddress.ip_address(destination.address)) else "allowed"


def _counted_outcome(outcome: str, status: int | None) -> str:
    """An attempt's outcome as ``meeple_webhook_deliveries`` counts it: a 2xx answer is
    ``delivered``, any other answer ``http_error``; the rest as recorded."""
    if outcome == "http_status":
        return "delivered" if status is not None and 200 <= status < 300 else "http_error"
    return outcome


def _send(
    delivery: Record, webhook: Record, destination: Destination, policy: DeliveryPolicy, at: float
) -> tuple[str, int | None]:
    body = delivery["body"].encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "Meeple-Delivery": delivery["id"],
        "Meeple-Event": delivery["kind"],
        SIGNATURE_HEADER: signature_header(webhook["secret"], body, int(at)),
    }
    try:
        status = post(destination, body, headers, policy.connect_timeout, policy.timeout)
    except TimeoutError:
        return "timeout", None
    except (OSError, http.client.HTTPException, ValueError):
        return "connection_failed", None
    return "http_status", status


def _whole_second(moment: float) -> str:
    return datetime.fromtimestamp(int(moment), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
