"""The service's own endpoints: health, rulesets, unknown routes and methods."""

from __future__ import annotations

from flask.testing import FlaskClient

from projections.ruleset import all_rulesets


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
        assert entry["actions"] == sorted(ruleset.action_schemas())


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
