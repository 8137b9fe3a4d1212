"""GET .../legal-actions describes the decision and pages its list (docs/api.md, Decisions):
Gutenberg's plan phase, 2,000-odd plans, answers in a few kilobytes; the pages hold every
action exactly once; a bot posts a plan sampled from the description alone."""

from __future__ import annotations

import json
import random
from typing import Any

from flask.testing import FlaskClient

from projections import decisions
from service.application import commands
from service.bootstrap import Services
from tests.api.conftest import bearer, new_game, settle


def _get(client: FlaskClient, game: dict[str, Any], seat: int, query: str = "") -> Any:
    token = game["seats"][seat]["token"]
    return client.get(f"/games/{game['id']}/legal-actions{query}", headers=bearer(token))


def _to_the_plan(client: FlaskClient, services: Services) -> dict[str, Any]:
    """A 2-player Gutenberg game (no characters) played to its first plan."""
    game = new_game(client, "gutenberg", ["Ann", "Bob"], options={"characters": False})
    for _ in range(100):
        settle(services)
        status = client.get(f"/games/{game['id']}").json["status"]
        if status["phase"] == "plan":
            return game
        seat = status["to_act"][0]
        action = _get(client, game, seat).json["actions"][0]
        token = game["seats"][seat]["token"]
        posted = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))
        assert posted.status_code == 201, posted.json
    raise AssertionError("no plan phase after 100 actions")


def test_the_plan_phase_answers_with_a_description_and_a_first_page(
    client: FlaskClient, services: Services
) -> None:
    game = _to_the_plan(client, services)
    response = _get(client, game, 0)
    body = response.json
    assert [d["type"] for d in body["decision"]["types"]] == ["submit_plan"]
    plan = body["decision"]["types"][0]
    assert plan["exact"] and plan["count"] == body["total"] - sum(
        d["count"] for d in body["free_actions"]["types"]
    )
    assert plan["params"] == [
        {
            "name": "rows",
            "kind": "split",
            "parts": ["orders", "inks", "specialties", "gears", "patronage"],
            "min_each": 0,
            "max_each": 6,
            "total_min": 0,
            "total_max": 7,
        }
    ]
    assert "buy_type" in {d["type"] for d in body["free_actions"]["types"]}
    assert len(body["actions"]) == 100 and body["total"] > 700
    assert body["next_cursor"] == f"{body['version']}.100"
    assert len(response.data) < 10_000


def test_following_the_cursor_gives_every_action_exactly_once(
    client: FlaskClient, services: Services
) -> None:
    game = _to_the_plan(client, services)
    found: list[dict[str, Any]] = []
    query = "?limit=333"
    while True:
        body = _get(client, game, 1, query).json
        found.extend(body["actions"])
        if body["next_cursor"] is None:
            break
        query = f"?limit=333&cursor={body['next_cursor']}"
    loaded = commands.load_game(services, game["id"])
    assert found == loaded.ruleset.legal_actions(loaded.state, 1)
    assert len({json.dumps(a, sort_keys=True) for a in found}) == len(found) == body["total"]


def test_list_false_answers_the_descriptions_alone(client: FlaskClient, services: Services) -> None:
    game = _to_the_plan(client, services)
    full = _get(client, game, 0).json
    bare = _get(client, game, 0, "?list=false").json
    assert bare["actions"] == [] and bare["next_cursor"] is None
    assert bare["total"] == full["total"]
    assert bare["decision"] == full["decision"]
    assert bare["free_actions"] == full["free_actions"]


def test_a_bot_plays_a_plan_sampled_from_the_description(
    client: FlaskClient, services: Services
) -> None:
    game = _to_the_plan(client, services)
    plan = _get(client, game, 0, "?list=false").json["decision"]["types"][0]
    action = decisions.sample(plan, random.Random(12))
    token = game["seats"][0]["token"]
    posted = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))
    assert posted.status_code == 201, posted.json


def test_a_cursor_of_an_older_version_is_refused(client: FlaskClient, services: Services) -> None:
    game = _to_the_plan(client, services)
    cursor = _get(client, game, 1).json["next_cursor"]
    token = game["seats"][0]["token"]
    plan = {"type": "submit_plan", "rows": [1, 1, 1, 1, 1]}
    posted = client.post(f"/games/{game['id']}/actions", json=plan, headers=bearer(token))
    assert posted.status_code == 201
    stale = _get(client, game, 1, f"?cursor={cursor}")
    assert stale.status_code == 409
    assert stale.json["code"] == "version_conflict"
    assert stale.json["current_version"] == posted.json["version"]


def test_a_page_too_large_or_a_malformed_cursor_is_refused(client: FlaskClient) -> None:
    game = new_game(client)
    too_large = _get(client, game, 0, "?limit=1001")
    assert too_large.status_code == 422 and too_large.json["code"] == "limit_too_large"
    for query in ("?cursor=abc", "?cursor=1", "?limit=0", "?list=maybe", "?page=2"):
        refused = _get(client, game, 0, query)
        assert refused.status_code == 422, query
        assert refused.json["code"] == "invalid_query", query


def test_a_small_decision_is_listed_whole_with_its_description(client: FlaskClient) -> None:
    game = new_game(client)
    body = _get(client, game, 0).json
    assert body["next_cursor"] is None and len(body["actions"]) == body["total"]
    described = {d["type"]: d for d in body["decision"]["types"]}
    assert all(decisions.satisfies(described[a["type"]], a) for a in body["actions"])
