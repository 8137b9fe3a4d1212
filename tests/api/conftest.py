"""Fixtures of the HTTP tests: an app on a fresh SQLite store per test, its client, and
helpers that speak the API the way a client would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.bootstrap import Services, bootstrap
from service.config import Config, load_config

ADMIN_KEY = "test-admin-key-0123456789"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    # No rate limits: these tests play whole games as fast as the test client goes, from one
    # address. The limits are tested on a real server in tests/security/test_limits.py.
    return load_config(
        {}, store_url=f"sqlite:///{tmp_path}/meeple.db", admin_key=ADMIN_KEY, rate_limits=False
    )


@pytest.fixture
def services(config: Config) -> Iterator[Services]:
    built = bootstrap(config)
    yield built
    built.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def new_game(
    client: FlaskClient,
    ruleset: str = "tally",
    players: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """POST /games and return its 201 body (id, version, seats with tokens)."""
    body = {"ruleset": ruleset, "players": players or ["Ann", "Bob"], **extra}
    response = client.post("/games", json=body)
    assert response.status_code == 201, response.json
    created: dict[str, Any] = response.json
    return created


def settle(services: Services) -> None:
    """Wait for the background jobs (automatic steps) to finish what they were given."""
    assert services.jobs.wait_idle(timeout=60)
