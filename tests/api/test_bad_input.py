"""Bad input is refused with a problem and a stable code, and never reaches the store."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from service.bootstrap import Services
from tests.api.conftest import bearer, new_game


@pytest.fixture
def game(client: FlaskClient) -> dict:
    return new_game(client)


def post_action(client: FlaskClient, game: dict, seat: int = 0, **kwargs) -> object:
    token = game["seats"][seat]["token"]
    return client.post(f"/games/{game['id']}/actions", headers=bearer(token), **kwargs)


def test_a_body_over_the_size_limit_is_too_large(
    client: FlaskClient, game: dict, services: Services
) -> None:
    limit = services.config.max_body_bytes
    huge = '{"type": "bid", "amount": 1, "padding": "' + "x" * limit + '"}'
    response = post_action(client, game, data=huge, content_type="application/json")
    assert response.status_code == 413
    assert response.json["code"] == "payload_too_large"
    assert services.store.version(game["id"]) == 1
    created = client.post("/games", data=huge, content_type="application/json")
    assert created.status_code == 413


def test_malformed_json_is_a_bad_request(
    client: FlaskClient, game: dict, services: Services
) -> None:
    for text in ("{", "", "{'type': 'bid'}", "\xff"):
        response = post_action(client, game, data=text, content_type="application/json")
        assert response.status_code == 400, text
        assert response.json["code"] == "malformed_json"
    assert services.store.version(game["id"]) == 1


def test_a_body_that_is_not_json_is_an_unsupported_media_type(
    client: FlaskClient, game: dict
) -> None:
    response = post_action(client, game, data="type=bid", content_type="text/plain")
    assert response.status_code == 415
    assert response.json["code"] == "unsupported_media_type"


def test_schema_errors_name_the_fields(client: FlaskClient, game: dict, services: Services) -> None:
    cases = [
        ({"type": "bid", "amount": "three"}, "amount"),
        ({"type": "bid"}, "amount"),
        ({"type": "bid", "amount": 12}, "amount"),
        ({"type": "bid", "amount": 1, "extra": True}, "extra"),
        ({"type": "fly"}, "type"),
        ({"amount": 3}, "type"),
        ([{"type": "bid", "amount": 3}], "_schema"),
    ]
    for body, field in cases:
        response = post_action(client, game, json=body)
        assert response.status_code == 422, body
        assert response.json["code"] == "invalid_body"
        assert field in response.json["errors"], (body, response.json)
        assert field in response.json["detail"] or field == "_schema"
    assert services.store.version(game["id"]) == 1


def test_a_new_game_body_is_checked_field_by_field(client: FlaskClient, services: Services) -> None:
    cases = [
        ({"players": ["Ann"]}, "ruleset"),
        ({"ruleset": "tally"}, "players"),
        ({"ruleset": "tally", "players": []}, "players"),
        ({"ruleset": "tally", "players": [""]}, "players"),
        ({"ruleset": "tally", "players": ["Ann"], "colour": "red"}, "colour"),
        ({"ruleset": "tally", "players": ["Ann"], "options": []}, "options"),
    ]
    for body, field in cases:
        response = client.post("/games", json=body)
        assert response.status_code == 422, body
        assert field in response.json["errors"], (body, response.json)
    assert services.store.game_ids() == []


def test_bad_query_parameters_are_refused_naming_them(client: FlaskClient, game: dict) -> None:
    for path, name in (
        ("/games?limit=0", "limit"),
        ("/games?status=paused", "status"),
        ("/games?cursor=abc", "cursor"),
        ("/games?colour=red", "colour"),
        (f"/games/{game['id']}/events?after=-1", "after"),
        (f"/games/{game['id']}/events?limit=many", "limit"),
    ):
        response = client.get(path)
        assert response.status_code == 422, path
        assert response.json["code"] == "invalid_query"
        assert name in response.json["errors"]


def test_malformed_version_headers_are_bad_requests(
    client: FlaskClient, game: dict, services: Services
) -> None:
    token = game["seats"][0]["token"]
    headers = {**bearer(token), "If-Match": "yesterday"}
    response = client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 1}, headers=headers
    )
    assert response.status_code == 400
    assert response.json["code"] == "invalid_header"
    headers = {**bearer(token), "Idempotency-Key": "x" * 201}
    response = client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 1}, headers=headers
    )
    assert response.status_code == 400
    state = client.get(f"/games/{game['id']}/state", headers={"If-None-Match": "soon"})
    assert state.status_code == 400
    assert services.store.version(game["id"]) == 1
