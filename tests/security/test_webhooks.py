"""Webhooks (docs/security.md), against a real ``meeple serve``: a seat (anyone: creating a game is
anonymous) must not make the service POST inside its own network, learn that network from
the delivery list, register webhooks without end, or stall other games with a receiver
that never answers.

The receivers here listen on loopback, which the service refuses by default; the tests that
need a delivery to arrive start the server with ``MEEPLE_WEBHOOK_ALLOW_HOSTS=127.0.0.1``,
as an operator allows a trusted internal receiver. How the address check treats a resolver
that lies (a public name for loopback, DNS rebinding): tests/unit/test_webhook_egress.py.
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from service.application.webhooks import SIGNATURE_HEADER, verify_signature
from tests.e2e.test_webhooks import SECRET, Receiver, running_receiver
from tests.security.conftest import LiveServer

LOOPBACK_ALLOWED = {"MEEPLE_WEBHOOK_ALLOW_HOSTS": "127.0.0.1"}
GENERIC_OUTCOMES = {"http_status", "timeout", "connection_failed", "forbidden", "webhook_removed"}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


class SilentReceiver:
    """Accepts every connection on loopback and never answers (holds them until closed)."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(256)
        self.port = int(self.listener.getsockname()[1])
        self.held: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                if self.closed:  # accepted while closing: nobody would close it later
                    connection.close()
                    return
                self.held.append(connection)

    @property
    def accepted(self) -> int:
        with self.lock:
            return len(self.held)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for connection in self.held:
                connection.close()
        with contextlib.suppress(OSError):  # wakes the accept() below on Linux
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.fixture
def silent_receiver() -> Iterator[SilentReceiver]:
    silent = SilentReceiver()
    yield silent
    silent.close()


def register(
    server: LiveServer,
    game: dict[str, Any],
    url: str,
    seat: int = 0,
    events: list[str] | None = None,
) -> Any:
    body = {"url": url, "secret": SECRET, "events": events or ["action"]}
    return server.call(
        "POST", f"/games/{game['id']}/webhooks", body, token=game["seats"][seat]["token"]
    )


def listed(server: LiveServer, game: dict[str, Any], seat: int = 0) -> list[dict[str, Any]]:
    answer = server.call("GET", f"/games/{game['id']}/webhooks", token=game["seats"][seat]["token"])
    assert answer.status == 200, answer
    webhooks: list[dict[str, Any]] = answer.body["webhooks"]
    return webhooks


def attempts(hook: dict[str, Any]) -> list[dict[str, Any]]:
    """The attempts of the webhook's latest delivery (none while there is no delivery)."""
    return list(hook["deliveries"][0]["attempts"]) if hook["deliveries"] else []


def act(server: LiveServer, game: dict[str, Any]) -> int:
    """The seat awaited posts its first legal action; the game's version after it."""
    summary = server.call("GET", f"/games/{game['id']}").body
    seat = summary["status"]["to_act"][0]
    token = game["seats"][seat]["token"]
    legal = server.call("GET", f"/games/{game['id']}/legal-actions", token=token).body
    answer = server.call("POST", f"/games/{game['id']}/actions", legal["actions"][0], token=token)
    assert answer.status == 201, answer
    version: int = answer.body["version"]
    return version


def version_of(server: LiveServer, game: dict[str, Any]) -> int:
    version: int = server.call("GET", f"/games/{game['id']}").body["version"]
    return version


def wait_until(check: Callable[[], bool], what: str, patience: float = 30) -> None:
    deadline = time.monotonic() + patience
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def forbidden_urls(receiver_port: int, api_port: int) -> list[str]:
    """Every way of writing an address inside that the issue found or that is known to work."""
    port = receiver_port
    return [
        f"http://127.0.0.1:{port}/",
        f"http://localhost:{port}/",
        f"http://LOCALHOST.:{port}/",
        f"http://[::1]:{port}/",
        f"http://2130706433:{port}/",  # 127.0.0.1 as one decimal number
        f"http://0177.0.0.1:{port}/",  # octal
        f"http://017700000001:{port}/",
        f"http://127.1:{port}/",  # short form
        f"http://0x7f.1:{port}/",  # hex
        f"http://0x7f000001:{port}/",
        f"http://127.0.0.1.:{port}/",  # trailing dot
        f"http://[::ffff:127.0.0.1]:{port}/",  # IPv4-mapped
        f"http://[::ffff:7f00:1]:{port}/",
        f"http://[::127.0.0.1]:{port}/",  # IPv4-compatible
        f"http://[2002:7f00:1::1]:{port}/",  # 6to4 of 127.0.0.1
        f"http://[64:ff9b::7f00:1]:{port}/",  # NAT64 of 127.0.0.1
        f"http://127.0.0.1:{api_port}/health",  # the API itself
        "http://127.0.0.1:6379/",  # a Redis beside it
        "http://10.0.0.1/",
        "http://172.16.0.1/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",  # shared (carrier-grade NAT)
        "http://169.254.169.254/latest/meta-data/",  # cloud metadata
        "http://[fe80::1]/",
        "http://[fd00::1]/",  # unique-local
        "http://[fc00::1]/",
        "http://[fec0::1]/",  # site-local
        "http://224.0.0.1/",  # multicast
        "http://[ff02::1]/",
        "http://0.0.0.0/",  # unspecified
        "http://0/",
        "http://[::]/",
        "http://240.0.0.1/",  # reserved
        "http://255.255.255.255/",
        "https://127.0.0.1/",
    ]


def test_every_spelling_of_an_inside_address_is_refused_and_nothing_is_delivered(
    live_server: Callable[..., LiveServer], receiver: Receiver
) -> None:
    server = live_server()
    game = server.create_game()
    port = int(receiver.url.split(":")[2].split("/")[0])
    accepted = []
    for url in forbidden_urls(port, server.port):
        answer = register(server, game, url)
        if answer.status != 422 or answer.code != "webhook_url_forbidden":
            accepted.append((url, answer.status, answer.code))
        else:
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.body["errors"] == {"url": [answer.body["detail"]]}
            # One sentence for every refusal: the API says nothing of what a name resolves to.
            assert "127" not in answer.body["detail"] and "loopback" not in answer.body["detail"]
    assert accepted == []
    assert listed(server, game) == []
    for _ in range(2):
        act(server, game)
    time.sleep(0.5)  # what would have been delivered has had time to go
    assert receiver.received == []


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1/",
        "http://[::1",
        "http://example.org/a b",
        "http://example.org /",
        "http://example.org/\r\nX-Injected: 1",
        "http://example.org/\n",
        "http://exa\x00mple.org/",
        "http://example.org/\x7f",
        "http://example.org\\@127.0.0.1/",
        "http://user:pw@example.org/",
        "http://user@example.org/",
        "ftp://example.org/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:6379/_INFO",
        "javascript:alert(1)",
        "http:///nohost",
        "http://example.org:99999/",
        "http://[fe80::1%25eth0]/",
        "http://example.org/" + "x" * 3000,
        "",
    ],
)
def test_a_malformed_webhook_url_is_a_422_never_a_500(
    live_server_once: LiveServer, url: str
) -> None:
    game = live_server_once.create_game()
    answer = register(live_server_once, game, url)
    assert answer.status == 422, answer
    assert answer.code == "invalid_webhook_url"
    assert answer.body["errors"]["url"]


@pytest.fixture(scope="module")
def live_server_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the many malformed URLs (each a request, no state between them)."""
    from tests.security.conftest import start_server

    server = start_server(tmp_path_factory.mktemp("malformed"), {}, [])
    yield server
    server.process.send_signal(signal.SIGTERM)
    server.process.wait(timeout=30)


def test_the_allow_list_lets_a_trusted_loopback_receiver_get_signed_deliveries(
    live_server: Callable[..., LiveServer], receiver: Receiver
) -> None:
    server = live_server(**LOOPBACK_ALLOWED)
    game = server.create_game()
    assert register(server, game, receiver.url).status == 201
    act(server, game)
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    hit = receiver.received[0]
    assert verify_signature(hit["headers"][SIGNATURE_HEADER], SECRET, hit["body"])
    assert receiver.bodies()[0]["game_id"] == game["id"]


def test_a_webhook_whose_address_is_no_longer_allowed_is_refused_at_delivery(
    live_server: Callable[..., LiveServer], receiver: Receiver
) -> None:
    # Registered while the operator allowed loopback; the next server (same data) does not.
    first = live_server(**LOOPBACK_ALLOWED)
    game = first.create_game()
    assert register(first, game, receiver.url).status == 201
    first.process.send_signal(signal.SIGTERM)
    first.process.wait(timeout=30)
    server = live_server()
    act(server, game)
    wait_until(lambda: bool(attempts(listed(server, game)[0])), "no attempt made")
    attempt = attempts(listed(server, game)[0])[0]
    assert attempt["outcome"] == "forbidden"
    assert attempt["status"] is None
    assert receiver.received == []


def test_a_redirect_is_not_followed(
    live_server: Callable[..., LiveServer], receiver: Receiver
) -> None:
    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(307)  # 307 keeps the method and body: the tempting one
            self.send_header("Location", receiver.url)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    redirecting = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=redirecting.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        server = live_server(MEEPLE_WEBHOOK_RETRY_BASE="600", **LOOPBACK_ALLOWED)
        game = server.create_game()
        url = f"http://127.0.0.1:{redirecting.server_address[1]}/hook"
        assert register(server, game, url).status == 201
        act(server, game)
        wait_until(lambda: bool(attempts(listed(server, game)[0])), "no attempt made")
        made = attempts(listed(server, game)[0])
        assert [(a["outcome"], a["status"]) for a in made] == [("http_status", 307)]
        time.sleep(0.5)
        assert receiver.received == []
    finally:
        redirecting.shutdown()
        redirecting.server_close()
        thread.join()


def test_the_delivery_list_shows_generic_outcomes_never_errors_or_durations(
    live_server: Callable[..., LiveServer], silent_receiver: SilentReceiver, receiver: Receiver
) -> None:
    receiver.failures = 1000  # always 500
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    server = live_server(
        MEEPLE_WEBHOOK_TIMEOUT="1", MEEPLE_WEBHOOK_RETRY_BASE="600", **LOOPBACK_ALLOWED
    )
    game = server.create_game()
    urls = {
        "connection_failed": f"http://127.0.0.1:{closed_port}/",
        "timeout": f"http://127.0.0.1:{silent_receiver.port}/",
        "http_status": receiver.url,
    }
    for url in urls.values():
        assert register(server, game, url).status == 201
    act(server, game)

    def attempted() -> bool:
        return all(attempts(hook) for hook in listed(server, game))

    wait_until(attempted, "not every webhook had an attempt")
    answer = server.call("GET", f"/games/{game['id']}/webhooks", token=game["seats"][0]["token"])
    outcomes = {}
    for hook in answer.body["webhooks"]:
        (delivery,) = hook["deliveries"]
        (attempt,) = delivery["attempts"]
        assert set(attempt) == {"at", "outcome", "status"}
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", attempt["at"])
        assert isinstance(delivery["next_attempt_at"], int)
        outcomes[hook["url"]] = (attempt["outcome"], attempt["status"])
    assert outcomes == {
        urls["connection_failed"]: ("connection_failed", None),
        urls["timeout"]: ("timeout", None),
        urls["http_status"]: ("http_status", 500),
    }
    raw = str(answer.body)
    for leak in ("Error", "refused", "Disconnected", "errno", "duration", "timed out"):
        assert leak not in raw


def test_a_seat_and_a_game_have_a_limited_number_of_webhooks(
    live_server: Callable[..., LiveServer], receiver: Receiver
) -> None:
    server = live_server(
        MEEPLE_WEBHOOK_MAX_PER_SEAT="2", MEEPLE_WEBHOOK_MAX_PER_GAME="3", **LOOPBACK_ALLOWED
    )
    game = server.create_game()
    assert [register(server, game, receiver.url, seat=0).status for _ in range(2)] == [201, 201]
    refused = register(server, game, receiver.url, seat=0)
    assert (refused.status, refused.code) == (409, "too_many_webhooks")
    assert register(server, game, receiver.url, seat=1).status == 201
    refused = register(server, game, receiver.url, seat=1)  # the game's cap, not the seat's
    assert (refused.status, refused.code) == (409, "too_many_webhooks")
    assert refused.headers["content-type"] == "application/problem+json"
    first = listed(server, game, seat=0)[0]["id"]
    token = game["seats"][0]["token"]
    assert server.call("DELETE", f"/games/{game['id']}/webhooks/{first}", token=token).status == 204
    assert register(server, game, receiver.url, seat=1).status == 201
    assert len(listed(server, game, seat=0)) + len(listed(server, game, seat=1)) == 3


def test_webhooks_that_never_get_an_answer_hold_up_no_other_games_steps_or_deliveries(
    live_server: Callable[..., LiveServer], silent_receiver: SilentReceiver, receiver: Receiver
) -> None:
    # Caps raised for the test: isolation must hold however many webhooks there are.
    server = live_server(
        MEEPLE_WEBHOOK_MAX_PER_SEAT="40", MEEPLE_WEBHOOK_MAX_PER_GAME="40", **LOOPBACK_ALLOWED
    )
    hostile = server.create_game()
    for _ in range(40):
        assert register(server, hostile, f"http://127.0.0.1:{silent_receiver.port}/").status == 201
    act(server, hostile)  # 40 deliveries to a receiver that never answers
    wait_until(lambda: silent_receiver.accepted >= 2, "the deliveries never started")

    game = server.create_game()
    assert register(server, game, receiver.url).status == 201
    act(server, game)
    version = act(server, game)  # both seats have chosen: the automatic step is due
    began = time.monotonic()
    wait_until(lambda: version_of(server, game) > version, "the step never came", patience=60)
    step_took = time.monotonic() - began
    # Generous functional bounds: an automatic step takes milliseconds; behind the silent
    # receiver's deliveries it took over ten seconds.
    assert step_took < 5, f"the automatic step took {step_took:.1f} s"
    receiver.wait_for(lambda bodies: len(bodies) >= 2, patience=60)
    delivery_took = time.monotonic() - began
    assert delivery_took < 5, f"the other game's deliveries took {delivery_took:.1f} s"
