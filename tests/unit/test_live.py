"""What the live streams of one process share (service.live.hub): one read per append for every
stream of a game (fan-out), and the caps on open streams and the shares of a game's."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.http.limits import client_address
from service.live.hub import SPECTATORS, FeedView, Refusal, Share, Slot, StreamSlots, fair_share
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


#: A share the caps below never fill: what is counted here is the address and the game.
ROOMY = Share(SPECTATORS, 100)


def test_the_caps_count_per_address_and_per_game_and_a_release_frees_a_slot() -> None:
    slots = StreamSlots()
    first = slots.acquire("10.0.0.1", "g", ROOMY, per_address=2, per_game=3, lifetime=300)
    second = slots.acquire("10.0.0.1", "h", ROOMY, per_address=2, per_game=3, lifetime=300)
    assert isinstance(first, Slot) and isinstance(second, Slot)
    refused = slots.acquire("10.0.0.1", "i", ROOMY, per_address=2, per_game=3, lifetime=300)
    assert isinstance(refused, Refusal) and refused.scope == "address"
    assert 1 <= refused.retry_after <= 300
    for address in ("10.0.0.2", "10.0.0.3"):
        assert isinstance(slots.acquire(address, "g", ROOMY, 2, 3, 300), Slot)
    refused = slots.acquire("10.0.0.4", "g", ROOMY, per_address=2, per_game=3, lifetime=300)
    assert isinstance(refused, Refusal) and refused.scope == "game"
    first.release()
    first.release()  # twice is harmless
    assert slots.count("address", "10.0.0.1") == 1
    assert isinstance(slots.acquire("10.0.0.4", "g", ROOMY, 2, 3, 300), Slot)


def test_each_seat_and_the_admin_keep_their_share_and_spectators_share_the_rest() -> None:
    shares = {"per_game": 20, "per_seat": 3}
    assert fair_share(None, admin=False, holder=False, seats=2, **shares) == Share(SPECTATORS, 11)
    assert fair_share(1, admin=False, holder=False, seats=2, **shares) == Share("seat:1", 3)
    assert fair_share(None, admin=True, holder=False, seats=2, **shares) == Share("admin", 3)
    # A branch's holder plays every seat of it.
    assert fair_share(None, admin=False, holder=True, seats=4, **shares) == Share("holder", 12)
    # A cap smaller than what is kept leaves spectators nothing, never less.
    assert fair_share(None, admin=False, holder=False, seats=6, **shares).cap == 0


def test_a_full_spectator_share_refuses_spectators_but_not_a_seat() -> None:
    slots = StreamSlots()
    spectators = fair_share(None, admin=False, holder=False, seats=2, per_game=5, per_seat=1)
    seat = fair_share(0, admin=False, holder=False, seats=2, per_game=5, per_seat=1)
    held = [slots.acquire(f"10.0.0.{n}", "g", spectators, 10, 5, 300) for n in range(2)]
    assert all(isinstance(slot, Slot) for slot in held)
    refused = slots.acquire("10.0.0.9", "g", spectators, 10, 5, 300)
    assert isinstance(refused, Refusal) and (refused.scope, refused.cap) == ("share", 2)
    assert refused.owner == SPECTATORS
    mine = slots.acquire("10.0.0.9", "g", seat, 10, 5, 300)
    assert isinstance(mine, Slot)
    assert slots.count("share", "g", "seat:0") == 1 and slots.count("game", "g") == 3
    # Its share is one stream: a second is refused, though the game has room.
    refused = slots.acquire("10.0.0.9", "g", seat, 10, 5, 300)
    assert isinstance(refused, Refusal) and (refused.scope, refused.owner) == ("share", "seat:0")
    mine.release()
    assert slots.count("share", "g", "seat:0") == 0 and slots.count("game", "g") == 2
    assert isinstance(slots.acquire("10.0.0.9", "g", seat, 10, 5, 300), Slot)


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
