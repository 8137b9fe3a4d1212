"""The reference page at /docs (docs/api.md): Markdown rendered, every schema a linked
table, an example request and answer for every operation, an anchor for every code the
service can answer with (the games' own included), no script and nothing fetched from
elsewhere, which its Content-Security-Policy enforces."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from openapi_schema_validator import OAS30Validator

from projections.ruleset import all_rulesets, get_ruleset
from service.http.errors import PROBLEMS
from service.http.openapi import build_spec
from service.http.resources.docs import example, game_codes, problem_catalogue, unresolved_templates
from tests.api.conftest import bearer, new_game


@pytest.fixture
def page(client: FlaskClient) -> str:
    response = client.get("/docs")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def ids(page: str) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page))


def test_the_page_allows_no_script_and_nothing_from_elsewhere(client: FlaskClient) -> None:
    response = client.get("/docs")
    policy = response.headers["Content-Security-Policy"]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert "script-src" not in directives and "unsafe" not in policy
    assert directives["frame-ancestors"] == "'none'"
    page = response.get_data(as_text=True)
    styles = re.findall(r"<style>(.*?)</style>", page, re.DOTALL)
    assert len(styles) == 1, "one inline style block, allowed by its hash"
    digest = base64.b64encode(hashlib.sha256(styles[0].encode()).digest()).decode()
    assert directives["style-src"] == f"'sha256-{digest}'"
    assert "<script" not in page and " style=" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_descriptions_are_markdown_rendered_not_shown_as_source(page: str) -> None:
    assert "``" not in page and "`" not in re.sub(r"<pre>.*?</pre>", "", page, flags=re.DOTALL)
    # postAction's description: ``If-Match`` pins the version ...
    post_action = page[page.index('id="postAction"') :]
    assert "<code>If-Match</code>" in post_action[: post_action.index("</section>")]


def test_every_link_on_the_page_lands_on_an_anchor_of_the_page(page: str) -> None:
    anchors = ids(page)
    targets = set(re.findall(r'href="#([^"]+)"', page))
    assert targets, "the page links within itself"
    assert targets - anchors == set()


def test_every_schema_is_a_table_and_every_reference_links_to_it(app: Flask, page: str) -> None:
    spec = build_spec(app)
    anchors = ids(page)
    for name, schema in spec["components"]["schemas"].items():
        assert f"schema-{name}" in anchors, name
        for key in schema.get("properties", {}):
            section = page[page.index(f'id="schema-{name}"') :]
            assert f"<code>{key}</code>" in section[: section.index("</section>")], (name, key)
    referenced = set(re.findall(r"#/components/schemas/(\w+)", json.dumps(spec)))
    linked = set(re.findall(r'href="#schema-(\w+)"', page))
    assert referenced <= linked
    assert '<pre>{\n  "type"' not in page, "no schema dumped as raw JSON"


def test_every_operation_has_an_example_request_and_its_answer_fits_the_schema(
    app: Flask, page: str
) -> None:
    spec = build_spec(app)
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            section = page[page.index(f'id="{operation["operationId"]}"') :]
            section = section[: section.index("</section>")]
            assert "Example request" in section and "<pre>curl" in section, path
            success = next(s for s in operation["responses"] if str(s).startswith("2"))
            media = operation["responses"][success].get("content", {}).get("application/json")
            if media is None:
                continue
            assert "Example answer" in section, (method, path)
            shown = example(spec, media["schema"])
            assert str(escape(json.dumps(shown, indent=2))) in section
            validator = OAS30Validator({**media["schema"], "components": spec["components"]})
            assert list(validator.iter_errors(shown)) == [], (method, path, shown)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                sent = example(spec, body["schema"], sent=True)
                assert str(escape(json.dumps(sent))) in section
                validator = OAS30Validator({**body["schema"], "components": spec["components"]})
                assert list(validator.iter_errors(sent)) == [], (method, path, sent)


def test_every_code_the_service_can_answer_has_an_anchor(page: str) -> None:
    anchors = ids(page)
    for code in PROBLEMS:
        assert f"problem-{code}" in anchors, code
    for ruleset in all_rulesets():
        codes = game_codes(ruleset)
        assert "missing_action_type" in codes, ruleset.id  # the fold's, for every game
        for code in codes:
            assert f"problem-{code}" in anchors, (ruleset.id, code)
        assert f"problems-{ruleset.id}" in anchors
    for code in ("phase_mismatch", "choice_pending", "not_your_turn", "order_already_bought"):
        assert f"problem-{code}" in anchors, code
    for game in ("gutenberg", "impendium", "impression", "restoration"):
        assert len(game_codes(get_ruleset(game))) >= 40, game
    assert unresolved_templates() == set(), "add the codes a template gives to TEMPLATE_CODES"


def test_each_code_is_listed_once_with_the_games_that_raise_it() -> None:
    games = ("gutenberg", "impendium", "impression", "restoration")
    catalogue = problem_catalogue([get_ruleset(game) for game in games])
    codes = [entry["code"] for entry in catalogue]
    assert len(codes) == len(set(codes))
    by_code = {entry["code"]: entry for entry in catalogue}
    assert by_code["phase_mismatch"]["games"] == ["gutenberg", "impendium", "restoration"]
    assert by_code["phase_mismatch"]["status"] is None  # a rule's code: 422
    assert by_code["not_your_turn"]["status"] == 422
    assert "gutenberg" in by_code["not_your_turn"]["games"]
    assert "impression" in by_code["choice_pending"]["games"]
    assert "contract_already_bought" in game_codes(get_ruleset("impression"))


def test_a_problem_type_names_its_entry_on_the_page(client: FlaskClient, page: str) -> None:
    game = new_game(client)
    bid = {"type": "bid", "amount": 3}
    seat = bearer(game["seats"][1]["token"])
    assert client.post(f"/games/{game['id']}/actions", json=bid, headers=seat).status_code == 201
    refused = client.post(f"/games/{game['id']}/actions", json=bid, headers=seat)
    assert refused.status_code == 422
    problem: dict[str, Any] = refused.json
    assert problem["code"] == "already_bid" and problem["code"] not in PROBLEMS  # the game's
    assert problem["type"] == f"/docs#problem-{problem['code']}"
    assert f"problem-{problem['code']}" in ids(page)
