"""What the live streams of one process share (service.live.hub): one read per append for every
stream of a game (fan-out), and the caps on open streams."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.http.limits import client_address
from service.live.hub import FeedView, Refusal, Slot, StreamSlots
from tests.unit.test_jobs import FakeServices, act, build, create_game

#: What the test waits for at most before calling a wake-up lost.
PATIENCE = 5.0


@pytest.fixture
def services(tmp_path: Path) -> Iterator[FakeServices]:
    built = build(tmp_path, "manual")
    yield built
    built.jobs.close()
    built.store.close()


class Counting:
    """Wraps a callable and counts its calls (thread-safe)."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self.calls += 1
        return self.function(*args, **kwargs)


def test_one_read_of_the_store_per_append_serves_every_stream_of_the_game(
    services: FakeServices,
) -> None:
    create_game(services, "g1")
    watchers = [services.jobs.subscribe("g1") for _ in range(100)]
    assert len(services.jobs.streams.feeds) == 1  # one feed for the game's 100 streams
    views: list[FeedView] = [watcher.view(services, 60) for watcher in watchers]
    assert {view.version for view in views} == {1}
    loads = services.folder.load = Counting(services.folder.load)  # type: ignore[method-assign]
    reads = services.store.read = Counting(services.store.read)  # type: ignore[method-assign]
    version = act(services, "g1", 0, {"type": "bid", "amount": 2})
    loads.calls = reads.calls = 0  # what the action itself read
    woken = [watcher.wait(PATIENCE) for watcher in watchers]
    views = [watcher.view(services, 60) for watcher in watchers]
    assert all(woken)
    assert [[e["seq"] for e in view.after(1) or []] for view in views] == [[version]] * 100
    # One fold of the game and two reads (the fold's catch-up, the feed's), not 100 of each.
    assert (loads.calls, reads.calls) == (1, 2)
    for watcher in watchers:
        watcher.close()
    assert services.jobs.streams.feeds == {}


def test_an_append_missed_by_the_push_is_found_by_the_periodic_check(
    services: FakeServices,
) -> None:
    create_game(services, "g2")
    watcher = services.jobs.subscribe("g2")
    assert watcher.view(services, 60).version == 1
    # Another process wrote to the store and its wake-up was lost.
    services.jobs.streams.feeds["g2"].mark_stale = lambda version=None: None
    act(services, "g2", 0, {"type": "bid", "amount": 1})
    assert watcher.view(services, 60).version == 1  # not checked yet
    assert watcher.view(services, 0).version == 2  # the check is due: the store moved
    watcher.close()


def test_a_feed_keeps_the_latest_events_and_says_when_a_cursor_is_older() -> None:
    recent = tuple({"seq": seq} for seq in range(5, 9))
    view = FeedView(version=8, finished=False, sealed=0, recent=recent)
    assert view.after(8) == []
    assert [e["seq"] for e in view.after(6) or []] == [7, 8]
    assert [e["seq"] for e in view.after(4) or []] == [5, 6, 7, 8]
    assert view.after(3) is None  # older than the feed keeps: read from the store


def test_the_caps_count_per_address_and_per_game_and_a_release_frees_a_slot() -> None:
    slots = StreamSlots()
    first = slots.acquire("10.0.0.1", "g", per_address=2, per_game=3, lifetime=300)
    second = slots.acquire("10.0.0.1", "h", per_address=2, per_game=3, lifetime=300)
    assert isinstance(first, Slot) and isinstance(second, Slot)
    refused = slots.acquire("10.0.0.1", "i", per_address=2, per_game=3, lifetime=300)
    assert isinstance(refused, Refusal) and refused.scope == "address"
    assert 1 <= refused.retry_after <= 300
    for address in ("10.0.0.2", "10.0.0.3"):
        assert isinstance(slots.acquire(address, "g", 2, 3, 300), Slot)
    refused = slots.acquire("10.0.0.4", "g", per_address=2, per_game=3, lifetime=300)
    assert isinstance(refused, Refusal) and refused.scope == "game"
    first.release()
    first.release()  # twice is harmless
    assert slots.count("address", "10.0.0.1") == 1
    assert isinstance(slots.acquire("10.0.0.4", "g", 2, 3, 300), Slot)


def test_an_ipv6_client_is_counted_by_its_64_network() -> None:
    assert client_address("2001:db8:1:2:aaaa::1") == client_address("2001:db8:1:2:bbbb::2")
    assert client_address("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert client_address("2001:db8:1:3::1") != client_address("2001:db8:1:2::1")
    assert client_address("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_address("192.0.2.7") == "192.0.2.7"
    assert client_address(None) == "unknown"


def test_a_feed_keeps_where_the_game_stood_after_each_event_of_a_batch(
    services: FakeServices,
) -> None:
    """Both bids and the reveal reach the feed in one look: each event keeps the status
    after it, not the latest."""
    from tests.unit.test_jobs import system_step

    create_game(services, "g3")
    watcher = services.jobs.subscribe("g3")
    assert watcher.view(services, 60).current is not None
    act(services, "g3", 0, {"type": "bid", "amount": 2})
    version = act(services, "g3", 1, {"type": "bid", "amount": 3})
    system_step(services, "g3", version)
    view = watcher.view(services, 60)
    assert [e["seq"] for e in view.after(1) or []] == [2, 3, 4]
    statuses = {seq: view.standings[seq].status for seq in (2, 3, 4)}
    assert statuses[2]["to_act"] == [1]
    assert statuses[3]["awaiting_system"] == "reveal_bids"
    assert statuses[4]["to_act"] == [0]
    assert view.standings[4].must_act(0) and not view.standings[3].must_act(0)
    assert view.current is view.standings[4]
    watcher.close()
