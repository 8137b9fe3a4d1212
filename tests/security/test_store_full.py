"""A full store answers 503 ``store_full`` everywhere (never 500) and ``/health`` says so.

Redis is started with a small ``maxmemory`` under ``noeviction`` (as compose.yaml runs it,
only smaller) and filled past it with keys of no game's; SQLite's disk is made to look full.
Reads go on; every write is refused with the problem and ``Retry-After``; when room is made
again, writes work again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from events import sqlite_store
from service.app import create_app
from service.bootstrap import bootstrap
from service.config import load_config
from tests.redis_servers import RedisServer

MAXMEMORY = 8 * 1024 * 1024


def _fill(client: redis.Redis) -> int:
    """Write ballast until Redis refuses even a small write; the number of ballast keys.

    Redis refuses a write while its memory is over ``maxmemory``; a large value refused
    leaves room for smaller ones, so the ballast shrinks until a 16-byte one is refused."""
    written = 0
    for size in (16384, 1024, 64, 16):
        try:
            while True:
                client.set(f"ballast:{written}", "x" * size)
                written += 1
        except redis.exceptions.OutOfMemoryError:
            continue
    return written


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _assert_full(answer: Any) -> None:
    assert answer.status_code == 503, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    assert answer.json["code"] == "store_full"
    assert int(answer.headers["Retry-After"]) > 0


def _play(client: FlaskClient, game: dict[str, Any]) -> Any:
    path = f"/games/{game['id']}"
    seat = client.get(path).json["status"]["to_act"][0]
    token = game["seats"][seat]["token"]
    action = client.get(f"{path}/legal-actions", headers=_bearer(token)).json["actions"][0]
    return client.post(f"{path}/actions", json=action, headers=_bearer(token))


def test_a_full_redis_answers_503_store_full_to_writes_and_health_says_so(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> None:
    server = make_redis_server(
        tmp_path / "redis", "--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction"
    )
    config = load_config(
        {},
        store_url=server.url,
        redis_url=server.url.rsplit("/", 1)[0] + "/1",
        rate_limits=False,
    )
    services = bootstrap(config)
    client = create_app(services=services).test_client()
    assert client.get("/health").json["store_writes"] is True
    game = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    assert _play(client, game).status_code == 201

    with server.client() as ballast:
        assert _fill(ballast) > 0
        health = client.get("/health")
        assert health.status_code == 503, (health.json, ballast.info("memory"))
        assert health.json["store"] is True and health.json["store_writes"] is False
        assert health.json["status"] == "degraded"

        # Reads go on.
        assert client.get(f"/games/{game['id']}").status_code == 200
        assert client.get(f"/games/{game['id']}/events").status_code == 200
        # Every kind of write is refused as a problem, never a 500.
        _assert_full(_play(client, game))
        _assert_full(client.post("/games", json={"ruleset": "tally", "players": ["C", "D"]}))
        seat = _bearer(game["seats"][0]["token"])
        _assert_full(client.post(f"/games/{game['id']}/branches", json={"at": 2}, headers=seat))
        branches = client.get(f"/games/{game['id']}/branches", headers=seat)
        assert branches.status_code in (200, 503), branches.get_data(as_text=True)

        # Room made: writes work again and /health is well.
        for key in ballast.scan_iter("ballast:*"):
            ballast.delete(key)
    assert client.get("/health").json["store_writes"] is True
    again = _play(client, game)
    assert again.status_code == 201, again.json
    services.close()


def _on_sqlite(tmp_path: Path) -> tuple[Any, FlaskClient, dict[str, Any]]:
    """The service on an SQLite store, its test client and a new game."""
    config = load_config({}, store_url=f"sqlite:///{tmp_path / 'events.db'}", rate_limits=False)
    services = bootstrap(config)
    client = create_app(services=services).test_client()
    game = client.post("/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}).json
    return services, client, game


def test_a_full_sqlite_disk_answers_503_store_full_and_health_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services, client, game = _on_sqlite(tmp_path)
    assert client.get("/health").json["store_writes"] is True

    # The disk under the database nearly full: /health says so before SQLite fails.
    monkeypatch.setattr(sqlite_store, "MIN_FREE_BYTES", 2**62)
    health = client.get("/health")
    assert health.status_code == 503 and health.json["store_writes"] is False
    monkeypatch.undo()

    # SQLite out of room (SQLITE_FULL, as a full disk gives): the append's answer.
    def append_on_a_full_disk(*args: Any, **kwargs: Any) -> Any:
        with services.store._pool.connection() as connection:  # type: ignore[attr-defined]
            connection.execute("SELECT 1")
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
            raise full

    with monkeypatch.context() as patched:
        patched.setattr(services.store, "append", append_on_a_full_disk)
        _assert_full(_play(client, game))
    assert _play(client, game).status_code == 201
    services.close()


def test_an_sqlite_error_outside_the_event_store_is_a_503_not_a_500(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    services, client, game = _on_sqlite(tmp_path)

    def locked(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(services.store, "read", locked)
    answer = client.get(f"/games/{game['id']}/events")
    assert answer.status_code == 503 and answer.json["code"] == "store_unavailable"
    services.close()
