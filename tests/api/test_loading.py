"""Loading a game's state on a request does not re-read its whole stream: the Folder's cache
answers within a process, snapshots (every MEEPLE_SNAPSHOT_INTERVAL events) after a restart."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import bearer, new_game, settle


def play_some(client: FlaskClient, services: Services, game: dict[str, Any]) -> None:
    tokens = [seat["token"] for seat in game["seats"]]
    for seat, amount in ((0, 3), (1, 4)):
        client.post(
            f"/games/{game['id']}/actions",
            json={"type": "bid", "amount": amount},
            headers=bearer(tokens[seat]),
        )
    settle(services)
    for seat in (0, 1, 0, 1):
        client.post(
            f"/games/{game['id']}/actions", json={"type": "draw"}, headers=bearer(tokens[seat])
        )
        settle(services)


def spy_on_reads(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``after`` of every read of a game's stream by a request from now on (the test
    client serves requests on this thread; background jobs read on their own)."""
    afters: list[int] = []
    real = services.store.read
    requests = threading.get_ident()

    def read(game_id: str, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        if threading.get_ident() == requests:
            afters.append(after)
        return real(game_id, after, limit)

    monkeypatch.setattr(services.store, "read", read)
    return afters


def test_repeated_reads_of_a_game_only_ask_the_store_for_new_events(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = new_game(client)
    play_some(client, services, game)
    version = services.store.version(game["id"])
    afters = spy_on_reads(services, monkeypatch)
    for path in ("/state", "/legal-actions", "", "/state"):
        assert client.get(f"/games/{game['id']}{path}").status_code == 200
    assert afters and min(afters) == version


def test_a_restarted_service_folds_from_the_latest_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config({}, store_url=f"sqlite:///{tmp_path}/meeple.db", snapshot_interval=4)
    first = bootstrap(config)
    client = create_app(services=first).test_client()
    game = new_game(client)
    play_some(client, first, game)
    version = first.store.version(game["id"])
    first.close()
    assert version > 8

    restarted = bootstrap(config)
    try:
        afters = spy_on_reads(restarted, monkeypatch)
        response = create_app(services=restarted).test_client().get(f"/games/{game['id']}/state")
        assert response.json["version"] == version
        assert min(afters) >= version - version % 4
    finally:
        restarted.close()
