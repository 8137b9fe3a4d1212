"""Fair shares through the HTTP API, jobs in-process (docs/operations.md, "Fair shares"): bot
games and analyses are capped per owner (the client address, whatever tokens it holds) as well
as in all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.bootstrap import Services
from service.config import Config, load_config
from tests.api.conftest import ADMIN_KEY, bearer, settle
from tests.api.test_analyses import Gate, gate

#: The fixture that holds analyses' searches until opened.
__all__ = ["gate"]

A, B = "203.0.113.7", "198.51.100.9"
BOTS_ONLY = [{"bot": {"agent": "random"}}, {"bot": {"agent": "random"}}]
#: A bot game that stays under way: its person never plays.
AGAINST_A_PERSON = ["Ann", {"bot": {"agent": "random"}}]


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config(
        {},
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
        rate_limits=False,
        max_bot_games_per_owner=2,
    )


def post_game(
    client: FlaskClient, address: str, players: list[Any], headers: dict[str, str] | None = None
) -> TestResponse:
    return client.post(
        "/games",
        json={"ruleset": "tally", "players": players, "options": {"rounds": 1}},
        headers=headers or {},
        environ_base={"REMOTE_ADDR": address},
    )


def created(client: FlaskClient, address: str, players: list[Any]) -> str:
    response = post_game(client, address, players)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def test_the_per_owner_cap_on_bot_games_refuses_one_owner_while_another_succeeds(
    client: FlaskClient, services: Services
) -> None:
    for _ in range(2):
        created(client, A, AGAINST_A_PERSON)
    refused = post_game(client, A, AGAINST_A_PERSON)
    assert (refused.status_code, refused.json["code"]) == (429, "too_many_bot_games")
    assert "the most one owner (a client address) may have" in refused.json["detail"]
    assert int(refused.headers["Retry-After"]) >= 1
    # Fresh tokens change nothing: the count is the address's.
    lobby = post_game(client, A, ["Ann", {"open": True}])
    assert lobby.status_code == 201  # no bot: not counted
    ann = bearer(lobby.json["seats"][0]["token"])
    seat = f"/games/{lobby.json['id']}/seats/1/bot"
    given = client.post(
        seat, json={"agent": "random"}, headers=ann, environ_base={"REMOTE_ADDR": A}
    )
    assert (given.status_code, given.json["code"]) == (429, "too_many_bot_games")
    # Another owner is not held back by a's games, in a new game or a seat given to a bot.
    created(client, B, AGAINST_A_PERSON)
    given = client.post(
        seat, json={"agent": "random"}, headers=ann, environ_base={"REMOTE_ADDR": B}
    )
    assert given.status_code == 200, given.json
    assert post_game(client, A, AGAINST_A_PERSON, bearer(ADMIN_KEY)).status_code == 201
    settle(services)


def test_the_service_wide_cap_still_holds_and_says_so(
    client: FlaskClient, services: Services
) -> None:
    services.config = replace(services.config, max_bot_games=2)
    created(client, A, AGAINST_A_PERSON)
    created(client, B, AGAINST_A_PERSON)
    refused = post_game(client, "192.0.2.1", AGAINST_A_PERSON)
    assert (refused.status_code, refused.json["code"]) == (429, "too_many_bot_games")
    assert refused.json["detail"].startswith("The service has 2 games with bots under way")
    settle(services)


def test_a_bot_game_that_ends_frees_its_owners_place(
    client: FlaskClient, services: Services
) -> None:
    services.config = replace(services.config, max_bot_games_per_owner=1)
    first = created(client, A, BOTS_ONLY)
    settle(services)
    assert client.get(f"/games/{first}").json["status"]["finished"]
    created(client, A, AGAINST_A_PERSON)
    assert post_game(client, A, AGAINST_A_PERSON).status_code == 429
    settle(services)


def test_fresh_tokens_from_one_address_cannot_take_more_analyses_than_its_owner_may(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    services.jobs.settings = replace(
        services.jobs.settings, analyses_per_owner=2, analyses_per_requester=2, analyses_total=16
    )
    asked = []
    for _ in range(3):  # a new game each time: every token fresh
        game = post_game(client, A, ["Ann", "Bob"]).json
        token = game["seats"][0]["token"]
        asked.append(
            client.post(
                f"/games/{game['id']}/analyses",
                json={"playouts": 5},
                headers=bearer(token),
                environ_base={"REMOTE_ADDR": A},
            )
        )
    assert [response.status_code for response in asked] == [202, 202, 429]
    assert asked[2].json["code"] == "too_many_analyses"
    assert "Your address has 2 analyses" in asked[2].json["detail"]
    other = post_game(client, B, ["Cy", "Di"]).json
    theirs = client.post(
        f"/games/{other['id']}/analyses",
        json={"playouts": 5},
        headers=bearer(other["seats"][0]["token"]),
        environ_base={"REMOTE_ADDR": B},
    )
    assert theirs.status_code == 202, theirs.json
    gate.opened.set()
    settle(services)
