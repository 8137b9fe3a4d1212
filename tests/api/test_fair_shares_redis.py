"""Fair shares on RQ (docs/operations.md, "Fair shares"): the bots' queue is served in the fair
order kept in Redis, across every worker, whatever order the turns were queued in; one owner's
turns never run more at once than its share; and a turn queued by an append's own script (the
store and the queues on one Redis) takes its place in that order too. An RQ worker of this
process runs the jobs in burst mode; the order they ran in is recorded, never timed."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from service.app import create_app
from service.application import bots
from service.bootstrap import Services
from service.workers import jobs as jobs_module
from service.workers.jobs import JOB_FUNCTIONS, RQJobs, worker_class
from tests.api.test_round_trips import redis_services

#: The fixture: the store and the queues on two databases of one Redis, as compose deploys.
__all__ = ["redis_services"]

A, B = "203.0.113.7", "198.51.100.9"


def work_the_bots_queue(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """One RQ worker on the bots' queue, in this process, until the queue is empty."""
    jobs: RQJobs = services.jobs
    monkeypatch.setattr(jobs_module, "_process_services", services)
    worker = worker_class()([jobs.queues["bots"]], connection=jobs.connection)
    worker.clock = lambda: 1000.0
    monkeypatch.setattr(worker, "subscribe", lambda: None)
    worker.work(burst=True)


def queue_turns(services: Services, games: dict[str, str]) -> None:
    """A bot turn of each game (game id -> its owner), queued in this order."""
    jobs: RQJobs = services.jobs
    for game_id, owner in games.items():
        jobs.bot_games.admit(game_id, owner, None, 1000.0)
    for game_id in games:
        jobs.enqueue("bot_turn", game_id, 1, job_id=bots.bot_turn_key(game_id, 1), queue="bots")


def test_the_bots_queue_is_served_in_the_fair_order_not_the_order_turns_came_in(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[str] = []
    monkeypatch.setitem(JOB_FUNCTIONS, "bot_turn", lambda services, game, version: ran.append(game))
    owners = {f"a{n}": "address:a" for n in range(1, 5)} | {"b1": "address:b"}
    queue_turns(redis_services, owners)
    work_the_bots_queue(redis_services, monkeypatch)
    assert ran == ["a1", "b1", "a2", "a3", "a4"]
    assert len(redis_services.jobs.fair["bots"]) == 0


def test_on_rq_no_more_of_one_owners_turns_run_at_once_than_its_share(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a1 runs, another worker taking a turn (here: a1 itself asks) finds a's other
    games waiting for a's place, and b's game free to run."""
    ran: list[str] = []
    meanwhile: list[Any] = []

    def turn(services: Services, game: str, version: int) -> None:
        ran.append(game)
        if game == "a1":
            meanwhile.append(services.jobs.take_fair_turn("bots"))
            meanwhile.append(services.jobs.take_fair_turn("bots"))

    monkeypatch.setitem(JOB_FUNCTIONS, "bot_turn", turn)
    queue_turns(redis_services, {"a1": "address:a", "a2": "address:a", "b1": "address:b"})
    work_the_bots_queue(redis_services, monkeypatch)
    assert meanwhile == [None, "nothing_to_take"]  # b1 ran (it answers None), a2 waited
    assert ran == ["a1", "b1", "a2"]


def test_a_turn_queued_by_an_appends_own_script_takes_its_fair_place(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a's three games of bots and then b's, all queued before any worker runs: their first
    turns run a, b, a, a; each turn's next one is queued by its append's own script."""
    started: list[str] = []

    def turn(services: Services, game: str, version: int) -> str:
        started.append(game)
        return bots.bot_turn(services, game, version)

    monkeypatch.setitem(JOB_FUNCTIONS, "bot_turn", turn)
    client: FlaskClient = create_app(services=redis_services).test_client()
    bots_only = [{"bot": {"agent": "random"}}, {"bot": {"agent": "random"}}]

    def game_of(address: str) -> str:
        body = {"ruleset": "tally", "players": bots_only, "options": {"rounds": 1}}
        response = client.post("/games", json=body, environ_base={"REMOTE_ADDR": address})
        assert response.status_code == 201, response.json
        return str(response.json["id"])

    games_of_a = [game_of(A) for _ in range(3)]
    game_of_b = game_of(B)
    assert redis_services.jobs.clears_due_with_append  # the append's script queues the turns
    work_the_bots_queue(redis_services, monkeypatch)
    first_turns = list(dict.fromkeys(started))
    assert first_turns == [games_of_a[0], game_of_b, games_of_a[1], games_of_a[2]]
    # Each game's second bid was played too (then it waits for the automatic reveal).
    assert sorted(started) == sorted([*games_of_a, game_of_b] * 2)


def test_game_notices_are_served_in_their_webhook_owners_fair_order(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy owner's games' notices (four games of a) never hold back another owner's (b's
    one game, whose event came last): the notification workers take them turn by turn. A
    game's notice waits once however many of its events are still to tell."""
    from service.application.webhooks import new_webhook

    jobs: RQJobs = redis_services.jobs
    lanes = {f"a{n}": "address:a" for n in range(1, 5)} | {"b1": "address:b"}
    for game_id, lane in lanes.items():
        hook = new_webhook(
            game_id, "https://example.com/hook", "s" * 24, ["action"], {"seat": 0}, 0, lane
        )
        assert jobs.state.add_webhook(hook)
    told: list[tuple[str, int]] = []
    monkeypatch.setitem(
        JOB_FUNCTIONS, "notify", lambda services, game, version: told.append((game, version))
    )
    for game_id in lanes:
        for version in (1, 2, 3):  # three events of each game before any worker runs
            jobs.enqueue("notify", game_id, version, job_id=f"notify-{game_id}", queue="notify")
    assert len(jobs.fair["notify"]) == 5
    monkeypatch.setattr(jobs_module, "_process_services", redis_services)
    worker = worker_class()([jobs.queues["notify"]], connection=jobs.connection)
    monkeypatch.setattr(worker, "subscribe", lambda: None)
    worker.work(burst=True)
    assert [game for game, _ in told] == ["a1", "b1", "a2", "a3", "a4"]
    assert {version for _, version in told} == {jobs_module.LATEST}
    assert len(jobs.fair["notify"]) == 0


def test_a_webhook_attempt_waits_its_owners_turn_not_behind_another_owners_notices(
    redis_services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """b's delivery, handed to the workers after four of a's games' notices were queued, runs
    after one of them (its owner's turn), not after all four: a's busy games once made an
    honest owner's webhook wait 10-16 s behind their notices on the notifications FIFO."""
    from service.application.webhooks import new_delivery, new_webhook

    jobs: RQJobs = redis_services.jobs
    lanes = {f"a{n}": "address:a" for n in range(1, 5)} | {"b1": "address:b"}
    hooks = {}
    for game_id, lane in lanes.items():
        hooks[game_id] = new_webhook(
            game_id, "https://example.com/hook", "s" * 24, ["action"], {"seat": 0}, 0, lane
        )
        assert jobs.state.add_webhook(hooks[game_id])
    ran: list[str] = []
    monkeypatch.setitem(
        JOB_FUNCTIONS, "notify", lambda services, game, version: ran.append(f"notify {game}")
    )
    monkeypatch.setitem(
        JOB_FUNCTIONS,
        "deliver",
        lambda services, game, delivery_id, attempt: ran.append(f"deliver {game} {attempt}"),
    )
    for game_id in ("a1", "a2", "a3", "a4"):
        jobs.enqueue("notify", game_id, 1, job_id=f"notify-{game_id}", queue="notify")
    delivery = new_delivery(hooks["b1"], "action", 1, {"event": {}})
    jobs.state.save_delivery(delivery)
    jobs.enqueue_delivery("b1", delivery["id"], 1)
    jobs.enqueue_delivery("b1", delivery["id"], 1)  # handed twice (a sweep): waits once
    assert len(jobs.fair["notify"]) == 5
    monkeypatch.setattr(jobs_module, "_process_services", redis_services)
    worker = worker_class()([jobs.queues["notify"]], connection=jobs.connection)
    monkeypatch.setattr(worker, "subscribe", lambda: None)
    worker.work(burst=True)
    assert ran == ["notify a1", "deliver b1 1", "notify a2", "notify a3", "notify a4"]
    assert len(jobs.fair["notify"]) == 0
