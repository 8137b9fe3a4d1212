"""The game index (the read model behind GET /games), the same tests on each backend:
SQLite beside the event store, a Redis server and a Redis Cluster."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.connection import AbstractConnection

from events.envelope import Envelope, NewEvent
from events.sqlite_store import SQLiteEventStore
from events.store import FeedPage
from projections.fold import Folder, decide_action, game_created_event
from projections.readmodels.game_index import GameIndex, GameRow, SQLiteGameIndex
from projections.readmodels.redis_game_index import RedisGameIndex
from tests.rulesets.tally import TALLY


@pytest.fixture(params=["sqlite", "redis", "redis-cluster"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[GameIndex]:
    # A fresh prefix per test, on Redis servers this test run started (tests/redis_servers).
    prefix = f"test-{uuid.uuid4().hex}"
    built: GameIndex
    if request.param == "sqlite":
        built = SQLiteGameIndex(tmp_path / "meeple.index.db")
    elif request.param == "redis":
        built = RedisGameIndex.from_url(request.getfixturevalue("redis_server_url"), prefix)
    else:
        built = RedisGameIndex.from_url(request.getfixturevalue("redis_cluster").url, prefix)
    yield built
    built.close()


def row(game_id: str, version: int = 1, **changes: object) -> GameRow:
    base = {
        "game_id": game_id,
        "ruleset": "tally",
        "players": ["Ann", "Bob"],
        "version": version,
        "status": "active",
        "round": 1,
        "phase": "bid",
        "to_act": [],
        "awaiting_system": None,
        "created_at": "2026-01-01T00:00:00.000000Z",
        "updated_at": "2026-01-01T00:00:00.000000Z",
    }
    base.update(changes)
    return GameRow(**base)  # type: ignore[arg-type]


def ids(rows: list[GameRow]) -> list[str]:
    return [found.game_id for found in rows]


def test_games_are_listed_newest_first(index: GameIndex) -> None:
    index.save([row("a"), row("b")], {"after": 2})
    index.save([row("c")], {"after": 3})
    assert ids(index.query().rows) == ["c", "b", "a"]
    assert index.position() == {"after": 3}


def test_a_row_never_goes_back_to_an_older_version(index: GameIndex) -> None:
    index.save([row("a", 5, phase="turns")], {"after": 1})
    index.save([row("a", 3, phase="bid")], {"after": 1})
    found = index.get("a")
    assert found is not None
    assert (found.version, found.phase) == (5, "turns")
    index.save([row("a", 6, status="finished", to_act=[])], {"after": 2})
    found = index.get("a")
    assert found is not None
    assert (found.version, found.status, found.to_act) == (6, "finished", [])


def test_filters_combine_ruleset_status_and_player(index: GameIndex) -> None:
    index.save(
        [
            row("a", players=["Ann", "Bob"]),
            row("b", ruleset="gutenberg", players=["Ann", "Cy"]),
            row("c", status="finished", players=["Cy"]),
            row("d", ruleset="gutenberg", status="finished", players=["Ann"]),
        ],
        {"after": 4},
    )
    assert ids(index.query(player="Ann").rows) == ["d", "b", "a"]
    assert ids(index.query(ruleset="gutenberg").rows) == ["d", "b"]
    assert ids(index.query(status="finished").rows) == ["d", "c"]
    assert ids(index.query(ruleset="gutenberg", status="active", player="Ann").rows) == ["b"]
    assert index.query(player="Nobody").rows == []
    index.save([row("a", 2, status="finished")], {"after": 5})
    assert ids(index.query(status="active").rows) == ["b"]


def test_filters_by_open_seats_sandbox_and_branch_source(index: GameIndex) -> None:
    index.save(
        [
            row("lobby", open_seats=[1]),
            row("played"),
            row("branch", sandbox=True, branch_of="played"),
            row("other-branch", sandbox=True, branch_of="lobby"),
        ],
        {"after": 4},
    )
    assert ids(index.query(open=True).rows) == ["lobby"]
    assert ids(index.query(open=False).rows) == ["other-branch", "branch", "played"]
    assert ids(index.query(sandbox=True).rows) == ["other-branch", "branch"]
    assert ids(index.query(sandbox=False).rows) == ["played", "lobby"]
    assert ids(index.query(branch_of="played").rows) == ["branch"]
    assert ids(index.query(branch_of="played", sandbox=False).rows) == []
    # Joined: the game leaves the lobby.
    index.save([row("lobby", 2, open_seats=[])], {"after": 5})
    assert index.query(open=True).rows == []
    assert ids(index.query(open=False, sandbox=False).rows) == ["played", "lobby"]
    found = index.get("branch")
    assert found is not None and (found.sandbox, found.branch_of) == (True, "played")


def test_lobbies_and_unfinished_bot_games_are_counted(index: GameIndex) -> None:
    assert index.count_lobbies() == (0, 0)
    index.save(
        [
            row("lobby", open_seats=[1]),
            row("bots", bots=[1]),
            row("lobby-with-a-bot", open_seats=[0], bots=[1]),
            row("done", status="finished", bots=[0]),
            row("plain"),
        ],
        {"after": 5},
    )
    assert index.count_lobbies() == (2, 2)
    index.save([row("bots", 2, status="finished", bots=[1])], {"after": 6})
    index.save([row("lobby", 2, open_seats=[])], {"after": 7})
    assert index.count_lobbies() == (1, 1)


def test_pages_follow_the_cursor_to_the_last_game(index: GameIndex) -> None:
    index.save([row(f"g{n}", players=["Ann"]) for n in range(7)], {"after": 7})
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        page = index.query(player="Ann", limit=3, cursor=cursor)
        seen.extend(ids(page.rows))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"g{n}" for n in reversed(range(7))]


def test_catching_up_indexes_every_game_of_the_feed_once(index: GameIndex, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    folder = Folder(store)
    for game_id, players in (("x", ["Ann"]), ("y", ["Bob", "Cy"])):
        store.append(game_id, [game_created_event(TALLY, players, {}, "seed")], 0)
    assert index.catch_up(store, folder.load) == 2
    assert index.catch_up(store, folder.load) == 0
    assert ids(index.query().rows) == ["y", "x"]
    found = index.get("y")
    assert found is not None
    assert found.players == ["Bob", "Cy"]
    assert found.to_act == [0, 1]
    store.close()


def test_catching_up_reads_the_feed_until_a_short_page(index: GameIndex, tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    folder = Folder(store)
    for n in range(5):
        store.append(f"g{n}", [game_created_event(TALLY, ["Ann"], {}, "seed")], 0)
    pages: list[int] = []
    original = store.read_feed

    def counted(position: dict | None, limit: int = 500) -> FeedPage:
        page = original(position, limit)
        pages.append(len(page.events))
        return page

    store.read_feed = counted  # type: ignore[method-assign]
    assert index.catch_up(store, folder.load, page_size=2) == 5
    assert pages == [2, 2, 1]  # no read after the short page
    assert len(index.query(limit=10).rows) == 5
    store.close()


def test_a_game_this_build_cannot_fold_does_not_hold_up_the_others(
    index: GameIndex, tmp_path: Path
) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    folder = Folder(store)
    unknown = NewEvent(
        type="game_created",
        actor={"system": "service"},
        data={"ruleset": "chess", "rules_version": "1", "players": ["Ann"], "options": {}},
        secret={"visible_to": [], "seed": "s"},
    )
    store.append("old", [unknown], 0)
    store.append("new", [game_created_event(TALLY, ["Bob"], {}, "seed")], 0)
    assert index.catch_up(store, folder.load) == 2
    assert ids(index.query().rows) == ["new"]
    store.close()


def test_catching_up_folds_cached_games_on_from_the_feed_without_reading_them(
    index: GameIndex, tmp_path: Path
) -> None:
    store = SQLiteEventStore(tmp_path / "events.db")
    folder = Folder(store)
    games = [f"g{n}" for n in range(6)]
    for game_id in games:
        store.append(game_id, [game_created_event(TALLY, ["Ann", "Bob"], {}, "seed")], 0)
    assert index.catch_up(store, folder.load, through=folder.load_through) == len(games)
    for game_id in games:  # another process plays on: this folder's cached games fall behind
        game = folder.load(game_id)
        event, _ = decide_action(game, 0, {"type": "bid", "amount": 2})
        store.append(game_id, [event], game.version)
    reads: list[str] = []
    original = store.read

    def counted(game_id: str, after: int = 0, limit: int | None = None) -> list[Envelope]:
        reads.append(game_id)
        return original(game_id, after, limit)

    store.read = counted  # type: ignore[method-assign]
    assert index.catch_up(store, folder.load, through=folder.load_through) == len(games)
    assert reads == []
    for game_id in games:
        found = index.get(game_id)
        assert found is not None
        assert found.version == 2
        assert found.to_act == [1]
    # A folder that never saw the games folds them from the store, as ``load`` does.
    fresh = Folder(store)
    assert fresh.load_through("g0", store.read_feed(None).events[-1:]).version == 2
    store.close()


def test_a_redis_index_saves_a_page_of_rows_in_one_round_trip(
    redis_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = RedisGameIndex.from_url(redis_server_url, f"test-{uuid.uuid4().hex}")
    built.save([row("warm")], {"after": 1})  # the script is loaded by now
    sent: list[object] = []
    original = AbstractConnection.send_packed_command

    def counting(self: AbstractConnection, command: object, check_health: bool = True) -> None:
        sent.append(command)
        original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    built.save([row(f"r{n}", players=[f"P{n}"]) for n in range(30)], {"after": 31})
    assert len(sent) == 1
    found = built.get_many(["r0", "r29", "missing"])
    assert len(sent) == 3
    assert found["missing"] is None
    assert found["r29"] is not None and found["r29"].players == ["P29"]
    monkeypatch.undo()
    assert ids(built.query(limit=2).rows) == ["r29", "r28"]
    # A server that lost its scripts (a restart) is given the script again.
    built.client.script_flush()
    built.save([row("after-restart")], {"after": 32})
    assert ids(built.query(limit=1).rows) == ["after-restart"]
    built.close()
