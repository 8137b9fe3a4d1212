"""GET /rulesets/{id}/components: the printed components a client draws names and effects from."""

from __future__ import annotations

from flask.testing import FlaskClient

from projections.games.impendium import data as impendium_data
from projections.games.impression import data as impression_data


def test_impression_components_are_the_tables_its_rules_read(client: FlaskClient) -> None:
    response = client.get("/rulesets/impression/components")
    assert response.status_code == 200
    body = response.json
    assert body["ruleset"] == "impression"
    assert body["rules_version"] == "5"
    tables = body["components"]
    shops = {shop["id"]: shop for shop in tables["shops"]["shops"]}
    assert shops == impression_data.SHOPS
    technologies = {tile["id"]: tile for tile in tables["technologies"]["technologies"]}
    assert technologies == impression_data.TECHNOLOGIES
    assert tables["player_board"]["workshop"] == impression_data.BOARD["workshop"]


def test_impendium_components_name_every_star_and_faction(client: FlaskClient) -> None:
    tables = client.get("/rulesets/impendium/components").json["components"]
    assert len(tables["stars"]["stars"]) == impendium_data.COUNTS["stars"]
    names = {faction["id"]: faction["name"] for faction in tables["factions"]["factions"]}
    assert names["F01"] == "Tidewardens"
    assert len(names) == impendium_data.COUNTS["factions"]


def test_components_may_be_cached_by_anyone(client: FlaskClient) -> None:
    response = client.get("/rulesets/impendium/components")
    assert response.headers["Cache-Control"] == "public, max-age=3600"


def test_an_unknown_game_has_no_components(client: FlaskClient) -> None:
    response = client.get("/rulesets/chess/components")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    assert response.json["code"] == "not_found"
