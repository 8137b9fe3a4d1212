"""The rate limits' check (service.http.limits.RateLimits) through the test client: which limit
an answer's headers show when an endpoint has several, what tokens that prove nothing leave in
the process's counts, and what happens when the limits' store stops answering. The limits
against a real server: tests/security/test_limits.py and test_limit_counts.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from service.app import create_app
from service.config import load_config
from service.http.limits import RateLimits
from service.http.rate_counts import MemoryCounts
from tests.api.conftest import ADMIN_KEY, bearer

GAME = {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}
LOBBY_GAME = {"ruleset": "gutenberg", "players": ["Ann", {"open": True}]}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    config = load_config(
        {
            # Per hour and per day, so that no window ends during a test.
            "MEEPLE_RATE_LIMIT_GAMES": "4/hour;9/day",
            "MEEPLE_RATE_LIMIT_LOBBY_GAMES": "1/hour",
            "MEEPLE_RATE_LIMIT_ACTIONS": "2/hour",
            "MEEPLE_RATE_LIMIT_INVALID_TOKENS": "10/hour",
        },
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
    )
    built = create_app(config)
    yield built
    built.extensions["meeple"].close()


def limit_headers(answer: Any) -> tuple[str | None, str | None]:
    return answer.headers.get("X-RateLimit-Limit"), answer.headers.get("X-RateLimit-Remaining")


def test_the_shortest_window_is_shown_until_a_limit_is_over(app: Flask) -> None:
    client = app.test_client()
    # A game of named players is counted by the games' limits alone; the hour's is shown.
    assert limit_headers(client.post("/games", json=GAME)) == ("4", "3")
    # A lobby game counts against both; the games' hour still comes first (same window).
    answer = client.post("/games", json=LOBBY_GAME)
    assert answer.status_code == 201 and limit_headers(answer) == ("4", "2")
    # Over the lobby games' limit: that one is shown, and the games' hour counted this too.
    over = client.post("/games", json=LOBBY_GAME)
    assert over.status_code == 429 and over.json["code"] == "rate_limited"
    assert limit_headers(over) == ("1", "0")
    assert "open or bot seats" in over.json["detail"] and "1 per 1 hour" in over.json["detail"]
    assert int(over.headers["Retry-After"]) >= 1
    assert limit_headers(client.post("/games", json=GAME)) == ("4", "0")
    over = client.post("/games", json=GAME)
    assert over.status_code == 429 and limit_headers(over) == ("4", "0")
    # The admin key is never counted and gets no headers.
    admin = client.post("/games", json=GAME, headers=bearer(ADMIN_KEY))
    assert admin.status_code == 201 and "X-RateLimit-Limit" not in admin.headers


def test_tokens_that_prove_nothing_are_counted_against_the_address_alone(app: Flask) -> None:
    limits: RateLimits = app.extensions["meeple_rate_limits"]
    assert isinstance(limits.counts, MemoryCounts)
    client = app.test_client()
    game = client.post("/games", json=GAME, headers=bearer(ADMIN_KEY)).json
    token = game["seats"][0]["token"]
    path = f"/games/{game['id']}/actions"
    assert client.post(path, json={"type": "x"}, headers=bearer(token)).status_code == 422
    tracked = len(limits.counts)
    answers = [
        client.post(path, json={"type": "x"}, headers=bearer(f"random-{number}")).status_code
        for number in range(1000)
    ]
    assert answers[:10] == [401] * 10 and set(answers[10:]) == {429}
    # One count of invalid tokens for the address, and its lock-out: not one per token.
    assert len(limits.counts) == tracked + 2
    assert len(limits.lockouts) == 1
    # A token that proved nothing is not counted as a token: the seat's count went on alone.
    other = client.post(
        path, json={"type": "x"}, headers=bearer(token), environ_base={"REMOTE_ADDR": "192.0.2.1"}
    )
    assert other.status_code == 422 and limit_headers(other) == ("2", "0")


def test_an_ipv6_client_is_counted_by_its_64_network(app: Flask) -> None:
    client = app.test_client()
    for host in range(1, 5):
        address = {"REMOTE_ADDR": f"2001:db8:1:2::{host}"}
        assert client.post("/games", json=GAME, environ_base=address).status_code == 201
    refused = client.post("/games", json=GAME, environ_base={"REMOTE_ADDR": "2001:db8:1:2::99"})
    assert refused.status_code == 429
    other = client.post("/games", json=GAME, environ_base={"REMOTE_ADDR": "2001:db8:1:3::1"})
    assert other.status_code == 201


class Unreachable:
    """A limits store that stopped answering (until ``back``)."""

    def __init__(self) -> None:
        self.back = False

    def check(self) -> bool:
        return self.back

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise ConnectionError("the limits store is gone")

        return fail


def test_a_store_that_stops_answering_is_replaced_by_counts_in_memory(app: Flask) -> None:
    limits: RateLimits = app.extensions["meeple_rate_limits"]
    limits.counts = Unreachable()  # type: ignore[assignment]
    client = app.test_client()
    game = client.post("/games", json=GAME, headers=bearer(ADMIN_KEY)).json
    token = game["seats"][0]["token"]
    path = f"/games/{game['id']}/actions"
    first = client.post(path, json={"type": "no such action"}, headers=bearer(token))
    # Answered, and counted in memory: the limit still holds.
    assert first.status_code == 422 and limit_headers(first) == ("2", "1")
    assert client.post(path, json={"type": "x"}, headers=bearer(token)).status_code == 422
    assert client.post(path, json={"type": "x"}, headers=bearer(token)).status_code == 429
