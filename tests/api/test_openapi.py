"""openapi.yaml: generated from the code (no drift), a valid OpenAPI document, each game's
actions a oneOf discriminated by type, and served with a reference page that works offline."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from flask import Flask
from flask.testing import FlaskClient
from openapi_spec_validator import validate

from projections.ruleset import all_rulesets
from service.cli import openapi_text
from service.errors import PROBLEMS
from service.openapi import build_spec

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
    for name, response in spec["components"]["responses"].items():
        assert "application/problem+json" in response["content"], name


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
