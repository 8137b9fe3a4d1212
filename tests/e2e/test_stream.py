"""GET /games/{id}/stream: Server-Sent Events as each viewer may see them, resumable, pushed
live to a client of a real HTTP server, ending after its bounded lifetime."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import bearer, new_game

ADMIN_KEY = "stream-test-admin-key-0123"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    config = load_config({}, store_url=f"sqlite:///{tmp_path}/meeple.db", admin_key=ADMIN_KEY)
    built = bootstrap(config)
    # A short life: each test reads whole streams, which end by themselves.
    built.jobs.settings = replace(
        built.jobs.settings, stream_max_seconds=0.3, stream_poll=0.05, stream_heartbeat=0.1
    )
    yield built
    built.close()


def act(client: FlaskClient, game: dict[str, Any], seat: int, action: dict[str, Any]) -> None:
    token = game["seats"][seat]["token"]
    response = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))
    assert response.status_code == 201, response.json


def parse(text: str, turns: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """The stream's messages (id, event, data) and its comment lines; the ``turn`` message a
    stream opens with only when ``turns``."""
    messages, comments = [], []
    for block in text.split("\n\n"):
        message: dict[str, Any] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                comments.append(line)
            elif line:
                name, _, value = line.partition(": ")
                message[name] = value
        if "data" in message and (turns or message.get("event") != "turn"):
            message["data"] = json.loads(message["data"])
            messages.append(message)
    return messages, comments


def read_stream(client: FlaskClient, game: dict[str, Any], **request: Any) -> Any:
    response = client.get(f"/games/{game['id']}/stream", **request)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    return parse(response.get_data(as_text=True))


def bid_twice(client: FlaskClient, services: Services, game: dict[str, Any]) -> None:
    act(client, game, 0, {"type": "bid", "amount": 8})
    act(client, game, 1, {"type": "bid", "amount": 3})
    assert services.jobs.wait_idle(30)  # the reveal


def test_a_stream_from_the_start_sends_every_event_with_its_seq_and_type(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    messages, comments = read_stream(client, game, query_string={"after": 0})
    assert [(m["id"], m["event"]) for m in messages] == [
        ("1", "game_created"),
        ("2", "action"),
        ("3", "action"),
        ("4", "system"),
    ]
    assert [m["data"]["seq"] for m in messages] == [1, 2, 3, 4]
    assert comments, "a quiet stream sends heartbeats"


def test_each_viewer_sees_only_its_own_secrets_and_nobody_the_seed(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    ann = read_stream(
        client, game, query_string={"after": 0}, headers=bearer(game["seats"][0]["token"])
    )[0]
    spectator = read_stream(client, game, query_string={"after": 0})[0]
    assert ann[1]["data"]["secret"]["action"]["amount"] == 8
    assert ann[2]["data"]["secret"] is None and ann[2]["data"]["redacted"] is True
    assert all(message["data"]["secret"] is None for message in spectator)
    for messages in (ann, spectator):
        assert all("seed" not in json.dumps(message["data"]["secret"]) for message in messages)


def test_a_seats_stream_ends_where_the_seat_changes_hands(
    client: FlaskClient, services: Services
) -> None:
    """Bob's stream, opened with his token, stops at his leaving: Cleo, who takes the seat
    next, bids in secret, and none of it reaches Bob."""
    game = new_game(client)
    bob = game["seats"][1]["token"]
    stream = client.get(
        f"/games/{game['id']}/stream", query_string={"after": 0}, headers=bearer(bob)
    )
    assert stream.status_code == 200
    assert client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob)).status_code == 200
    joined = client.post(f"/games/{game['id']}/seats/1/join", json={"name": "Cleo"}).json
    act(client, game, 0, {"type": "bid", "amount": 8})
    bid = {"type": "bid", "amount": 3}
    answer = client.post(f"/games/{game['id']}/actions", json=bid, headers=bearer(joined["token"]))
    assert answer.status_code == 201, answer.json
    messages, comments = parse(stream.get_data(as_text=True))
    assert [(m["id"], m["event"]) for m in messages] == [
        ("1", "game_created"),
        ("2", "seat_changed"),
    ]
    assert any("seat 1 changed hands" in comment for comment in comments)


def test_last_event_id_resumes_after_the_last_event_received(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    messages, _ = read_stream(client, game, headers={"Last-Event-ID": "2"})
    assert [m["id"] for m in messages] == ["3", "4"]


def test_without_a_position_only_new_events_are_sent(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    assert read_stream(client, game)[0] == []


def test_a_malformed_position_or_token_is_refused(client: FlaskClient) -> None:
    game = new_game(client)
    path = f"/games/{game['id']}/stream"
    assert client.get(path, headers={"Last-Event-ID": "seven"}).status_code == 400
    assert client.get(path, query_string={"after": -1}).status_code == 422
    assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/games/no-such-game/stream").status_code == 404


def test_a_finished_games_stream_ends_after_its_last_event_and_shows_every_secret(
    client: FlaskClient, services: Services
) -> None:
    services.jobs.settings = replace(services.jobs.settings, stream_max_seconds=60)
    game = new_game(client, options={"rounds": 1, "turns_per_round": 1})
    bid_twice(client, services, game)
    act(client, game, 0, {"type": "draw"})
    act(client, game, 1, {"type": "draw"})
    assert services.jobs.wait_idle(30)
    messages, _ = read_stream(client, game, query_string={"after": 0})
    assert messages[-1]["event"] == "system"
    assert messages[0]["data"]["secret"]["seed"]  # revealed once the game has ended
    assert messages[2]["data"]["secret"]["action"]["amount"] == 3


@pytest.fixture
def server(app: Flask) -> Iterator[int]:
    """The app behind a real threaded HTTP server on loopback; yields its port."""
    running = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=running.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield running.server_port
    running.shutdown()
    thread.join()


def test_an_append_reaches_a_connected_client_while_its_stream_is_open(
    server: int, client: FlaskClient, services: Services
) -> None:
    services.jobs.settings = replace(services.jobs.settings, stream_max_seconds=60)
    game = new_game(client)
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=30)
    connection.request("GET", f"/games/{game['id']}/stream")
    response = connection.getresponse()
    assert response.status == 200
    assert response.readline() == b"retry: 2000\n"  # the stream is open and subscribed
    act(client, game, 0, {"type": "bid", "amount": 5})
    lines: list[bytes] = []
    while not lines or lines[-1] != b"\n" or not any(line.startswith(b"id") for line in lines):
        lines.append(response.readline())
    message = parse(b"".join(lines).decode())[0][0]
    assert (message["id"], message["event"]) == ("2", "action")
    assert message["data"]["secret"] is None
    connection.close()


def test_each_message_carries_the_game_after_its_event_and_whether_the_seat_must_act(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    ann = bearer(game["seats"][0]["token"])
    messages, _ = read_stream(client, game, query_string={"after": 0}, headers=ann)
    by_seq = {int(message["id"]): message["data"] for message in messages}
    assert by_seq[1]["status"]["to_act"] == [0, 1]
    assert by_seq[1]["you"]["must_act"] is True
    assert [kind["type"] for kind in by_seq[1]["you"]["decision"]["types"]] == ["bid"]
    # After her own bid Ann waits; after Bob's the reveal is pending; after it Ann plays.
    assert by_seq[2]["status"]["to_act"] == [1]
    assert by_seq[2]["you"] == {"seat": 0, "must_act": False, "decision": {"types": []}}
    assert by_seq[3]["status"]["awaiting_system"] == "reveal_bids"
    assert by_seq[3]["you"]["must_act"] is False
    assert by_seq[4]["status"]["to_act"] == [0] and by_seq[4]["status"]["phase"] == "turns"
    assert by_seq[4]["you"]["must_act"] is True
    decision = by_seq[4]["you"]["decision"]["types"]
    answer = client.get(f"/games/{game['id']}/legal-actions", headers=ann).json
    assert decision == answer["decision"]["types"]  # the summary legal-actions gives
    assert by_seq[4]["status"]["finished"] is False and "result" not in by_seq[4]["status"]


def test_another_seats_stream_never_sees_this_seats_decision(
    client: FlaskClient, services: Services
) -> None:
    """After the reveal Ann is to play a card of her hand; what her decision lists (her
    cards) reaches neither Bob's stream nor a spectator's."""
    game = new_game(client)
    bid_twice(client, services, game)
    bob = read_stream(
        client, game, query_string={"after": 0}, headers=bearer(game["seats"][1]["token"])
    )[0]
    spectator = read_stream(client, game, query_string={"after": 0})[0]
    assert {message["data"]["you"]["seat"] for message in bob} == {1}
    assert bob[-1]["data"]["you"] == {"seat": 1, "must_act": False, "decision": {"types": []}}
    assert bob[-1]["data"]["status"]["to_act"] == [0]
    assert all("you" not in message["data"] for message in spectator)
    for messages in (bob, spectator):
        assert '"play"' not in json.dumps([message["data"] for message in messages])


def test_a_reconnecting_stream_first_says_whose_turn_it_is(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    bid_twice(client, services, game)
    ann = bearer(game["seats"][0]["token"])
    response = client.get(f"/games/{game['id']}/stream", headers={"Last-Event-ID": "2", **ann})
    messages, _ = parse(response.get_data(as_text=True), turns=True)
    first = messages[0]
    assert first["event"] == "turn" and "id" not in first  # Last-Event-ID keeps naming 2
    assert first["data"]["version"] == 4
    assert first["data"]["status"]["to_act"] == [0]
    assert first["data"]["you"]["must_act"] is True
    assert [m["id"] for m in messages[1:]] == ["3", "4"]
    # A stream that starts from now on, and a spectator's, open the same way.
    fresh = parse(client.get(f"/games/{game['id']}/stream").get_data(as_text=True), turns=True)
    assert [m["event"] for m in fresh[0]] == ["turn"]
    assert "you" not in fresh[0][0]["data"]
