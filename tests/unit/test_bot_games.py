"""The bot games' store (service.application.bot_games), run on SQLite and on Redis: live games
counted per owner and in all, a paused game counting for nobody until it is admitted again
under the same caps, a pause that an attendance meanwhile prevents, and forgetting a game."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from service.application.bot_games import (
    BotGameStore,
    Caps,
    RedisBotGameStore,
    Refusal,
    SQLiteBotGameStore,
)

#: A database of the session's test Redis that no other test uses; emptied for each test.
BOT_GAMES_DB = 4


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BotGameStore]:
    if request.param == "sqlite":
        made: BotGameStore = SQLiteBotGameStore(tmp_path / "meeple.jobs.db")
    else:
        url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
        client = redis.Redis.from_url(f"{url}/{BOT_GAMES_DB}", decode_responses=True)
        client.flushdb()
        made = RedisBotGameStore(client)
    yield made
    made.close()


CAPS = Caps(per_owner=2, total=3)


def test_an_owner_is_refused_past_its_cap_while_another_owner_is_admitted(
    store: BotGameStore,
) -> None:
    assert store.admit("a1", "address:a", CAPS, 100.0) is None
    assert store.admit("a2", "address:a", CAPS, 100.0) is None
    assert store.admit("a3", "address:a", CAPS, 100.0) == Refusal("owner", 2)
    assert store.admit("b1", "address:b", CAPS, 100.0) is None
    assert store.admit("c1", "address:c", CAPS, 100.0) == Refusal("service", 3)
    assert store.admit("admins", "admin", None, 100.0) is None  # no caps: the admin's
    assert sorted(store.live("address:a")) == ["a1", "a2"]
    assert sorted(store.live()) == ["a1", "a2", "admins", "b1"]
    assert store.admit("a1", "address:a", CAPS, 100.0) is None  # live already: no new place
    assert store.owner_of("a1") == "address:a"
    assert store.owner_of("never") == "game:never"


def test_a_paused_game_counts_for_nobody_until_it_is_admitted_again(
    store: BotGameStore,
) -> None:
    store.admit("a1", "address:a", CAPS, 100.0)
    store.admit("a2", "address:a", CAPS, 100.0)
    assert store.pause("a1", 7, idle_before=150.0)
    record = store.get("a1")
    assert record is not None and (record["paused"], record["version"]) == (True, 7)
    assert store.admit("a3", "address:a", CAPS, 200.0) is None
    # Resuming is admission again, under the owner the game has, and its caps.
    assert store.admit("a1", "someone:else", CAPS, 200.0) == Refusal("owner", 2)
    store.finish("a3")
    assert store.admit("a1", "someone:else", CAPS, 200.0) is None
    record = store.get("a1")
    assert record is not None and record["owner"] == "address:a" and not record["paused"]
    assert sorted(store.live("address:a")) == ["a1", "a2"]


def test_a_game_attended_since_the_idle_mark_does_not_pause(store: BotGameStore) -> None:
    store.admit("a1", "address:a", CAPS, 100.0)
    touched = store.touch("a1", 180.0)
    assert touched is not None and touched["touched_at"] == 180.0 and not touched["paused"]
    assert not store.pause("a1", 3, idle_before=150.0)
    assert store.pause("a1", 3, idle_before=180.0)
    assert not store.pause("a1", 3, idle_before=999.0)  # paused already
    seen = store.touch("a1", 300.0)
    assert seen is not None and seen["paused"]
    assert store.touch("not-a-bot-game", 300.0) is None
    assert store.get("not-a-bot-game") is None


def test_a_finished_game_is_forgotten(store: BotGameStore) -> None:
    store.admit("a1", "address:a", CAPS, 100.0)
    store.pause("a1", 2, idle_before=100.0)
    store.finish("a1")
    assert store.get("a1") is None and store.live() == []
    store.finish("a1")  # twice is harmless
