"""openapi.yaml: generated from the code (no drift), a valid OpenAPI document, each game's
actions a oneOf discriminated by type, and served with a reference page that works offline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from flask import Flask
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from projections.ruleset import all_rulesets
from service.cli import openapi_text
from service.http.errors import PROBLEM_MEDIA_TYPE, PROBLEMS
from service.http.openapi import build_spec

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_openapi_yaml_is_what_the_code_generates() -> None:
    assert OPENAPI_FILE.read_text() == openapi_text(), (
        "openapi.yaml is out of date with the code: run `make openapi` and commit it"
    )


def test_openapi_yaml_is_a_valid_openapi_document() -> None:
    validate(yaml.safe_load(OPENAPI_FILE.read_text()))


def test_the_served_spec_is_valid_and_holds_every_registered_games_actions(
    client: FlaskClient,
) -> None:
    response = client.get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    spec = yaml.safe_load(response.data)
    validate(spec)
    schemas = spec["components"]["schemas"]
    for ruleset in all_rulesets():
        union = schemas[f"{''.join(p.capitalize() for p in ruleset.id.split('_'))}Action"]
        types = sorted(ruleset.action_schemas())
        if not types:
            continue
        assert union["discriminator"]["propertyName"] == "type"
        assert sorted(union["discriminator"]["mapping"]) == types
        assert len(union["oneOf"]) == len(types)
        for kind, ref in union["discriminator"]["mapping"].items():
            member = schemas[ref.rsplit("/", 1)[-1]]
            assert member["properties"]["type"]["enum"] == [kind]
            assert "type" in member["required"]


def test_every_operation_documents_its_errors_as_problems(app: Flask) -> None:
    spec = build_spec(app)
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            responses = {str(status) for status in operation["responses"]}
            assert "500" in responses, (method, path)
            if "{" in path:
                assert "404" in responses, (method, path)
            if "requestBody" in operation:
                assert {"400", "413", "415", "422"} <= responses, (method, path)
            if method == "post" and path.endswith("/actions"):
                assert {"401", "403", "409"} <= responses
    assert "responses" not in spec["components"]  # each operation lists its own codes


def listed_codes(response: dict[str, Any]) -> list[str]:
    return re.findall(r"`([a-z0-9_]+)`", response["description"])


def test_each_error_response_lists_only_codes_of_its_status(app: Flask) -> None:
    spec = build_spec(app)
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for status, response in operation["responses"].items():
                if int(status) < 400 or (path, str(status)) == ("/health", "503"):
                    continue
                where = (method, path, status)
                assert PROBLEM_MEDIA_TYPE in response["content"], where
                codes = listed_codes(response)
                assert codes, where
                for code in codes:
                    if code in PROBLEMS:
                        assert PROBLEMS[code][0] == int(status), (where, code)
                    else:  # a game's own code, which only a move can answer
                        assert (
                            int(status) == 422
                            and "the game's own codes" in (response["description"])
                        ), (where, code)


def test_an_operation_lists_the_codes_it_can_answer_and_not_the_others(app: Flask) -> None:
    spec = yaml.safe_load(yaml.safe_dump(build_spec(app)))  # statuses as in the file
    operations = {
        operation["operationId"]: operation
        for item in spec["paths"].values()
        for operation in item.values()
    }

    def codes(operation_id: str, status: int) -> list[str]:
        return listed_codes(operations[operation_id]["responses"][str(status)])

    assert codes("createGame", 422) == [
        "invalid_body",
        "unknown_ruleset",
        "invalid_player_count",
        "unknown_option",
        "invalid_option",
    ]
    assert codes("postUndo", 422)[-1] == "hidden_information_revealed"
    assert "hidden_information_revealed" not in codes("postRedo", 422)
    assert codes("getGame", 404) == ["game_not_found"]
    assert codes("getSeatState", 404) == ["game_not_found", "not_found"]
    assert codes("postAction", 409) == [
        "rules_version_mismatch",
        "version_conflict",
        "awaiting_system_step",
        "seats_open",
    ]
    assert "Retry-After" in operations["postAction"]["responses"]["409"]["headers"]
    assert "headers" not in operations["getGame"]["responses"]["409"]
    assert "401" not in operations["getGame"]["responses"]  # it reads no token
    assert operations["getGame"]["security"] == []


def test_the_reference_page_lists_every_operation_and_error_code_and_fetches_nothing(
    client: FlaskClient, app: Flask
) -> None:
    response = client.get("/docs")
    assert response.status_code == 200
    page = response.data.decode()
    for path in build_spec(app)["paths"]:
        assert f"<code>{path}</code>" in page
    for code in PROBLEMS:
        assert f'id="problem-{code}"' in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<script" not in page


def test_the_served_spec_names_the_deployments_public_url(client: FlaskClient) -> None:
    spec = yaml.safe_load(client.get("/openapi.yaml").data)
    assert spec["servers"] == [{"url": "http://127.0.0.1:8000"}]
    assert yaml.safe_load(OPENAPI_FILE.read_text())["servers"] == [{"url": "/"}]
    assert "Base URL: <code>http://127.0.0.1:8000</code>" in client.get("/docs").get_data(
        as_text=True
    )


def test_every_tag_an_operation_names_is_declared_once_at_the_top(app: Flask) -> None:
    spec = build_spec(app)
    declared = [tag["name"] for tag in spec["tags"]]
    assert len(declared) == len(set(declared))
    used = {tag for item in spec["paths"].values() for op in item.values() for tag in op["tags"]}
    assert used == set(declared)
    assert all(tag["description"] for tag in spec["tags"])
