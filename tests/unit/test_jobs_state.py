"""The job state contract (due steps, webhooks, deliveries), run on SQLite and on Redis,
and the pure parts of notifications: URL syntax, signatures, retry backoff. Where a webhook
may be sent (resolving, vetting, pinning): tests/unit/test_webhook_egress.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from service.application import webhooks as notifications
from service.application.job_state import (
    JobState,
    RedisJobState,
    SQLiteJobState,
    job_state_location,
)
from service.application.webhooks import (
    WebhookError,
    new_delivery,
    new_webhook,
    parse_url,
    signature_header,
    verify_signature,
)
from service.workers import delivery as delivery_module
from service.workers.delivery import DeliveryPolicy, attempt_delivery

#: A database of the session's test Redis that no other test uses; emptied for each test.
JOB_STATE_DB = 7


@pytest.fixture(params=["sqlite", "redis"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobState]:
    if request.param == "sqlite":
        made: JobState = SQLiteJobState(tmp_path / "meeple.jobs.db")
    else:
        url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
        client = redis.Redis.from_url(f"{url}/{JOB_STATE_DB}", decode_responses=True)
        client.flushdb()
        made = RedisJobState(client)
    yield made
    made.close()


def a_webhook(game_id: str = "g1", cursor: int = 1, seat: int = 0) -> dict[str, Any]:
    return new_webhook(
        game_id, "http://127.0.0.1:9/hook", "s" * 16, ["action"], {"seat": seat}, cursor
    )


def test_a_step_stays_due_from_the_first_time_it_was_marked_until_cleared(state: JobState) -> None:
    state.mark_due("g1", 5, since=100.0)
    state.mark_due("g1", 5, since=200.0)
    state.mark_due("g2", 3, since=150.0)
    assert state.due_since_before(160.0) == [("g1", 5), ("g2", 3)]
    assert state.due_since_before(120.0) == [("g1", 5)]
    state.clear_due("g1", 5)
    assert state.due_since_before(1000.0) == [("g2", 3)]


def test_webhooks_are_listed_per_game_with_their_cursor_and_can_be_removed(
    state: JobState,
) -> None:
    first, second, elsewhere = a_webhook(), a_webhook(seat=1), a_webhook("g2")
    for webhook in (first, second, elsewhere):
        state.add_webhook(webhook)
    assert [hook["id"] for hook in state.webhooks("g1")] == [first["id"], second["id"]]
    assert state.webhooks("g1")[0] == first
    assert state.has_webhooks("g2") and not state.has_webhooks("g3")
    assert state.remove_webhook("g1", first["id"]) is True
    assert state.remove_webhook("g1", first["id"]) is False
    assert [hook["id"] for hook in state.webhooks("g1")] == [second["id"]]


def test_a_webhook_is_added_only_while_it_fits_even_when_many_are_added_at_once(
    state: JobState,
) -> None:
    def at_most_three(existing: list[dict[str, Any]]) -> bool:
        return len(existing) < 3

    webhooks = [a_webhook(seat=seat % 2) for seat in range(12)]
    added: list[bool] = []
    threads = [
        threading.Thread(
            target=lambda hook=hook: added.append(state.add_webhook(hook, at_most_three))
        )
        for hook in webhooks
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(added) == [False] * 9 + [True] * 3
    assert len(state.webhooks("g1")) == 3
    assert state.add_webhook(a_webhook("g2"), at_most_three) is True  # another game's count


def test_a_claim_moves_the_cursor_with_its_deliveries_and_a_stale_claim_stores_nothing(
    state: JobState,
) -> None:
    webhook = a_webhook(cursor=1)
    state.add_webhook(webhook)
    made = [new_delivery(webhook, "action", seq, {}) for seq in (2, 3)]
    assert state.claim(webhook, 3, made) is True
    assert state.webhooks("g1")[0]["cursor"] == 3
    again = [new_delivery(webhook, "action", 2, {})]
    assert state.claim(webhook, 3, again) is False  # its cursor was 1; it is 3 now
    recent = state.recent_deliveries("g1", webhook["id"])
    assert [delivery["seq"] for delivery in recent] == [3, 2]
    assert state.delivery("g1", again[0]["id"]) is None


def test_of_many_claims_of_the_same_range_at_once_exactly_one_wins(state: JobState) -> None:
    webhook = a_webhook(cursor=1)
    state.add_webhook(webhook)
    barrier = threading.Barrier(6)
    wins: list[bool] = []

    def claim() -> None:
        barrier.wait()
        wins.append(state.claim(webhook, 2, [new_delivery(webhook, "action", 2, {})]))

    threads = [threading.Thread(target=claim) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 5 + [True]
    assert len(state.recent_deliveries("g1", webhook["id"])) == 1


def test_only_pending_deliveries_whose_time_has_come_are_due(state: JobState) -> None:
    webhook = a_webhook()
    state.add_webhook(webhook)
    soon, later, done = (new_delivery(webhook, "action", seq, {}) for seq in (2, 3, 4))
    soon["next_attempt_at"], later["next_attempt_at"] = 10.0, 50.0
    state.claim(webhook, 4, [soon, later, done])
    done.update(status="delivered", next_attempt_at=None)
    state.save_delivery(done)
    assert state.deliveries_due_before(20.0) == [("g1", soon["id"])]
    assert [found for _, found in state.deliveries_due_before(100.0)] == [soon["id"], later["id"]]
    assert state.delivery("g1", done["id"])["status"] == "delivered"  # type: ignore[index]


def test_a_due_delivery_is_taken_by_one_run_alone_until_its_lease_ends(state: JobState) -> None:
    webhook = a_webhook()
    state.add_webhook(webhook)
    delivery = new_delivery(webhook, "action", 2, {})
    delivery["next_attempt_at"] = 10.0
    state.claim(webhook, 2, [delivery])
    assert state.take_delivery("g1", delivery["id"], 0, now=5.0, until=50.0) is None  # not due
    assert state.take_delivery("g1", delivery["id"], 1, now=20.0, until=50.0) is None  # attempt 2?
    takers: list[Any] = []
    threads = [
        threading.Thread(
            target=lambda: takers.append(state.take_delivery("g1", delivery["id"], 0, 20.0, 50.0))
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    taken = [found for found in takers if found is not None]
    assert len(taken) == 1 and taken[0]["next_attempt_at"] == 50.0
    assert state.delivery("g1", delivery["id"])["next_attempt_at"] == 50.0  # type: ignore[index]
    assert state.deliveries_due_before(40.0) == []
    assert state.take_delivery("g1", delivery["id"], 0, now=60.0, until=99.0) is not None


def test_job_state_lives_beside_the_sqlite_store_or_in_the_jobs_redis() -> None:
    assert job_state_location("sqlite:///var/meeple.db", None) == "sqlite:///var/meeple.jobs.db"
    assert job_state_location("sqlite:////srv/m.db", None) == "sqlite:////srv/m.jobs.db"
    assert job_state_location("sqlite:///var/meeple.db", "redis://q:6379/0") == "redis://q:6379/0"
    assert job_state_location("redis://s:6379/0", None) == "redis://s:6379/0"
    with pytest.raises(ValueError, match="MEEPLE_REDIS_URL"):
        job_state_location("redis+cluster://s:7000", None)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/hooks",
        "http://127.0.0.1:8080/x?y=1",
        "http://[::1]:9000/",
    ],
)
def test_http_and_https_urls_with_a_host_are_webhook_urls(url: str) -> None:
    assert parse_url(url).url == url


def test_a_url_is_taken_apart_into_host_port_and_target() -> None:
    parsed = parse_url("https://Hooks.Example.ORG./in/meeple?k=1#part")
    assert (parsed.scheme, parsed.host, parsed.port) == ("https", "hooks.example.org", 443)
    assert parsed.target == "/in/meeple?k=1"
    assert parse_url("http://[::1]:9000").target == "/"
    assert parse_url("http://[::1]:9000").port == 9000


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org/",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http:///no-host",
        "https://user:secret@example.org/",
        "http://example.org:99999/",
        "http://example.org/" + "x" * 3000,
        "http://[::1/",
        "http://[::1",
        "http://[fe80::1%25eth0]/",
        "http://[not-v6]/",
        "http://example.org/a b",
        "http://example.org/\r\nX-Injected: 1",
        "http://example.org/\x00",
        "http://example.org\t/",
        "http://exämple.org/",
        "http://example.org\\@127.0.0.1/",
        "http://@example.org/",
        "http://127.0.0.1%2f@example.org/",
        "http://-bad-.example.org/",
        "http://ex%61mple.org/",
        "http://example.org:0x50/",
        "example.org/hooks",
        "",
    ],
)
def test_other_urls_are_refused(url: str) -> None:
    with pytest.raises(WebhookError) as refused:
        parse_url(url)
    assert refused.value.code == "invalid_webhook_url"


def test_a_signature_verifies_only_for_its_body_secret_and_a_recent_time() -> None:
    body = b'{"kind":"action"}'
    header = signature_header("secret-0123456789", body, 1_000_000)
    assert verify_signature(header, "secret-0123456789", body, now=1_000_100)
    assert not verify_signature(header, "secret-0123456789", body + b" ", now=1_000_100)
    assert not verify_signature(header, "another-secret-0123", body, now=1_000_100)
    assert not verify_signature(header, "secret-0123456789", body, now=1_001_000)
    assert not verify_signature("v1=abc", "secret-0123456789", body, now=1_000_000)


def test_each_failed_attempt_doubles_the_wait_until_the_last_one_gives_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(notifications.time, "time", lambda: 1000.0)
    monkeypatch.setattr(notifications, "resolve_host", lambda host, port: ["127.0.0.1"])
    answers = iter([503, ConnectionRefusedError("connection refused"), TimeoutError(), 302])

    def post(*_: Any) -> int:
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(delivery_module, "post", post)
    policy = DeliveryPolicy(
        allow=notifications.AllowList.parse("127.0.0.1"), max_attempts=4, retry_base=5
    )
    webhook = a_webhook()
    delivery = new_delivery(webhook, "action", 2, {})
    waits = []
    for _ in range(4):
        delivery = attempt_delivery(delivery, webhook, policy)
        waits.append(delivery["next_attempt_at"] and delivery["next_attempt_at"] - 1000.0)
    assert waits == [5.0, 10.0, 20.0, None]
    assert delivery["status"] == "failed"
    assert delivery["attempts"] == [
        {"at": "1970-01-01T00:16:40Z", "outcome": outcome, "status": status}
        for outcome, status in [
            ("http_status", 503),
            ("connection_failed", None),
            ("timeout", None),
            ("http_status", 302),
        ]
    ]


def test_a_delivery_for_a_removed_webhook_fails_at_once() -> None:
    webhook = a_webhook()
    delivery = attempt_delivery(
        new_delivery(webhook, "action", 2, {}), None, DeliveryPolicy(max_attempts=5)
    )
    assert delivery["status"] == "failed"
    assert delivery["attempts"][0]["outcome"] == "webhook_removed"


def test_due_steps_left_in_the_jobs_file_move_beside_the_events(tmp_path: Path) -> None:
    """A build that kept the due steps in meeple.jobs.db left some there: the embedded job
    state, which keeps them in the event store's file now, takes them over when it opens."""
    jobs_file, store_file = tmp_path / "meeple.jobs.db", tmp_path / "meeple.db"
    older = SQLiteJobState(jobs_file)
    older.mark_due("left-behind", 7, 1.0)
    older.close()
    state = SQLiteJobState(jobs_file, due_path=store_file)
    try:
        assert state.due_path == store_file
        assert state.due_since_before(2.0) == [("left-behind", 7)]
    finally:
        state.close()
    emptied = SQLiteJobState(jobs_file)
    assert emptied.due_since_before(2.0) == []
    emptied.close()


def test_a_reminder_is_taken_once_for_each_time_it_falls_due_and_a_newer_one_replaces_it(
    state: JobState,
) -> None:
    state.set_reminder("g1", "w1", 0, version=4, due_at=100.0)
    state.set_reminder("g2", "w2", 1, version=7, due_at=300.0)
    assert state.reminders_due_before(50.0) == []
    (due,) = state.reminders_due_before(200.0)
    assert (due["game_id"], due["webhook_id"], due["seat"], due["version"], due["sent"]) == (
        "g1",
        "w1",
        0,
        4,
        0,
    )
    assert state.take_reminder(due, next_due=400.0) is True
    assert state.take_reminder(due, next_due=400.0) is False  # another sweep took it first
    again = [r for r in state.reminders_due_before(500.0) if r["game_id"] == "g1"]
    assert [(r["sent"], r["due_at"]) for r in again] == [(1, 400.0)]
    # A your_turn after a later event starts over; clearing an older version leaves it.
    state.set_reminder("g1", "w1", 0, version=6, due_at=150.0)
    assert state.take_reminder(again[0], next_due=800.0) is False
    state.clear_reminder("g1", "w1", 0, version=4)
    assert [r["version"] for r in state.reminders_due_before(200.0)] == [6]
    state.clear_reminder("g1", "w1", 0)
    state.clear_reminder("g2", "w2", 1, version=7)
    assert state.reminders_due_before(10_000.0) == []


# -- lanes and receivers (service.application.webhook_lanes) ----------------------------------


def laned_webhook(game_id: str, url: str, lane: str) -> dict[str, Any]:
    return new_webhook(game_id, url, "s" * 16, ["action"], {"seat": 0}, 1, lane)


def pending(state: JobState, webhook: dict[str, Any], *due_at: float) -> list[dict[str, Any]]:
    """Deliveries of the webhook due at those times, stored as notify stores them."""
    made = []
    for number, moment in enumerate(due_at):
        delivery = new_delivery(webhook, "action", 2 + number, {})
        delivery["next_attempt_at"] = moment
        made.append(delivery)
    state.add_webhook(webhook)
    assert state.claim(webhook, webhook["cursor"] + len(made), made)
    return made


def ids(found: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, dict[str, list[str]]]:
    return {
        lane: {receiver: [d["id"] for d in due] for receiver, due in queues.items()}
        for lane, queues in found.items()
    }


def test_due_deliveries_are_found_by_lane_and_receiver_soonest_first(state: JobState) -> None:
    hostile, honest = "address:203.0.113.66", "address:198.51.100.7"
    dead = laned_webhook("g1", "http://dead.example/", hostile)
    alive = laned_webhook("g2", "http://alive.example/", hostile)
    theirs = laned_webhook("g3", "http://theirs.example/", honest)
    d1, d2, d3, later = pending(state, dead, 10.0, 11.0, 12.0, 90.0)
    (a1,) = pending(state, alive, 15.0)
    (o1,) = pending(state, theirs, 13.0)
    found = state.due_by_lane(20.0, per_receiver=2)
    assert ids(found) == {
        hostile: {
            "http://dead.example:80": [d1["id"], d2["id"]],
            "http://alive.example:80": [a1["id"]],
        },
        honest: {"http://theirs.example:80": [o1["id"]]},
    }
    assert list(found) == [hostile, honest]  # the lane that has waited longest first
    assert ids(state.due_by_lane(20.0, per_receiver=5, lanes=[honest])) == {
        honest: {"http://theirs.example:80": [o1["id"]]}
    }
    # A delivery taken (in flight, or put off) or done leaves its queue's due ones.
    assert state.take_delivery("g1", d1["id"], 0, now=20.0, until=60.0) is not None
    state.save_delivery({**d2, "status": "delivered", "next_attempt_at": None})
    state.save_delivery({**o1, "status": "failed", "next_attempt_at": None})
    assert ids(state.due_by_lane(20.0, per_receiver=5)) == {
        hostile: {"http://dead.example:80": [d3["id"]], "http://alive.example:80": [a1["id"]]}
    }
    assert ids(state.due_by_lane(100.0, per_receiver=5, lanes=[hostile]))[hostile][
        "http://dead.example:80"
    ] == [d3["id"], d1["id"], later["id"]]  # d1 due again at 60
    assert state.due_by_lane(100.0, per_receiver=5, lanes=["address:192.0.2.1"]) == {}


def test_a_lane_is_not_a_prefix_of_another(state: JobState) -> None:
    pending(state, laned_webhook("g1", "http://a.example/", "address:203.0.113.4"), 10.0)
    (other,) = pending(
        state, laned_webhook("g2", "http://a.example/", "address:203.0.113.40"), 10.0
    )
    found = state.due_by_lane(20.0, per_receiver=5, lanes=["address:203.0.113.40"])
    assert ids(found) == {"address:203.0.113.40": {"http://a.example:80": [other["id"]]}}


def test_a_receivers_record_changes_atomically_and_none_removes_it(state: JobState) -> None:
    assert state.receivers(["http://a.example:80"]) == {}

    def count(record: dict[str, Any] | None) -> dict[str, Any]:
        return {"failures": (record or {"failures": 0})["failures"] + 1}

    threads = [
        threading.Thread(target=state.update_receiver, args=("http://a.example:80", count))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state.receivers(["http://a.example:80", "http://b.example:80"]) == {
        "http://a.example:80": {"failures": 8}
    }
    assert state.update_receiver("http://a.example:80", lambda record: None) is None
    assert state.receivers(["http://a.example:80"]) == {}


def test_a_jobs_file_from_before_lanes_files_its_pending_deliveries_in_their_games_lanes(
    tmp_path: Path,
) -> None:
    import sqlite3

    path = tmp_path / "meeple.jobs.db"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE deliveries (ord INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL"
        " UNIQUE, webhook_id TEXT NOT NULL, game_id TEXT NOT NULL, status TEXT NOT NULL,"
        " next_attempt_at REAL, record TEXT NOT NULL)"
    )
    record = {"id": "d1", "webhook_id": "w1", "game_id": "g1", "status": "pending",
              "attempts": [], "next_attempt_at": 10.0}  # fmt: skip
    old.execute(
        "INSERT INTO deliveries (id, webhook_id, game_id, status, next_attempt_at, record)"
        " VALUES ('d1', 'w1', 'g1', 'pending', 10.0, ?)",
        (json.dumps(record),),
    )
    old.commit()
    old.close()
    state = SQLiteJobState(path)
    try:
        assert ids(state.due_by_lane(20.0, per_receiver=5)) == {"game:g1": {"": ["d1"]}}
    finally:
        state.close()


def test_pending_deliveries_from_before_lanes_are_filed_in_their_lanes_on_redis(
    request: pytest.FixtureRequest,
) -> None:
    url = request.getfixturevalue("redis_server_url").rsplit("/", 1)[0]
    client = redis.Redis.from_url(f"{url}/{JOB_STATE_DB}", decode_responses=True)
    client.flushdb()
    record = {"id": "d1", "webhook_id": "w1", "game_id": "g1", "status": "pending",
              "attempts": [], "next_attempt_at": 10.0}  # fmt: skip
    # What a build before lanes stored: the delivery, and the one index of all that are due.
    client.set("meeple:{g1}:delivery:d1", json.dumps(record))
    client.zadd(RedisJobState.DUE_DELIVERIES, {"g1:d1": 10.0})
    state = RedisJobState(client)
    try:
        assert ids(state.due_by_lane(20.0, per_receiver=5)) == {"game:g1": {"": ["d1"]}}
    finally:
        state.close()
