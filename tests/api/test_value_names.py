"""legal-actions names each id among its values as the table names it (issue 32), from the
game's component tables, so a client labels choices without a rule of its own."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services
from tests.api.conftest import bearer, new_game


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def legal(client: FlaskClient, game: dict[str, Any], seat: int) -> Any:
    headers = bearer(game["seats"][seat]["token"])
    answer = client.get(f"/games/{game['id']}/legal-actions", headers=headers)
    assert answer.status_code == 200, answer.json
    return answer.json


def component_names(client: FlaskClient, ruleset: str, table: str) -> dict[str, str]:
    rows = client.get(f"/rulesets/{ruleset}/components").json["components"][table]
    rows = rows if isinstance(rows, list) else rows.get(table, list(rows.values()))
    return {row["id"]: row["name"] for row in rows}


def test_gutenbergs_characters_are_named_by_their_cards(client: FlaskClient) -> None:
    game = new_game(client, "gutenberg")
    found = legal(client, game, 0)
    offered = {action["character"] for action in found["actions"]}
    assert offered and set(found["names"]) == offered
    characters = client.get("/rulesets/gutenberg/components").json["components"]["game"]
    assert all(name in str(characters) for name in found["names"].values())
    assert all(found["names"][character] != character for character in offered)


def test_impressions_shops_are_named_as_the_city_names_them(client: FlaskClient) -> None:
    game = new_game(client, "impression")
    found = next(f for f in (legal(client, game, s) for s in (0, 1)) if f["actions"])
    shops = component_names(client, "impression", "shops")
    for action in found["actions"]:
        assert found["names"][action["shop"]] == shops[action["shop"]]


def test_ids_without_a_component_get_no_name(client: FlaskClient) -> None:
    game = new_game(client, "restoration")
    found = legal(client, game, 0)
    assert found["actions"] and found["names"] == {}
