"""The in-process job runner and the system_step job, on a real SQLite store."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from events.config import open_store
from events.store import EventStore
from projections.fold import Folder, Game, decide_action, game_created_event
from projections.ruleset import get_ruleset
from service.jobs import InProcessJobs, Jobs, system_step


@dataclass
class FakeServices:
    """The parts of service.bootstrap.Services a job uses."""

    store: EventStore
    folder: Folder
    jobs: Jobs


@pytest.fixture
def services(tmp_path: Path) -> Iterator[FakeServices]:
    store = open_store(f"sqlite:///{tmp_path / 'events.db'}")
    built = FakeServices(store, Folder(store, snapshot_interval=5), jobs=None)  # type: ignore[arg-type]
    built.jobs = InProcessJobs(built)
    yield built
    built.jobs.close()
    store.close()


def create_game(services: Any, game_id: str, players: int = 2, **options: Any) -> Game:
    ruleset = get_ruleset("tally")
    names = [f"P{seat + 1}" for seat in range(players)]
    event = game_created_event(ruleset, names, options, seed=f"seed-{game_id}")
    services.store.append(game_id, [event], expected_version=0)
    return services.folder.load(game_id)


def act(services: Any, game_id: str, seat: int, action: dict[str, Any]) -> int:
    """What service.commands.append does: append, cache the new state, run after_append."""
    game = services.folder.load(game_id)
    event, state = decide_action(game, seat, action)
    result = services.store.append(game_id, [event], expected_version=game.version)
    game.state = state
    game.version = result.version
    game.effective.append(result.version)
    services.folder.remember(game)
    services.jobs.after_append(game_id, result.version)
    return int(result.version)


def play_to_the_end(services: Any, game_id: str, step_timeout: float = 10.0) -> Game:
    """Follow legal actions, letting the runner do every automatic step, until the game ends."""
    for _ in range(500):
        game = services.folder.load(game_id)
        status = game.ruleset.status(game.state)
        if status["finished"]:
            return game
        if status["awaiting_system"]:
            assert services.jobs.wait_idle(step_timeout), "the automatic step never ran"
            continue
        seat = status["to_act"][0]
        act(services, game_id, seat, game.ruleset.legal_actions(game.state, seat)[0])
    raise AssertionError("the game did not end in 500 moves")


def system_events(store: EventStore, game_id: str) -> list[dict[str, Any]]:
    return [envelope for envelope in store.read(game_id) if envelope["type"] == "system"]


def await_first_step(services: Any, game_id: str) -> int:
    """Make every seat bid, so the reveal is due; returns the version it is due after."""
    version = 0
    for seat in range(2):
        version = act(services, game_id, seat, {"type": "bid", "amount": seat})
    return version


def test_the_in_process_runner_does_every_automatic_step_of_a_game(services: Any) -> None:
    create_game(services, "g1", rounds=2)
    game = play_to_the_end(services, "g1")
    assert game.ruleset.result(game.state) is not None
    steps = [envelope["actor"]["system"] for envelope in system_events(services.store, "g1")]
    assert steps == ["reveal_bids", "score_round", "reveal_bids", "score_round"]


def test_running_the_step_job_twice_appends_the_step_once(services: Any) -> None:
    create_game(services, "g2")
    services.jobs.close()  # nothing runs in the background; the test runs the job by hand
    version = await_first_step(services, "g2")
    first = system_step(services, "g2", version)
    second = system_step(services, "g2", version)
    assert (first.appended, second.appended) == (True, False)
    assert second.reason == "stale"
    assert len(system_events(services.store, "g2")) == 1


def test_two_threads_running_the_same_step_at_once_append_it_once(services: Any) -> None:
    create_game(services, "g4")
    services.jobs.close()
    version = await_first_step(services, "g4")
    barrier = threading.Barrier(4)
    outcomes: list[Any] = []

    def run() -> None:
        # Separate folders: each thread folds the game itself, as separate workers would.
        mine = FakeServices(services.store, Folder(services.store), services.jobs)
        barrier.wait()
        outcomes.append(system_step(mine, "g4", version))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(outcome.appended for outcome in outcomes) == 1
    assert len(system_events(services.store, "g4")) == 1


def test_a_step_job_for_a_version_the_game_has_left_appends_nothing(services: Any) -> None:
    create_game(services, "g5")
    services.jobs.close()
    version = await_first_step(services, "g5")
    outcome = system_step(services, "g5", version - 1)
    assert (outcome.appended, outcome.reason) == (False, "stale")
    assert system_events(services.store, "g5") == []


def test_a_finished_job_id_can_be_enqueued_again(services: Any) -> None:
    create_game(services, "g6")
    version = await_first_step(services, "g6")
    assert services.jobs.wait_idle(10)
    services.jobs.enqueue("system_step", "g6", version, job_id=f"system_step:g6:{version}")
    assert services.jobs.wait_idle(10)
    assert len(system_events(services.store, "g6")) == 1
