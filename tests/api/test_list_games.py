"""GET /games: the game index, filtered and paged, never a scan of the streams."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.application import commands
from service.bootstrap import Services
from tests.api.conftest import bearer, new_game, settle


def listing(client: FlaskClient, query: str = "") -> dict[str, Any]:
    response = client.get(f"/games{query}")
    assert response.status_code == 200, response.json
    body: dict[str, Any] = response.json
    return body


def caught_up(services: Services) -> None:
    settle(services)
    commands.catch_up(services)


def test_created_games_are_listed_newest_first_with_their_status(
    client: FlaskClient, services: Services
) -> None:
    first = new_game(client, players=["Ann", "Bob"])
    second = new_game(client, players=["Cy"])
    caught_up(services)
    games = listing(client)["games"]
    assert [game["id"] for game in games] == [second["id"], first["id"]]
    assert games[1]["players"] == ["Ann", "Bob"]
    assert games[1]["status"] == "active"
    assert games[1]["to_act"] == [0, 1]
    assert games[1]["ruleset"] == "tally"


def test_listing_filters_by_player_ruleset_and_status(
    client: FlaskClient, services: Services
) -> None:
    anns = new_game(client, players=["Ann", "Bob"])
    new_game(client, players=["Cy", "Dee"])
    short = new_game(client, players=["Ann"], options={"rounds": 1, "turns_per_round": 1})
    token = short["seats"][0]["token"]
    for action in ({"type": "bid", "amount": 0}, {"type": "draw"}):
        settle(services)
        client.post(f"/games/{short['id']}/actions", json=action, headers=bearer(token))
    caught_up(services)
    assert [g["id"] for g in listing(client, "?player=Ann")["games"]] == [short["id"], anns["id"]]
    assert [g["id"] for g in listing(client, "?status=finished")["games"]] == [short["id"]]
    assert [g["id"] for g in listing(client, "?player=Ann&status=active")["games"]] == [anns["id"]]
    assert len(listing(client, "?ruleset=tally")["games"]) == 3
    assert listing(client, "?ruleset=gutenberg&player=Ann")["games"] == []


def test_listing_pages_with_a_cursor(client: FlaskClient, services: Services) -> None:
    created = [new_game(client, players=["Ann"])["id"] for _ in range(5)]
    caught_up(services)
    first = listing(client, "?limit=2")
    assert [game["id"] for game in first["games"]] == created[::-1][:2]
    second = listing(client, f"?limit=2&cursor={first['next_cursor']}")
    third = listing(client, f"?limit=2&cursor={second['next_cursor']}")
    assert [game["id"] for game in second["games"] + third["games"]] == created[::-1][2:]
    assert third["next_cursor"] is None


def test_listing_reads_the_index_not_the_streams(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_game(client)
    caught_up(services)

    requests = threading.get_ident()

    def refused_to_requests(real: Callable[..., Any]) -> Callable[..., Any]:
        # The test client serves requests on this thread; background jobs read on theirs.
        def read(*args: Any, **kwargs: Any) -> Any:
            assert threading.get_ident() != requests, "GET /games read the event store"
            return real(*args, **kwargs)

        return read

    monkeypatch.setattr(services.store, "read", refused_to_requests(services.store.read))
    monkeypatch.setattr(services.store, "read_feed", refused_to_requests(services.store.read_feed))
    assert len(listing(client)["games"]) == 1
