"""The compute pool (service.workers.compute): functions run in child processes, answer,
report progress, fail without taking their child along, and are killed at their deadline or
when the pool closes."""

from __future__ import annotations

import os
import threading

import pytest

from service.workers.compute import (
    NICENESS,
    SERVING_CORES,
    CallFailed,
    ComputeClosed,
    ComputePool,
    ComputeTimedOut,
)

FUNCTIONS = "tests.unit.compute_functions"


@pytest.fixture
def pool() -> ComputePool:
    made = ComputePool("tests", 2)
    yield made
    made.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child not yet reaped is a zombie: it runs no more.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_a_call_runs_in_a_child_process_and_answers(pool: ComputePool) -> None:
    assert pool.run(f"{FUNCTIONS}:add", (2, 3), 30) == 5
    child = pool.run(f"{FUNCTIONS}:pid", (), 30)
    assert child != os.getpid()
    assert pool.processes() == [child]
    # The child is kept for the next call.
    assert pool.run(f"{FUNCTIONS}:pid", (), 30) == child


def test_a_child_gives_way_to_the_server_and_keeps_off_its_core(pool: ComputePool) -> None:
    mine = sorted(os.sched_getaffinity(0))
    seen = pool.run(f"{FUNCTIONS}:scheduling", (), 30)
    assert seen["nice"] >= os.nice(0) + NICENESS or seen["nice"] == 19
    assert seen["policy"] == os.SCHED_IDLE
    # With more cores than the server's reserve, the first is the server's alone.
    assert seen["cores"] == (mine[SERVING_CORES:] if len(mine) > SERVING_CORES else mine)


def test_what_a_child_prints_is_not_taken_for_its_answer(pool: ComputePool) -> None:
    assert pool.run(f"{FUNCTIONS}:noisy", (), 30) == "answered"


def test_progress_goes_to_the_parent_and_its_answer_stops_the_computation(
    pool: ComputePool,
) -> None:
    heard: list[int] = []

    def on_progress(done: int) -> bool:
        heard.append(done)
        return done >= 4

    assert pool.run(f"{FUNCTIONS}:counting", (100,), 30, on_progress) == 4
    assert heard == [1, 2, 3, 4]


def test_a_function_that_raises_fails_its_call_and_leaves_its_child_serving(
    pool: ComputePool,
) -> None:
    child = pool.run(f"{FUNCTIONS}:pid", (), 30)
    with pytest.raises(CallFailed, match="always fails"):
        pool.run(f"{FUNCTIONS}:fails", (), 30)
    assert pool.run(f"{FUNCTIONS}:pid", (), 30) == child


def test_a_computation_past_its_deadline_is_killed_and_the_next_call_gets_a_new_child(
    pool: ComputePool,
) -> None:
    child = pool.run(f"{FUNCTIONS}:pid", (), 30)
    with pytest.raises(ComputeTimedOut):
        pool.run(f"{FUNCTIONS}:spin", (), 0.5)
    assert not alive(child)
    assert pool.processes() == []
    fresh = pool.run(f"{FUNCTIONS}:pid", (), 30)
    assert fresh != child


def test_closing_the_pool_kills_a_busy_child_and_fails_its_call(pool: ComputePool) -> None:
    failures: list[BaseException] = []

    def call() -> None:
        try:
            pool.run(f"{FUNCTIONS}:forever", (), 300)
        except BaseException as failure:
            failures.append(failure)

    caller = threading.Thread(target=call)
    caller.start()
    while not pool.processes():
        caller.join(0.01)
    (busy,) = pool.processes()
    pool.close()
    caller.join(30)
    assert not caller.is_alive()
    assert len(failures) == 1 and isinstance(failures[0], ComputeClosed)
    assert not alive(busy)
    with pytest.raises(ComputeClosed):
        pool.run(f"{FUNCTIONS}:add", (1, 1), 30)


def test_at_most_size_children_run_and_a_call_waits_for_a_free_one() -> None:
    pool = ComputePool("tests", 1)
    try:
        first = pool.run(f"{FUNCTIONS}:pid", (), 30)
        answers: list[int] = []
        threads = [
            threading.Thread(target=lambda: answers.append(pool.run(f"{FUNCTIONS}:pid", (), 60)))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert answers == [first] * 4
        assert pool.started == 1
    finally:
        pool.close()


def test_a_pool_needs_a_process() -> None:
    with pytest.raises(ValueError):
        ComputePool("tests", 0)
