"""Fair shares of webhook delivery, on their own and with fake clocks: the round-robin of
owners and receivers, the circuit breaker, the in-flight leases (in memory and on a real
Redis), and where a webhook's deliveries are counted (service.application.webhook_lanes;
the jobs that use them: tests/unit/test_jobs.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from service.application.webhook_lanes import (
    Breaker,
    Leases,
    MemoryLeases,
    RedisLeases,
    fair_order,
    public_pause,
)
from service.application.webhooks import (
    new_delivery,
    new_webhook,
    owner_lane,
    receiver_of,
    webhook_lane,
)

#: A database of the session's test Redis that no other test uses; emptied for each test.
LEASES_DB = 5

BREAKER = Breaker(failures=3, seconds=300.0, probe_seconds=40.0)


# -- owners and receivers -------------------------------------------------------------------


def test_a_receiver_is_the_urls_scheme_host_and_port_whatever_its_path() -> None:
    assert receiver_of("https://Hooks.Example.org/a?b=1") == "https://hooks.example.org:443"
    assert receiver_of("http://hooks.example.org:8080/x") == "http://hooks.example.org:8080"
    assert receiver_of("http://[2001:db8::1]/") == "http://[2001:db8::1]:80"
    assert receiver_of("http://hooks.example.org/") != receiver_of("https://hooks.example.org/")


def test_every_webhook_a_client_registers_shares_its_lane_and_old_ones_keep_their_seats() -> None:
    lane = owner_lane("203.0.113.9")
    first = new_webhook("g1", "http://a.example/", "s" * 16, ["action"], {"seat": 0}, 1, lane)
    other = new_webhook("g2", "http://b.example/", "s" * 16, ["action"], {"seat": 1}, 1, lane)
    assert webhook_lane(first) == webhook_lane(other) == "address:203.0.113.9"
    assert owner_lane(None) == "admin"
    older = new_webhook("g3", "http://a.example/", "s" * 16, ["action"], {"seat": 1}, 1)
    assert webhook_lane(older) == "game:g3:seat:1"
    delivery = new_delivery(first, "action", 2, {})
    assert (delivery["lane"], delivery["receiver"]) == (lane, "http://a.example:80")


# -- the fair order --------------------------------------------------------------------------


def test_the_queues_take_turns_each_keeping_its_own_order() -> None:
    order = fair_order(
        {"hostile": ["h1", "h2", "h3", "h4"], "honest": ["o1"], "third": ["t1", "t2"]}
    )
    assert list(order) == ["h1", "o1", "t1", "h2", "t2", "h3", "h4"]


def test_nested_the_owners_take_turns_and_each_owners_turn_goes_to_its_receivers_in_turn() -> None:
    hostile = {"dead": ["d1", "d2", "d3"], "alive": ["a1"]}
    honest = {"theirs": ["o1", "o2"]}
    nested = fair_order({"hostile": fair_order(hostile), "honest": fair_order(honest)})
    assert list(nested) == ["d1", "o1", "a1", "o2", "d2", "d3"]


# -- the circuit breaker ---------------------------------------------------------------------


def fail(record: dict[str, Any] | None, times: int, at: float, outcome: str = "timeout") -> Any:
    for _ in range(times):
        record = BREAKER.after(record, outcome, at)
    return record


def test_a_receiver_is_paused_after_so_many_failures_in_a_row_and_not_before() -> None:
    record = fail(None, 2, at=100.0)
    assert BREAKER.verdict(record, 100.0) == ("go", None)
    assert public_pause(record, 100.0) is None
    record = fail(record, 1, at=101.0, outcome="connection_failed")
    assert BREAKER.verdict(record, 101.0) == ("wait", 401.0)
    assert public_pause(record, 101.0) == {
        "state": "paused",
        "reason": "connection_failed",
        "failures": 3,
        "until": 401,
    }


def test_any_answer_closes_the_breaker_and_other_outcomes_say_nothing_of_the_receiver() -> None:
    record = fail(None, 2, at=100.0)
    assert BREAKER.after(record, "http_status", 101.0) is None  # even a 500: it answers
    for neutral in ("forbidden", "webhook_removed"):
        assert BREAKER.after(record, neutral, 101.0)["failures"] == 2  # type: ignore[index]
    # Failures that an answer came between are not in a row.
    record = fail(BREAKER.after(fail(None, 2, 100.0), "http_status", 101.0), 2, at=102.0)
    assert BREAKER.verdict(record, 102.0) == ("go", None)


def test_after_the_pause_one_probe_at_a_time_tries_the_receiver() -> None:
    paused = fail(None, 3, at=100.0)
    assert BREAKER.verdict(paused, 399.0) == ("wait", 400.0)
    assert BREAKER.verdict(paused, 400.0) == ("probe", None)
    probing = BREAKER.probe(paused, 400.0)
    assert BREAKER.probe(probing, 401.0) is probing  # taken: no second probe
    assert BREAKER.verdict(probing, 401.0) == ("wait", 440.0)
    assert public_pause(probing, 401.0) == {
        "state": "probing",
        "reason": "timeout",
        "failures": 3,
        "until": 440,
    }
    # A probe whose attempt never ended (its worker died) lets the next one go after its time.
    assert BREAKER.verdict(probing, 440.0) == ("probe", None)


def test_a_probe_that_fails_pauses_the_receiver_again_and_one_that_is_answered_ends_it() -> None:
    probing = BREAKER.probe(fail(None, 3, at=100.0), 400.0)
    again = BREAKER.after(probing, "timeout", 410.0)
    assert BREAKER.verdict(again, 410.0) == ("wait", 710.0)
    assert again["failures"] == 4  # type: ignore[index]
    assert BREAKER.after(probing, "http_status", 410.0) is None
    # A probe that came to nothing (its host is forbidden today) lets the next probe go.
    assert BREAKER.verdict(BREAKER.after(probing, "forbidden", 410.0), 410.0) == ("probe", None)


# -- in-flight leases -------------------------------------------------------------------------


@pytest.fixture(params=["memory", "redis"])
def leases(request: pytest.FixtureRequest) -> Iterator[Leases]:
    if request.param == "memory":
        yield MemoryLeases()
        return
    url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
    client = redis.Redis.from_url(f"{url}/{LEASES_DB}", decode_responses=True)
    client.flushdb()
    yield RedisLeases(client)
    client.close()


OWNER, RECEIVER = ("owner:address:203.0.113.9", 2), ("receiver:http://a.example:80", 3)


def test_a_cap_admits_so_many_tokens_and_names_the_full_one(leases: Leases) -> None:
    assert leases.take("d1:1", [OWNER, RECEIVER], now=10.0, until=50.0) is None
    assert leases.take("d2:1", [OWNER, RECEIVER], now=10.0, until=50.0) is None
    assert leases.take("d3:1", [OWNER, RECEIVER], now=10.0, until=50.0) == OWNER[0]
    # All or none: the refused token holds nothing under the receiver's cap either.
    assert leases.held(RECEIVER[0], 10.0) == 2
    other_owner = ("owner:address:198.51.100.7", 2)
    assert leases.take("e1:1", [other_owner, RECEIVER], now=10.0, until=50.0) is None
    assert leases.take("e2:1", [other_owner, RECEIVER], now=10.0, until=50.0) == RECEIVER[0]


def test_a_token_taken_again_renews_its_place_and_counts_once(leases: Leases) -> None:
    assert leases.take("d1:1", [OWNER], now=10.0, until=50.0) is None
    assert leases.take("d2:1", [OWNER], now=10.0, until=50.0) is None
    assert leases.take("d1:1", [OWNER], now=40.0, until=90.0) is None  # full, but its own
    assert leases.held(OWNER[0], 60.0) == 1  # d2's place expired at 50, d1's runs to 90


def test_a_place_comes_back_when_released_or_when_its_lease_ends(leases: Leases) -> None:
    for token in ("d1:1", "d2:1"):
        assert leases.take(token, [OWNER], now=10.0, until=50.0) is None
    assert leases.take("d3:1", [OWNER], now=20.0, until=60.0) == OWNER[0]
    leases.release("d1:1", [OWNER[0]])
    leases.release("never-held", [OWNER[0]])  # no matter
    assert leases.take("d3:1", [OWNER], now=20.0, until=60.0) is None
    assert leases.take("d4:1", [OWNER], now=20.0, until=60.0) == OWNER[0]
    # d2 died holding its place: it is free once its lease ends.
    assert leases.take("d4:1", [OWNER], now=50.0, until=90.0) is None


def test_many_takers_at_once_never_exceed_the_cap(leases: Leases) -> None:
    won: list[str] = []
    barrier = threading.Barrier(12)

    def take(token: str) -> None:
        barrier.wait()
        if leases.take(token, [OWNER, RECEIVER], now=10.0, until=50.0) is None:
            won.append(token)

    threads = [threading.Thread(target=take, args=(f"d{n}:1",)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == OWNER[1]
    assert leases.held(OWNER[0], 10.0) == leases.held(RECEIVER[0], 10.0) == OWNER[1]


@pytest.mark.parametrize(
    "setting", ["webhook_per_owner", "webhook_per_receiver", "webhook_breaker_failures"]
)
def test_a_share_or_a_breaker_of_nothing_is_refused_at_start(setting: str) -> None:
    from service.workers.jobs import JobSettings

    with pytest.raises(ValueError, match=f"MEEPLE_{setting.upper()}"):
        JobSettings(**{setting: 0})
