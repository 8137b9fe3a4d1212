"""Fair shares through the HTTP API, jobs in-process (docs/operations.md, "Fair shares"): one
owner's many bot games never make another owner's bot turn wait behind them; bot games and
analyses are capped per owner (the client address, whatever tokens it holds) as well as in all;
and a game of bots only that nobody reads pauses, freeing its place, until a read resumes it.

Which job runs when is recorded (the job functions are wrapped, and held where a test needs
them held), never timed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from service.application import bot_games, bots
from service.bootstrap import Services
from service.config import Config, load_config
from service.workers import jobs
from service.workers.jobs import JobSettings, make_jobs
from tests.api.conftest import ADMIN_KEY, bearer, settle
from tests.api.test_analyses import Gate, gate

#: The fixture that holds analyses' searches until opened.
__all__ = ["gate"]

A, B = "203.0.113.7", "198.51.100.9"
BOTS_ONLY = [{"bot": {"agent": "random"}}, {"bot": {"agent": "random"}}]
#: A bot game that stays under way: its person never plays.
AGAINST_A_PERSON = ["Ann", {"bot": {"agent": "random"}}]


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config(
        {},
        store_url=f"sqlite:///{tmp_path}/meeple.db",
        admin_key=ADMIN_KEY,
        rate_limits=False,
        max_bot_games_per_owner=2,
    )


def post_game(
    client: FlaskClient, address: str, players: list[Any], headers: dict[str, str] | None = None
) -> TestResponse:
    return client.post(
        "/games",
        json={"ruleset": "tally", "players": players, "options": {"rounds": 1}},
        headers=headers or {},
        environ_base={"REMOTE_ADDR": address},
    )


def created(client: FlaskClient, address: str, players: list[Any]) -> str:
    response = post_game(client, address, players)
    assert response.status_code == 201, response.json
    return str(response.json["id"])


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Wait until ``check()`` holds (a job does it in its own time); fail past ``timeout``,
    which is no verdict on speed: the jobs get there in milliseconds unless they never do."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


class Turns:
    """Stands in for the bot-turn job: records which game's turn starts, holds every turn
    that starts while ``hold_all`` is set until ``opened`` is, then plays it as the job does."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.hold_all = threading.Event()
        self.opened = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, services: Services, game_id: str, version: int) -> str:
        with self._lock:
            self.started.append(game_id)
        if self.hold_all.is_set():
            assert self.opened.wait(60)
        return bots.bot_turn(services, game_id, version)

    def first_turns(self) -> list[str]:
        """The games in the order their first turn started."""
        with self._lock:
            return list(dict.fromkeys(self.started))


@pytest.fixture
def turns(monkeypatch: pytest.MonkeyPatch) -> Iterator[Turns]:
    recorded = Turns()
    monkeypatch.setitem(jobs.JOB_FUNCTIONS, "bot_turn", recorded)
    yield recorded
    recorded.opened.set()


def one_bot_process(services: Services) -> None:
    """The runner again, with one child process for bots (one turn computes at a time)."""
    services.jobs.close()
    services.jobs = make_jobs(services, JobSettings(bot_processes=1))


def test_one_owners_bot_games_do_not_make_another_owners_turn_wait_behind_them(
    client: FlaskClient, services: Services, turns: Turns
) -> None:
    """Two bot processes: the first of a's five all-bot games thinks (held); its others wait,
    as a has a turn running already (MEEPLE_BOT_TURNS_PER_OWNER, 1), so b's turn takes the
    other process at once. First come, first served, a's second game took it."""
    services.config = replace(services.config, max_bot_games_per_owner=5)
    turns.hold_all.set()
    games_of_a = [created(client, A, BOTS_ONLY) for _ in range(5)]
    game_of_b = created(client, B, BOTS_ONLY)
    wait_for(lambda: game_of_b in turns.started, "b's bot turn never started")
    assert turns.started == [games_of_a[0], game_of_b]
    turns.opened.set()
    settle(services)


def test_with_one_bot_process_the_next_turn_is_another_owners(
    client: FlaskClient, services: Services, turns: Turns
) -> None:
    """One process: while a's first turn thinks, a's four other games and then b's queue up;
    the next to run is b's (it waited for the turn running, not behind a's queue), then a's
    other games take their turns."""
    one_bot_process(services)
    services.config = replace(services.config, max_bot_games_per_owner=5)
    turns.hold_all.set()
    games_of_a = [created(client, A, BOTS_ONLY) for _ in range(5)]
    wait_for(lambda: turns.started == games_of_a[:1], "a's first turn never started")
    game_of_b = created(client, B, BOTS_ONLY)
    turns.hold_all.clear()
    turns.opened.set()
    settle(services)
    assert turns.first_turns() == [games_of_a[0], game_of_b, *games_of_a[1:]]


def test_the_per_owner_cap_on_bot_games_refuses_one_owner_while_another_succeeds(
    client: FlaskClient, services: Services
) -> None:
    for _ in range(2):
        created(client, A, AGAINST_A_PERSON)
    refused = post_game(client, A, AGAINST_A_PERSON)
    assert (refused.status_code, refused.json["code"]) == (429, "too_many_bot_games")
    assert "the most one owner (a client address) may have" in refused.json["detail"]
    assert int(refused.headers["Retry-After"]) >= 1
    # Fresh tokens change nothing: the count is the address's.
    lobby = post_game(client, A, ["Ann", {"open": True}])
    assert lobby.status_code == 201  # no bot: not counted
    ann = bearer(lobby.json["seats"][0]["token"])
    seat = f"/games/{lobby.json['id']}/seats/1/bot"
    given = client.post(
        seat, json={"agent": "random"}, headers=ann, environ_base={"REMOTE_ADDR": A}
    )
    assert (given.status_code, given.json["code"]) == (429, "too_many_bot_games")
    # Another owner is not held back by a's games, in a new game or a seat given to a bot.
    created(client, B, AGAINST_A_PERSON)
    given = client.post(
        seat, json={"agent": "random"}, headers=ann, environ_base={"REMOTE_ADDR": B}
    )
    assert given.status_code == 200, given.json
    assert post_game(client, A, AGAINST_A_PERSON, bearer(ADMIN_KEY)).status_code == 201
    settle(services)


def test_the_service_wide_cap_still_holds_and_says_so(
    client: FlaskClient, services: Services
) -> None:
    services.config = replace(services.config, max_bot_games=2)
    created(client, A, AGAINST_A_PERSON)
    created(client, B, AGAINST_A_PERSON)
    refused = post_game(client, "192.0.2.1", AGAINST_A_PERSON)
    assert (refused.status_code, refused.json["code"]) == (429, "too_many_bot_games")
    assert refused.json["detail"].startswith("The service has 2 games with bots under way")
    settle(services)


def test_a_bot_game_that_ends_frees_its_owners_place(
    client: FlaskClient, services: Services
) -> None:
    services.config = replace(services.config, max_bot_games_per_owner=1)
    first = created(client, A, BOTS_ONLY)
    settle(services)
    assert client.get(f"/games/{first}").json["status"]["finished"]
    created(client, A, AGAINST_A_PERSON)
    assert post_game(client, A, AGAINST_A_PERSON).status_code == 429
    settle(services)


def test_fresh_tokens_from_one_address_cannot_take_more_analyses_than_its_owner_may(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    services.jobs.settings = replace(
        services.jobs.settings, analyses_per_owner=2, analyses_per_requester=2, analyses_total=16
    )
    asked = []
    for _ in range(3):  # a new game each time: every token fresh
        game = post_game(client, A, ["Ann", "Bob"]).json
        token = game["seats"][0]["token"]
        asked.append(
            client.post(
                f"/games/{game['id']}/analyses",
                json={"playouts": 5},
                headers=bearer(token),
                environ_base={"REMOTE_ADDR": A},
            )
        )
    assert [response.status_code for response in asked] == [202, 202, 429]
    assert asked[2].json["code"] == "too_many_analyses"
    assert "Your address has 2 analyses" in asked[2].json["detail"]
    other = post_game(client, B, ["Cy", "Di"]).json
    theirs = client.post(
        f"/games/{other['id']}/analyses",
        json={"playouts": 5},
        headers=bearer(other["seats"][0]["token"]),
        environ_base={"REMOTE_ADDR": B},
    )
    assert theirs.status_code == 202, theirs.json
    gate.opened.set()
    settle(services)


def test_a_game_of_bots_only_that_nobody_reads_pauses_and_a_read_resumes_it(
    client: FlaskClient,
    services: Services,
    turns: Turns,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nobody reads a's all-bot game for longer than MEEPLE_BOT_GAME_IDLE: its turn pauses it,
    and it counts no more (a, capped at one, starts another). A read while a is at its cap
    leaves it paused; once a has room, a read resumes it and it plays to its end."""
    services.config = replace(services.config, max_bot_games_per_owner=1)
    services.jobs.settings = replace(services.jobs.settings, bot_game_idle=60.0)
    now = [1000.0]
    monkeypatch.setattr(bot_games, "clock", lambda: now[0])
    store = services.jobs.bot_games
    turns.hold_all.set()
    forgotten = created(client, A, BOTS_ONLY)
    wait_for(lambda: turns.started == [forgotten], "its first turn never started")
    now[0] = 2000.0  # nobody read it meanwhile
    turns.hold_all.clear()
    turns.opened.set()
    settle(services)
    record = store.get(forgotten)
    assert record is not None and record["paused"]
    assert services.store.version(forgotten) == 1  # its bots never played
    turns.opened.clear()
    turns.hold_all.set()
    another = created(client, A, BOTS_ONLY)  # a's place is free: the paused game holds none
    wait_for(lambda: another in turns.started, "the other game's turn never started")
    assert client.get(f"/games/{forgotten}").status_code == 200
    record = store.get(forgotten)
    assert record is not None and record["paused"]  # a has no room: it stays paused
    turns.hold_all.clear()
    turns.opened.set()
    settle(services)
    assert client.get(f"/games/{another}").json["status"]["finished"]
    now[0] = 2100.0
    assert client.get(f"/games/{forgotten}").status_code == 200
    settle(services)
    assert store.get(forgotten) is None  # resumed, played to its end and forgotten
    assert client.get(f"/games/{forgotten}").json["status"]["finished"]


def test_an_open_stream_keeps_a_game_of_bots_only_playing_and_a_person_keeps_any(
    client: FlaskClient,
    services: Services,
    turns: Turns,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services.jobs.settings = replace(services.jobs.settings, bot_game_idle=60.0)
    now = [1000.0]
    monkeypatch.setattr(bot_games, "clock", lambda: now[0])
    turns.hold_all.set()  # its first turn waits while the rule is asked by hand
    watched = created(client, A, BOTS_ONLY)
    with_a_person = created(client, A, AGAINST_A_PERSON)
    game, theirs = services.folder.load(watched), services.folder.load(with_a_person)
    stream = client.get(f"/games/{watched}/stream", buffered=False)
    try:
        assert services.jobs.streams.slots.count("game", watched) == 1
        now[0] = 9000.0  # long after its last read (the stream's opening was one)
        assert not bot_games.pauses(services, game, game.version)
    finally:
        stream.close()
    assert services.jobs.streams.slots.count("game", watched) == 0
    # A game a person plays in never pauses, however long nobody reads it.
    assert not bot_games.pauses(services, theirs, theirs.version)
    assert bot_games.pauses(services, game, game.version)
    turns.hold_all.clear()
    turns.opened.set()
    settle(services)
    assert services.store.version(watched) == game.version  # paused before its first turn
