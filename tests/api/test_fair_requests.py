"""The API process's places (MEEPLE_REQUEST_SLOTS, service.http.fair_requests): every request
runs in one, a request that waits for its automatic step (``Prefer: wait``) gives it back
meanwhile, and a place is given back whatever the answer (an error, a stream)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import Config, load_config
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle
from tests.api.test_prefer_wait import gate, post, until_waiting  # noqa: F401 - the fixture


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config(
        {},
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
        rate_limits=False,
        request_slots=1,
    )


@pytest.fixture
def services(config: Config) -> Iterator[Services]:
    built = bootstrap(config)
    yield built
    built.close()


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def shares_of(app: Flask) -> object:
    return app.wsgi_app.shares  # type: ignore[attr-defined]


def test_an_answer_waiting_for_its_step_leaves_the_one_place_to_others(
    client: FlaskClient,
    app: Flask,
    services: Services,
    gate: threading.Event,  # noqa: F811
) -> None:
    game = new_game(client)
    assert post(client, game, 0, {"type": "bid", "amount": 3}).status_code == 201
    with ThreadPoolExecutor(1) as pool:
        waited = pool.submit(post, client, game, 1, {"type": "bid", "amount": 5}, Prefer="wait=20")
        until_waiting()
        # The only place is free while that answer waits: another request runs to its end.
        assert client.get("/health").status_code == 200
        assert client.get(f"/games/{game['id']}").status_code == 200
        assert not waited.done()
        gate.set()
        answer = waited.result(timeout=30)
    assert answer.status_code == 201 and answer.json["version"] == 4
    settle(services)
    assert shares_of(app).waiting() == 0  # type: ignore[attr-defined]


def test_a_place_is_given_back_after_a_refusal_and_after_a_stream_is_opened(
    client: FlaskClient, app: Flask
) -> None:
    game = new_game(client)
    assert client.get("/games/nope").status_code == 404
    assert client.get(f"/games/{game['id']}/state", headers=bearer("bad")).status_code == 401
    stream = client.get(f"/games/{game['id']}/stream", buffered=False)
    assert stream.status_code == 200
    # The stream is open (its body not read to the end) and its place is free again:
    # with one place, this request would otherwise wait forever.
    assert client.get("/health").status_code == 200
    stream.close()
    assert shares_of(app).waiting() == 0  # type: ignore[attr-defined]


def test_a_request_runs_as_it_comes_when_the_places_are_off(tmp_path: Path) -> None:
    config = load_config(
        {}, store_url=f"sqlite:///{tmp_path}/m.db", admin_key=ADMIN_KEY, request_slots=0
    )
    services = bootstrap(config)
    try:
        app = create_app(services=services)
        assert not hasattr(app.wsgi_app, "shares")
        assert app.test_client().get("/health").status_code == 200
    finally:
        services.close()
