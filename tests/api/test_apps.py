"""Client applications (docs/api.md, "Applications"): a key acts only for the seats it holds,
its one stream carries every event of its games as each held seat may see them and resumes
across games, its limits count per key, a revoked key is refused at once, and a seat token it
recovers replaces the old one."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services
from service.workers.jobs import JobSettings, make_jobs
from tests.api.conftest import bearer, settle


def register(client: FlaskClient, name: str = "bot") -> dict[str, Any]:
    answer = client.post("/apps", json={"name": name})
    assert answer.status_code == 201, answer.json
    created: dict[str, Any] = answer.json
    return created


def create(client: FlaskClient, key: str | None, players: list[Any]) -> dict[str, Any]:
    headers = bearer(key) if key else {}
    answer = client.post("/games", json={"ruleset": "tally", "players": players}, headers=headers)
    assert answer.status_code == 201, answer.json
    created: dict[str, Any] = answer.json
    return created


def bid(client: FlaskClient, path: str, credential: str, amount: int = 1) -> Any:
    return client.post(path, json={"type": "bid", "amount": amount}, headers=bearer(credential))


def events_of(raw: bytes) -> list[dict[str, Any]]:
    """The messages with an ``id`` (one per event) of an SSE body, ``data`` parsed."""
    found = []
    for block in raw.decode().split("\n\n"):
        message: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name in ("id", "event", "data"):
                message[name] = value
        if "id" in message:
            message["data"] = json.loads(message["data"])
            found.append(message)
    return found


@pytest.fixture
def short_streams(services: Services) -> Services:
    """Streams that end by themselves within a moment, so a test reads each whole."""
    services.jobs.close()
    services.jobs = make_jobs(
        services,
        JobSettings(stream_max_seconds=1.0, stream_check_interval=0.1, stream_heartbeat=5.0),
    )
    return services


# -- custody -----------------------------------------------------------------------------------


def test_a_key_acts_only_for_the_seats_it_holds(client: FlaskClient) -> None:
    first, second = register(client, "first")["key"], register(client, "second")["key"]
    game = create(client, first, ["Ann", {"open": True}])
    seats = f"/games/{game['id']}/seats"
    joined = client.post(f"{seats}/1/join", json={"name": "Bob"}, headers=bearer(second))
    assert joined.status_code == 201

    assert bid(client, f"{seats}/0/actions", first).status_code == 201
    refused = bid(client, f"{seats}/1/actions", first)
    assert refused.status_code == 403
    assert refused.mimetype == "application/problem+json"
    assert refused.json["code"] == "seat_not_held"
    # Another application's seat in the same game, its view and its legal actions too.
    assert bid(client, f"{seats}/0/actions", second).json["code"] == "seat_not_held"
    assert client.get(f"{seats}/0/state", headers=bearer(second)).status_code == 403
    assert client.get(f"{seats}/0/legal-actions", headers=bearer(second)).status_code == 403
    # Holding exactly one seat, the key speaks for it at the game's own addresses.
    assert bid(client, f"/games/{game['id']}/actions", second).status_code == 201
    # A game the key holds nothing of.
    other = create(client, None, ["Cy", "Di"])
    assert bid(client, f"/games/{other['id']}/actions", first).json["code"] == "seat_not_held"
    assert bid(client, f"/games/{other['id']}/seats/0/actions", first).status_code == 403


def test_a_key_is_never_a_seat_token_nor_a_seat_token_a_key(client: FlaskClient) -> None:
    key = register(client)["key"]
    game = create(client, None, ["Ann", "Bob"])
    token = game["seats"][0]["token"]
    assert key.startswith("mla_") and not token.startswith("mla_")
    assert client.get("/apps/me", headers=bearer(token)).json["code"] == "missing_token"
    state = client.get(f"/games/{game['id']}/state", headers=bearer(key))
    assert state.status_code == 200
    assert state.json["seat"] is None  # the key holds no seat here: a spectator's view
    assert bid(client, f"/games/{game['id']}/actions", key).status_code == 403


def test_a_seat_token_recovered_through_the_key_works_and_the_old_one_does_not(
    client: FlaskClient,
) -> None:
    key = register(client)["key"]
    game = create(client, key, ["Ann", "Bob"])
    old = game["seats"][1]["token"]  # handed to Bob, who lost it
    recovered = client.post(f"/games/{game['id']}/seats/1/token", headers=bearer(key))
    assert recovered.status_code == 201
    new = recovered.json["token"]
    legal = f"/games/{game['id']}/legal-actions"
    assert client.get(legal, headers=bearer(old)).json["code"] == "invalid_token"
    assert client.get(legal, headers=bearer(new)).json["seat"] == 1
    events = client.get(f"/games/{game['id']}/events?after=1").json["events"]
    assert events[-1]["data"] == {"seat": 1, "change": "token_reissued"}
    assert events[-1]["actor"] == {"system": "app"}
    # The application still holds the seat.
    assert bid(client, f"/games/{game['id']}/seats/1/actions", key).status_code == 201


def test_a_revoked_key_gets_401_at_once_and_a_rotated_one_too(client: FlaskClient) -> None:
    key = register(client)["key"]
    game = create(client, key, ["Ann", "Bob"])
    rotated = client.post("/apps/me/key", headers=bearer(key))
    assert rotated.status_code == 201
    new = rotated.json["key"]
    assert client.get("/apps/me", headers=bearer(key)).json["code"] == "invalid_token"
    assert client.get("/apps/me", headers=bearer(new)).status_code == 200
    assert client.get("/apps/me/games", headers=bearer(new)).json["games"][0]["id"] == game["id"]

    assert client.delete("/apps/me", headers=bearer(new)).status_code == 204
    for path in ("/apps/me", "/apps/me/games", f"/games/{game['id']}/seats/0/legal-actions"):
        answer = client.get(path, headers=bearer(new))
        assert answer.status_code == 401, path
        assert answer.json["code"] == "invalid_token"
    # The game goes on for whoever holds its seats' tokens.
    assert bid(client, f"/games/{game['id']}/actions", game["seats"][0]["token"]).status_code == 201


def test_the_apps_games_say_which_wait_for_it(client: FlaskClient) -> None:
    key = register(client)["key"]
    waiting = create(client, key, ["Ann", "Bob"])
    done_bidding = create(client, key, ["Ann", "Bob"])
    for seat in (0, 1):
        bid(client, f"/games/{done_bidding['id']}/seats/{seat}/actions", key)
    listed = client.get("/apps/me/games", headers=bearer(key)).json
    ids = [game["id"] for game in listed["games"]]
    assert ids == [done_bidding["id"], waiting["id"]]  # newest first
    mine = client.get("/apps/me/games?my_turn=true", headers=bearer(key)).json["games"]
    assert waiting["id"] in [game["id"] for game in mine]
    first = client.get("/apps/me/games?limit=1", headers=bearer(key)).json
    assert len(first["games"]) == 1 and first["next_cursor"] is not None
    rest = client.get(f"/apps/me/games?limit=1&cursor={first['next_cursor']}", headers=bearer(key))
    assert [game["id"] for game in rest.json["games"]] == [waiting["id"]]
    assert rest.json["next_cursor"] is None
    me = client.get("/apps/me", headers=bearer(key)).json
    assert me["usage"]["games"] == 2 and me["usage"]["active_games"] == 2


# -- the application's stream ------------------------------------------------------------------


def test_the_app_stream_delivers_every_event_of_three_games_redacted_per_seat_and_resumes(
    short_streams: Services,
) -> None:
    client = create_app(services=short_streams).test_client()
    key = register(client)["key"]
    games = []
    for _ in range(3):
        game = create(client, key, ["Ann", {"open": True}])
        joined = client.post(f"/games/{game['id']}/seats/1/join", json={"name": "Bob"})
        games.append((game["id"], joined.json["token"]))
    for game_id, token in games:
        assert bid(client, f"/games/{game_id}/seats/0/actions", key, 3).status_code == 201
        assert bid(client, f"/games/{game_id}/actions", token, 7).status_code == 201
    settle(short_streams)

    # "0": the client knows no game yet, so every game comes from its first event.
    whole = events_of(
        client.get("/apps/me/stream", headers={**bearer(key), "Last-Event-ID": "0"}).data
    )
    for game_id, _ in games:
        mine = [m["data"] for m in whole if m["data"]["game_id"] == game_id]
        version = client.get(f"/games/{game_id}").json["version"]
        assert [m["seq"] for m in mine] == list(range(1, version + 1))
        bids = {m["seq"]: m for m in mine if m["type"] == "action"}
        for message in bids.values():
            (seen,) = message["seats"]  # the application holds seat 0 alone
            assert seen["seat"] == 0
            event = seen["event"]
            if event["actor"] == {"seat": 0}:
                assert event["secret"] is not None
            else:  # Bob's bid, before the reveal: hidden from seat 0
                assert event["secret"] is None and event["redacted"] is True
                assert "7" not in json.dumps(event["data"])
        assert all("status" in m and "you" in m["seats"][0] for m in mine)

    # Resume from the middle: what was sent before plus what comes after is every event once.
    middle = len(whole) // 2
    for game_id, token in games:
        for seat_token in (key, token):
            legal = client.get(f"/games/{game_id}/seats/0/legal-actions", headers=bearer(key))
            if seat_token == key and legal.json["actions"]:
                client.post(
                    f"/games/{game_id}/seats/0/actions",
                    json=legal.json["actions"][0],
                    headers=bearer(key),
                )
    settle(short_streams)
    resumed = events_of(
        client.get(
            "/apps/me/stream", headers={**bearer(key), "Last-Event-ID": whole[middle]["id"]}
        ).data
    )
    received = [(m["data"]["game_id"], m["data"]["seq"]) for m in whole[: middle + 1] + resumed]
    assert len(received) == len(set(received)), "an event was sent twice"
    for game_id, _ in games:
        version = client.get(f"/games/{game_id}").json["version"]
        assert sorted(seq for found, seq in received if found == game_id) == list(
            range(1, version + 1)
        )


def test_a_new_app_stream_sends_only_what_comes_and_games_taken_meanwhile_whole(
    short_streams: Services,
) -> None:
    client = create_app(services=short_streams).test_client()
    key = register(client)["key"]
    old = create(client, key, ["Ann", "Bob"])
    first = client.get("/apps/me/stream", headers=bearer(key)).data
    assert events_of(first) == []  # nothing new came
    assert f'"game_id":"{old["id"]}"' in first.decode()  # its turn message
    new = create(client, key, ["Cy", "Di"])
    cursor = "1;1:1"  # the id a client would hold after hearing of the first game
    resumed = events_of(
        client.get("/apps/me/stream", headers={**bearer(key), "Last-Event-ID": cursor}).data
    )
    assert [(m["data"]["game_id"], m["data"]["seq"]) for m in resumed] == [(new["id"], 1)]
    assert resumed[0]["data"]["seats"][1]["you"]["must_act"] is True


def test_a_malformed_last_event_id_is_400(client: FlaskClient) -> None:
    key = register(client)["key"]
    answer = client.get("/apps/me/stream", headers={**bearer(key), "Last-Event-ID": "1;x"})
    assert answer.status_code == 400
    assert answer.json["code"] == "invalid_header"


# -- limits per application --------------------------------------------------------------------


@pytest.fixture
def limited(services: Services) -> Flask:
    """Rate limits on: two new games a minute, two applications per address."""
    services.config = replace(
        services.config,
        rate_limits=True,
        rate_limit_games="2/minute",
        rate_limit_lobby_games="100/minute",
        max_apps_per_address=2,
    )
    return create_app(services=services)


def test_limits_count_per_key_not_per_address(limited: Flask) -> None:
    client = limited.test_client()
    first, second = register(client, "first")["key"], register(client, "second")["key"]
    for _ in range(2):
        create(client, first, ["Ann", "Bob"])
    over = client.post(
        "/games", json={"ruleset": "tally", "players": ["A", "B"]}, headers=bearer(first)
    )
    assert over.status_code == 429
    assert over.json["code"] == "rate_limited"
    # The same address: the other application and a client without a key have their own counts.
    for _ in range(2):
        create(client, second, ["Ann", "Bob"])
        create(client, None, ["Ann", "Bob"])
    assert (
        client.post("/games", json={"ruleset": "tally", "players": ["A", "B"]}).status_code == 429
    )
    # And at most two applications per address.
    refused = client.post("/apps", json={"name": "third"})
    assert refused.status_code == 429
    assert refused.json["code"] == "too_many_apps"


def test_a_key_unknown_is_refused_before_it_counts(limited: Flask) -> None:
    client = limited.test_client()
    answer = client.post(
        "/games", json={"ruleset": "tally", "players": ["A", "B"]}, headers=bearer("mla_nothing")
    )
    assert answer.status_code == 401
    assert answer.json["code"] == "invalid_token"


def test_app_streams_are_capped_per_application(short_streams: Services) -> None:
    short_streams.jobs.close()
    short_streams.jobs = make_jobs(
        short_streams, JobSettings(app_streams=1, stream_max_seconds=30.0)
    )
    client = create_app(services=short_streams).test_client()
    key = register(client)["key"]
    other = register(client, "other")["key"]
    opened = client.get("/apps/me/stream", headers=bearer(key), buffered=False)
    try:
        assert opened.status_code == 200
        refused = client.get("/apps/me/stream", headers=bearer(key))
        assert refused.status_code == 429
        assert refused.json["code"] == "too_many_streams"
        assert client.get("/apps/me", headers=bearer(key)).json["usage"]["streams"] == 1
        other_stream = client.get("/apps/me/stream", headers=bearer(other), buffered=False)
        assert other_stream.status_code == 200
        other_stream.close()
    finally:
        opened.close()


# -- the application's webhooks ----------------------------------------------------------------


def test_app_webhooks_deliver_every_held_seats_events_signed_and_redacted(
    services: Services,
) -> None:
    from service.application.webhooks import SIGNATURE_HEADER, verify_signature
    from tests.e2e.test_webhooks import SECRET, running_receiver

    services.jobs.close()
    services.jobs = make_jobs(services, JobSettings(webhook_allow_hosts="127.0.0.1"))
    client = create_app(services=services).test_client()
    key = register(client)["key"]
    before = create(client, key, ["Ann", "Bob"])  # held before the webhook: it is told too
    with running_receiver() as receiver:
        made = client.post(
            "/apps/me/webhooks",
            json={"url": receiver.url, "secret": SECRET, "events": ["action"]},
            headers=bearer(key),
        )
        assert made.status_code == 201, made.json
        hook = made.json
        assert "secret" not in hook
        listed = client.get("/apps/me/webhooks", headers=bearer(key)).json["webhooks"]
        assert [found["id"] for found in listed] == [hook["id"]]
        # A seat token of that game sees no application's webhook among its own.
        token = before["seats"][0]["token"]
        assert (
            client.get(f"/games/{before['id']}/webhooks", headers=bearer(token)).json["webhooks"]
            == []
        )

        later = create(client, key, ["Ann", {"open": True}])  # taken after: from its start
        bob = client.post(f"/games/{later['id']}/seats/1/join", json={"name": "Bob"}).json
        assert bid(client, f"/games/{later['id']}/seats/0/actions", key, 2).status_code == 201
        assert bid(client, f"/games/{later['id']}/actions", bob["token"], 8).status_code == 201
        assert bid(client, f"/games/{before['id']}/seats/1/actions", key, 4).status_code == 201
        receiver.wait_for(lambda bodies: len(bodies) >= 3)
        settle(services)
        hits = receiver.received
        for hit in hits:
            assert verify_signature(hit["headers"][SIGNATURE_HEADER], SECRET, hit["body"])
        bodies = receiver.bodies()
        assert {body["webhook_id"] for body in bodies} == {hook["id"]}
        in_later = [b for b in bodies if b["game_id"] == later["id"]]
        assert sorted(b["you"]["seat"] for b in in_later) == [0, 0]  # seat 0 alone is held
        bobs = next(b for b in in_later if b["event"]["actor"] == {"seat": 1})
        assert bobs["event"]["secret"] is None and bobs["event"]["redacted"] is True
        anns = next(b for b in in_later if b["event"]["actor"] == {"seat": 0})
        assert anns["event"]["secret"] is not None
        in_before = [b for b in bodies if b["game_id"] == before["id"]]
        # Both seats of the first game are held: one delivery each, as each may see it.
        by_seat = {b["you"]["seat"]: b["event"] for b in in_before}
        assert sorted(by_seat) == [0, 1]
        assert by_seat[1]["secret"] is not None
        assert by_seat[0]["secret"] is None and by_seat[0]["redacted"] is True
        # Removed: no more deliveries, from any game.
        assert (
            client.delete(f"/apps/me/webhooks/{hook['id']}", headers=bearer(key)).status_code == 204
        )
        assert client.get("/apps/me/webhooks", headers=bearer(key)).json["webhooks"] == []
        assert services.jobs.state.webhooks(later["id"]) == []
        assert services.jobs.state.webhooks(before["id"]) == []


def test_a_key_holding_several_seats_cannot_undo_or_branch_as_none_of_them(
    client: FlaskClient,
) -> None:
    key = register(client)["key"]
    game = create(client, key, ["Ann", "Bob"])
    assert bid(client, f"/games/{game['id']}/seats/0/actions", key).status_code == 201
    for path, body in (
        (f"/games/{game['id']}/undo", None),
        (f"/games/{game['id']}/branches", {"at": 2, "seat": 1}),
    ):
        answer = client.post(path, json=body, headers=bearer(key))
        assert answer.status_code == 403, (path, answer.json)
        assert answer.json["code"] == "seat_required"
    # Its seat's own token may.
    undone = client.post(f"/games/{game['id']}/undo", headers=bearer(game["seats"][0]["token"]))
    assert undone.status_code == 201, undone.json
