"""The Redis store's feed stream (docs/stores.md, "The feed"): on a single server a feed read
costs the same whatever the number of games, its position stays small, and a reader the
trimming left behind, or one holding an earlier build's position, still gets every event."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from events.redis_store import RedisEventStore
from events.store import Envelope
from tests.contract.conftest import Backend, redis_cluster_url
from tests.contract.test_store_contract import (
    append_interleaved,
    assert_feed_in_game_order,
    drain,
    step,
    steps,
)


def commands_served(store: RedisEventStore, read: Any) -> dict[str, int]:
    """The commands the server ran for ``read()``, by name (its own command statistics)."""
    store.client.config_resetstat()
    read()
    stats = store.client.info("commandstats")
    return {
        name.removeprefix("cmdstat_"): int(values["calls"])
        for name, values in stats.items()
        if name not in ("cmdstat_config|resetstat", "cmdstat_info", "cmdstat_config")
    }


def test_each_append_adds_one_entry_to_the_feed_in_its_own_script(
    redis_store: RedisEventStore,
) -> None:
    redis_store.append("g1", steps(1, 3), expected_version=0)
    redis_store.append("g2", [step(1)], expected_version=0)
    entries = redis_store.client.xrange("meeple:feed")
    assert [fields for _, fields in entries] == [
        {"g": "g1", "f": "1", "l": "3"},
        {"g": "g2", "f": "1", "l": "1"},
    ]


@pytest.mark.parametrize("games", [3, 300])
def test_a_feed_read_costs_the_same_whatever_the_number_of_games(
    redis_store: RedisEventStore, games: int
) -> None:
    for number in range(games):
        redis_store.append(f"g{number}", [step(1)], expected_version=0)
    _, position = drain(redis_store, None, limit=500)
    redis_store.append("g1", [step(2)], expected_version=1)

    pages: list[Any] = []
    served = commands_served(redis_store, lambda: pages.append(redis_store.read_feed(position)))

    assert [(e["game_id"], e["seq"]) for e in pages[0].events] == [("g1", 2)]
    # XINFO (has the trimming passed the position?), XRANGE of the feed, XRANGE of the game:
    # no HGET of every game's version, as the walk of the registry asks.
    assert served == {"xinfo|stream": 1, "xrange": 2}, served
    assert len(json.dumps(pages[0].position)) < 60


def test_a_reader_the_trimming_left_behind_walks_again_and_misses_nothing(
    redis_store: RedisEventStore,
) -> None:
    versions = append_interleaved(redis_store, {}, games=5, rounds=3)
    _, position = drain(redis_store, None, limit=4)
    assert set(position) == {"feed"}
    versions = append_interleaved(redis_store, versions, games=7, rounds=2)
    # The stream drops what this reader has not read yet (as MAXLEN ~ would, far behind).
    redis_store.client.xtrim("meeple:feed", maxlen=1, approximate=False)

    rest, position = drain(redis_store, position, limit=4)

    assert_feed_in_game_order(rest, versions)  # every event of every game, again
    assert set(position) == {"feed"}
    game_id, version = next(iter(versions.items()))
    redis_store.append(game_id, [step(version + 1)], expected_version=version)
    assert [(e["game_id"], e["seq"]) for e in redis_store.read_feed(position).events] == [
        (game_id, version + 1)
    ]


def test_an_earlier_builds_position_reads_on_to_the_feed(redis_store: RedisEventStore) -> None:
    versions = append_interleaved(redis_store, {}, games=4, rounds=2)
    earlier: list[Envelope] = []
    page = redis_store._walk({}, limit=5)  # what read_feed returned before the feed stream
    earlier.extend(page.events)
    assert set(page.position) == {"registry", "games"}
    versions = append_interleaved(redis_store, versions, games=6, rounds=2)

    rest, position = drain(redis_store, page.position, limit=3)

    assert_feed_in_game_order(earlier + rest, versions)
    assert set(position) == {"feed"}


def test_appends_during_a_walk_come_from_the_stream_after_it(
    redis_store: RedisEventStore,
) -> None:
    versions = append_interleaved(redis_store, {}, games=6, rounds=2)
    first = redis_store.read_feed(None, limit=3)
    assert set(first.position) == {"walk", "since"}
    versions = append_interleaved(redis_store, versions, games=8, rounds=1)

    rest, position = drain(redis_store, first.position, limit=3)

    assert_feed_in_game_order(first.events + rest, versions)
    assert set(position) == {"feed"}


def test_a_cluster_store_writes_no_feed_stream_and_walks(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    backend = Backend("redis-cluster", redis_cluster_url(request, tmp_path))
    store = backend.open()
    try:
        store.append("g1", steps(1, 2), expected_version=0)
        page = store.read_feed(None)
        assert [e["seq"] for e in page.events] == [1, 2]
        assert set(page.position) == {"registry", "games"}
    finally:
        backend.close_all()
