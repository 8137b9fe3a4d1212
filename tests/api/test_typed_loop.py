"""The typed play loop (docs/api.md, The typed play loop): the answer to an action carries the
game's new status and, with ``?include=legal_actions``, the acting seat's next legal actions, so a
bot plays with about one request per action; each game's view schema is served and every
state answer fits it."""

from __future__ import annotations

import random
from typing import Any

import jsonschema_rs
import pytest
from flask.testing import FlaskClient

from projections.ruleset import Ruleset
from service.bootstrap import Services
from service.http.openapi import product_rulesets
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle

RULESETS = product_rulesets()


def act(client: FlaskClient, game: dict[str, Any], seat: int, action: Any, query: str = "") -> Any:
    return client.post(
        f"/games/{game['id']}/actions{query}",
        json=action,
        headers=bearer(game["seats"][seat]["token"]),
    )


def test_an_action_answers_with_the_games_new_status(client: FlaskClient) -> None:
    game = new_game(client)
    answer = act(client, game, 0, {"type": "bid", "amount": 3})
    assert answer.status_code == 201
    summary = client.get(f"/games/{game['id']}").json
    assert answer.json["status"] == summary["status"]
    assert answer.json["version"] == summary["version"]
    assert "legal_actions" not in answer.json


def test_include_legal_actions_lists_what_the_seat_may_do_next(client: FlaskClient) -> None:
    game = new_game(client, "restoration")
    seat = client.get(f"/games/{game['id']}").json["status"]["to_act"][0]
    token = game["seats"][seat]["token"]
    first = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token)).json
    answer = act(client, game, seat, first["actions"][0], "?include=legal_actions")
    assert answer.status_code == 201, answer.json
    now = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token)).json
    assert now["version"] == answer.json["version"]
    assert answer.json["legal_actions"] == now["actions"]


def test_the_answer_lists_a_page_of_the_legal_actions_and_the_decision_they_answer(
    client: FlaskClient,
) -> None:
    game = new_game(client, "restoration")
    # Play the first listed action until an answer leaves its seat more than a page of 2.
    for _ in range(10):
        seat = client.get(f"/games/{game['id']}").json["status"]["to_act"][0]
        token = game["seats"][seat]["token"]
        listed = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token)).json
        answer = client.post(
            f"/games/{game['id']}/actions?include=legal_actions&limit=2",
            json=listed["actions"][0],
            headers={**bearer(token), "Prefer": "wait=5"},
        )
        assert answer.status_code == 201, answer.json
        if answer.json["legal_actions_summary"]["total"] > 2:
            break
    else:
        raise AssertionError("no answer left its seat more than 2 legal actions")
    every = client.get(f"/games/{game['id']}/legal-actions?limit=1000", headers=bearer(token)).json
    assert every["version"] == answer.json["version"]
    assert answer.json["legal_actions"] == every["actions"][:2]
    summary = answer.json["legal_actions_summary"]
    assert summary["decision"] == every["decision"]
    assert summary["free_actions"] == every["free_actions"]
    assert summary["total"] == every["total"]
    rest = client.get(
        f"/games/{game['id']}/legal-actions?limit=1000&cursor={summary['next_cursor']}",
        headers=bearer(token),
    ).json
    assert answer.json["legal_actions"] + rest["actions"] == every["actions"]


def test_a_page_over_the_largest_is_refused_and_appends_nothing(client: FlaskClient) -> None:
    game = new_game(client)
    answer = act(client, game, 0, {"type": "bid", "amount": 3}, "?include=legal_actions&limit=1001")
    assert answer.status_code == 422
    assert answer.json["code"] == "limit_too_large"
    assert client.get(f"/games/{game['id']}").json["version"] == game["version"]


def test_the_creation_answer_carries_the_games_status(client: FlaskClient) -> None:
    game = new_game(client, "restoration")
    assert game["status"] == client.get(f"/games/{game['id']}").json["status"]
    assert game["status"]["to_act"] and not game["status"]["finished"]
    lobby = client.post("/games", json={"ruleset": "tally", "players": ["Ann", {"open": True}]})
    assert lobby.status_code == 201
    assert lobby.json["status"]["waiting_for_players"] is True
    assert lobby.json["status"]["open_seats"] == [1]
    assert lobby.json["status"]["to_act"] == []


def test_the_seat_action_address_answers_the_same_way(client: FlaskClient) -> None:
    game = new_game(client)
    answer = client.post(
        f"/games/{game['id']}/seats/0/actions?include=legal_actions",
        json={"type": "bid", "amount": 2},
        headers=bearer(game["seats"][0]["token"]),
    )
    assert answer.status_code == 201, answer.json
    legal = client.get(
        f"/games/{game['id']}/legal-actions", headers=bearer(game["seats"][0]["token"])
    ).json
    assert answer.json["legal_actions"] == legal["actions"]
    assert answer.json["status"] == client.get(f"/games/{game['id']}").json["status"]


@pytest.mark.parametrize("query", ["?include=everything", "?include=", "?with=legal_actions"])
def test_an_unknown_include_is_an_invalid_query_and_appends_nothing(
    client: FlaskClient, query: str
) -> None:
    game = new_game(client)
    answer = act(client, game, 0, {"type": "bid", "amount": 3}, query)
    assert answer.status_code == 422
    assert answer.json["code"] == "invalid_query"
    assert client.get(f"/games/{game['id']}").json["version"] == game["version"]


def test_the_answer_lists_no_action_while_an_automatic_step_is_pending(
    client: FlaskClient,
) -> None:
    game = new_game(client)
    first = act(client, game, 0, {"type": "bid", "amount": 1}, "?include=legal_actions")
    assert first.status_code == 201
    assert first.json["legal_actions"] == []  # its bid is in; the other seat's is awaited
    last = act(client, game, 1, {"type": "bid", "amount": 1}, "?include=legal_actions")
    assert last.status_code == 201
    assert last.json["status"]["awaiting_system"] is not None  # the bids are revealed next
    assert last.json["legal_actions"] == []


@pytest.mark.parametrize("ruleset", RULESETS, ids=[r.id for r in RULESETS])
def test_each_game_serves_its_view_schema(client: FlaskClient, ruleset: Ruleset) -> None:
    response = client.get(f"/rulesets/{ruleset.id}/view-schema")
    assert response.status_code == 200
    assert response.mimetype == "application/schema+json"
    assert response.json == ruleset.view_schema()


@pytest.mark.parametrize("ruleset_id", ["no_such_game", "tally"])
def test_a_game_without_a_view_schema_is_not_found(client: FlaskClient, ruleset_id: str) -> None:
    response = client.get(f"/rulesets/{ruleset_id}/view-schema")
    assert response.status_code == 404
    assert response.json["code"] == "not_found"


@pytest.mark.parametrize("ruleset", RULESETS, ids=[r.id for r in RULESETS])
def test_a_bot_plays_a_whole_game_posting_listed_actions_back_in_about_one_request_each(
    client: FlaskClient, services: Services, ruleset: Ruleset
) -> None:
    """Every seat of one client: post a listed action with include=legal_actions, act again
    from the answer while that seat is to act, else ask the next seat; every view in an
    answer fits the game's served schema."""
    schema = jsonschema_rs.Draft202012Validator(
        client.get(f"/rulesets/{ruleset.id}/view-schema").json
    )
    players = [f"P{n}" for n in range(max(2, ruleset.min_players))]
    created = client.post(
        "/games",
        json={"ruleset": ruleset.id, "players": players, "seed": f"typed-{ruleset.id}"},
        headers=bearer(ADMIN_KEY),
    )
    assert created.status_code == 201
    game = created.json
    rng = random.Random(ruleset.id)
    requests = actions = 0
    status = client.get(f"/games/{game['id']}").json["status"]
    offers: dict[int, list[Any]] = {}
    while not status["finished"]:
        if status["awaiting_system"] or not status["to_act"]:
            settle(services)
            offers.clear()
            status = client.get(f"/games/{game['id']}").json["status"]
            requests += 1
            continue
        seat = next((s for s in status["to_act"] if s in offers), status["to_act"][0])
        if seat not in offers:
            token = game["seats"][seat]["token"]
            legal = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token))
            requests += 1
            offers[seat] = legal.json["actions"]
        assert offers[seat], f"{ruleset.id}: seat {seat} is to act with nothing to do"
        answer = act(client, game, seat, rng.choice(offers[seat]), "?include=legal_actions")
        requests += 1
        actions += 1
        assert answer.status_code == 201, answer.json
        assert schema.is_valid(answer.json["state"]), ruleset.id
        offers = {seat: answer.json["legal_actions"]}
        status = answer.json["status"]
        assert actions < 5_000, f"{ruleset.id} does not end"
    print(ruleset.id, requests, actions)
    assert requests / actions <= 2.1, (requests, actions)
