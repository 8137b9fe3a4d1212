"""Hostile input against a real ``meeple serve``: deeply nested and duplicate-key JSON on every
endpoint that reads a body, and requests gunicorn itself refuses (an invalid header name, a
header block over its limits, a request line too long). Each is answered with a problem
(``application/problem+json``, a stable code), never a 500, and changes no game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from service.http.json_input import MalformedJson, loads_strict
from tests.security.conftest import LiveServer, raw_request

#: About 2 KB of JSON nested ~1,000 deep: Python's own parser gives up with a RecursionError.
NESTED = '{"type": "pass", "players": ' + "[" * 982 + "]" * 982 + "}"
#: Objects and lists, ~700 deep.
DEEP_OBJECT = '{"a":[' * 350 + "]}" * 350


@pytest.fixture
def server(live_server: Callable[..., LiveServer]) -> LiveServer:
    return live_server()


@dataclass
class Target:
    """An endpoint that reads a JSON body, and how to see that nothing changed."""

    name: str
    path: str
    token: str | None
    snapshot: Callable[[], Any]


def targets(server: LiveServer) -> list[Target]:
    game = server.create_game()
    game_id, token = game["id"], game["seats"][0]["token"]

    def version() -> Any:
        return server.call("GET", f"/games/{game_id}").body["version"]

    def games_and_version() -> Any:
        listed = server.call("GET", "/games?limit=100").body
        return len(listed["games"]), version()

    def branches() -> Any:
        return server.call("GET", f"/games/{game_id}/branches", token=token).body, version()

    def webhooks() -> Any:
        return server.call("GET", f"/games/{game_id}/webhooks", token=token).body, version()

    return [
        Target("actions", f"/games/{game_id}/actions", token, version),
        Target("games", "/games", None, games_and_version),
        Target("branches", f"/games/{game_id}/branches", token, branches),
        Target("webhooks", f"/games/{game_id}/webhooks", token, webhooks),
    ]


def test_deeply_nested_json_is_malformed_and_changes_nothing(server: LiveServer) -> None:
    assert 1900 <= len(NESTED) <= 2100, len(NESTED)
    for target in targets(server):
        before = target.snapshot()
        for body in (NESTED, DEEP_OBJECT):
            answer = server.call("POST", target.path, raw=body.encode(), token=target.token)
            assert answer.status == 400, (target.name, answer)
            assert answer.headers["content-type"] == "application/problem+json"
            assert answer.code == "malformed_json", (target.name, answer.body)
            assert "deep" in answer.body["detail"], answer.body
        assert target.snapshot() == before, target.name
    assert "Traceback" not in server.logs()


def test_duplicate_keys_are_malformed_and_change_nothing(server: LiveServer) -> None:
    bodies = {
        "actions": ("type", '{"type": "pass", "type": "pass"}'),
        "games": ("ruleset", '{"ruleset": "gutenberg", "players": ["Ann"], "ruleset": "x"}'),
        "branches": ("at", '{"at": 1, "reseed": true, "at": 1}'),
        "webhooks": ("url", '{"url": "http://example.org/", "secret": "s", "url": "http://x/"}'),
    }
    for target in targets(server):
        before = target.snapshot()
        key, body = bodies[target.name]
        answer = server.call("POST", target.path, raw=body.encode(), token=target.token)
        assert answer.status == 400, (target.name, answer)
        assert answer.code == "malformed_json", (target.name, answer.body)
        assert f'duplicate key "{key}"' in answer.body["detail"], answer.body
        assert target.snapshot() == before, target.name
    # A duplicate deep inside is found as well.
    nested = b'{"ruleset": "gutenberg", "players": ["Ann"], "options": {"x": 1, "x": 2}}'
    answer = server.call("POST", "/games", raw=nested)
    assert (answer.status, answer.code) == (400, "malformed_json")
    assert 'duplicate key "x"' in answer.body["detail"]


def test_a_lone_surrogate_is_malformed_and_changes_nothing(server: LiveServer) -> None:
    # Once a 500: the refusal naming the unknown field could not be encoded in UTF-8.
    for target in targets(server):
        before = target.snapshot()
        for raw in (b'{"type": "pass", "\\ud800": 1}', b'{"at": 1, "x": ["\\udfff"]}'):
            answer = server.call("POST", target.path, raw=raw, token=target.token)
            assert (answer.status, answer.code) == (400, "malformed_json"), (target.name, answer)
            assert "surrogate" in answer.body["detail"]
        assert target.snapshot() == before, target.name


def test_malformed_json_says_why(server: LiveServer) -> None:
    for raw, why in ((b"{", "not JSON"), (b'{"a": NaN}', "not JSON"), (b"\xff", "not JSON")):
        answer = server.call("POST", "/games", raw=raw)
        assert (answer.status, answer.code) == (400, "malformed_json"), (raw, answer)
        assert why in answer.body["detail"], answer.body


# -- what gunicorn refuses before the app sees it -------------------------------------


def test_an_invalid_header_name_is_a_problem(server: LiveServer) -> None:
    answer = raw_request(
        server, b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\nConnection: close\r\n\r\n"
    )
    assert answer.status == 400
    assert answer.problem()["code"] == "invalid_request"


def test_thousands_of_if_none_match_tags_are_a_problem(server: LiveServer) -> None:
    game = server.create_game()
    tags = ", ".join(f'"{number}"' for number in range(5000))
    answer = server.call("GET", f"/games/{game['id']}", headers={"If-None-Match": tags})
    assert answer.status == 431
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.code == "request_header_fields_too_large"


def test_a_four_kilobyte_url_is_a_problem(server: LiveServer) -> None:
    answer = server.call("GET", "/games/" + "a" * 4096)
    assert answer.status == 414
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.code == "uri_too_long"
    assert server.call("GET", "/health").status == 200
    assert "Traceback" not in server.logs()


def test_the_depth_check_itself_never_recurses() -> None:
    # Far deeper than any recursion limit: the scan is one loop, the parser never starts.
    with pytest.raises(MalformedJson, match="too deep"):
        loads_strict("[" * 200_000 + "]" * 200_000)
    # Brackets inside strings are text, and escaped quotes do not end a string.
    assert loads_strict('{"a": "[[[[\\"[[[[", "b": [[1]]}', max_depth=3) == {
        "a": '[[[["[[[[',
        "b": [[1]],
    }


def test_other_refusals_of_gunicorn_are_problems_too(server: LiveServer) -> None:
    cases = {
        b"Transfer-Encoding: zstd\r\n": (501, "unsupported_transfer_coding"),
        b"Expect: 200-ok\r\nContent-Length: 2\r\n": (417, "expectation_failed"),
        b"X: a\r\n" * 101: (431, "request_header_fields_too_large"),
    }
    for headers, (status, code) in cases.items():
        head = b"POST /games HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n"
        answer = raw_request(server, head)
        assert (answer.status, answer.problem()["code"]) == (status, code), answer
    # A response header the app got wrong stays gunicorn's 500, not the client's fault.
    from gunicorn.http.errors import InvalidResponseHeaderName

    from service.http.serving import refusal

    assert refusal(InvalidResponseHeaderName("X\n")) is None
