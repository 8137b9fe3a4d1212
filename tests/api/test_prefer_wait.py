"""``Prefer: wait=N`` on POST /games/{id}/actions (RFC 7240): the answer waits for the
automatic steps the game awaits, before the action and after it, within N seconds.

In-process jobs here (the embedded default); tests/e2e/test_worker_rq.py waits on a real RQ
worker through Redis. An automatic step is held back with a gate on the job function.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.application import commands
from service.bootstrap import Services, bootstrap
from service.config import load_config
from service.workers import jobs as jobs_module
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Automatic steps wait until the test sets this (or 30 s pass)."""
    opened = threading.Event()
    step = jobs_module.JOB_FUNCTIONS["system_step"]

    def gated(services: Any, game_id: str, version: int) -> Any:
        opened.wait(30)
        return step(services, game_id, version)

    monkeypatch.setitem(jobs_module.JOB_FUNCTIONS, "system_step", gated)
    yield opened
    opened.set()


def post(
    client: FlaskClient, game: dict[str, Any], seat: int, action: dict[str, Any], **headers: str
) -> Any:
    token = game["seats"][seat]["token"]
    return client.post(
        f"/games/{game['id']}/actions", json=action, headers={**bearer(token), **headers}
    )


def until_waiting(address: str = "127.0.0.1") -> None:
    """Return once an answer waits for an automatic step (the test client's address)."""
    deadline = time.monotonic() + 10
    while commands.waiting(address) < 1:
        assert time.monotonic() < deadline, "no answer ever waited"
        time.sleep(0.01)


def test_the_answer_shows_the_game_after_the_automatic_step_the_action_made_due(
    client: FlaskClient,
) -> None:
    game = new_game(client)
    assert post(client, game, 0, {"type": "bid", "amount": 3}).status_code == 201
    answer = post(client, game, 1, {"type": "bid", "amount": 5}, Prefer="wait=5")
    assert answer.status_code == 201
    assert answer.headers["Preference-Applied"] == "wait=5"
    # seq 3 is the bid; the bids' reveal, seq 4, is done before the answer.
    assert (answer.json["seq"], answer.json["version"]) == (3, 4)
    assert answer.headers["ETag"] == '"4"'
    assert answer.json["state"]["phase"] == "turns"


def test_without_the_preference_the_answer_does_not_wait(
    client: FlaskClient, services: Services, gate: threading.Event
) -> None:
    game = new_game(client)
    post(client, game, 0, {"type": "bid", "amount": 3})
    answer = post(client, game, 1, {"type": "bid", "amount": 5})
    assert answer.status_code == 201
    assert "Preference-Applied" not in answer.headers
    assert answer.json["version"] == 3
    refused = post(client, game, 0, {"type": "draw"})
    assert refused.status_code == 409
    assert refused.json["code"] == "awaiting_system_step"
    gate.set()
    settle(services)


def test_past_the_wait_the_action_is_answered_202_with_where_to_look(
    client: FlaskClient, services: Services, gate: threading.Event
) -> None:
    game = new_game(client)
    post(client, game, 0, {"type": "bid", "amount": 3})
    answer = post(client, game, 1, {"type": "bid", "amount": 5}, Prefer="wait=1")
    assert answer.status_code == 202
    assert answer.headers["Preference-Applied"] == "wait=1"
    assert answer.headers["Location"] == f"/games/{game['id']}/state"
    assert answer.json["version"] == 3  # appended; its step still awaited
    gate.set()
    settle(services)
    assert client.get(answer.headers["Location"]).json["version"] == 4


def test_an_action_sent_while_a_step_is_pending_waits_for_it_instead_of_409(
    client: FlaskClient, services: Services, gate: threading.Event
) -> None:
    game = new_game(client)
    post(client, game, 0, {"type": "bid", "amount": 3})
    post(client, game, 1, {"type": "bid", "amount": 5})  # the reveal is now held back
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(post, client, game, 0, {"type": "draw"}, Prefer="wait=9")
        until_waiting()
        assert not waiting.done()
        gate.set()
        answer = waiting.result(timeout=30)
    assert answer.status_code == 201
    assert answer.headers["Preference-Applied"] == "wait=9"
    # The reveal (4) came first, then the draw (5).
    assert (answer.json["seq"], answer.json["version"]) == (5, 5)


def test_a_wait_longer_than_the_cap_is_cut_to_it(client: FlaskClient) -> None:
    game = new_game(client)
    answer = post(client, game, 0, {"type": "bid", "amount": 3}, Prefer="respond-async, wait=999")
    assert answer.status_code == 201
    assert answer.headers["Preference-Applied"] == "wait=10"  # MEEPLE_MAX_WAIT's default


@pytest.mark.parametrize("value", ["wait=soon", "wait=-1", "wait=", "wait=1.5", "wait=1e3"])
def test_a_wait_that_is_not_whole_seconds_is_refused(client: FlaskClient, value: str) -> None:
    game = new_game(client)
    answer = post(client, game, 0, {"type": "bid", "amount": 3}, Prefer=value)
    assert answer.status_code == 400
    assert answer.json["code"] == "invalid_header"
    assert client.get(f"/games/{game['id']}").json["version"] == 1  # nothing appended


def test_waits_beyond_the_cap_per_address_are_answered_at_once(
    tmp_path: Path, gate: threading.Event
) -> None:
    config = load_config(
        {},
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
        rate_limits=False,
        waits_per_address=1,
    )
    services = bootstrap(config)
    app: Flask = create_app(services=services)
    client = app.test_client()
    try:
        game = new_game(client)
        post(client, game, 0, {"type": "bid", "amount": 3})
        post(client, game, 1, {"type": "bid", "amount": 5})  # the reveal is held back
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(post, client, game, 0, {"type": "draw"}, Prefer="wait=9")
            until_waiting()
            second = post(client, game, 1, {"type": "draw"}, Prefer="wait=9")
            assert second.status_code == 409  # answered at once, as without the header
            assert "Preference-Applied" not in second.headers
            assert not first.done()
            gate.set()
            assert first.result(timeout=30).status_code == 201
        settle(services)
    finally:
        gate.set()
        services.close()


def post_for_seat(
    client: FlaskClient, game: dict[str, Any], seat: int, action: dict[str, Any], **headers: str
) -> Any:
    """POST /games/{id}/seats/{seat}/actions with that seat's own token."""
    token = game["seats"][seat]["token"]
    return client.post(
        f"/games/{game['id']}/seats/{seat}/actions",
        json=action,
        headers={**bearer(token), **headers},
    )


def test_the_seat_action_address_waits_for_the_step_as_well(client: FlaskClient) -> None:
    game = new_game(client)
    assert post_for_seat(client, game, 0, {"type": "bid", "amount": 3}).status_code == 201
    answer = post_for_seat(client, game, 1, {"type": "bid", "amount": 5}, Prefer="wait=5")
    assert answer.status_code == 201
    assert answer.headers["Preference-Applied"] == "wait=5"
    assert (answer.json["seq"], answer.json["version"]) == (3, 4)
    assert answer.json["state"]["phase"] == "turns"


def test_past_the_wait_the_seat_action_is_answered_202_with_that_seats_state(
    client: FlaskClient, services: Services, gate: threading.Event
) -> None:
    game = new_game(client)
    post_for_seat(client, game, 0, {"type": "bid", "amount": 3})
    answer = post_for_seat(client, game, 1, {"type": "bid", "amount": 5}, Prefer="wait=1")
    assert answer.status_code == 202
    assert answer.headers["Preference-Applied"] == "wait=1"
    assert answer.headers["Location"] == f"/games/{game['id']}/seats/1/state"
    gate.set()
    settle(services)
    token = game["seats"][1]["token"]
    assert client.get(answer.headers["Location"], headers=bearer(token)).json["version"] == 4
