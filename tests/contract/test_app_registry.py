"""The client applications' registry (service.application.apps): one suite, both backends
(SQLite beside the embedded store, the jobs' Redis)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from service.application import apps
from service.application.apps import AppRegistry, RedisAppRegistry, SQLiteAppRegistry


@pytest.fixture(params=["sqlite", "redis"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AppRegistry]:
    if request.param == "sqlite":
        found: AppRegistry = SQLiteAppRegistry(tmp_path / "apps.db")
    else:
        url = request.getfixturevalue("redis_server_url")
        # A prefix of its own: the session's Redis is shared by other tests.
        found = RedisAppRegistry(redis.Redis.from_url(url), prefix=f"test:{uuid.uuid4().hex}")
    yield found
    found.close()


def test_a_key_finds_its_application_until_it_is_rotated_or_revoked(registry: AppRegistry) -> None:
    app, key = apps.register_app(registry, "bot", "203.0.113.7", per_address=0)
    assert key.startswith("mla_") and apps.app_of_key(registry, key) == app
    new = apps.rotate_key(registry, app, key)
    assert apps.app_of_key(registry, key) is None
    assert apps.app_of_key(registry, new) == app
    registry.revoke(app, apps.key_hash(new))
    assert apps.app_of_key(registry, new) is None
    assert registry.count_from("203.0.113.7") == 0


def test_applications_are_capped_per_address(registry: AppRegistry) -> None:
    apps.register_app(registry, "one", "203.0.113.8", per_address=2)
    apps.register_app(registry, "two", "203.0.113.8", per_address=2)
    with pytest.raises(apps.AppError) as refused:
        apps.register_app(registry, "three", "203.0.113.8", per_address=2)
    assert refused.value.code == "too_many_apps"
    apps.register_app(registry, "elsewhere", "203.0.113.9", per_address=2)


def test_custody_numbers_games_in_the_order_taken_and_lets_seats_go(
    registry: AppRegistry,
) -> None:
    first, _ = apps.register_app(registry, "first", "198.51.100.1", per_address=0)
    second, _ = apps.register_app(registry, "second", "198.51.100.1", per_address=0)
    assert registry.hold(first.id, "g1", [0, 1]).number == 1
    assert registry.hold(first.id, "g2", [0]).number == 2
    assert registry.hold(first.id, "g1", [2]) == apps.Held("g1", 1, (0, 1, 2))
    registry.hold(second.id, "g2", [1])
    assert registry.holders("g2") == {0: first.id, 1: second.id}
    registry.let_go(second.id, "g2", 0)  # not its seat: nothing changes
    assert registry.held_seats(first.id, "g2") == frozenset({0})
    registry.let_go(first.id, "g1", 1)
    assert registry.held(first.id) == [apps.Held("g1", 1, (0, 2)), apps.Held("g2", 2, (0,))]


def test_webhooks_are_kept_per_application_and_capped(registry: AppRegistry) -> None:
    app, _ = apps.register_app(registry, "bot", "198.51.100.2", per_address=0)
    assert registry.add_webhook(app.id, {"id": "w1", "url": "https://a.example/"}, most=2)
    assert registry.add_webhook(app.id, {"id": "w2", "url": "https://b.example/"}, most=2)
    assert not registry.add_webhook(app.id, {"id": "w3", "url": "https://c.example/"}, most=2)
    assert [hook["id"] for hook in registry.webhooks(app.id)] == ["w1", "w2"]
    assert registry.remove_webhook(app.id, "w1")
    assert not registry.remove_webhook(app.id, "w1")
    assert [hook["id"] for hook in registry.webhooks(app.id)] == ["w2"]
