"""Bot seats through the HTTP API: bots seated at creation or given an open seat play their
turns in the background jobs, as their seat, named in the log as bots."""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask.testing import FlaskClient

from projections.audit import audit
from projections.fold import fold
from service.application import bot_seats, bots
from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle

MAX_REQUESTS = 20_000


def seeded_game(client: FlaskClient, players: list[Any], seed: str) -> dict[str, Any]:
    body = {"ruleset": "tally", "players": players, "seed": seed}
    response = client.post("/games", json=body, headers=bearer(ADMIN_KEY))
    assert response.status_code == 201, response.json
    created: dict[str, Any] = response.json
    return created


def play_humans(
    client: FlaskClient,
    services: Services,
    game_id: str,
    tokens: dict[int, str],
    rng: random.Random | None = None,
) -> dict[str, Any]:
    """Play the human seats (``tokens``) by random legal actions over HTTP, letting the jobs
    play automatic steps and bots, until the game ends; its final summary."""
    rng = rng or random.Random(7)
    for _ in range(MAX_REQUESTS):
        info = client.get(f"/games/{game_id}").json
        status = info["status"]
        if status["finished"]:
            return dict(info)
        humans = [seat for seat in status["to_act"] if seat in tokens]
        if status["awaiting_system"] or not humans:
            settle(services)
            continue
        seat = humans[0]
        headers = bearer(tokens[seat])
        legal = client.get(f"/games/{game_id}/legal-actions", headers=headers).json["actions"]
        if not legal:
            settle(services)
            continue
        response = client.post(f"/games/{game_id}/actions", json=rng.choice(legal), headers=headers)
        # A bot or a step may have moved the game on between the two requests.
        assert response.status_code in (201, 409, 422), response.json
    raise AssertionError("the game did not end")


def test_a_bot_seat_at_creation_has_no_token_and_a_name(client: FlaskClient) -> None:
    game = new_game(client, "tally", ["Ann", {"bot": {"agent": "mcts", "playouts": 20}}])
    bot = game["seats"][1]
    assert bot["kind"] == "bot" and bot["token"] is None
    assert bot["bot"] == {"agent": "mcts", "playouts": 20}
    assert bot["name"] == "MCTS bot (20 playouts)"
    named = new_game(client, "tally", ["Ann", {"bot": {"agent": "random"}, "name": "Robo"}])
    assert named["seats"][1]["name"] == "Robo"


@pytest.mark.parametrize(
    "seat",
    [
        {"bot": {"agent": "alphazero"}},
        {"bot": {"agent": "mcts", "playouts": 0}},
        {"bot": {"agent": "mcts", "playouts": bot_seats.MAX_PLAYOUTS + 1}},
        {"bot": {"agent": "random", "playouts": 5}},
        {"bot": {"agent": "random"}, "token": "x"},
        {"open": False},
        {"open": True, "name": "x"},
        {"seat": 1},
        7,
        "",
    ],
)
def test_a_malformed_seat_is_422(client: FlaskClient, seat: Any) -> None:
    response = client.post("/games", json={"ruleset": "tally", "players": ["Ann", seat]})
    assert response.status_code == 422, response.json
    assert response.json["code"] == "invalid_body"


def test_a_human_plays_a_whole_game_against_bots_and_the_log_names_them(
    client: FlaskClient, services: Services
) -> None:
    players: list[Any] = [
        "Ann",
        {"bot": {"agent": "random"}},
        {"bot": {"agent": "greedy"}},
        {"bot": {"agent": "mcts", "playouts": 10}},
    ]
    game = new_game(client, "tally", players)
    final = play_humans(client, services, game["id"], {0: game["seats"][0]["token"]})
    assert final["status"]["finished"] and final["result"] is not None
    stored = services.store.read(game["id"])
    actors = {
        (event["actor"]["seat"], event["actor"].get("bot"))
        for event in stored
        if event["type"] == "action"
    }
    assert actors == {(0, None), (1, "random"), (2, "greedy"), (3, "mcts")}
    assert audit(stored).ok


def test_a_human_plays_restoration_against_three_bots(
    client: FlaskClient, services: Services
) -> None:
    bot = {"bot": {"agent": "random"}}
    game = new_game(client, "restoration", ["Ann", bot, bot, bot])
    final = play_humans(client, services, game["id"], {0: game["seats"][0]["token"]})
    assert final["status"]["finished"]
    # The ranking is a list of tied groups: every seat is in exactly one of them.
    ranked = [seat for group in final["result"]["ranking"] for seat in group]
    assert sorted(ranked) == [0, 1, 2, 3]
    stored = services.store.read(game["id"])
    bot_moves = [e for e in stored if e["type"] == "action" and e["actor"].get("bot")]
    assert {e["actor"]["seat"] for e in bot_moves} == {1, 2, 3}
    assert audit(stored).ok


def test_a_game_of_bots_only_plays_itself_to_the_end(
    client: FlaskClient, services: Services
) -> None:
    players = [{"bot": {"agent": "greedy"}}, {"bot": {"agent": "mcts", "playouts": 5}}]
    game = new_game(client, "tally", players)
    for _ in range(200):
        settle(services)
        if client.get(f"/games/{game['id']}").json["status"]["finished"]:
            break
    info = client.get(f"/games/{game['id']}").json
    assert info["status"]["finished"], info["status"]
    assert audit(services.store.read(game["id"])).ok


def test_an_open_seat_is_given_to_a_bot_by_a_seat_of_the_game(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client, "tally", ["Ann", {"open": True}])
    url = f"/games/{game['id']}/seats/1/bot"
    anonymous = client.post(url, json={"agent": "random"})
    assert anonymous.status_code == 401
    stranger = new_game(client, "tally", ["Eve"])["seats"][0]["token"]
    assert client.post(url, json={"agent": "random"}, headers=bearer(stranger)).status_code == 401
    assert client.post(url, json={"agent": "nobody"}, headers=bearer(ADMIN_KEY)).status_code == 422
    ann = bearer(game["seats"][0]["token"])
    seated = client.post(url, json={"agent": "greedy"}, headers=ann)
    assert seated.status_code == 200, seated.json
    assert seated.json["kind"] == "bot" and seated.json["name"] == "Greedy bot"
    again = client.post(url, json={"agent": "random"}, headers=ann)
    assert again.status_code == 409 and again.json["code"] == "seat_taken"
    info = client.get(f"/games/{game['id']}").json
    assert info["status"]["waiting_for_players"] is False
    assert info["seats"][1] == {
        "seat": 1,
        "name": "Greedy bot",
        "kind": "bot",
        "bot": {"agent": "greedy", "playouts": None},
    }
    final = play_humans(client, services, game["id"], {0: game["seats"][0]["token"]})
    assert final["status"]["finished"]


def test_a_bot_seat_has_no_token_to_rotate_or_leave(client: FlaskClient) -> None:
    game = new_game(client, "tally", ["Ann", {"bot": {"agent": "random"}}])
    admin = bearer(ADMIN_KEY)
    token = client.post(f"/games/{game['id']}/seats/1/token", headers=admin)
    assert token.status_code == 409 and token.json["code"] == "seat_is_bot"
    left = client.post(f"/games/{game['id']}/seats/1/leave", headers=admin)
    assert left.status_code == 409 and left.json["code"] == "seat_is_bot"


def test_a_bot_turn_run_twice_appends_once(client: FlaskClient, services: Services) -> None:
    game = seeded_game(client, [{"bot": {"agent": "random"}}, "Ann"], "fixed")
    settle(services)
    # Tally starts with bids from every seat: the bot has bid, Ann has not.
    version = client.get(f"/games/{game['id']}").json["version"]
    stored = services.store.read(game["id"])
    bot_event = next(e for e in stored if e["actor"].get("bot"))
    again = bots.bot_turn(services, game["id"], bot_event["seq"] - 1)
    assert again in ("stale", "replayed", "conflict")
    assert client.get(f"/games/{game['id']}").json["version"] == version


def test_a_bot_chooses_the_same_action_from_the_same_position(
    client: FlaskClient, services: Services
) -> None:
    players: list[Any] = [{"bot": {"agent": "mcts", "playouts": 10}}, "Ann"]
    first = seeded_game(client, players, "same")
    second = seeded_game(client, players, "same")
    settle(services)
    picks = []
    for created in (first, second):
        stored = services.store.read(created["id"])
        picks.append([e["data"] | (e["secret"] or {}) for e in stored if e["actor"].get("bot")])
    assert picks[0] and picks[0] == picks[1]


def test_a_bot_decides_on_its_information_set_alone(
    services: Services, client: FlaskClient
) -> None:
    """Two positions that differ only in what the bot's seat cannot see (the other hand, the
    deck order) give the same choice."""
    game = seeded_game(client, ["Ann", "Bob"], "info")
    folded = fold(services.store.read(game["id"]))
    folded.meta = {**folded.meta, "bots": [{"agent": "mcts", "playouts": 15}, None]}
    other = folded.copy()
    state = other.state
    pile = state["deck"]["draw_pile"]
    swap = next(index for index, card in enumerate(pile) if card != state["hands"][1][0])
    state["hands"][1][0], pile[swap] = pile[swap], state["hands"][1][0]
    pile.reverse()
    other.state = state
    assert other.state != folded.state
    assert folded.ruleset.view(other.state, 0) == folded.ruleset.view(folded.state, 0)
    assert bots.choose(folded, 0) == bots.choose(other, 0)


def test_a_lost_bot_turn_is_queued_again_by_the_sweep(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from service.workers import jobs

    enqueue = services.jobs.enqueue
    lost: list[str] = []

    def losing(name: str, *args: Any, **options: Any) -> None:
        if name == "bot_turn":
            lost.append(name)  # the worker died with it
            return
        enqueue(name, *args, **options)

    monkeypatch.setattr(services.jobs, "enqueue", losing)
    game = new_game(client, "tally", [{"bot": {"agent": "random"}}, "Ann"])
    settle(services)
    assert lost
    assert not [e for e in services.store.read(game["id"]) if e["actor"].get("bot")]
    monkeypatch.setattr(services.jobs, "enqueue", enqueue)
    services.jobs.settings = replace(services.jobs.settings, step_grace=0.0)
    swept = jobs.sweep(services)
    # Queued again rather than played in the sweep: it waits for its fair turn as any other.
    assert swept["bot_turns"] >= 1
    settle(services)
    moves = [e for e in services.store.read(game["id"]) if e["actor"].get("bot")]
    assert [(e["actor"], e["data"]["action"]["type"]) for e in moves] == [
        ({"seat": 0, "bot": "random"}, "bid")
    ]
    settle(services)
