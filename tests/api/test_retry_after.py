"""``Retry-After`` as a client can obey it (docs/api.md, "Errors"): only on 429, 409 and 503,
in whole seconds rounded up and never 0, and the same seconds in the problem's
``retry_after``. The limits themselves against a real server: tests/security/test_limits.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response

from service.app import create_app
from service.config import load_config
from service.http.errors import PROBLEM_MEDIA_TYPE, settle_retry_after
from service.workers import jobs as jobs_module
from tests.api.conftest import ADMIN_KEY, bearer, new_game


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    config = load_config(
        {
            # Per hour, so that no window ends during a test.
            "MEEPLE_RATE_LIMIT_GAMES": "3/hour",
            "MEEPLE_RATE_LIMIT_ACTIONS": "3/hour",
        },
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
    )
    built = create_app(config)
    yield built
    built.extensions["meeple"].close()


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


def act(client: Any, game: dict[str, Any], seat: int, action: dict[str, Any]) -> Any:
    token = game["seats"][seat]["token"]
    return client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))


def test_counted_answers_that_are_no_refusal_carry_the_limit_but_no_retry_after(
    app: Flask,
) -> None:
    client = app.test_client()
    created = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]})
    assert created.status_code == 201
    assert created.headers["X-RateLimit-Remaining"] == "2"
    assert "Retry-After" not in created.headers
    illegal = act(client, created.json, 0, {"type": "bid", "amount": -4})
    assert illegal.status_code == 422
    assert illegal.headers["X-RateLimit-Remaining"] == "2"
    assert "Retry-After" not in illegal.headers


def test_a_rate_limited_answer_says_the_same_whole_seconds_in_header_and_body(
    app: Flask,
) -> None:
    client = app.test_client()
    for _ in range(3):
        assert client.post("/games", json={"ruleset": "tally", "players": ["A", "B"]}).status_code
    over = client.post("/games", json={"ruleset": "tally", "players": ["A", "B"]})
    assert over.status_code == 429
    seconds = over.headers["Retry-After"]
    assert seconds.isdigit() and 1 <= int(seconds) <= 3600
    assert over.json["retry_after"] == int(seconds)


def test_a_pending_step_answers_409_with_retry_after_in_header_and_body(
    app: Flask, gate: threading.Event
) -> None:
    client = app.test_client()
    game = new_game(client)
    assert act(client, game, 0, {"type": "bid", "amount": 3}).status_code == 201
    assert act(client, game, 1, {"type": "bid", "amount": 4}).status_code == 201
    refused = act(client, game, 0, {"type": "draw"})
    assert refused.status_code == 409 and refused.json["code"] == "awaiting_system_step"
    assert refused.headers["Retry-After"] == "1"  # MEEPLE_RETRY_AFTER's default
    assert refused.json["retry_after"] == 1
    gate.set()


def problem_answer(status: int, retry_after: str) -> Response:
    body = {"type": "/docs#problem-x", "title": "X", "status": status, "detail": "", "code": "x"}
    answer = Response(json.dumps(body), status=status, mimetype=PROBLEM_MEDIA_TYPE)
    answer.headers["Retry-After"] = retry_after
    return answer


@pytest.mark.parametrize(("given", "shown"), [("0", "1"), ("0.2", "1"), ("1.01", "2"), ("7", "7")])
def test_a_wait_is_rounded_up_to_whole_seconds_and_never_shown_as_0(given: str, shown: str) -> None:
    settled = settle_retry_after(problem_answer(429, given))
    assert settled.headers["Retry-After"] == shown
    assert settled.get_json()["retry_after"] == int(shown)


@pytest.mark.parametrize("status", [200, 201, 202, 304, 400, 422])
def test_no_other_answer_keeps_a_retry_after(status: int) -> None:
    settled = settle_retry_after(problem_answer(status, "5"))
    assert "Retry-After" not in settled.headers
    assert "retry_after" not in settled.get_json()


@pytest.mark.parametrize("status", [409, 429, 503])
def test_the_answers_that_say_when_to_come_back_keep_it(status: int) -> None:
    assert settle_retry_after(problem_answer(status, "5")).headers["Retry-After"] == "5"
