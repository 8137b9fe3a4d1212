"""The job functions and the in-process runner, on a real SQLite store and job state."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from events.config import open_store
from events.store import EventStore
from projections.fold import Folder, Game, decide_action, game_created_event
from projections.ruleset import get_ruleset
from service.application import commands
from service.application import webhooks as notifications
from service.application.job_state import SQLiteJobState
from service.application.webhook_lanes import public_pause
from service.application.webhooks import new_delivery, new_webhook, receiver_of
from service.workers import delivery as webhook_delivery
from service.workers.jobs import (
    JOB_FUNCTIONS,
    STEPS_PER_JOB,
    InProcessJobs,
    Jobs,
    JobSettings,
    StepOutcome,
    deliver,
    notify,
    start_deliveries,
    sweep,
    system_step,
    system_step_key,
)


@dataclass
class FakeServices:
    """The parts of service.bootstrap.Services a job uses."""

    store: EventStore
    folder: Folder
    jobs: Any = None


class RecordingJobs(Jobs):
    """Jobs that run nothing by themselves: the test runs them, or looks at what was asked."""

    def __init__(self, services: Any, state: SQLiteJobState, settings: JobSettings) -> None:
        super().__init__(services, state, settings)
        self.enqueued: list[tuple[str, tuple[Any, ...]]] = []

    def enqueue(self, name: str, *args: Any, job_id: str | None = None, queue: str = "") -> None:
        self.enqueued.append((name, args))


def build(tmp_path: Path, runner: str, **settings: Any) -> FakeServices:
    store = open_store(f"sqlite:///{tmp_path / 'events.db'}")
    services = FakeServices(store, Folder(store, snapshot_interval=5))
    state = SQLiteJobState(tmp_path / "events.jobs.db")
    chosen = JobSettings(**settings)
    if runner == "in-process":
        services.jobs = InProcessJobs(services, state, chosen)
    else:
        services.jobs = RecordingJobs(services, state, chosen)
    return services


@pytest.fixture
def services(tmp_path: Path) -> Iterator[FakeServices]:
    """In-process runner; the sweep waits long enough never to run during a test."""
    built = build(tmp_path, "in-process", sweep_interval=3600)
    yield built
    built.jobs.close()
    built.store.close()


@pytest.fixture
def manual(tmp_path: Path) -> Iterator[FakeServices]:
    """Jobs are only recorded; the test runs system_step and sweep by hand."""
    built = build(tmp_path, "manual", step_grace=0)
    yield built
    built.jobs.close()
    built.store.close()


def create_game(services: Any, game_id: str, players: int = 2, **options: Any) -> Game:
    ruleset = get_ruleset("tally")
    names = [f"P{seat + 1}" for seat in range(players)]
    event = game_created_event(ruleset, names, options, seed=f"seed-{game_id}")
    services.store.append(game_id, [event], expected_version=0)
    return services.folder.load(game_id)


def act(services: Any, game_id: str, seat: int, action: dict[str, Any]) -> int:
    """What service.application.commands.append does: append, cache the new state, run
    after_append."""
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


def test_an_append_that_makes_a_step_due_enqueues_it_under_its_deterministic_id(
    manual: Any,
) -> None:
    create_game(manual, "g2")
    version = await_first_step(manual, "g2")
    assert ("system_step", ("g2", version)) in manual.jobs.enqueued
    assert manual.jobs.state.due_since_before(float("inf")) == [("g2", version)]
    assert system_step_key("g2", version) == f"system_step-g2-{version}"


def test_running_the_step_job_twice_appends_the_step_once(manual: Any) -> None:
    create_game(manual, "g3")
    version = await_first_step(manual, "g3")
    first = system_step(manual, "g3", version)
    second = system_step(manual, "g3", version)
    assert (first.appended, second.appended) == (True, False)
    assert second.reason == "stale"
    assert len(system_events(manual.store, "g3")) == 1


def test_an_appended_step_is_no_longer_due_and_chains_the_next_one(manual: Any) -> None:
    create_game(manual, "g4", players=1, turns_per_round=1)
    version = act(manual, "g4", 0, {"type": "bid", "amount": 3})
    system_step(manual, "g4", version)  # reveal_bids; the single seat plays next
    assert manual.jobs.state.due_since_before(float("inf")) == []
    played = act(manual, "g4", 0, {"type": "draw"})
    assert ("system_step", ("g4", played)) in manual.jobs.enqueued


def play_to_each_step(services: Any, game_id: str, ruleset_id: str) -> Iterator[Game]:
    """Play a product game by its first legal actions; yield it whenever an automatic step is
    due (the caller runs the step), until it ends."""
    ruleset = get_ruleset(ruleset_id)
    event = game_created_event(ruleset, ["Ann", "Bob"], {}, seed=f"seed-{game_id}")
    services.store.append(game_id, [event], expected_version=0)
    for _ in range(3000):
        game = services.folder.load(game_id)
        status = ruleset.status(game.state)
        if status["finished"]:
            return
        if status["awaiting_system"]:
            yield game
            continue
        seat = status["to_act"][0]
        act(services, game_id, seat, ruleset.legal_actions(game.state, seat)[0])
    raise AssertionError("the game did not end in 3000 moves")


@pytest.mark.parametrize("ruleset_id", ["impression", "gutenberg", "restoration"])
def test_one_step_job_appends_the_automatic_steps_that_follow_one_another(
    manual: Any, ruleset_id: str
) -> None:
    runs = []
    for game in play_to_each_step(manual, "chain", ruleset_id):
        manual.jobs.enqueued.clear()
        outcome = system_step(manual, "chain", game.version)
        after = manual.folder.load("chain")
        taken = after.version - game.version
        runs.append(taken)
        assert (outcome.appended, outcome.version) == (True, after.version)
        queued = [args for name, args in manual.jobs.enqueued if name == "system_step"]
        if taken < STEPS_PER_JOB:
            # It went on while a step followed a step: none is left pending, none was queued.
            assert not after.ruleset.status(after.state)["awaiting_system"]
            assert queued == []
        else:
            assert queued == [("chain", after.version)]
        # Each step appended as its own job would have: its version, its idempotency key.
        steps = manual.store.read("chain", after=game.version)
        assert [event["idempotency_key"] for event in steps] == [
            system_step_key("chain", version) for version in range(game.version, after.version)
        ]
        assert manual.jobs.state.due_since_before(float("inf")) == (
            [] if taken < STEPS_PER_JOB else [("chain", after.version)]
        )
        if len(runs) == 30:
            break
    assert max(runs) >= 2, "no two automatic steps in a row: the test proves nothing"


def test_a_run_that_dies_between_two_steps_leaves_the_next_one_due_for_the_sweep(
    manual: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    append = commands.append
    calls: list[int] = []

    def dies_on_its_second_step(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the worker died")
        return append(*args, **kwargs)

    for game in play_to_each_step(manual, "dies", "impression"):
        calls.clear()
        monkeypatch.setattr(commands, "append", dies_on_its_second_step)
        try:
            system_step(manual, "dies", game.version)
        except RuntimeError:
            break
        finally:
            monkeypatch.setattr(commands, "append", append)
    else:
        raise AssertionError("no two automatic steps in a row: the test proves nothing")
    after = manual.folder.load("dies")
    assert after.version == game.version + 1  # the first step is stored
    assert after.ruleset.status(after.state)["awaiting_system"]
    assert manual.jobs.state.due_since_before(float("inf")) == [("dies", after.version)]
    assert sweep(manual)["steps"] >= 1
    swept = manual.folder.load("dies")
    assert swept.version > after.version
    assert manual.jobs.state.due_since_before(float("inf")) == []


def test_two_threads_running_the_same_step_at_once_append_it_once(manual: Any) -> None:
    create_game(manual, "g5")
    version = await_first_step(manual, "g5")
    barrier = threading.Barrier(4)
    outcomes: list[StepOutcome] = []

    def run() -> None:
        # Separate folders: each thread folds the game itself, as separate workers would.
        mine = FakeServices(manual.store, Folder(manual.store), manual.jobs)
        barrier.wait()
        outcomes.append(system_step(mine, "g5", version))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(outcome.appended for outcome in outcomes) == 1
    assert len(system_events(manual.store, "g5")) == 1


def test_a_step_job_for_a_version_the_game_has_left_appends_nothing(manual: Any) -> None:
    create_game(manual, "g6")
    version = await_first_step(manual, "g6")
    outcome = system_step(manual, "g6", version - 1)
    assert (outcome.appended, outcome.reason) == (False, "stale")
    assert system_events(manual.store, "g6") == []


def test_the_sweep_appends_a_step_whose_job_was_lost(manual: Any) -> None:
    create_game(manual, "g7")
    await_first_step(manual, "g7")  # its job is only recorded, never run: as if lost
    done = sweep(manual)
    assert done["steps"] >= 1
    assert [event["actor"]["system"] for event in system_events(manual.store, "g7")] == [
        "reveal_bids"
    ]
    assert sweep(manual)["steps"] == 0


def test_a_job_id_already_run_can_be_enqueued_again_and_appends_nothing_new(
    services: Any,
) -> None:
    create_game(services, "g8")
    version = await_first_step(services, "g8")
    assert services.jobs.wait_idle(10)
    services.jobs.enqueue("system_step", "g8", version, job_id=system_step_key("g8", version))
    assert services.jobs.wait_idle(10)
    assert len(system_events(services.store, "g8")) == 1


def test_a_stream_subscription_wakes_on_an_append_to_its_game(services: Any) -> None:
    create_game(services, "g9")
    subscription = services.jobs.subscribe("g9")
    assert subscription.wait(0.01) is False
    act(services, "g9", 0, {"type": "bid", "amount": 1})
    assert subscription.wait(5) is True
    subscription.close()


def test_nothing_is_remembered_for_a_game_once_its_last_stream_closed(services: Any) -> None:
    create_game(services, "g10")
    first, second = services.jobs.subscribe("g10"), services.jobs.subscribe("g10")
    first.close()
    act(services, "g10", 0, {"type": "bid", "amount": 1})
    assert second.wait(5) is True
    second.close()
    second.close()  # closing twice is harmless
    assert "g10" not in services.jobs.streams.feeds
    act(services, "g10", 1, {"type": "bid", "amount": 2})  # no stream: nothing to wake
    assert "g10" not in services.jobs.streams.feeds


def test_notify_runs_at_once_make_each_delivery_once_and_miss_none(manual: Any) -> None:
    create_game(manual, "g11")
    webhook = new_webhook("g11", "http://127.0.0.1:9/", "s" * 16, ["action"], {"admin": True}, 1)
    manual.jobs.state.add_webhook(webhook)
    versions = [act(manual, "g11", seat, {"type": "bid", "amount": seat}) for seat in (0, 1)]
    barrier = threading.Barrier(4)

    def run(version: int) -> None:
        mine = FakeServices(manual.store, Folder(manual.store), manual.jobs)
        barrier.wait()
        notify(mine, "g11", version)

    threads = [threading.Thread(target=run, args=(versions[n % 2],)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = manual.jobs.state.recent_deliveries("g11", webhook["id"])
    assert sorted(delivery["seq"] for delivery in made) == [2, 3]
    assert manual.jobs.state.webhooks("g11")[0]["cursor"] == versions[-1]


def test_an_automatic_step_runs_while_every_notification_thread_is_stuck(
    services: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    stuck: list[str] = []

    def hung_delivery(_: Any, game_id: str, delivery_id: str, attempt: int) -> None:
        stuck.append(delivery_id)
        release.wait(30)

    monkeypatch.setitem(JOB_FUNCTIONS, "deliver", hung_delivery)
    try:
        for number in range(3 * services.jobs.settings.notify_threads):
            services.jobs.enqueue_delivery("elsewhere", f"d{number}", 1)
        create_game(services, "g12")
        await_first_step(services, "g12")
        deadline = time.monotonic() + 5  # functional bound: run, not queued behind the hung
        while not system_events(services.store, "g12"):
            assert time.monotonic() < deadline, "the step waited behind the deliveries"
            time.sleep(0.01)
        assert len(stuck) == services.jobs.settings.notify_threads
    finally:
        release.set()


# -- webhook deliveries in lanes (service.application.webhook_lanes) ------------------------

HOSTILE, HONEST = "address:203.0.113.66", "address:198.51.100.7"


def pending_deliveries(services: Any, game_id: str, url: str, lane: str, count: int) -> list[str]:
    """A webhook of ``lane`` to ``url`` with ``count`` deliveries due now; their ids."""
    webhook = new_webhook(game_id, url, "s" * 16, ["action"], {"seat": 0}, 1, lane)
    made = [new_delivery(webhook, "action", 2 + number, {}) for number in range(count)]
    services.jobs.state.add_webhook(webhook)
    assert services.jobs.state.claim(webhook, 1 + count, made)
    return [delivery["id"] for delivery in made]


def started(services: Any) -> list[str]:
    """The deliveries handed to the queue so far, in order (and forgets them)."""
    found = [args[1] for name, args in services.jobs.enqueued if name == "deliver"]
    services.jobs.enqueued.clear()
    return found


def run_started(services: Any) -> list[str]:
    """Run the deliver jobs queued so far, one after another, as one worker would; their
    statuses (each may queue more: they are run too, in turn)."""
    statuses = []
    while jobs := [args for name, args in services.jobs.enqueued if name == "deliver"]:
        services.jobs.enqueued.clear()
        statuses += [deliver(services, *args) for args in jobs]
    return statuses


@pytest.fixture
def lanes(tmp_path: Path) -> Iterator[FakeServices]:
    """Deliveries only recorded when started; four in flight per owner, two per receiver."""
    built = build(
        tmp_path,
        "manual",
        webhook_per_owner=4,
        webhook_per_receiver=2,
        webhook_breaker_failures=2,
        webhook_breaker_seconds=300,
        webhook_retry_base=600,
        webhook_allow_hosts="127.0.0.1",
    )
    yield built
    built.jobs.close()
    built.store.close()


def test_owners_take_turns_and_no_owner_has_more_than_its_share_in_flight(lanes: Any) -> None:
    games = {}
    for n in range(5):
        for delivery_id in pending_deliveries(
            lanes, f"h{n}", f"http://dead{n}.example/", HOSTILE, 2
        ):
            games[delivery_id] = f"h{n}"
    (honest,) = pending_deliveries(lanes, "o1", "http://alive.example/", HONEST, 1)
    assert start_deliveries(lanes) == 5
    first = started(lanes)
    # The hostile owner's four places, and the honest owner's delivery second, not eleventh.
    assert first[1] == honest
    assert set(first) - {honest} <= set(games)
    # The hostile owner's places are all taken: a second look starts nothing new (the same
    # jobs, which a runner queues once).
    start_deliveries(lanes)
    assert set(started(lanes)) == set(first)
    # One ends (its place given back): the owner's next delivery takes it, and only that one.
    done = lanes.jobs.state.delivery(games[first[0]], first[0])
    lanes.jobs.state.save_delivery({**done, "status": "delivered", "next_attempt_at": None})
    keys = [key for key, _ in lanes.jobs.settings.in_flight_caps(HOSTILE, done["receiver"])]
    lanes.jobs.leases.release(f"{first[0]}:1", keys)
    start_deliveries(lanes)
    assert len(set(started(lanes)) - set(first)) == 1


def test_a_receivers_backlog_never_stands_before_its_owners_other_receivers(lanes: Any) -> None:
    pending_deliveries(lanes, "g1", "http://dead.example/", HOSTILE, 6)
    (alive,) = pending_deliveries(lanes, "g2", "http://alive.example/", HOSTILE, 1)
    start_deliveries(lanes)
    first = started(lanes)
    # Two to the dead receiver (its own cap), and the owner's other receiver in its turn.
    assert len(first) == 3 and alive in first


def closed_port() -> int:
    with socket.socket() as probe:  # nobody listens here once it is closed
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_receiver_that_fails_so_many_times_in_a_row_is_paused_and_its_deliveries_put_off(
    lanes: Any,
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/hook"
    made = pending_deliveries(lanes, "g1", url, HOSTILE, 4)
    start_deliveries(lanes)
    statuses = run_started(lanes)
    assert statuses == ["pending"] * 4
    deliveries = [lanes.jobs.state.delivery("g1", delivery_id) for delivery_id in made]
    attempted = [d for d in deliveries if d["attempts"]]
    put_off = [d for d in deliveries if not d["attempts"]]
    # Two attempts failed to connect (MEEPLE_WEBHOOK_BREAKER_FAILURES); the rest waited.
    assert [a["outcome"] for d in attempted for a in d["attempts"]] == ["connection_failed"] * 2
    receiver = receiver_of(url)
    record = lanes.jobs.state.receivers([receiver])[receiver]
    pause = public_pause(record, time.time())
    assert pause is not None
    assert (pause["state"], pause["reason"], pause["failures"]) == (
        "paused",
        "connection_failed",
        2,
    )
    assert len(put_off) == 2
    assert all(d["next_attempt_at"] == record["paused_until"] for d in put_off)
    # Nothing is left holding a place in flight.
    for key, _ in lanes.jobs.settings.in_flight_caps(HOSTILE, receiver):
        assert lanes.jobs.leases.held(key, time.time()) == 0
    assert start_deliveries(lanes) == 0


def test_once_the_pause_is_over_one_delivery_probes_the_receiver(lanes: Any) -> None:
    url = "http://probed.example/"
    pending_deliveries(lanes, "g1", url, HOSTILE, 3)
    over = {
        "failures": 2,
        "reason": "timeout",
        "paused_until": time.time() - 1,
        "probe_until": None,
    }
    lanes.jobs.state.update_receiver(receiver_of(url), lambda record: over)
    assert start_deliveries(lanes) == 1
    assert len(started(lanes)) == 1


def test_a_probe_that_is_answered_ends_the_receivers_pause(
    lanes: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_delivery, "post", lambda *_: 204)
    monkeypatch.setattr(notifications, "resolve_host", lambda host, port: ["127.0.0.1"])
    url = "http://probed.example/"
    pending_deliveries(lanes, "g1", url, HOSTILE, 1)
    over = {
        "failures": 9,
        "reason": "timeout",
        "paused_until": time.time() - 1,
        "probe_until": None,
    }
    lanes.jobs.state.update_receiver(receiver_of(url), lambda record: over)
    start_deliveries(lanes)
    assert run_started(lanes) == ["delivered"]
    assert lanes.jobs.state.receivers([receiver_of(url)]) == {}
