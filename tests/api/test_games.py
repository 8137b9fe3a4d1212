"""Creating games, their summaries, and the seat tokens handed out once."""

from __future__ import annotations

import hashlib
import json

from flask.testing import FlaskClient

from projections.rng import seed_commitment
from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, new_game


def test_a_new_game_gives_every_seat_a_token_shown_once(client: FlaskClient) -> None:
    response = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]})
    assert response.status_code == 201
    body = response.json
    assert body["version"] == 1
    assert [(seat["seat"], seat["name"]) for seat in body["seats"]] == [(0, "Ann"), (1, "Bob")]
    tokens = [seat["token"] for seat in body["seats"]]
    assert len(set(tokens)) == 2 and all(len(token) >= 43 for token in tokens)
    assert response.headers["Location"] == f"/games/{body['id']}"
    assert response.headers["Cache-Control"] == "no-store"


def test_the_log_keeps_only_the_hashes_of_the_tokens(
    client: FlaskClient, services: Services
) -> None:
    created = new_game(client)
    stored = json.dumps(services.store.read(created["id"]))
    for seat in created["seats"]:
        assert seat["token"] not in stored
        assert hashlib.sha256(seat["token"].encode()).hexdigest() in stored


def test_a_game_summary_gives_players_status_and_the_seed_commitment_only(
    client: FlaskClient,
) -> None:
    created = new_game(client, players=["Ann", "Bob", "Cy"])
    summary = client.get(f"/games/{created['id']}").json
    assert summary["players"] == ["Ann", "Bob", "Cy"]
    assert summary["ruleset"] == "tally"
    assert summary["options"] == {"rounds": 3, "turns_per_round": 2}
    assert summary["status"] == {
        "round": 1,
        "phase": "bid",
        "to_act": [0, 1, 2],
        "awaiting_system": None,
        "finished": False,
        "waiting_for_players": False,
        "open_seats": [],
    }
    assert summary["seed"] is None
    assert summary["result"] is None
    assert len(summary["seed_commitment"]) == 64


def test_options_override_the_defaults(client: FlaskClient) -> None:
    created = new_game(client, options={"rounds": 1})
    assert client.get(f"/games/{created['id']}").json["options"]["rounds"] == 1


def test_a_client_seed_needs_the_admin_key(client: FlaskClient, services: Services) -> None:
    body = {"ruleset": "tally", "players": ["Ann"], "seed": "my-lucky-seed"}
    without = client.post("/games", json=body)
    assert without.status_code == 401
    assert without.json["code"] == "missing_token"
    assert services.store.game_ids() == []
    created = client.post("/games", json=body, headers=bearer(ADMIN_KEY))
    assert created.status_code == 201
    summary = client.get(f"/games/{created.json['id']}").json
    assert summary["seed_commitment"] == seed_commitment("my-lucky-seed")


def test_a_seat_token_cannot_choose_a_seed(client: FlaskClient, services: Services) -> None:
    other = new_game(client)
    body = {"ruleset": "tally", "players": ["Ann"], "seed": "my-lucky-seed"}
    response = client.post("/games", json=body, headers=bearer(other["seats"][0]["token"]))
    assert response.status_code == 401
    assert response.json["code"] == "invalid_token"
    assert services.store.game_ids() == [other["id"]]


def test_an_unknown_ruleset_is_refused_naming_the_field(client: FlaskClient) -> None:
    response = client.post("/games", json={"ruleset": "chess", "players": ["Ann"]})
    assert response.status_code == 422
    assert response.json["code"] == "unknown_ruleset"
    assert "ruleset" in response.json["errors"]


def test_too_many_players_are_refused(client: FlaskClient) -> None:
    players = [f"P{n}" for n in range(5)]
    response = client.post("/games", json={"ruleset": "tally", "players": players})
    assert response.status_code == 422
    assert response.json["code"] == "invalid_player_count"
    assert "1 to 4" in response.json["detail"]


def test_unknown_and_ill_typed_options_are_refused(client: FlaskClient) -> None:
    unknown = client.post(
        "/games", json={"ruleset": "tally", "players": ["Ann"], "options": {"speed": 3}}
    )
    assert unknown.status_code == 422
    assert unknown.json["code"] == "unknown_option"
    assert "speed" in unknown.json["errors"]["options"]
    wrong = client.post(
        "/games", json={"ruleset": "tally", "players": ["Ann"], "options": {"rounds": "many"}}
    )
    assert wrong.status_code == 422
    assert wrong.json["code"] == "invalid_option"


def test_unknown_games_are_not_found_on_every_game_address(client: FlaskClient) -> None:
    for path in ("", "/state", "/legal-actions", "/events"):
        response = client.get(f"/games/no-such-game{path}")
        assert response.status_code == 404, path
        assert response.json["code"] == "game_not_found"
    posted = client.post("/games/no-such-game/actions", json={"type": "draw"})
    assert posted.status_code == 404
