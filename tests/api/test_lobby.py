"""The lobby through the HTTP API: open seats joined later, leaving before the start, seat
tokens rotated and re-issued, and every change a ``seat_changed`` event of the log."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

from events.envelope import verify_chain
from projections.audit import audit
from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle

OPEN = {"open": True}


def lobby(client: FlaskClient, players: list[Any] | None = None) -> dict[str, Any]:
    return new_game(client, "tally", players or ["Ann", OPEN])


def join(client: FlaskClient, game_id: str, seat: int, name: str = "Bob") -> Any:
    return client.post(f"/games/{game_id}/seats/{seat}/join", json={"name": name})


def summary(client: FlaskClient, game_id: str) -> dict[str, Any]:
    response = client.get(f"/games/{game_id}")
    assert response.status_code == 200
    body: dict[str, Any] = response.json
    return body


def test_an_open_seat_has_no_token_and_the_game_waits_for_its_player(
    client: FlaskClient, services: Services
) -> None:
    game = lobby(client)
    assert [(seat["kind"], seat["token"] is None) for seat in game["seats"]] == [
        ("player", False),
        ("open", True),
    ]
    settle(services)
    status = summary(client, game["id"])["status"]
    assert status["waiting_for_players"] is True
    assert status["open_seats"] == [1]
    assert status["to_act"] == [] and status["awaiting_system"] is None
    # The first automatic step (Tally's bids come first, then a reveal) waits too.
    assert summary(client, game["id"])["version"] == 1


def test_an_action_while_a_seat_is_open_is_refused_with_seats_open(client: FlaskClient) -> None:
    game = lobby(client)
    ann = bearer(game["seats"][0]["token"])
    response = client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 1}, headers=ann
    )
    assert response.status_code == 409
    assert response.json["code"] == "seats_open"
    legal = client.get(f"/games/{game['id']}/legal-actions", headers=ann)
    assert legal.json["actions"] == []


def test_joining_returns_the_seat_token_once_and_the_game_starts(
    client: FlaskClient, services: Services
) -> None:
    game = lobby(client)
    joined = join(client, game["id"], 1, "Bob")
    assert joined.status_code == 201, joined.json
    assert joined.headers["Cache-Control"] == "no-store"
    token = joined.json["token"]
    assert joined.json["seat"] == 1 and joined.json["name"] == "Bob"
    info = summary(client, game["id"])
    assert info["players"] == ["Ann", "Bob"]
    assert info["status"]["waiting_for_players"] is False
    assert [seat["kind"] for seat in info["seats"]] == ["player", "player"]
    state = client.get(f"/games/{game['id']}/state", headers=bearer(token))
    assert state.json["seat"] == 1
    assert state.json["state"]["players"] == ["Ann", "Bob"]
    response = client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 2}, headers=bearer(token)
    )
    assert response.status_code == 201, response.json
    settle(services)


def test_joining_a_taken_seat_is_409_seat_taken(client: FlaskClient) -> None:
    game = lobby(client)
    assert join(client, game["id"], 1, "Bob").status_code == 201
    again = join(client, game["id"], 1, "Eve")
    assert again.status_code == 409
    assert again.json["code"] == "seat_taken"
    named = join(client, game["id"], 0, "Eve")
    assert named.status_code == 409 and named.json["code"] == "seat_taken"


def test_joining_validates_the_name_and_the_seat(client: FlaskClient) -> None:
    game = lobby(client)
    assert client.post(f"/games/{game['id']}/seats/1/join", json={}).json["code"] == "invalid_body"
    too_long = client.post(f"/games/{game['id']}/seats/1/join", json={"name": "x" * 41})
    assert too_long.status_code == 422
    assert join(client, game["id"], 5).status_code == 404
    assert join(client, "nosuchgame", 1).status_code == 404


def test_a_player_may_leave_before_the_start_and_the_token_stops_working(
    client: FlaskClient,
) -> None:
    game = lobby(client, ["Ann", OPEN, OPEN])
    bob = join(client, game["id"], 1, "Bob").json["token"]
    left = client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob))
    assert left.status_code == 200, left.json
    assert left.json["kind"] == "open"
    assert summary(client, game["id"])["status"]["open_seats"] == [1, 2]
    revoked = client.get(f"/games/{game['id']}/state", headers=bearer(bob))
    assert revoked.status_code == 401 and revoked.json["code"] == "invalid_token"
    assert join(client, game["id"], 1, "Cleo").status_code == 201


def test_leaving_another_seat_or_an_open_one_is_refused(client: FlaskClient) -> None:
    game = lobby(client, ["Ann", "Bob", OPEN])
    ann = bearer(game["seats"][0]["token"])
    other = client.post(f"/games/{game['id']}/seats/1/leave", headers=ann)
    assert other.status_code == 403 and other.json["code"] == "not_your_seat"
    anonymous = client.post(f"/games/{game['id']}/seats/0/leave")
    assert anonymous.status_code == 401
    admin = bearer(ADMIN_KEY)
    opened = client.post(f"/games/{game['id']}/seats/2/leave", headers=admin)
    assert opened.status_code == 409 and opened.json["code"] == "seat_open"


def test_nobody_leaves_once_the_game_has_started(client: FlaskClient, services: Services) -> None:
    game = lobby(client)
    bob = join(client, game["id"], 1).json["token"]
    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 1}, headers=bearer(bob)
    )
    left = client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob))
    assert left.status_code == 409 and left.json["code"] == "game_started"
    # a game starts only with every seat taken: a late comer finds the seat taken
    late = join(client, game["id"], 1, "Eve")
    assert late.status_code == 409 and late.json["code"] == "seat_taken"
    settle(services)


def test_a_seat_rotates_its_own_token(client: FlaskClient) -> None:
    game = new_game(client, "tally", ["Ann", "Bob"])
    old = game["seats"][1]["token"]
    rotated = client.post(f"/games/{game['id']}/seats/1/token", headers=bearer(old))
    assert rotated.status_code == 201, rotated.json
    new = rotated.json["token"]
    assert new != old
    assert client.get(f"/games/{game['id']}/state", headers=bearer(old)).status_code == 401
    assert client.get(f"/games/{game['id']}/state", headers=bearer(new)).json["seat"] == 1
    # Another seat's token may not rotate it.
    ann = bearer(game["seats"][0]["token"])
    other = client.post(f"/games/{game['id']}/seats/1/token", headers=ann)
    assert other.status_code == 403 and other.json["code"] == "not_your_seat"


def test_the_admin_reissues_a_lost_token(client: FlaskClient) -> None:
    game = new_game(client, "tally", ["Ann", "Bob"])
    lost = game["seats"][0]["token"]
    reissued = client.post(f"/games/{game['id']}/seats/0/token", headers=bearer(ADMIN_KEY))
    assert reissued.status_code == 201
    assert client.get(f"/games/{game['id']}/state", headers=bearer(lost)).status_code == 401
    token = reissued.json["token"]
    assert client.get(f"/games/{game['id']}/state", headers=bearer(token)).json["seat"] == 0
    assert client.post(f"/games/{game['id']}/seats/0/token").status_code == 401


def test_seat_changes_are_events_without_tokens_or_hashes_in_public(
    client: FlaskClient, services: Services
) -> None:
    game = lobby(client, ["Ann", OPEN, OPEN])
    bob = join(client, game["id"], 1, "Bob").json["token"]
    client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob))
    cleo = join(client, game["id"], 1, "Cleo").json["token"]
    client.post(f"/games/{game['id']}/seats/1/token", headers=bearer(cleo))
    ann = bearer(game["seats"][0]["token"])
    client.post(f"/games/{game['id']}/seats/2/bot", json={"agent": "random"}, headers=ann)
    events = client.get(f"/games/{game['id']}/events", headers=ann).json["events"]
    changes = [event for event in events if event["type"] == "seat_changed"]
    assert [(event["data"]["seat"], event["data"]["change"]) for event in changes] == [
        (1, "joined"),
        (1, "left"),
        (1, "joined"),
        (1, "token_rotated"),
        (2, "bot_seated"),
    ]
    text = str(events)
    stored = services.store.read(game["id"])
    hashes = [
        event["secret"]["token_hash"]
        for event in stored
        if event["type"] == "seat_changed" and event["secret"]
    ]
    assert len(hashes) == 3
    for secret in [bob, cleo, *hashes]:
        assert secret not in text
    assert all(event["secret"] is None for event in changes)
    assert verify_chain(stored) is None
    settle(services)
    assert audit(services.store.read(game["id"])).ok


def test_a_lobby_game_plays_to_the_end_and_audits(client: FlaskClient, services: Services) -> None:
    from tests.api.test_bots import play_humans

    game = lobby(client, [OPEN, "Ann"])
    bob = join(client, game["id"], 0, "Bob").json["token"]
    final = play_humans(client, services, game["id"], {0: bob, 1: game["seats"][1]["token"]})
    assert final["status"]["finished"]
    assert final["players"] == ["Bob", "Ann"]
    report = audit(services.store.read(game["id"]))
    assert report.ok, report


def test_the_game_list_shows_lobbies_and_branches_with_true_timestamps(
    client: FlaskClient, services: Services
) -> None:
    from service.application import commands

    played = new_game(client, "tally", ["Ann", "Bob"])
    ann = bearer(played["seats"][0]["token"])
    client.post(f"/games/{played['id']}/actions", json={"type": "bid", "amount": 1}, headers=ann)
    open_game = lobby(client)
    branch = client.post(f"/games/{played['id']}/branches", json={"at": 2}, headers=ann)
    assert branch.status_code == 201, branch.json
    settle(services)
    commands.catch_up(services)

    def listed(query: str) -> list[dict[str, Any]]:
        response = client.get(f"/games{query}")
        assert response.status_code == 200, response.json
        games: list[dict[str, Any]] = response.json["games"]
        return games

    assert [game["id"] for game in listed("?open=true")] == [open_game["id"]]
    assert listed("?open=true")[0]["open_seats"] == [1]
    branches = listed(f"?branch_of={played['id']}")
    assert [game["id"] for game in branches] == [branch.json["id"]]
    assert branches[0]["sandbox"] is True and branches[0]["branch_of"] == played["id"]
    assert [game["id"] for game in listed("?sandbox=true")] == [branch.json["id"]]
    assert branch.json["id"] not in [game["id"] for game in listed("?sandbox=false")]
    for game in listed(""):
        assert game["updated_at"] >= game["created_at"], game
    assert client.get("/games?open=maybe").status_code == 422
    assert client.get("/games?branch_of=../x").status_code == 422


def test_the_timeline_tells_each_change_of_a_seat(client: FlaskClient) -> None:
    game = lobby(client, ["Ann", OPEN, OPEN])
    bob = join(client, game["id"], 1, "Bob").json["token"]
    client.post(f"/games/{game['id']}/seats/1/token", headers=bearer(bob))
    ann = bearer(game["seats"][0]["token"])
    client.post(f"/games/{game['id']}/seats/2/bot", json={"agent": "random"}, headers=ann)
    response = client.get(f"/games/{game['id']}/timeline")
    assert response.status_code == 200, response.json
    lines = [entry["summary"] for entry in response.json["events"]]
    # With every seat taken the game starts, and the bot may already have played (its turn
    # runs in the background): the seat changes are the lines before any play.
    assert lines[1:4] == [
        "Bob joined seat 1",
        "Seat 1 rotated its token",
        "Seat 2 went to Random bot",
    ]


def test_new_lobbies_and_bot_games_are_capped_but_not_for_the_admin(
    config: Any, tmp_path: Any
) -> None:
    from dataclasses import replace

    from service.app import create_app
    from service.bootstrap import bootstrap

    built = bootstrap(replace(config, max_open_games=1, max_bot_games=1))
    try:
        client = create_app(services=built).test_client()
        lobby(client)
        new_game(client, "tally", ["Ann", {"bot": {"agent": "random"}}])
        settle(built)
        built.game_index.catch_up(built.store, built.folder.load)
        refused = client.post("/games", json={"ruleset": "tally", "players": ["Ann", OPEN]})
        assert refused.status_code == 429
        assert refused.json["code"] == "too_many_open_games"
        assert refused.headers["Retry-After"] == "60"
        bots = {"ruleset": "tally", "players": ["Ann", {"bot": {"agent": "random"}}]}
        assert client.post("/games", json=bots).json["code"] == "too_many_bot_games"
        # Named players only are never capped; the admin key is not either.
        assert client.post("/games", json={"ruleset": "tally", "players": ["A"]}).status_code == 201
        admin = client.post("/games", json=bots, headers=bearer(ADMIN_KEY))
        assert admin.status_code == 201
        settle(built)
    finally:
        built.close()


def test_leaving_or_seating_a_bot_is_capped_as_a_new_lobby_or_bot_game_would_be(
    config: Any,
) -> None:
    """The caps cannot be got round by creating a game of named players, then opening a seat
    of it (leave) or giving one to a bot."""
    from dataclasses import replace

    from service.app import create_app
    from service.bootstrap import bootstrap

    built = bootstrap(replace(config, max_open_games=0, max_bot_games=0))
    try:
        client = create_app(services=built).test_client()
        game = new_game(client, "tally", ["Ann", "Bob", "Cleo"])
        ann, bob = (game["seats"][seat]["token"] for seat in (0, 1))
        left = client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob))
        assert left.status_code == 429 and left.json["code"] == "too_many_open_games"
        assert summary(client, game["id"])["status"]["open_seats"] == []
        # The admin is not capped; a game already waiting is not counted twice.
        admin = bearer(ADMIN_KEY)
        assert client.post(f"/games/{game['id']}/seats/1/leave", headers=admin).status_code == 200
        cleo = game["seats"][2]["token"]
        assert (
            client.post(f"/games/{game['id']}/seats/2/leave", headers=bearer(cleo)).status_code
            == 200
        )
        bot = {"agent": "random"}
        seated = client.post(f"/games/{game['id']}/seats/1/bot", json=bot, headers=bearer(ann))
        assert seated.status_code == 429 and seated.json["code"] == "too_many_bot_games"
        assert summary(client, game["id"])["status"]["open_seats"] == [1, 2]
        assert (
            client.post(f"/games/{game['id']}/seats/1/bot", json=bot, headers=admin).status_code
            == 200
        )
        # A game that has a bot already is counted already.
        again = client.post(f"/games/{game['id']}/seats/2/bot", json=bot, headers=bearer(ann))
        assert again.status_code == 200, again.json
        settle(built)
    finally:
        built.close()


def test_webhooks_hear_of_nobody_s_turn_until_the_last_seat_is_joined(
    client: FlaskClient, services: Services
) -> None:
    from service.application.webhooks import GameHistory

    game = lobby(client)
    joined = join(client, game["id"], 1, "Bob").json["version"]
    history = GameHistory(services.folder, game["id"])
    assert history.status(1)["to_act"] == [] and history.status(1)["waiting_for_players"]
    assert history.status(joined)["to_act"] == [0, 1]
