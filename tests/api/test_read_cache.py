"""Anonymous heavy reads are answered once per version of a game (service.http.read_cache):
a page of events and a past state are kept for spectators, never for a seat, and a new event
gives a new page."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services
from tests.api.conftest import bearer, new_game, settle


def _app(services: Services) -> Flask:
    return create_app(services=services)


def _cache(app: Flask) -> Any:
    return app.extensions["meeple_read_cache"]


def _bid(client: FlaskClient, game: dict[str, Any], seat: int) -> None:
    answer = client.post(
        f"/games/{game['id']}/actions",
        json={"type": "bid", "amount": 3},
        headers=bearer(game["seats"][seat]["token"]),
    )
    assert answer.status_code == 201, answer.json


def test_a_spectators_page_of_events_is_read_once_per_version(services: Services) -> None:
    app = _app(services)
    client = app.test_client()
    game = new_game(client)
    path = f"/games/{game['id']}/events?limit=1000"
    first = client.get(path)
    cache = _cache(app)
    misses = cache.misses
    again = client.get(path)
    assert again.status_code == 200 and again.json == first.json
    assert cache.misses == misses and cache.hits >= 1, "the second read was answered from memory"
    _bid(client, game, 0)
    moved = client.get(path)
    assert cache.misses == misses + 1
    assert len(moved.json["events"]) == len(first.json["events"]) + 1
    assert moved.json["version"] == first.json["version"] + 1


def test_a_seats_reads_are_never_kept(services: Services) -> None:
    app = _app(services)
    client = app.test_client()
    game = new_game(client)
    _bid(client, game, 0)
    seat = bearer(game["seats"][0]["token"])
    path = f"/games/{game['id']}/events?limit=1000"
    mine = client.get(path, headers=seat).json
    theirs = client.get(path).json
    # The seat sees its own bid; a spectator does not, and neither answer is the other's.
    assert mine != theirs
    assert client.get(path, headers=seat).json == mine
    assert client.get(path).json == theirs
    assert _cache(app).hits == 1  # the spectator's second read only


def test_a_spectators_past_state_is_kept_and_the_same(services: Services) -> None:
    app = _app(services)
    client = app.test_client()
    game = new_game(client)
    _bid(client, game, 0)
    _bid(client, game, 1)
    settle(services)
    path = f"/games/{game['id']}/state?at=2"
    first = client.get(path)
    assert first.status_code == 200
    again = client.get(path)
    assert again.json == first.json and again.headers["ETag"] == first.headers["ETag"]
    assert _cache(app).hits == 1
    seat = client.get(path, headers=bearer(game["seats"][0]["token"]))
    assert seat.json["seat"] == 0 and seat.json != first.json
