"""One transaction per action on the embedded default (docs/operations.md, "Speed"): the
append and the automatic step (or bot turn) it makes due are committed together in the event
store's file, as the Redis store writes them in one script; the step's own append clears the
mark it fulfils in its transaction too.

Transactions are counted where they begin (``SQLitePool.transaction``), with the statements
each ran, per thread: the request's, and the step runner's.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from events.sqlite_pool import SQLitePool
from service.app import create_app
from service.bootstrap import Services
from service.workers.jobs import system_step_key
from tests.api.conftest import bearer, new_game, settle


@dataclass
class Transaction:
    thread: str
    path: Path
    statements: list[str] = field(default_factory=list)


@contextmanager
def transactions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Transaction]]:
    """Every SQLite write transaction begun inside the block, with its statements."""
    seen: list[Transaction] = []
    original = SQLitePool.transaction

    @contextmanager
    def counting(self: SQLitePool) -> Iterator[sqlite3.Connection]:
        made = Transaction(threading.current_thread().name, self.path)
        seen.append(made)
        with original(self) as connection:
            connection.set_trace_callback(made.statements.append)
            try:
                yield connection
            finally:
                connection.set_trace_callback(None)

    with monkeypatch.context() as patch:
        patch.setattr(SQLitePool, "transaction", counting)
        yield seen


def play(client: FlaskClient, game: dict[str, object], seat: int, amount: int) -> None:
    seats = game["seats"]
    assert isinstance(seats, list)
    response = client.post(
        f"/games/{game['id']}/actions",
        json={"type": "bid", "amount": amount},
        headers=bearer(seats[seat]["token"]),
    )
    assert response.status_code == 201, response.json


def wrote(transaction: Transaction, table: str) -> bool:
    return any(f"INTO {table}" in statement for statement in transaction.statements)


def test_an_action_and_the_step_it_makes_due_are_one_transaction(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = create_app(services=services).test_client()
    game = new_game(client)
    store_file = Path(services.config.store_url.removeprefix("sqlite:///")).resolve()
    play(client, game, 0, 3)
    settle(services)
    with transactions(monkeypatch) as seen:
        play(client, game, 1, 5)  # both have bid: the automatic step is due after version 3
        settle(services)
    request = [t for t in seen if t.thread == threading.current_thread().name]
    assert len(request) == 1, [t.statements for t in request]
    assert request[0].path.resolve() == store_file
    assert wrote(request[0], "events")
    assert wrote(request[0], "due_steps")
    steps = [t for t in seen if t.thread.startswith("meeple-step")]
    assert len(steps) == 1, [t.statements for t in steps]
    assert steps[0].path.resolve() == store_file
    assert wrote(steps[0], "events")
    assert any("DELETE FROM due_steps" in statement for statement in steps[0].statements)
    assert services.jobs.state.due_since_before(float("inf")) == []
    assert client.get(f"/games/{game['id']}").json["version"] == 4


def test_the_due_mark_is_committed_by_the_append_itself(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the step's job lost (never run), the mark is there all the same: the sweep runs it."""
    client = create_app(services=services).test_client()
    game = new_game(client)
    play(client, game, 0, 3)
    settle(services)
    lost: list[str | None] = []
    original = services.jobs.enqueue

    def losing(name: str, *args: object, job_id: str | None = None, queue: str = "steps") -> None:
        if name == "system_step":
            lost.append(job_id)
            return
        original(name, *args, job_id=job_id, queue=queue)

    monkeypatch.setattr(services.jobs, "enqueue", losing)
    with transactions(monkeypatch) as seen:
        play(client, game, 1, 5)
    assert lost == [system_step_key(game["id"], 3)]
    assert len([t for t in seen if t.thread == threading.current_thread().name]) == 1
    assert services.jobs.state.due_since_before(float("inf")) == [(game["id"], 3)]
