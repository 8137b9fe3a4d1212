"""openapi.yaml as client generators need it (docs/api.md, Generated clients): typed nullables and
enums, integer seats, each operation's security stated, and the headers it declares really sent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from flask.testing import FlaskClient

from tests.api.conftest import bearer, new_game
from tests.api.test_openapi import OPENAPI_FILE

SPEC = yaml.safe_load(OPENAPI_FILE.read_text())


def nodes(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every mapping in the document with its JSON pointer."""
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            yield from nodes(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from nodes(value, f"{where}/{index}")


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in SPEC["paths"].items():
        for method, operation in item.items():
            yield method, path, operation


NULL_ONLY = {"nullable": True, "enum": [None]}  # and a type: the schema of null alone


def test_every_nullable_schema_has_a_type_and_only_the_null_schema_holds_null() -> None:
    nullable = [(where, node) for where, node in nodes(SPEC) if node.get("nullable") is True]
    assert nullable
    for where, node in nullable:
        assert "type" in node, where
    for where, node in nodes(SPEC):
        if isinstance(node.get("enum"), list):
            assert "type" in node, where
            if None in node["enum"]:
                assert {k: v for k, v in node.items() if k != "type"} == NULL_ONLY, where
        assert {"type": "object", "nullable": True} not in node.get("anyOf", []), where


def test_nullable_enums_and_references_are_a_named_schema_or_null() -> None:
    schemas = SPEC["components"]["schemas"]
    specialty = schemas["GutenbergDevelopSpecialtyAction"]["properties"]["specialty"]
    assert specialty["oneOf"] == [
        {"$ref": "#/components/schemas/GutenbergDevelopSpecialtyActionSpecialty"},
        {"type": "string", **NULL_ONLY},
    ]
    named = schemas["GutenbergDevelopSpecialtyActionSpecialty"]
    assert named["type"] == "string" and None not in named["enum"] and len(named["enum"]) == 4
    ignore = schemas["GutenbergFulfillOrdersAction"]["properties"]["ignore"]
    assert ignore["oneOf"] == [
        {"$ref": "#/components/schemas/GutenbergIgnoreType"},
        {"type": "object", **NULL_ONLY},
    ]


def test_round_and_phase_are_typed() -> None:
    for name in ("GameStatus", "GameRow", "TimelineEntry"):
        properties = SPEC["components"]["schemas"][name]["properties"]
        assert properties["round"] == {"type": "integer", "nullable": True}, name
        assert properties["phase"] == {"type": "string", "nullable": True}, name


def test_seat_path_parameters_are_non_negative_integers() -> None:
    seats = [
        parameter
        for _, path, operation in operations()
        for parameter in operation.get("parameters", [])
        if parameter.get("name") == "seat" and parameter.get("in") == "path"
    ]
    assert len(seats) == 7  # three for a seat's play, four for the lobby
    assert all(p["schema"] == {"type": "integer", "minimum": 0} for p in seats)


def test_every_operation_states_its_security() -> None:
    for method, path, operation in operations():
        assert "security" in operation, (method, path)
    by_id = {operation["operationId"]: operation for _, _, operation in operations()}
    for anonymous in ("getGame", "listGames", "listRulesets", "getHealth"):
        assert by_id[anonymous]["security"] == []
    for optional in ("getState", "getLegalActions", "getEvents", "streamEvents"):
        assert {} in by_id[optional]["security"], optional
    for needed in ("postAction", "postUndo", "createWebhook"):
        assert {} not in by_id[needed]["security"], needed


def test_the_stream_and_the_export_are_strings_with_their_formats() -> None:
    stream = SPEC["paths"]["/games/{game_id}/stream"]["get"]["responses"]["200"]["content"]
    assert stream["text/event-stream"]["schema"]["type"] == "string"
    assert "id: <seq>" in stream["text/event-stream"]["schema"]["description"]
    export = SPEC["paths"]["/games/{game_id}/export"]["get"]["responses"]["200"]["content"]
    assert export["application/jsonl"]["schema"]["type"] == "string"
    assert "one event envelope a line" in export["application/jsonl"]["schema"]["description"]


def test_the_committed_spec_names_a_relative_server() -> None:
    assert SPEC["servers"] == [{"url": "/"}]


def test_state_at_an_event_sends_the_etag_it_declares(client: FlaskClient) -> None:
    declared = SPEC["paths"]["/games/{game_id}/state"]["get"]["responses"]["200"]["headers"]
    assert "ETag" in declared
    game = new_game(client)
    token = game["seats"][0]["token"]
    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 3}, headers=bearer(token)
    )
    then = client.get(f"/games/{game['id']}/state?at=1", headers=bearer(token))
    assert then.status_code == 200
    assert then.headers["ETag"] == '"1"' == f'"{then.json["version"]}"'
    now = client.get(f"/games/{game['id']}/state", headers=bearer(token))
    assert now.headers["ETag"] == f'"{now.json["version"]}"'
    seat = client.get(f"/games/{game['id']}/seats/0/state?at=1", headers=bearer(token))
    assert seat.headers["ETag"] == '"1"'
