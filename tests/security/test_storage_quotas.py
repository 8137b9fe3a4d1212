"""Each owner's storage quota: one owner cannot fill the store for the others.

An owner (a client address; the admin key is exempt) appends what it may a day and in all
(service.application.quotas); past it, its writes are refused with 429
``storage_quota_exceeded`` and change nothing, while another owner's actions still succeed
and the store keeps room.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.application.quotas import (
    Quota,
    RedisQuotaLedger,
    SQLiteQuotaLedger,
    StorageQuotas,
    today,
)
from service.bootstrap import bootstrap
from service.config import ConfigError, load_config
from tests.redis_servers import RedisServer

ADMIN_KEY = "quota-admin-key-0123456789abcdef"
ATTACKER = {"REMOTE_ADDR": "10.0.0.66"}
HONEST = {"REMOTE_ADDR": "10.0.0.7"}
#: The attacker's share in this test: a small part of the small Redis below.
BYTES_PER_DAY = 256 * 1024
MAXMEMORY = 32 * 1024 * 1024


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _new_game(client: FlaskClient, address: dict[str, str]) -> Any:
    return client.post(
        "/games", json={"ruleset": "tally", "players": ["Ann", "Bob"]}, environ_base=address
    )


def _play(client: FlaskClient, game: dict[str, Any], address: dict[str, str]) -> Any:
    path = f"/games/{game['id']}"
    seat = client.get(path).json["status"]["to_act"][0]
    token = _bearer(game["seats"][seat]["token"])
    legal = client.get(f"{path}/legal-actions", headers=token).json["actions"]
    return client.post(f"{path}/actions", json=legal[0], headers=token, environ_base=address)


def test_one_owner_filling_a_small_redis_is_stopped_and_another_owners_actions_go_on(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> None:
    server = make_redis_server(
        tmp_path / "redis", "--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction"
    )
    config = load_config(
        {},
        store_url=server.url,
        admin_key=ADMIN_KEY,
        rate_limits=False,
        storage_bytes_per_day=BYTES_PER_DAY,
    )
    services = bootstrap(config)
    client = create_app(services=services).test_client()
    honest = _new_game(client, HONEST).json

    # The attacker writes as fast as it can: new games, and moves in them.
    refused = None
    made = 0
    for _ in range(5000):
        answer = _new_game(client, ATTACKER)
        if answer.status_code == 429:
            refused = answer
            break
        assert answer.status_code == 201, answer.json
        made += 1
        moved = _play(client, answer.json, ATTACKER)
        if moved.status_code == 429:
            refused = moved
            break
        assert moved.status_code == 201, moved.json
    assert refused is not None, "the attacker was never stopped"
    assert refused.mimetype == "application/problem+json"
    assert refused.json["code"] == "storage_quota_exceeded"
    assert int(refused.headers["Retry-After"]) > 0
    assert made > 10

    # Every write of the attacker's is refused now, and changes nothing.
    version = client.get(f"/games/{honest['id']}").json["version"]
    assert _new_game(client, ATTACKER).json["code"] == "storage_quota_exceeded"
    assert _play(client, honest, ATTACKER).json["code"] == "storage_quota_exceeded"
    assert client.get(f"/games/{honest['id']}").json["version"] == version
    # The attacker got no more than its share (one request's worth beyond it at most).
    used = services.quotas.usage("address:10.0.0.66", _now())
    assert BYTES_PER_DAY <= used.bytes_today < BYTES_PER_DAY + 16 * 1024

    # The honest owner plays on; the admin key is exempt; the store has room.
    for _ in range(5):
        services.jobs.wait_idle(timeout=30)  # the automatic steps of the honest game
        assert _play(client, honest, HONEST).status_code == 201
    admin = client.post(
        "/games",
        json={"ruleset": "tally", "players": ["C", "D"]},
        headers=_bearer(ADMIN_KEY),
        environ_base=ATTACKER,
    )
    assert admin.status_code == 201, admin.json
    health = client.get("/health").json
    assert health["store_writes"] is True
    # Reads still work for the refused owner.
    assert client.get(f"/games/{honest['id']}", environ_base=ATTACKER).status_code == 200

    # What was counted reached the shared ledger, where another process reads it.
    services.quotas.flush()
    other = RedisQuotaLedger.from_url(server.url)
    seen = other.usage("address:10.0.0.66", today())
    assert seen.bytes_today == used.bytes_today
    other.close()
    services.close()


def _now() -> float:
    return dt.datetime.now(dt.UTC).timestamp()


def test_two_processes_over_one_ledger_pass_a_quota_by_at_most_what_one_flush_lets_through(
    tmp_path: Path, make_redis_server: Callable[..., RedisServer]
) -> None:
    server = make_redis_server(tmp_path / "redis")
    quota = Quota(events_per_day=100, bytes_per_day=0, events=0, bytes=0)
    first = StorageQuotas(RedisQuotaLedger.from_url(server.url), quota, flush_interval=3600)
    second = StorageQuotas(RedisQuotaLedger.from_url(server.url), quota, flush_interval=3600)
    envelope = {"seq": 1, "data": {"x": 1}}
    now = _now()
    let_through = 0
    for turn in range(400):
        process = (first, second)[turn % 2]
        if process.refusal("address:a", now) is None:
            process.charge("address:a", [envelope], now)
            let_through += 1
        if turn % 10 == 9:  # both flush, as their background threads would, now and then
            first.flush(now)
            second.flush(now)
    first.flush(now)
    second.flush(now)
    assert first.ledger.usage("address:a", today()).events_today == let_through
    # Each process stops within what it counted since its last flush.
    assert 100 <= let_through <= 110, let_through
    assert first.refusal("address:a", now) is not None
    assert second.refusal("address:a", now) is not None
    assert first.refusal("address:b", now) is None, "another owner is not held back"
    first.close()
    second.close()


def test_a_days_quota_starts_afresh_the_next_day_and_the_total_does_not(tmp_path: Path) -> None:
    ledger = SQLiteQuotaLedger(tmp_path / "quotas.db")
    quota = Quota(events_per_day=3, bytes_per_day=0, events=5, bytes=0)
    quotas = StorageQuotas(ledger, quota, flush_interval=3600)
    monday = dt.datetime(2026, 12, 7, 23, 59, tzinfo=dt.UTC).timestamp()
    tuesday = monday + 120
    for _ in range(3):
        quotas.charge("address:a", [{"seq": 1}], monday)
    refused = quotas.refusal("address:a", monday)
    assert refused is not None and "events today" in refused.reason
    assert refused.retry_after <= 61  # until midnight, UTC
    quotas.flush(monday)
    assert quotas.refusal("address:a", tuesday) is None
    for _ in range(2):
        quotas.charge("address:a", [{"seq": 1}], tuesday)
    quotas.flush(tuesday)
    total = quotas.refusal("address:a", tuesday)
    assert total is not None and "events in all" in total.reason
    counted = ledger.usage("address:a", "20261208")
    assert (counted.events_today, counted.events) == (2, 5)
    assert counted == quotas.usage("address:a", tuesday)
    quotas.close()


def test_the_quotas_are_settings_and_refuse_nonsense(tmp_path: Path) -> None:
    config = load_config(
        {"MEEPLE_STORAGE_EVENTS_PER_DAY": "10", "MEEPLE_STORAGE_BYTES": "0"},
        store_url=f"sqlite:///{tmp_path}/m.db",
    )
    assert config.storage_events_per_day == 10 and config.storage_bytes == 0
    with pytest.raises(ConfigError):
        load_config({"MEEPLE_STORAGE_BYTES_PER_DAY": "-1"}, store_url=f"sqlite:///{tmp_path}/m.db")
    # All four 0: no quota, nothing refused, nothing counted.
    off = replace(
        config, storage_events_per_day=0, storage_bytes_per_day=0, storage_events=0, storage_bytes=0
    )
    services = bootstrap(off)
    assert not services.quotas.active
    client = create_app(services=services).test_client()
    for _ in range(12):
        assert _new_game(client, ATTACKER).status_code == 201
    services.close()
