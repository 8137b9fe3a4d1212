"""Bots and analyses compute in processes of their own (service.workers.compute): one that
never answers holds up no request, no other game and no automatic step, is killed at its time
cap, and the service stops at once with it running (docs/operations.md, "Where compute runs")."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.application import bots
from service.bootstrap import Services
from service.workers import analyses
from tests.api.conftest import bearer, new_game, settle
from tests.unit.test_compute import alive

FOREVER = "tests.unit.compute_functions:forever"


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


def settings_of(services: Services, **changes: Any) -> None:
    services.jobs.settings = replace(services.jobs.settings, **changes)


def plays_on(client: FlaskClient, services: Services) -> None:
    """``/health`` answers, and a game of two people plays its round to the end."""
    health = client.get("/health")
    assert health.status_code == 200 and health.json["status"] == "ok"
    game = new_game(client)
    for seat in game["seats"]:
        response = client.post(
            f"/games/{game['id']}/actions",
            json={"type": "bid", "amount": 3},
            headers=bearer(seat["token"]),
        )
        assert response.status_code == 201, response.json
    # The automatic step the bids made due lands, though a bot's search never ends.
    wait_for(lambda: client.get(f"/games/{game['id']}").json["version"] > 3, "the game's next step")


def thinking(services: Services, pool: str) -> int:
    """The process of the one search now running in ``pool``."""
    computing = services.jobs.compute_pools[pool]
    wait_for(lambda: len(computing.processes()) == 1, f"a {pool} search")
    (pid,) = computing.processes()
    return pid


def test_a_bot_that_never_answers_holds_up_no_request_and_no_other_game(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots, "CHOOSE", FOREVER)
    stuck = new_game(client, "tally", ["Ann", {"bot": {"agent": "mcts", "playouts": 1000}}])
    child = thinking(services, "bots")
    plays_on(client, services)
    assert client.get(f"/games/{stuck['id']}").json["version"] == stuck["version"]
    assert alive(child)
    # Stopping the service stops the search with it, at once.
    services.jobs.close()
    assert not alive(child)


def test_a_bot_past_its_time_cap_is_killed_and_its_seat_plays_a_legal_action(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bots, "CHOOSE", FOREVER)
    monkeypatch.setattr(bots, "COMPUTE_GRACE", 0.5)
    settings_of(services, bot_max_seconds=0.5)
    game = new_game(client, "tally", ["Ann", {"bot": {"agent": "mcts", "playouts": 1000}}])
    settle(services)
    # Killed and not kept (waiting to see it run could miss it on a busy machine).
    assert services.jobs.compute_pools["bots"].processes() == []
    events = client.get(f"/games/{game['id']}/events").json["events"]
    played = [event for event in events if event["actor"] == {"seat": 1, "bot": "mcts"}]
    assert len(played) == 1 and played[0]["data"]["action"]["type"] == "bid"


def test_an_analysis_that_never_answers_holds_up_no_request_and_fails_at_its_cap(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(analyses, "SEARCH", FOREVER)
    game = new_game(client)
    token = game["seats"][0]["token"]
    asked = client.post(
        f"/games/{game['id']}/analyses", json={"playouts": 100}, headers=bearer(token)
    )
    assert asked.status_code == 202, asked.json
    child = thinking(services, "analyses")
    plays_on(client, services)
    assert alive(child)
    # Past its cap (the most seconds an analysis may take, and a grace), it is killed.
    monkeypatch.setattr(analyses, "COMPUTE_GRACE", 0.5)
    settings_of(services, analysis_max_seconds=0.5)
    again = client.post(
        f"/games/{game['id']}/analyses", json={"playouts": 100, "seed": "b"}, headers=bearer(token)
    )
    assert again.status_code == 202, again.json
    services.jobs.compute_pools["analyses"].close()  # the first one's search ends now
    settle(services)
    second = client.get(again.headers["Location"], headers=bearer(token)).json
    assert second["status"] == "failed"
    assert not alive(child)
