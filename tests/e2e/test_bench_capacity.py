"""The capacity bench's figures code runs (bench/bench_capacity.py; the bench itself, with
its streams and RQ parts, runs in ``make bench``): one whole Impression game counted, played
through the service on a throwaway redis-server, and loaded as the cache keeps it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import bench_capacity
from projections.ruleset import get_ruleset
from tests.redis_servers import RedisServer, free_port, redis_binary


def figures(printed: str) -> dict[str, float]:
    """``capacity:`` lines by name -> value."""
    found = {}
    for line in printed.splitlines():
        matched = re.match(r"capacity: (.+?)\s{2,}\s*(-?[\d,.]+) ", line)
        if matched:
            found[matched[1].strip()] = float(matched[2].replace(",", ""))
    return found


def test_one_game_gives_positive_events_memory_and_cache_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    redis_binary("redis-server")
    played = bench_capacity.events_per_game(
        1, rulesets=[get_ruleset("impression")], agents=("random",), player_counts=(2,)
    )
    events = len(played[0].logs[0].envelopes)
    server = RedisServer(free_port(), tmp_path / "store", bench_capacity.AOF).start()
    try:
        games = bench_capacity.redis_memory(server, played, 1)
        bench_capacity.cached_game_memory(server, games)
    finally:
        server.stop()
    printed = capsys.readouterr().out
    found = figures(printed)

    assert found["events per game, impression, 2 players, random"] == events
    assert [game.events for game in games] == [events]
    # An event costs Redis more than its envelope's JSON (the stream entry, the snapshots,
    # the idempotency keys), and the AOF writes each one down.
    envelope = float(re.search(r"canonical JSON ([\d,]+) bytes", printed)[1].replace(",", ""))  # type: ignore[index]
    assert found["redis bytes per event, impression"] > envelope > 0
    assert found["redis bytes per game, impression"] > found["redis bytes per event, impression"]
    assert found["AOF bytes per event, impression"] > envelope
    assert found["memory per cached game, impression"] > 0
    assert "MEMORY USAGE of a game's keys" in printed
