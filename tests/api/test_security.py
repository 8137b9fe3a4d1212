"""Who may do what: every mutating endpoint without a token, with another seat's token, with
a malformed token, and with a token of another game; nothing refused reaches the store."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle

MALFORMED = [
    "Bearer",
    "Bearer ",
    "Bearer not a token",
    "Bearer ÿÿÿ",
    "Basic QW5uOnNlY3JldA==",
    "Token abc",
    "bearer " + "x" * 300,
]


@pytest.fixture
def game(client: FlaskClient, services: Services) -> dict:
    """A game of two where seat 0 is to play (bids made and revealed)."""
    created = new_game(client)
    for seat in (0, 1):
        token = created["seats"][seat]["token"]
        response = client.post(
            f"/games/{created['id']}/actions",
            json={"type": "bid", "amount": 1},
            headers=bearer(token),
        )
        assert response.status_code == 201
    settle(services)
    return created


def post_draw(client: FlaskClient, game: dict, headers: dict[str, str]) -> TestResponse:
    return client.post(f"/games/{game['id']}/actions", json={"type": "draw"}, headers=headers)


def test_posting_an_action_without_a_token_is_unauthorized(
    client: FlaskClient, services: Services, game: dict
) -> None:
    version = services.store.version(game["id"])
    response = post_draw(client, game, {})
    assert response.status_code == 401
    assert response.json["code"] == "missing_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert services.store.version(game["id"]) == version


def test_posting_with_another_seats_token_acts_for_that_seat_only(
    client: FlaskClient, services: Services, game: dict
) -> None:
    version = services.store.version(game["id"])
    response = post_draw(client, game, bearer(game["seats"][1]["token"]))
    assert response.status_code == 422
    assert response.json["code"] == "not_your_turn"
    assert services.store.version(game["id"]) == version


@pytest.mark.parametrize("header", MALFORMED)
def test_posting_with_a_malformed_token_is_unauthorized(
    client: FlaskClient, services: Services, game: dict, header: str
) -> None:
    version = services.store.version(game["id"])
    response = post_draw(client, game, {"Authorization": header})
    assert response.status_code == 401
    assert response.json["code"] == "invalid_token"
    assert services.store.version(game["id"]) == version


def test_a_token_of_another_game_is_unauthorized(
    client: FlaskClient, services: Services, game: dict
) -> None:
    other = new_game(client)
    version = services.store.version(game["id"])
    response = post_draw(client, game, bearer(other["seats"][0]["token"]))
    assert response.status_code == 401
    assert response.json["code"] == "invalid_token"
    assert services.store.version(game["id"]) == version


def test_the_admin_key_acts_for_no_seat(
    client: FlaskClient, services: Services, game: dict
) -> None:
    version = services.store.version(game["id"])
    response = post_draw(client, game, bearer(ADMIN_KEY))
    assert response.status_code == 403
    assert response.json["code"] == "seat_required"
    assert services.store.version(game["id"]) == version


@pytest.mark.parametrize("header", MALFORMED)
def test_creating_a_game_with_a_malformed_token_is_unauthorized(
    client: FlaskClient, services: Services, header: str
) -> None:
    response = client.post(
        "/games",
        json={"ruleset": "tally", "players": ["Ann"]},
        headers={"Authorization": header},
    )
    assert response.status_code == 401
    assert services.store.game_ids() == []


def test_reading_with_a_bad_token_is_unauthorized_not_a_spectator(
    client: FlaskClient, game: dict
) -> None:
    for path in ("/state", "/legal-actions", "/events"):
        response = client.get(f"/games/{game['id']}{path}", headers=bearer("x" * 43))
        assert response.status_code == 401, path
        assert response.json["code"] == "invalid_token"


def test_the_correct_seat_may_act(client: FlaskClient, game: dict) -> None:
    response = post_draw(client, game, bearer(game["seats"][0]["token"]))
    assert response.status_code == 201


def test_creating_a_game_with_a_seat_token_is_unauthorized(
    client: FlaskClient, services: Services, game: dict
) -> None:
    # Anyone may create a game without a token; a token sent must be the admin key.
    response = client.post(
        "/games",
        json={"ruleset": "tally", "players": ["Ann"]},
        headers=bearer(game["seats"][1]["token"]),
    )
    assert response.status_code == 401
    assert response.json["code"] == "invalid_token"
    assert services.store.game_ids() == [game["id"]]
    admin = client.post(
        "/games", json={"ruleset": "tally", "players": ["Ann"]}, headers=bearer(ADMIN_KEY)
    )
    assert admin.status_code == 201
