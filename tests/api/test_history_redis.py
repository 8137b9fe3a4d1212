"""Branches on a Redis deployment: the branch lists live in the same Redis (on a cluster,
in each source game's own hash slot), and undo, branches and audits work as on SQLite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from flask.testing import FlaskClient

from projections.readmodels.branch_list import RedisBranchList
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle

ADMIN_HEADERS = bearer(ADMIN_KEY)


@pytest.fixture
def redis_services(request: pytest.FixtureRequest) -> Iterator[Services]:
    url: str = request.getfixturevalue("redis_server_url")
    # Only ever a server this test run started (tests/redis_servers.py).
    with redis.Redis.from_url(url) as client:
        client.flushall()
    built = bootstrap(load_config({}, store_url=url, admin_key=ADMIN_KEY))
    yield built
    built.close()


def test_branches_undo_and_audits_work_on_the_redis_store(redis_services: Services) -> None:
    app = create_app(services=redis_services)
    assert isinstance(app.extensions["meeple_branches"], RedisBranchList)
    client: FlaskClient = app.test_client()
    game = new_game(client, options={"rounds": 1, "turns_per_round": 1})
    ann, bob = (bearer(seat["token"]) for seat in game["seats"])
    for headers, amount in ((ann, 2), (bob, 5)):
        client.post(
            f"/games/{game['id']}/actions", json={"type": "bid", "amount": amount}, headers=headers
        )
    settle(redis_services)
    made = client.post(f"/games/{game['id']}/branches", json={"at": 4}, headers=bob)
    assert made.status_code == 201, made.json
    again = client.post(
        f"/games/{made.json['id']}/branches", json={"at": 5}, headers=bearer(made.json["token"])
    )
    assert again.status_code == 201, again.json
    listed = client.get(f"/games/{game['id']}/branches").json["branches"]
    assert [entry["id"] for entry in listed] == [made.json["id"]]
    nested = client.get(f"/games/{made.json['id']}/branches").json["branches"]
    assert [entry["id"] for entry in nested] == [again.json["id"]]
    for game_id in (game["id"], made.json["id"], again.json["id"]):
        assert client.get(f"/games/{game_id}/audit", headers=ADMIN_HEADERS).json["ok"]


def test_a_branch_list_on_a_cluster_lives_in_its_source_games_slot(
    request: pytest.FixtureRequest,
) -> None:
    cluster = request.getfixturevalue("redis_cluster")
    branches = RedisBranchList.from_url(cluster.url)
    branches.add("source-a", {"id": "b1", "at": 3})
    branches.add("source-a", {"id": "b2", "at": 4})
    assert [entry["id"] for entry in branches.list("source-a")] == ["b1", "b2"]
    assert branches.list("source-b") == []
    slot = branches.client.keyslot(branches._key("source-a"))
    assert slot == branches.client.keyslot("{source-a}")
