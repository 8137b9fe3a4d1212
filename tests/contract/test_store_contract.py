"""The EventStore contract: every backend (tests/contract/conftest.py) passes the same tests."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

import pytest

from events.envelope import (
    ENVELOPE_FIELDS,
    GENESIS_HASH,
    Envelope,
    NewEvent,
    canonical_json,
    verify_chain,
)
from events.store import AppendResult, ConcurrencyConflict, EventStore
from tests.contract.conftest import Backend

WRITERS = 16
RACE_ROUNDS = 200


def step(number: int, seat: int = 0) -> NewEvent:
    return NewEvent(
        type="action", data={"action": {"type": "count", "n": number}}, actor={"seat": seat}
    )


def steps(first: int, count: int) -> list[NewEvent]:
    return [step(number) for number in range(first, first + count)]


def assert_feed_in_game_order(delivered: Iterable[Envelope], versions: dict[str, int]) -> None:
    """Every event of every game was delivered, and no game's events arrived out of order:
    a repeat (seq already seen) is allowed, a gap or a step back to an unseen seq is not."""
    seen: dict[str, int] = {}
    for envelope in delivered:
        game_id, seq = envelope["game_id"], envelope["seq"]
        last = seen.get(game_id, 0)
        if seq <= last:
            continue
        assert seq == last + 1, f"{game_id}: seq {seq} delivered before seq {last + 1}"
        seen[game_id] = seq
    assert seen == versions


def drain(store: EventStore, position: dict | None, limit: int) -> tuple[list[Envelope], dict]:
    delivered: list[Envelope] = []
    while True:
        page = store.read_feed(position, limit=limit)
        position = page.position
        if not page.events:
            return delivered, position
        delivered.extend(page.events)


# -- appending and reading -----------------------------------------------------------


def test_appended_events_read_back_in_order_as_complete_envelopes(store: EventStore) -> None:
    result = store.append("g1", steps(1, 3), expected_version=0)

    stored = store.read("g1")

    assert result == AppendResult(version=3, envelopes=stored, replayed=False)
    assert [envelope["data"]["action"]["n"] for envelope in stored] == [1, 2, 3]
    assert all(tuple(sorted(envelope)) == tuple(sorted(ENVELOPE_FIELDS)) for envelope in stored)
    assert {envelope["game_id"] for envelope in stored} == {"g1"}
    assert stored[0]["prev_hash"] == GENESIS_HASH


def test_seq_runs_gapless_from_one_across_appends(store: EventStore) -> None:
    version = 0
    for size in (1, 3, 2, 1):
        version = store.append("g1", steps(version + 1, size), expected_version=version).version

    assert [envelope["seq"] for envelope in store.read("g1")] == list(range(1, 8))
    assert store.version("g1") == 7


def test_read_returns_the_events_after_a_seq_up_to_a_limit(store: EventStore) -> None:
    store.append("g1", steps(1, 6), expected_version=0)

    assert [envelope["seq"] for envelope in store.read("g1", after=2, limit=3)] == [3, 4, 5]
    assert [envelope["seq"] for envelope in store.read("g1", after=4)] == [5, 6]
    assert store.read("g1", after=6) == []


def test_an_unknown_game_has_version_zero_and_no_events(store: EventStore) -> None:
    assert store.version("never-created") == 0
    assert store.read("never-created") == []


def test_recorded_at_is_utc_iso_8601_with_microseconds(store: EventStore) -> None:
    (envelope,) = store.append("g1", [step(1)], expected_version=0).envelopes

    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", envelope["recorded_at"])


def test_every_envelope_of_a_batch_carries_the_idempotency_key(store: EventStore) -> None:
    store.append("g1", steps(1, 2), expected_version=0, idempotency_key="cmd-1")

    assert [envelope["idempotency_key"] for envelope in store.read("g1")] == ["cmd-1", "cmd-1"]


# -- atomicity, conflicts and idempotency ----------------------------------------------


def test_a_batch_with_one_unstorable_event_writes_none_of_it(store: EventStore) -> None:
    store.append("g1", [step(1)], expected_version=0)
    unstorable = NewEvent(type="action", data={"score": float("nan")}, actor={"seat": 0})

    with pytest.raises(ValueError):
        store.append("g1", [step(2), step(3), unstorable], expected_version=1)

    assert store.version("g1") == 1
    assert [envelope["seq"] for envelope in store.read("g1")] == [1]
    assert store.append("g1", [step(2)], expected_version=1).version == 2


def test_an_append_at_a_stale_version_raises_a_conflict_and_writes_nothing(
    store: EventStore,
) -> None:
    store.append("g1", steps(1, 2), expected_version=0)
    before = store.read("g1")

    with pytest.raises(ConcurrencyConflict) as raised:
        store.append("g1", steps(3, 2), expected_version=1)

    assert (raised.value.game_id, raised.value.expected, raised.value.actual) == ("g1", 1, 2)
    assert store.read("g1") == before
    assert store.version("g1") == 2


def test_an_append_ahead_of_the_stream_raises_a_conflict(store: EventStore) -> None:
    with pytest.raises(ConcurrencyConflict):
        store.append("g1", [step(1)], expected_version=3)

    assert store.version("g1") == 0
    assert store.game_ids() == []


def test_a_repeated_idempotency_key_returns_the_first_result_and_adds_nothing(
    store: EventStore,
) -> None:
    first = store.append("g1", steps(1, 2), expected_version=0, idempotency_key="cmd-1")

    again = store.append("g1", steps(10, 3), expected_version=2, idempotency_key="cmd-1")

    assert again == AppendResult(version=2, envelopes=first.envelopes, replayed=True)
    assert store.version("g1") == 2
    assert store.read("g1") == first.envelopes


def test_a_retried_command_is_replayed_even_after_the_stream_moved_on(store: EventStore) -> None:
    first = store.append("g1", [step(1)], expected_version=0, idempotency_key="cmd-1")
    store.append("g1", [step(2)], expected_version=1, idempotency_key="cmd-2")

    again = store.append("g1", [step(1)], expected_version=0, idempotency_key="cmd-1")

    assert again.replayed
    assert again.envelopes == first.envelopes
    assert again.version == 1
    assert store.version("g1") == 2


def test_idempotency_keys_belong_to_one_game(store: EventStore) -> None:
    store.append("g1", [step(1)], expected_version=0, idempotency_key="cmd-1")

    other = store.append("g2", [step(1)], expected_version=0, idempotency_key="cmd-1")

    assert not other.replayed
    assert store.version("g2") == 1


def test_a_conflicting_append_does_not_claim_its_idempotency_key(store: EventStore) -> None:
    store.append("g1", [step(1)], expected_version=0)
    with pytest.raises(ConcurrencyConflict):
        store.append("g1", [step(2)], expected_version=0, idempotency_key="cmd-2")

    result = store.append("g1", [step(2)], expected_version=1, idempotency_key="cmd-2")

    assert not result.replayed
    assert store.version("g1") == 2


def test_sixteen_writers_at_one_version_have_exactly_one_winner_two_hundred_rounds_running(
    store: EventStore,
) -> None:
    barrier = threading.Barrier(WRITERS)
    outcomes: list[list[str]] = [[] for _ in range(RACE_ROUNDS)]
    failures: list[BaseException] = []

    def writer(seat: int) -> None:
        try:
            for round_number in range(RACE_ROUNDS):
                # Every writer waits here until all have finished the previous round, so
                # each round's writers all hold the same (current) expected version.
                barrier.wait(timeout=60)
                try:
                    store.append("race", [step(round_number, seat)], expected_version=round_number)
                except ConcurrencyConflict:
                    outcomes[round_number].append("conflict")
                else:
                    outcomes[round_number].append("won")
        except BaseException as error:  # surfaced below; a dead writer would break the barrier
            failures.append(error)
            barrier.abort()

    threads = [threading.Thread(target=writer, args=(seat,)) for seat in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert all(sorted(round_) == ["conflict"] * (WRITERS - 1) + ["won"] for round_ in outcomes)
    log = store.read("race")
    assert [envelope["seq"] for envelope in log] == list(range(1, RACE_ROUNDS + 1))
    assert verify_chain(log, "race") is None


# -- durability of the stored form ------------------------------------------------------


def test_a_new_connection_reads_back_byte_identical_envelopes(backend: Backend) -> None:
    writer = backend.open()
    awkward = NewEvent(
        type="action",
        data={"action": {"type": "say", "text": 'Grüße, 世界 \u2603 "quoted"\n', "ratio": 0.1}},
        actor={"seat": 1},
        secret={"visible_to": [1], "hand": [3, 1, 2], "nested": {"b": None, "a": [True]}},
    )
    written = writer.append("g1", [step(1), awkward], expected_version=0).envelopes
    writer.close()

    reader = backend.open()

    assert [canonical_json(e) for e in reader.read("g1")] == [canonical_json(e) for e in written]


def test_the_stored_hash_chain_verifies(store: EventStore) -> None:
    version = 0
    for size in (1, 4, 2):
        version = store.append("g1", steps(version + 1, size), expected_version=version).version

    assert verify_chain(store.read("g1"), "g1") is None


# -- snapshots ------------------------------------------------------------------------


def test_load_snapshot_returns_the_latest_taken_at_or_before_a_seq(store: EventStore) -> None:
    store.save_snapshot("g1", 10, {"state": {"round": 1}})
    store.save_snapshot("g1", 20, {"state": {"round": 2}})
    store.save_snapshot("g2", 15, {"state": {"other": True}})

    assert store.load_snapshot("g1", 9) is None
    assert store.load_snapshot("g1", 10) == (10, {"state": {"round": 1}})
    assert store.load_snapshot("g1", 19) == (10, {"state": {"round": 1}})
    assert store.load_snapshot("g1", 500) == (20, {"state": {"round": 2}})
    assert store.load_snapshot("unknown", 500) is None


def test_a_snapshot_saved_again_at_the_same_seq_replaces_the_first(store: EventStore) -> None:
    store.save_snapshot("g1", 10, {"state": "old"})
    store.save_snapshot("g1", 10, {"state": "new"})

    assert store.load_snapshot("g1", 10) == (10, {"state": "new"})


# -- the feed and the game list ---------------------------------------------------------


def append_interleaved(
    store: EventStore, versions: dict[str, int], games: int, rounds: int
) -> dict[str, int]:
    """Append batches of one or two events to many games in turn; ``versions`` is updated."""
    for number in range(games):
        versions.setdefault(f"game-{number:02d}", 0)
    for round_number in range(rounds):
        for number, game_id in enumerate(sorted(versions)):
            if (round_number + number) % 3 == 0:
                continue
            size = 1 + (round_number + number) % 2
            versions[game_id] = store.append(
                game_id, steps(versions[game_id] + 1, size), expected_version=versions[game_id]
            ).version
    return {game_id: version for game_id, version in versions.items() if version}


def test_the_feed_delivers_every_event_of_many_games_in_game_order(store: EventStore) -> None:
    versions = append_interleaved(store, {}, games=12, rounds=6)

    delivered, _ = drain(store, None, limit=7)

    assert_feed_in_game_order(delivered, versions)


def test_the_feed_resumes_from_a_returned_position_on_a_new_connection(
    backend: Backend,
) -> None:
    writer = backend.open()
    versions: dict[str, int] = {}
    append_interleaved(writer, versions, games=8, rounds=4)
    first_pages: list[Envelope] = []
    position = None
    for _ in range(3):
        page = writer.read_feed(position, limit=5)
        first_pages.extend(page.events)
        position = page.position
    final = append_interleaved(writer, versions, games=10, rounds=2)

    rest, _ = drain(backend.open(), position, limit=4)

    assert_feed_in_game_order(first_pages + rest, final)


def test_the_feed_picks_up_events_appended_after_it_was_drained(store: EventStore) -> None:
    store.append("g1", steps(1, 2), expected_version=0)
    delivered, position = drain(store, None, limit=10)

    store.append("g1", [step(3)], expected_version=2)
    store.append("g2", [step(1)], expected_version=0)
    more, _ = drain(store, position, limit=10)

    assert_feed_in_game_order(delivered + more, {"g1": 3, "g2": 1})
    assert {(envelope["game_id"], envelope["seq"]) for envelope in more} >= {("g1", 3), ("g2", 1)}


def test_a_feed_page_shorter_than_its_limit_ends_the_feed(store: EventStore) -> None:
    for game_id, count in (("g1", 3), ("g2", 2), ("g3", 1)):
        store.append(game_id, steps(1, count), expected_version=0)
    position = None
    pages = []
    while True:
        page = store.read_feed(position, limit=4)
        pages.append(len(page.events))
        position = page.position
        if len(page.events) < 4:
            break
    # Nothing was appended since: the short page was the feed's end (catch-ups stop there).
    assert sum(pages) == 6 and pages[-1] < 4
    assert store.read_feed(position, limit=4).events == []


def test_the_feed_of_an_empty_store_is_empty(store: EventStore) -> None:
    page = store.read_feed(None)

    assert page.events == []
    assert store.read_feed(page.position).events == []


def test_game_ids_lists_every_game_with_events(store: EventStore) -> None:
    assert store.game_ids() == []
    for game_id in ("b", "a", "c"):
        store.append(game_id, [step(1)], expected_version=0)

    assert sorted(store.game_ids()) == ["a", "b", "c"]


def test_a_store_answers_ping(store: EventStore) -> None:
    assert store.ping()
