"""Requests gunicorn cannot parse, against a real server as each deployment runs it: ``meeple
serve`` and gunicorn with compose's command line. Each spelling (a request line without an
HTTP version, a NUL or 0xFF byte in it, a bare LF, a bad method, version, header, framing or
chunk ...) is answered 400 ``invalid_request`` (414 or 431 where a limit is passed) as
problem+json, leaves one short line in the log and no traceback, and never reaches the app.
Once such a request line was an HTML 500 and some 2 KB of tracebacks: a log-flooding lever.

A body over ``MEEPLE_MAX_BODY_BYTES`` is 413 ``payload_too_large`` whether it is chunked or
has a Content-Length (a chunked one was cut at the limit and refused as ``malformed_json``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.security.conftest import (
    LiveServer,
    RawAnswer,
    raw_request,
    start_gunicorn,
    start_server,
    stop_server,
)

#: MEEPLE_MAX_BODY_BYTES's default.
BODY_LIMIT = 64 * 1024
#: How long one refusal's line in the log may be.
SHORT_LINE = 400

GAME = b'{"ruleset": "gutenberg", "players": ["Ann", "Bob"]}'
CHUNKED_POST = (
    b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)


def get(line: bytes = b"GET /health HTTP/1.1", *headers: bytes, end: bytes = b"\r\n") -> bytes:
    return end.join([line, b"Host: x", *headers]) + end + end


#: spelling -> (the request's bytes, the status it gets, its code)
MALFORMED: dict[str, tuple[bytes, int, str]] = {
    # The request line
    "no HTTP version": (b"GET /health\r\n\r\n", 400, "invalid_request"),
    "a NUL byte in the path": (get(b"GET /he\x00alth HTTP/1.1"), 400, "invalid_request"),
    "a 0xFF byte in the path": (get(b"GET /he\xffalth HTTP/1.1"), 400, "invalid_request"),
    "bare LF line ends": (get(end=b"\n"), 400, "invalid_request"),
    "a bare LF after the request line": (
        b"GET /health HTTP/1.1\nHost: x\r\n\r\n",
        400,
        "invalid_request",
    ),
    "an empty request line": (b"\r\n\r\n", 400, "invalid_request"),
    "a TLS handshake on the plain port": (
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(40) + b"\r\n\r\n",
        400,
        "invalid_request",
    ),
    "an unparsable absolute URI": (get(b"GET http://[::1/ HTTP/1.1"), 400, "invalid_request"),
    "an invalid method": (get(b"G(T /health HTTP/1.1"), 400, "invalid_request"),
    "an unknown HTTP version": (get(b"GET /health HTTP/9.9"), 400, "invalid_request"),
    "a misspelt HTTP version": (get(b"GET /health HTTX/1.1"), 400, "invalid_request"),
    # The headers
    "an invalid header name": (
        get(b"GET /health HTTP/1.1", b"Bad Header: 1"),
        400,
        "invalid_request",
    ),
    "a NUL byte in a header value": (
        get(b"GET /health HTTP/1.1", b"X: a\x00b"),
        400,
        "invalid_request",
    ),
    "a header without a colon": (get(b"GET /health HTTP/1.1", b"NoColon"), 400, "invalid_request"),
    "a bare LF between headers": (
        b"GET /health HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
        400,
        "invalid_request",
    ),
    "an obsolete folded header": (
        get(b"GET /health HTTP/1.1", b"X: a", b" b"),
        400,
        "invalid_request",
    ),
    "two Content-Lengths": (
        get(b"POST /games HTTP/1.1", b"Content-Length: 2", b"Content-Length: 3") + b"{}",
        400,
        "invalid_request",
    ),
    "a negative Content-Length": (
        get(b"POST /games HTTP/1.1", b"Content-Length: -2") + b"{}",
        400,
        "invalid_request",
    ),
    "Content-Length beside Transfer-Encoding": (
        get(b"POST /games HTTP/1.1", b"Content-Length: 5", b"Transfer-Encoding: chunked")
        + b"2\r\n{}\r\n0\r\n\r\n",
        400,
        "invalid_request",
    ),
    "a chunked HTTP/1.0 request": (
        get(b"POST /games HTTP/1.0", b"Transfer-Encoding: chunked") + b"2\r\n{}\r\n0\r\n\r\n",
        400,
        "invalid_request",
    ),
    # Past gunicorn's limits
    "a request line over 4094 bytes": (
        get(b"GET /" + b"a" * 5000 + b" HTTP/1.1"),
        414,
        "uri_too_long",
    ),
    "a header over 8190 bytes": (
        get(b"GET /health HTTP/1.1", b"X: " + b"a" * 9000),
        431,
        "request_header_fields_too_large",
    ),
    "101 header fields": (
        get(b"GET /health HTTP/1.1", *[b"X: a"] * 101),
        431,
        "request_header_fields_too_large",
    ),
    # A chunked body's framing (once read by the app: a 400 malformed_json, or a 500)
    "an invalid chunk size": (CHUNKED_POST + b"zz\r\n{}\r\n0\r\n\r\n", 400, "invalid_request"),
    "a chunk without its CRLF": (CHUNKED_POST + b"2\r\n{}XX0\r\n\r\n", 400, "invalid_request"),
    "an invalid chunk extension": (
        CHUNKED_POST + b"2;\x01\r\n{}\r\n0\r\n\r\n",
        400,
        "invalid_request",
    ),
    "an invalid chunk size on an action": (
        CHUNKED_POST.replace(b"/games", b"/games/nothing/actions") + b"-1\r\n{}\r\n0\r\n\r\n",
        400,
        "invalid_request",
    ),
    # The app never reads a GET's body: gunicorn used to find the fault afterwards, and sent
    # a second answer behind the 200.
    "an invalid chunk size on a GET": (
        get(b"GET /health HTTP/1.1", b"Transfer-Encoding: chunked") + b"zz\r\n\r\n",
        400,
        "invalid_request",
    ),
}


@pytest.fixture(scope="module", params=["meeple serve", "gunicorn as compose runs it"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    directory = tmp_path_factory.mktemp("malformed")
    if request.param == "meeple serve":
        started = start_server(directory, {}, [])
    else:
        started = start_gunicorn(directory, {})
    yield started
    stop_server(started)


def settled_log(server: LiveServer) -> str:
    """The log once the access lines of the requests answered so far are in it."""
    before = server.logs()
    while True:
        time.sleep(0.2)
        now = server.logs()
        if now == before:
            return now
        before = now


def log_lines_of(server: LiveServer, since: str) -> list[str]:
    now = server.logs()
    assert now.startswith(since)
    return now[len(since) :].splitlines()


def assert_a_problem(answer: RawAnswer, status: int, code: str, spelling: str = "") -> None:
    assert (answer.status, answer.headers.get("content-type")) == (
        status,
        "application/problem+json",
    ), (spelling, answer)
    # Exactly one answer: nothing after the problem's body.
    assert len(answer.body) == int(answer.headers["content-length"]), (spelling, answer)
    problem = answer.problem()
    assert problem["code"] == code, (spelling, problem)
    assert set(problem) == {"type", "title", "status", "detail", "code"}, (spelling, problem)
    assert problem["type"] == f"/docs#problem-{code}"
    assert problem["title"] and problem["detail"], (spelling, problem)


def test_each_malformed_request_is_a_problem_with_one_short_line_in_the_log(
    server: LiveServer,
) -> None:
    for spelling, (request, status, code) in MALFORMED.items():
        log = settled_log(server)
        answer = raw_request(server, request)
        assert_a_problem(answer, status, code, spelling)
        lines = log_lines_of(server, log)
        assert len(lines) <= 1, (spelling, lines)
        assert all(len(line) <= SHORT_LINE for line in lines), (spelling, lines)
    logs = server.logs()
    assert "Traceback" not in logs
    # None of them reached the app: it would have logged them as answered.
    assert " 500 " not in logs and "Error handling request" not in logs
    assert server.call("GET", "/health").status == 200


def test_two_hundred_malformed_requests_leave_the_server_answering(server: LiveServer) -> None:
    spellings = list(MALFORMED.values())
    log = settled_log(server)
    for number in range(200):
        request, status, code = spellings[number % len(spellings)]
        assert raw_request(server, request).status == status, code
    answer = server.call("GET", "/health")
    assert answer.status == 200 and answer.body["status"] == "ok"
    settled_log(server)
    lines = log_lines_of(server, log)
    # One line each, and the access line of /health.
    assert len(lines) <= 201, lines[:5]
    assert sum(len(line) + 1 for line in lines) <= 201 * SHORT_LINE
    assert "Traceback" not in server.logs()


def chunked(body: bytes, size: int) -> bytes:
    """``body`` in chunks of ``size`` bytes, then the last chunk."""
    parts = [body[start : start + size] for start in range(0, len(body), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def padded(body: bytes, length: int) -> bytes:
    """``body`` (a JSON object) padded with spaces to ``length`` bytes: still the same JSON."""
    return body[:-1] + b" " * (length - len(body)) + b"}"


@pytest.mark.parametrize("chunk_size", [BODY_LIMIT * 2, 16 * 1024, 1000])
def test_a_chunked_body_over_the_limit_is_too_large(server: LiveServer, chunk_size: int) -> None:
    log = settled_log(server)
    body = padded(GAME, BODY_LIMIT + 4096)
    answer = raw_request(server, CHUNKED_POST + chunked(body, chunk_size))
    assert_a_problem(answer, 413, "payload_too_large")
    assert str(BODY_LIMIT) in answer.problem()["detail"]
    lines = log_lines_of(server, log)
    assert len(lines) <= 1 and all(len(line) <= SHORT_LINE for line in lines), lines
    assert "Traceback" not in server.logs()


def test_a_body_over_the_limit_with_a_content_length_is_too_large(server: LiveServer) -> None:
    body = padded(GAME, BODY_LIMIT + 4096)
    head = (
        b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    assert_a_problem(raw_request(server, head + body), 413, "payload_too_large")


@pytest.mark.parametrize("length", [len(GAME), BODY_LIMIT])
def test_a_chunked_body_within_the_limit_is_read_whole(server: LiveServer, length: int) -> None:
    head = CHUNKED_POST.replace(b"Host: x\r\n", b"Host: x\r\nConnection: close\r\n")
    answer = raw_request(server, head + chunked(padded(GAME, length), 1000))
    assert answer.status == 201, answer
    assert [seat["name"] for seat in json.loads(answer.body)["seats"]] == ["Ann", "Bob"]
