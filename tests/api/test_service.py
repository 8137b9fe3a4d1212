"""The service's own endpoints: health, rulesets, unknown routes and methods."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from events.store import StoreError
from projections.ruleset import all_rulesets
from service.bootstrap import Services


def test_health_says_the_store_and_the_queue_answer(client: FlaskClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json["status"] == "ok"
    assert response.json["store"] is True
    assert response.json["queue"] is True
    assert response.json["rulesets"]["tally"] == "1"


def test_rulesets_list_every_game_with_player_counts_and_option_defaults(
    client: FlaskClient,
) -> None:
    listed = {entry["id"]: entry for entry in client.get("/rulesets").json["rulesets"]}
    assert set(listed) == {ruleset.id for ruleset in all_rulesets()}
    for ruleset in all_rulesets():
        entry = listed[ruleset.id]
        assert entry["min_players"] == ruleset.min_players
        assert entry["max_players"] == ruleset.max_players
        assert entry["rules_version"] == ruleset.rules_version
        assert entry["options"] == dict(ruleset.options)
        assert entry["option_descriptions"] == dict(ruleset.option_descriptions)
        assert entry["actions"] == sorted(ruleset.action_schemas())


def test_rulesets_say_why_impendium_has_a_round_limit(client: FlaskClient) -> None:
    # docs/api.md, Lobby: where the rulebook sets no end, /rulesets says so next to each option.
    listed = {entry["id"]: entry for entry in client.get("/rulesets").json["rulesets"]}
    impendium = listed["impendium"]
    assert set(impendium["option_descriptions"]) == set(impendium["options"])
    assert "no round limit" in impendium["option_descriptions"]["round_limit"]
    assert "may go on without end" in impendium["option_descriptions"]["variant"]


def test_an_unknown_address_is_a_not_found_problem(client: FlaskClient) -> None:
    response = client.get("/no/such/place")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    assert response.json["code"] == "not_found"
    assert set(response.json) >= {"type", "title", "status", "detail", "code"}


def test_a_wrong_method_is_a_method_not_allowed_problem_naming_the_allowed_ones(
    client: FlaskClient,
) -> None:
    response = client.delete("/rulesets")
    assert response.status_code == 405
    assert response.json["code"] == "method_not_allowed"
    assert "GET" in response.headers["Allow"]


def test_an_unreachable_store_is_a_service_unavailable_problem(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreachable(*args: object, **kwargs: object) -> None:
        raise StoreError("connection refused")

    monkeypatch.setattr(services.store, "version", unreachable)
    monkeypatch.setattr(services.store, "ping", lambda: False)
    response = client.get("/games/abc/state")
    assert response.status_code == 503
    assert response.json["code"] == "store_unavailable"
    assert "refused" not in response.json["detail"]
    health = client.get("/health")
    assert health.status_code == 503
    assert health.json["status"] == "degraded"


def test_a_bug_is_an_internal_error_that_tells_nothing_of_the_game(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret hand: [5, 2]")

    monkeypatch.setattr(services.folder, "load", broken)
    response = client.get("/games/abc")
    assert response.status_code == 500
    assert response.json["code"] == "internal_error"
    assert "secret" not in response.get_data(as_text=True)


def test_browser_clients_on_any_origin_may_call_the_api_with_their_token(
    client: FlaskClient,
) -> None:
    preflight = client.options(
        "/games/abc/actions",
        headers={
            "Origin": "https://table.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Authorization, If-Match",
        },
    )
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    assert "If-Match" in preflight.headers["Access-Control-Allow-Headers"]
    response = client.get("/rulesets", headers={"Origin": "https://table.example"})
    assert "ETag" in response.headers["Access-Control-Expose-Headers"]
