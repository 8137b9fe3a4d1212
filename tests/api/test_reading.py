"""Reading a game: the seat's state with ETags, legal actions, and the event log as the
viewer may see it."""

from __future__ import annotations

from flask.testing import FlaskClient

from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle
from tests.rulesets.tally import TALLY


def test_the_state_is_the_bearers_view_and_a_spectators_without_a_token(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    folded = services.folder.load(game["id"])
    for seat in (0, 1):
        response = client.get(
            f"/games/{game['id']}/state", headers=bearer(game["seats"][seat]["token"])
        )
        assert response.status_code == 200
        assert response.json["seat"] == seat
        assert response.json["state"] == TALLY.view(folded.state, seat)
    spectator = client.get(f"/games/{game['id']}/state").json
    assert spectator["seat"] is None
    assert spectator["state"] == TALLY.view(folded.state, None)
    assert spectator["status"]["to_act"] == [0, 1]


def test_the_state_carries_its_version_as_etag_and_honours_if_none_match(
    client: FlaskClient,
) -> None:
    game = new_game(client)
    token = game["seats"][0]["token"]
    first = client.get(f"/games/{game['id']}/state", headers=bearer(token))
    assert first.headers["ETag"] == '"1"'
    unchanged = client.get(
        f"/games/{game['id']}/state", headers={**bearer(token), "If-None-Match": '"1"'}
    )
    assert unchanged.status_code == 304
    assert unchanged.data == b""
    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 3}, headers=bearer(token)
    )
    moved = client.get(
        f"/games/{game['id']}/state", headers={**bearer(token), "If-None-Match": '"1"'}
    )
    assert moved.status_code == 200
    assert moved.headers["ETag"] == '"2"'


def test_legal_actions_are_the_seats_and_empty_for_a_spectator(client: FlaskClient) -> None:
    game = new_game(client)
    seat = client.get(
        f"/games/{game['id']}/legal-actions", headers=bearer(game["seats"][1]["token"])
    ).json
    assert seat["seat"] == 1
    assert seat["version"] == 1
    assert {"type": "bid", "amount": 9} in seat["actions"]
    spectator = client.get(f"/games/{game['id']}/legal-actions").json
    assert spectator == {
        "version": 1,
        "seat": None,
        "decision": {"types": []},
        "free_actions": {"types": []},
        "actions": [],
        "total": 0,
        "next_cursor": None,
        "names": {},
        "undo": {"allowed": False, "code": "missing_token", "steps": None},
        "redo": {"allowed": False, "code": "missing_token", "steps": None},
    }


def test_every_listed_legal_action_can_be_posted_back_verbatim(
    client: FlaskClient, services: Services
) -> None:
    for index in range(10):
        game = new_game(client)
        token = game["seats"][0]["token"]
        actions = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token)).json
        response = client.post(
            f"/games/{game['id']}/actions", json=actions["actions"][index], headers=bearer(token)
        )
        assert response.status_code == 201


def test_a_secret_bid_shows_in_the_log_only_to_its_seat_until_the_end(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client, players=["Ann", "Bob"], options={"rounds": 1, "turns_per_round": 1})
    tokens = [seat["token"] for seat in game["seats"]]
    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 6}, headers=bearer(tokens[0])
    )

    def bid_event(headers: dict[str, str]) -> dict:
        events = client.get(f"/games/{game['id']}/events", headers=headers).json["events"]
        return events[1]

    own = bid_event(bearer(tokens[0]))
    assert own["secret"]["action"] == {"type": "bid", "amount": 6}
    assert "redacted" not in own
    for headers in (bearer(tokens[1]), {}):
        other = bid_event(headers)
        assert other["secret"] is None
        assert other["redacted"] is True
        assert other["data"]["action"] == {"type": "bid"}
    assert bid_event(bearer(ADMIN_KEY))["secret"]["action"]["amount"] == 6
    assert client.get(f"/games/{game['id']}/events").json["events"][0]["secret"] is None

    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 0}, headers=bearer(tokens[1])
    )
    settle(services)
    for seat in (0, 1):
        client.post(
            f"/games/{game['id']}/actions", json={"type": "draw"}, headers=bearer(tokens[seat])
        )
        settle(services)
    summary = client.get(f"/games/{game['id']}").json
    assert summary["status"]["finished"] is True
    assert summary["result"]["ranking"]
    assert bid_event({})["secret"]["action"]["amount"] == 6
    created = client.get(f"/games/{game['id']}/events").json["events"][0]
    assert created["secret"]["seed"] == summary["seed"]


def test_the_log_pages_with_after_and_limit(client: FlaskClient) -> None:
    game = new_game(client, players=["Ann", "Bob", "Cy"])
    for seat in range(3):
        client.post(
            f"/games/{game['id']}/actions",
            json={"type": "bid", "amount": seat},
            headers=bearer(game["seats"][seat]["token"]),
        )
    page = client.get(f"/games/{game['id']}/events?after=1&limit=2").json
    assert [event["seq"] for event in page["events"]] == [2, 3]
    assert page["version"] >= 4
    rest = client.get(f"/games/{game['id']}/events?after=3").json
    assert rest["events"][0]["seq"] == 4


def test_the_summary_and_legal_actions_honour_if_none_match_too(client: FlaskClient) -> None:
    game = new_game(client)
    token = game["seats"][0]["token"]
    for path in ("", "/legal-actions"):
        first = client.get(f"/games/{game['id']}{path}", headers=bearer(token))
        assert first.headers["ETag"] == '"1"'
        again = client.get(
            f"/games/{game['id']}{path}", headers={**bearer(token), "If-None-Match": '"1"'}
        )
        assert again.status_code == 304, path
    client.post(
        f"/games/{game['id']}/actions", json={"type": "bid", "amount": 3}, headers=bearer(token)
    )
    moved = client.get(f"/games/{game['id']}", headers={"If-None-Match": '"1"'})
    assert moved.status_code == 200
    assert moved.headers["ETag"] == '"2"'
