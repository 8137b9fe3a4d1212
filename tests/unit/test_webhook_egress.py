"""Where a webhook may be sent: the address check, the operator's allow-list, a resolver that
lies (a public-looking name for loopback, DNS rebinding), redirects and slow receivers.

The resolver is patched at ``socket.getaddrinfo`` itself, the function every connection by
name goes through, so a second lookup anywhere (not just in ``resolve_host``) is seen."""

from __future__ import annotations

import contextlib
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from service.application.webhooks import (
    AllowList,
    WebhookError,
    is_public,
    new_delivery,
    new_webhook,
    vet_url,
)
from service.workers.delivery import DeliveryPolicy, attempt_delivery
from service.workers.jobs import JobSettings

REAL_GETADDRINFO = socket.getaddrinfo

NOT_PUBLIC = [
    "127.0.0.1",
    "127.255.255.254",
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared address space (carrier-grade NAT)
    "169.254.169.254",  # cloud metadata
    "0.0.0.0",
    "224.0.0.1",
    "224.0.1.1",  # multicast that ipaddress calls global
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
    "198.18.0.1",
    "::1",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:8.8.8.8",  # IPv4-mapped: refused whatever it maps to
    "::127.0.0.1",  # IPv4-compatible
    "2002:7f00:1::1",  # 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",  # 6to4 of 169.254.169.254
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b:1::1",  # local-use NAT64
    "2001::1",  # Teredo
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "fec0::1",  # site-local (deprecated, never public)
    "ff02::1",
    "ff0e::1",
    "2001:db8::1",
]

PUBLIC = ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"]


@pytest.mark.parametrize("address", NOT_PUBLIC)
def test_loopback_private_shared_link_local_multicast_reserved_and_embedded_forms_are_not_public(
    address: str,
) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_and_their_nat64_and_6to4_forms_are_public(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


@contextlib.contextmanager
def lying_resolver(
    monkeypatch: pytest.MonkeyPatch, answers: dict[str, list[list[str]]]
) -> Iterator[dict[str, int]]:
    """``socket.getaddrinfo`` answering each named host with its next list of addresses
    (the last one again when they run out); numeric hosts resolve as usual. Yields how many
    times each name was looked up."""
    lookups = dict.fromkeys(answers, 0)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in answers:
            return REAL_GETADDRINFO(host, port, *args, **kwargs)
        addresses = answers[name][min(lookups[name], len(answers[name]) - 1)]
        lookups[name] += 1
        if not addresses:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        infos = []
        for address in addresses:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, int(port or 0), 0, 0) if ":" in address else (address, port)
            infos.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return infos

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield lookups


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.1"], ["10.0.0.7"], ["169.254.169.254"], ["93.184.216.34", "10.0.0.7"], ["::1"], []],
    ids=["loopback", "private", "metadata", "one-private-among-public", "v6-loopback", "none"],
)
def test_a_public_looking_name_is_refused_unless_every_address_it_has_is_public(
    monkeypatch: pytest.MonkeyPatch, addresses: list[str]
) -> None:
    answers = {"hooks.example.com": [addresses]}
    with lying_resolver(monkeypatch, answers), pytest.raises(WebhookError) as refused:
        vet_url("https://hooks.example.com/in")
    assert refused.value.code == "webhook_url_forbidden"


def test_a_name_with_only_public_addresses_is_vetted_at_its_first_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with lying_resolver(monkeypatch, {"hooks.example.com": [["93.184.216.34", "8.8.8.8"]]}):
        destination = vet_url("https://hooks.example.com./in?x=1")
    assert destination.address == "93.184.216.34"
    assert (destination.url.host, destination.url.port) == ("hooks.example.com", 443)


def test_the_allow_list_lets_named_hosts_and_listed_networks_in_and_nothing_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    allow = AllowList.parse("hooks.internal, 10.20.0.0/16 ::1")
    answers = {"hooks.internal": [["10.9.9.9"]], "other.internal": [["10.9.9.9"]]}
    with lying_resolver(monkeypatch, answers):
        assert vet_url("http://hooks.internal:8080/", allow).address == "10.9.9.9"
        assert vet_url("http://10.20.3.4/", allow).address == "10.20.3.4"
        assert vet_url("http://[::1]:9000/", allow).address == "::1"
        for refused in ("http://other.internal/", "http://10.21.0.1/", "http://127.0.0.1/"):
            with pytest.raises(WebhookError):
                vet_url(refused, allow)
    with pytest.raises(ValueError, match="MEEPLE_WEBHOOK_ALLOW_HOSTS"):
        JobSettings(webhook_allow_hosts="10.0.0.0/33 bad/name")
    from_env = JobSettings.from_env({"MEEPLE_WEBHOOK_ALLOW_HOSTS": " hooks.internal,10.1.0.0/16"})
    assert from_env.allow_list == AllowList(
        frozenset({"hooks.internal"}), (ipaddress.ip_network("10.1.0.0/16"),)
    )
    assert JobSettings().allow_list == AllowList()  # nothing inside by default


@contextlib.contextmanager
def http_receiver(
    answer: Callable[[BaseHTTPRequestHandler], None], tls: ssl.SSLContext | None = None
) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """A loopback HTTP(S) server calling ``answer`` on each POST; yields its port and what
    came."""
    hits: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            hits.append({"host": self.headers["Host"], "path": self.path})
            answer(self)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def ok(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def a_delivery(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    webhook = new_webhook("g1", url, "s" * 16, ["action"], {"seat": 0}, 1)
    return webhook, new_delivery(webhook, "action", 2, {"event": {}})


def test_a_delivery_connects_to_the_address_it_vetted_not_to_what_dns_says_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A rebinding name: loopback (allowed here) when vetted, then somewhere else entirely.
    policy = DeliveryPolicy(allow=AllowList.parse("127.0.0.1"), connect_timeout=1, timeout=3)
    with http_receiver(ok) as (port, hits):
        webhook, delivery = a_delivery(f"http://rebind.example:{port}/hook")
        answers = {"rebind.example": [["127.0.0.1"], ["203.0.113.9"]]}
        with lying_resolver(monkeypatch, answers) as lookups:
            done = attempt_delivery(delivery, webhook, policy)
    assert done["status"] == "delivered"
    assert lookups["rebind.example"] == 1
    assert hits == [{"host": f"rebind.example:{port}", "path": "/hook"}]


def test_a_name_is_vetted_again_at_every_attempt_and_a_refusal_sends_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Public when it was registered; loopback (not allowed) by the time of the delivery.
    with http_receiver(ok) as (port, hits):
        webhook, delivery = a_delivery(f"http://rebind.example:{port}/hook")
        answers = {"rebind.example": [["127.0.0.1"]]}
        with lying_resolver(monkeypatch, answers) as lookups:
            done = attempt_delivery(delivery, webhook, DeliveryPolicy())
    assert lookups["rebind.example"] == 1
    assert hits == []
    assert done["attempts"][0]["outcome"] == "forbidden"
    assert done["status"] == "pending"  # retried later, vetted again then


def test_a_redirect_is_not_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = DeliveryPolicy(allow=AllowList.parse("127.0.0.1"), timeout=5)
    with http_receiver(ok) as (inside, inside_hits):

        def redirect(handler: BaseHTTPRequestHandler) -> None:
            handler.send_response(307)
            handler.send_header("Location", f"http://127.0.0.1:{inside}/internal")
            handler.send_header("Content-Length", "0")
            handler.end_headers()

        with http_receiver(redirect) as (port, hits):
            webhook, delivery = a_delivery(f"http://127.0.0.1:{port}/hook")
            done = attempt_delivery(delivery, webhook, policy)
    assert len(hits) == 1
    assert inside_hits == []
    assert done["attempts"][0] == {"at": done["attempts"][0]["at"], "outcome": "http_status"} | {
        "status": 307
    }


def test_a_receiver_that_answers_a_byte_at_a_time_is_cut_off_at_the_deadline() -> None:
    stop = threading.Event()

    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        while not stop.is_set():
            handler.wfile.write(b"X")  # one header byte every 0.2 s, forever
            handler.wfile.flush()
            time.sleep(0.2)

    policy = DeliveryPolicy(allow=AllowList.parse("127.0.0.1"), timeout=1)
    outcome: list[dict[str, Any]] = []
    with http_receiver(trickle) as (port, _):
        webhook, delivery = a_delivery(f"http://127.0.0.1:{port}/hook")
        attempt = threading.Thread(
            target=lambda: outcome.append(attempt_delivery(delivery, webhook, policy)),
            daemon=True,
        )
        attempt.start()
        attempt.join(10)  # functional bound: cut off, not still reading
        stop.set()
    assert outcome, "the attempt was still waiting for the receiver after 10 s"
    assert outcome[0]["attempts"][0]["outcome"] == "timeout"


def test_https_checks_the_certificate_for_the_name_while_connecting_to_the_vetted_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("openssl") is None:  # never skipped: a skipped test proves nothing
        pytest.fail("needs the openssl command (Debian package openssl) to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    make_certificate = [
        *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
        *("-keyout", str(key), "-out", str(cert), "-subj", "/CN=hooks.example"),
        *("-addext", "subjectAltName=DNS:hooks.example"),
    ]
    subprocess.run(make_certificate, check=True, capture_output=True)
    trusting = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(ssl, "create_default_context", lambda *_, **__: trusting)
    server_side = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_side.load_cert_chain(cert, key)
    policy = DeliveryPolicy(allow=AllowList.parse("127.0.0.1"), connect_timeout=2, timeout=5)
    answers = {"hooks.example": [["127.0.0.1"]], "other.example": [["127.0.0.1"]]}
    with http_receiver(ok, tls=server_side) as (port, hits), lying_resolver(monkeypatch, answers):
        webhook, delivery = a_delivery(f"https://hooks.example:{port}/hook")
        assert attempt_delivery(delivery, webhook, policy)["status"] == "delivered"
        # The same server under a name its certificate does not hold: refused by TLS.
        webhook, delivery = a_delivery(f"https://other.example:{port}/hook")
        failed = attempt_delivery(delivery, webhook, policy)
    assert hits == [{"host": f"hooks.example:{port}", "path": "/hook"}]
    assert failed["attempts"][0]["outcome"] == "connection_failed"
