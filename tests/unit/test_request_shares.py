"""The serving process's places (service.application.request_shares): a few requests run at
once, and a freed place goes to the waiting request whose owner used the process least of
late; an owner's own requests keep their order; a request that waits for news gives its place
back meanwhile."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from service.application import request_shares
from service.application.request_shares import RequestShares


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def in_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.005)


def request(shares: RequestShares, owner: str, admitted: list[str], done: threading.Event) -> None:
    shares.enter(owner)
    admitted.append(owner)
    done.wait(10)
    shares.leave()


def test_requests_run_up_to_the_slots_and_the_rest_wait() -> None:
    shares = RequestShares(2)
    admitted: list[str] = []
    done = threading.Event()
    threads = [in_thread(lambda: request(shares, "a", admitted, done)) for _ in range(3)]
    until(lambda: len(admitted) == 2 and shares.waiting() == 1)
    done.set()
    for thread in threads:
        thread.join(10)
    assert admitted == ["a", "a", "a"] and shares.waiting() == 0


def test_a_freed_place_goes_to_the_owner_that_used_least_not_to_who_came_first() -> None:
    clock = Clock()
    shares = RequestShares(1, clock=clock)
    # The heavy reader has held places for 3 s of late; the honest player for none.
    shares.enter("address:heavy")
    clock.now += 3.0
    shares.leave()
    shares.enter("address:heavy")  # runs now
    admitted: list[str] = []
    releases = {name: threading.Event() for name in ("heavy", "honest")}
    heavy = in_thread(lambda: request(shares, "address:heavy", admitted, releases["heavy"]))
    until(lambda: shares.waiting() == 1)
    honest = in_thread(lambda: request(shares, "address:honest", admitted, releases["honest"]))
    until(lambda: shares.waiting() == 2)
    shares.leave()
    until(lambda: len(admitted) == 1)
    assert admitted == ["address:honest"]  # came last, served first
    releases["honest"].set()
    until(lambda: len(admitted) == 2)
    releases["heavy"].set()
    heavy.join(10)
    honest.join(10)
    assert admitted == ["address:honest", "address:heavy"]


def test_one_owners_requests_keep_their_order() -> None:
    clock = Clock()
    shares = RequestShares(1, clock=clock)
    shares.enter("address:first")
    admitted: list[str] = []
    release = threading.Event()
    names = []
    threads = []
    for number in range(3):
        name = f"address:same#{number}"
        names.append(name)

        def run(number: int = number) -> None:
            shares.enter("address:same")
            admitted.append(f"address:same#{number}")
            release.wait(10)
            shares.leave()

        threads.append(in_thread(run))
        until(lambda number=number: shares.waiting() == number + 1)
    shares.leave()
    release.set()
    for thread in threads:
        thread.join(10)
    assert admitted == names


def test_use_is_halved_every_half_life() -> None:
    clock = Clock()
    shares = RequestShares(1, half_life=2.0, clock=clock)
    shares.enter("address:a")
    clock.now += 4.0
    shares.leave()
    assert shares.use("address:a") == pytest.approx(4.0)
    clock.now += 2.0
    assert shares.use("address:a") == pytest.approx(2.0)
    clock.now += 4.0
    assert shares.use("address:a") == pytest.approx(0.5)
    assert shares.use("address:never") == 0.0


def test_a_request_waiting_for_news_gives_its_place_back_meanwhile() -> None:
    shares = RequestShares(1)
    request_shares.install(shares)
    waiting = threading.Event()
    news = threading.Event()
    order: list[str] = []

    def waits_for_news() -> None:
        shares.enter("address:waiter")
        with request_shares.aside():
            waiting.set()
            news.wait(10)
        order.append("waiter goes on")
        shares.leave()

    waiter = in_thread(waits_for_news)
    waiting.wait(10)
    shares.enter("address:other")  # the place is free although the waiter has not left
    order.append("other ran")
    news.set()
    time.sleep(0.05)
    assert order == ["other ran"]  # the waiter waits for its place again
    shares.leave()
    waiter.join(10)
    assert order == ["other ran", "waiter goes on"]


def test_a_process_needs_a_place() -> None:
    with pytest.raises(ValueError):
        RequestShares(0)
