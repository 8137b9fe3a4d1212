"""The API on the Redis event store (as compose.yaml deploys it): a game is played to its end
through HTTP, and the game index lives in the same Redis."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
import redis
from flask.testing import FlaskClient

from projections.readmodels.redis_game_index import RedisGameIndex
from service.app import create_app
from service.application import commands
from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import ADMIN_KEY
from tests.api.playing import play_to_the_end
from tests.rulesets.tally import TALLY


@pytest.fixture
def redis_services(request: pytest.FixtureRequest) -> Iterator[Services]:
    url: str = request.getfixturevalue("redis_server_url")
    # Only ever a server this test run started (tests/redis_servers.py).
    with redis.Redis.from_url(url) as client:
        client.flushall()
    built = bootstrap(load_config({}, store_url=url, admin_key=ADMIN_KEY))
    yield built
    built.close()


def test_a_game_is_played_to_its_end_on_the_redis_store(redis_services: Services) -> None:
    assert isinstance(redis_services.game_index, RedisGameIndex)
    client: FlaskClient = create_app(services=redis_services).test_client()
    summary = play_to_the_end(client, redis_services, TALLY, random.Random("redis"))
    assert summary["status"]["finished"] is True
    assert client.get("/health").json["store"] is True
    commands.catch_up(redis_services)
    listed = client.get("/games?status=finished").json["games"]
    assert [game["id"] for game in listed] == [summary["id"]]
