"""The job state contract (due steps, webhooks, deliveries), run on SQLite and on Redis,
and the pure parts of notifications: URL syntax, signatures, retry backoff. Where a webhook
may be sent (resolving, vetting, pinning): tests/unit/test_webhook_egress.py."""

from __future__ import annotations

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
