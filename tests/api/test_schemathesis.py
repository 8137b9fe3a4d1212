"""schemathesis against the live app (WSGI): every operation of the served spec, with
generated requests, must answer without a 5xx and as openapi.yaml says (status, content
type, headers, body), and with an error code the operation lists for that status. Kept
small: a few examples per operation."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from flask import Flask
from hypothesis import HealthCheck, given, settings
from openapi_schema_validator import OAS30Validator
from schemathesis import checks

from service.bootstrap import Services, bootstrap
from service.config import Config
from tests.api.conftest import new_game

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]

#: examples per operation: enough to reach every status each one documents, bounded for CI
EXAMPLES = 25

SPEC = yaml.safe_load((Path(__file__).resolve().parents[2] / "openapi.yaml").read_text())
OPERATIONS = [(method.upper(), path) for path, item in SPEC["paths"].items() for method in item]

#: Operations that answer a text/event-stream. On OpenAPI 3.0 schemathesis reads such a
#: response's schema as the schema of each message, while openapi.yaml keeps the stream a
#: string (so client generators hand it over as text, tests/api/test_spec_for_generators.py):
#: their messages are checked by test_each_stream_message_is_an_event_as_documented instead.
STREAMS = {
    (method.upper(), path)
    for path, item in SPEC["paths"].items()
    for method, operation in item.items()
    if "text/event-stream" in operation["responses"].get("200", {}).get("content", {})
}


def checks_for(method: str, path: str) -> list:
    if (method, path) in STREAMS:
        return [check for check in CHECKS if check is not checks.response_schema_conformance]
    return CHECKS


def listed_codes(method: str, path: str, status: int) -> list[str]:
    """The problem codes openapi.yaml lists for this operation's ``status`` response."""
    response = SPEC["paths"][path][method.lower()]["responses"].get(str(status), {})
    return re.findall(r"`([a-z0-9_]+)`", response.get("description", ""))


def game_rule_codes_allowed(method: str, path: str, status: int) -> bool:
    response = SPEC["paths"][path][method.lower()]["responses"].get(str(status), {})
    return "the game's own codes" in response.get("description", "")


@pytest.fixture
def services(config: Config, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    # The SSE stream ends after MEEPLE_STREAM_MAX_SECONDS; short here so each generated
    # request to it is over in a moment.
    monkeypatch.setenv("MEEPLE_STREAM_MAX_SECONDS", "0.2")
    monkeypatch.setenv("MEEPLE_STREAM_POLL", "0.05")
    built = bootstrap(config)
    yield built
    built.close()


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[" ".join(o) for o in OPERATIONS])
def test_every_operation_answers_as_openapi_yaml_says(app: Flask, method: str, path: str) -> None:
    # A real game, so generated requests reach its state, its log and its actions too.
    game = new_game(app.test_client())
    schema = schemathesis.openapi.from_wsgi("/openapi.yaml", app)
    operation = schema[path][method]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        # The same examples on every run: CI never goes red by the luck of the draw.
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    def answers_as_documented(case: schemathesis.Case) -> None:
        # Half the cases, chosen from the case itself so a failure replays, aim at the real
        # game with one of its seats' tokens instead of a random id.
        pick = zlib.crc32(repr((case.path_parameters, case.query, case.body)).encode())
        if case.path_parameters and "game_id" in case.path_parameters and pick % 2:
            case.path_parameters["game_id"] = game["id"]
            token = game["seats"][pick % len(game["seats"])]["token"]
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}
        # Schemathesis reads a WSGI answer's bytes as they are: an uncompressed body, as a
        # client that decodes gzip (tests/api/test_compression.py) would see it.
        case.headers = {**(case.headers or {}), "Accept-Encoding": "identity"}
        response = case.call_and_validate(checks=checks_for(method, path))
        types = [str(v) for k, v in response.headers.items() if k.lower() == "content-type"]
        if response.status_code >= 400 and "problem+json" in "".join(types):
            code = json.loads(response.content)["code"]
            listed = listed_codes(method, path, response.status_code)
            assert code in listed or game_rule_codes_allowed(method, path, response.status_code), (
                f"{method} {path} answered {response.status_code} {code}, not among {listed}"
            )

    answers_as_documented()


def test_each_stream_message_is_an_event_as_documented(app: Flask) -> None:
    # The stream's messages, as openapi.yaml describes them: a first ``retry``, an ``event:
    # turn`` (a StreamTurn, no id), then for each event ``id: <seq>``, ``event: <its type>``
    # and ``data: <a StreamEvent as JSON>`` (the Event, with ``status`` beside its members).
    assert {("GET", "/games/{game_id}/stream"), ("GET", "/apps/me/stream")} == STREAMS
    client = app.test_client()
    game = new_game(client)
    schema = schemathesis.openapi.from_wsgi("/openapi.yaml", app)
    case = schema["/games/{game_id}/stream"]["GET"].Case(
        path_parameters={"game_id": game["id"]}, query={"after": 0}
    )
    response = case.call_and_validate(checks=checks_for("GET", "/games/{game_id}/stream"))
    messages = [
        dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        for block in response.content.decode().split("\n\n")
        if block.strip() and not block.startswith(":")
    ]
    spec = yaml.safe_load(client.get("/openapi.yaml").get_data(as_text=True))

    def valid(name: str, data: Any) -> None:
        ref = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
        errors = [error.message for error in OAS30Validator(ref).iter_errors(data)]
        assert errors == [], (name, data, errors)

    assert messages[0].keys() == {"retry"} and int(messages[0]["retry"]) > 0
    assert messages[1].keys() == {"event", "data"} and messages[1]["event"] == "turn"
    valid("StreamTurn", json.loads(messages[1]["data"]))
    events = client.get(f"/games/{game['id']}/events").json["events"]
    assert len(messages) - 2 == len(events) > 0
    for message, event in zip(messages[2:], events, strict=True):
        assert message.keys() == {"id", "event", "data"}
        sent = json.loads(message["data"])
        valid("StreamEvent", sent)
        assert int(message["id"]) == sent["seq"] == event["seq"]
        assert message["event"] == sent["type"] == event["type"]
        assert sent.pop("status")["finished"] is False
        assert sent == event


def test_each_app_stream_message_is_as_documented(app: Flask) -> None:
    # GET /apps/me/stream: a first ``retry``, an ``event: turn`` per game (AppStreamTurn),
    # then each event's ``id: <cursor>``, ``event: <type>``, ``data: <an AppStreamEvent>``.
    client = app.test_client()
    key = client.post("/apps", json={"name": "spec"}).json["key"]
    headers = {"Authorization": f"Bearer {key}"}
    game = client.post(
        "/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}, headers=headers
    ).json
    app.extensions["meeple"].jobs.close()
    services = app.extensions["meeple"]
    from service.workers.jobs import JobSettings, make_jobs

    services.jobs = make_jobs(services, JobSettings(stream_max_seconds=0.5))
    raw = client.get("/apps/me/stream", headers={**headers, "Last-Event-ID": "0"})
    assert raw.status_code == 200
    messages = [
        dict(line.split(": ", 1) for line in block.splitlines() if not line.startswith(":"))
        for block in raw.get_data(as_text=True).split("\n\n")
        if block.strip() and not block.startswith(":")
    ]
    spec = yaml.safe_load(client.get("/openapi.yaml").get_data(as_text=True))

    def valid(name: str, data: Any) -> None:
        ref = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
        errors = [error.message for error in OAS30Validator(ref).iter_errors(data)]
        assert errors == [], (name, data, errors)

    assert messages[0].keys() == {"retry"}
    assert messages[1]["event"] == "turn"
    valid("AppStreamTurn", json.loads(messages[1]["data"]))
    events = messages[2:]
    assert [json.loads(m["data"])["seq"] for m in events] == [1]
    for message in events:
        sent = json.loads(message["data"])
        valid("AppStreamEvent", sent)
        assert sent["game_id"] == game["id"] and message["event"] == sent["type"]
        assert [seat["seat"] for seat in sent["seats"]] == [0, 1]
