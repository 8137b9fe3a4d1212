"""Posting actions: versions and If-Match, idempotency, the rules' refusals, automatic steps."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from events.store import ConcurrencyConflict
from projections.fold import Game
from service.app import create_app
from service.application import commands
from service.bootstrap import Services, bootstrap
from service.config import Config
from tests.api.conftest import bearer, new_game, settle


def act(client: FlaskClient, game: dict, seat: int, action: dict, **headers: str) -> Any:
    token = game["seats"][seat]["token"]
    return client.post(
        f"/games/{game['id']}/actions",
        json=action,
        headers={**bearer(token), **{k.replace("_", "-"): v for k, v in headers.items()}},
    )


def to_turns(client: FlaskClient, services: Services, game: dict) -> None:
    """Both seats bid; the automatic reveal runs; seat 0 is to play."""
    assert act(client, game, 0, {"type": "bid", "amount": 2}).status_code == 201
    assert act(client, game, 1, {"type": "bid", "amount": 7}).status_code == 201
    settle(services)


def test_a_legal_action_is_appended_and_answers_with_the_seats_view(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    response = act(client, game, 0, {"type": "bid", "amount": 4})
    assert response.status_code == 201
    assert response.json["seq"] == 2
    assert response.json["version"] == 2
    assert response.json["state"]["my_bid"] == 4
    assert response.headers["ETag"] == '"2"'
    assert services.store.version(game["id"]) == 2


def test_a_stale_if_match_is_a_conflict_and_appends_nothing(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    assert act(client, game, 0, {"type": "bid", "amount": 4}).status_code == 201
    stale = act(client, game, 1, {"type": "bid", "amount": 4}, If_Match='"1"')
    assert stale.status_code == 409
    assert stale.json["code"] == "version_conflict"
    assert stale.json["current_version"] == 2
    assert services.store.version(game["id"]) == 2
    fresh = act(client, game, 1, {"type": "bid", "amount": 4}, If_Match='"2"')
    assert fresh.status_code == 201


def test_a_retry_with_the_same_idempotency_key_returns_the_first_response(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    first = act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="bid-1")
    again = act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="bid-1")
    assert first.status_code == again.status_code == 201
    assert again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert services.store.version(game["id"]) == 2


def test_a_retry_after_the_game_moved_on_still_returns_the_first_response(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    first = act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="bid-1")
    assert act(client, game, 1, {"type": "bid", "amount": 5}).status_code == 201
    settle(services)
    version = services.store.version(game["id"])
    again = act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="bid-1")
    assert again.status_code == 201
    assert again.json == first.json
    assert services.store.version(game["id"]) == version


def test_an_idempotency_key_reused_for_another_action_is_refused(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="bid-1")
    other = act(client, game, 0, {"type": "bid", "amount": 5}, Idempotency_Key="bid-1")
    assert other.status_code == 422
    assert other.json["code"] == "idempotency_key_reused"
    assert services.store.version(game["id"]) == 2


def test_idempotency_keys_belong_to_one_seat(client: FlaskClient, services: Services) -> None:
    game = new_game(client)
    act(client, game, 0, {"type": "bid", "amount": 4}, Idempotency_Key="same")
    second = act(client, game, 1, {"type": "bid", "amount": 4}, Idempotency_Key="same")
    assert second.status_code == 201
    assert second.json["seq"] == 3
    assert "Idempotent-Replayed" not in second.headers


def test_an_illegal_action_answers_with_the_rulesets_code_and_message(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    early = act(client, game, 0, {"type": "play", "card": 3})
    assert early.status_code == 422
    assert early.json["code"] == "phase_mismatch"
    assert early.json["detail"] == "Wait for the bids to be revealed."
    act(client, game, 0, {"type": "bid", "amount": 4})
    twice = act(client, game, 0, {"type": "bid", "amount": 5})
    assert twice.json["code"] == "already_bid"
    assert services.store.version(game["id"]) == 2


def test_acting_out_of_turn_is_not_your_turn(client: FlaskClient, services: Services) -> None:
    game = new_game(client)
    to_turns(client, services, game)
    version = services.store.version(game["id"])
    response = act(client, game, 1, {"type": "draw"})
    assert response.status_code == 422
    assert response.json["code"] == "not_your_turn"
    assert services.store.version(game["id"]) == version


def test_acting_on_a_finished_game_is_refused(client: FlaskClient, services: Services) -> None:
    game = new_game(client, players=["Ann"], options={"rounds": 1, "turns_per_round": 1})
    act(client, game, 0, {"type": "bid", "amount": 0})
    settle(services)
    act(client, game, 0, {"type": "draw"})
    settle(services)
    assert client.get(f"/games/{game['id']}").json["status"]["finished"] is True
    response = act(client, game, 0, {"type": "draw"})
    assert response.status_code == 422
    assert response.json["code"] == "game_finished"


class HeldJobs:
    """Jobs that keep what they are given instead of running it (an automatic step waits)."""

    def __init__(self) -> None:
        self.appended: list[tuple[str, int]] = []

    def after_append(self, game_id: str, version: int, game: Game | None = None) -> None:
        self.appended.append((game_id, version))
        assert game is None or game.version == version


@pytest.fixture
def held(config: Config) -> Iterator[tuple[Flask, Services, HeldJobs]]:
    jobs = HeldJobs()
    built = bootstrap(config, jobs=jobs)
    yield create_app(services=built), built, jobs
    built.close()


def test_while_an_automatic_step_is_pending_seats_are_asked_to_retry_later(
    held: tuple[Flask, Services, HeldJobs],
) -> None:
    app, services, jobs = held
    client = app.test_client()
    game = new_game(client)
    act(client, game, 0, {"type": "bid", "amount": 1})
    act(client, game, 1, {"type": "bid", "amount": 1})
    assert jobs.appended[-1] == (game["id"], 3)
    response = act(client, game, 0, {"type": "draw"})
    assert response.status_code == 409
    assert response.json["code"] == "awaiting_system_step"
    assert response.json["step"] == "reveal_bids"
    assert int(response.headers["Retry-After"]) >= 1
    assert services.store.version(game["id"]) == 3
    legal = client.get(
        f"/games/{game['id']}/legal-actions", headers=bearer(game["seats"][0]["token"])
    )
    assert legal.json["actions"] == []


def test_every_append_is_handed_to_the_jobs(held: tuple[Flask, Services, HeldJobs]) -> None:
    app, _, jobs = held
    client = app.test_client()
    game = new_game(client)
    act(client, game, 0, {"type": "bid", "amount": 1})
    assert jobs.appended == [(game["id"], 1), (game["id"], 2)]


def test_a_concurrent_append_is_retried_on_the_new_state_without_if_match(
    held: tuple[Flask, Services, HeldJobs], tmp_path: Path
) -> None:
    app, services, _ = held
    client = app.test_client()
    game = new_game(client)
    store = services.store
    real_append = store.append
    raced = []

    def racing_append(game_id: str, events: Any, expected_version: int, key: Any = None) -> Any:
        if not raced:
            # Another request slips in first: seat 1's bid lands at the expected version.
            raced.append(True)
            commands.act(services, game_id, 1, {"type": "bid", "amount": 9})
        return real_append(game_id, events, expected_version, key)

    store.append = racing_append  # type: ignore[method-assign]
    try:
        result = commands.act(services, game["id"], 0, {"type": "bid", "amount": 2})
    finally:
        store.append = real_append  # type: ignore[method-assign]
    assert result.seq == 3
    assert [event["actor"] for event in store.read(game["id"], after=1)] == [
        {"seat": 1},
        {"seat": 0},
    ]


def test_a_pinned_version_is_not_retried_on_a_concurrent_append(
    held: tuple[Flask, Services, HeldJobs],
) -> None:
    app, services, _ = held
    client = app.test_client()
    game = new_game(client)
    act(client, game, 1, {"type": "bid", "amount": 9})
    with pytest.raises(ConcurrencyConflict):
        commands.act(services, game["id"], 0, {"type": "bid", "amount": 2}, expected_version=1)
    assert services.store.version(game["id"]) == 2


def test_seats_acting_at_once_are_all_appended_once_each(app: Flask, services: Services) -> None:
    game = new_game(app.test_client(), players=["Ann", "Bob", "Cy", "Dee"])
    barrier = threading.Barrier(4)
    answers: dict[int, Any] = {}

    def bid(seat: int) -> None:
        client = app.test_client()  # one client per thread, as separate players would have
        barrier.wait()
        answers[seat] = act(client, game, seat, {"type": "bid", "amount": seat})

    threads = [threading.Thread(target=bid, args=(seat,)) for seat in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answer.status_code for answer in answers.values()) == [201] * 4
    assert sorted(answer.json["seq"] for answer in answers.values()) == [2, 3, 4, 5]
    bids = [event for event in services.store.read(game["id"]) if event["type"] == "action"]
    assert sorted(event["actor"]["seat"] for event in bids) == [0, 1, 2, 3]
