"""The analysis store contract (service.application.analyses), run on SQLite and on Redis:
atomic changes, the unfinished records the caps count (within their lease), expiry; and the
analysis id."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from service.application.analyses import (
    AnalysisStore,
    RedisAnalysisStore,
    SQLiteAnalysisStore,
    analysis_id,
    search_seed,
)

#: A database of the session's test Redis that no other test uses; emptied for each test.
ANALYSIS_DB = 6


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AnalysisStore]:
    if request.param == "sqlite":
        made: AnalysisStore = SQLiteAnalysisStore(tmp_path / "meeple.jobs.db")
    else:
        url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
        client = redis.Redis.from_url(f"{url}/{ANALYSIS_DB}", decode_responses=True)
        client.flushdb()
        made = RedisAnalysisStore(client)
    yield made
    made.close()


def a_record(aid: str, status: str = "queued", game_id: str = "g1", **more: Any) -> dict[str, Any]:
    return {
        "id": aid,
        "game_id": game_id,
        "status": status,
        "requester": "token:t",
        "lease_until": 1000.0,
        "expires_at": 2000.0,
        **more,
    }


def put(store: AnalysisStore, record: dict[str, Any], now: float = 100.0) -> None:
    store.change(record["id"], lambda found, unfinished: record, now)


def test_a_change_sees_the_record_and_the_unfinished_ones(store: AnalysisStore) -> None:
    put(store, a_record("a"))
    put(store, a_record("b", status="done"))
    put(store, a_record("c", status="running", lease_until=150.0))
    seen: list[Any] = []

    def look(found: Any, unfinished: list[dict[str, Any]]) -> None:
        seen.append((found, sorted(record["id"] for record in unfinished)))

    assert store.change("b", look, 100.0) == a_record("b", status="done")
    assert seen == [(a_record("b", status="done"), ["a", "c"])]
    # Past its lease, a running record (its worker died) no longer counts.
    store.change("a", look, 200.0)
    assert seen[-1] == (a_record("a"), ["a"])
    assert store.get("a", 200.0) == a_record("a")


def test_finished_records_stop_counting(store: AnalysisStore) -> None:
    put(store, a_record("a"))
    put(store, {**a_record("a"), "status": "cancelled"})
    counted: list[int] = []
    store.change("z", lambda found, unfinished: counted.append(len(unfinished)), 100.0)
    assert counted == [0]


def test_records_expire(store: AnalysisStore) -> None:
    put(store, a_record("a", expires_at=101.0), now=100.0)
    assert store.get("a", 100.0) is not None
    if isinstance(store, RedisAnalysisStore):
        assert 0 < store.client.ttl(store.key("a")) <= 1
        return  # Redis forgets it by itself (EXPIRE)
    assert store.get("a", 101.5) is None
    assert store.change("a", lambda found, unfinished: None, 101.5) is None


def test_concurrent_changes_never_exceed_a_cap(store: AnalysisStore) -> None:
    """Eight requests at once under a cap of three: three are stored, whatever the order."""
    stored: list[str] = []

    def ask(number: int) -> None:
        def decide(found: Any, unfinished: list[dict[str, Any]]) -> Any:
            return None if len(unfinished) >= 3 else a_record(f"r{number}")

        if store.change(f"r{number}", decide, 100.0) is not None:
            stored.append(f"r{number}")

    threads = [threading.Thread(target=ask, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(stored) == 3


def test_an_analysis_id_names_every_input_and_the_seed_none_of_the_games_secrets() -> None:
    base = analysis_id("g1", 5, 0, 100, None, "0")
    assert base == analysis_id("g1", 5, 0, 100, None, "0")
    variants = [
        analysis_id("g2", 5, 0, 100, None, "0"),
        analysis_id("g1", 6, 0, 100, None, "0"),
        analysis_id("g1", 5, 1, 100, None, "0"),
        analysis_id("g1", 5, 0, 101, None, "0"),
        analysis_id("g1", 5, 0, 100, 2.0, "0"),
        analysis_id("g1", 5, 0, 100, None, "1"),
    ]
    assert len({base, *variants}) == 7
    assert search_seed({"at": 5, "seat": 0, "seed": "x"}) == "analysis:5:0:x"
