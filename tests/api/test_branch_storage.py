"""How a branch is stored (docs/history.md): by reference to its source's events, on SQLite
and on Redis, so what a branch adds to the store does not grow with its source's length, and
its log reads, folds, audits and exports exactly as the copy it stands for (and a branch
stored as a copy, as earlier builds made them, still does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient

from events.envelope import Envelope, NewEvent, canonical_json, seal
from events.redis_store import RedisEventStore
from events.sqlite_store import SQLiteEventStore
from events.store import EventStore
from projections.audit import audit, parse_jsonl
from projections.history import branch_events, redo_event, undo_event
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config
from tests.api.conftest import ADMIN_KEY, bearer, settle
from tests.api.test_history import finished_game

ADMIN = bearer(ADMIN_KEY)


@pytest.fixture(params=["sqlite", "redis"])
def services(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/meeple.db"
    else:
        url = request.getfixturevalue("redis_server_url")
        # Only ever a server this test run started (tests/redis_servers.py).
        with redis.Redis.from_url(url) as client:
            client.flushall()
    built = bootstrap(load_config({}, store_url=url, admin_key=ADMIN_KEY, rate_limits=False))
    yield built
    built.close()


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def stored_entries(store: EventStore, game_id: str) -> int:
    """The entries the backend itself holds for a game's events (rows, stream entries)."""
    if isinstance(store, RedisEventStore):
        return int(store.client.xlen(store._key(game_id, "events")))
    assert isinstance(store, SQLiteEventStore)
    return int(store._query("SELECT count(*) FROM events WHERE game_id = ?", (game_id,))[0][0])


def stored_snapshots(store: EventStore, game_id: str) -> int:
    if isinstance(store, RedisEventStore):
        return int(store.client.zcard(store._key(game_id, "snapshots")))
    assert isinstance(store, SQLiteEventStore)
    rows = store._query("SELECT count(*) FROM snapshots WHERE game_id = ?", (game_id,))
    return int(rows[0][0])


def as_copied(branch: Envelope, source: list[Envelope]) -> list[Envelope]:
    """The log a branch stored as a copy holds: its ``branched_from``, then each of the
    source's events appended as ``NewEvent.copy_of`` would seal it."""
    log = [branch]
    for seq, envelope in enumerate(source, start=2):
        event = NewEvent.copy_of(envelope)
        log.append(seal(branch["game_id"], seq, event, log[-1]["hash"], "", None))
    return log


def make_branch(client: FlaskClient, source: str, at: int, **body: Any) -> dict[str, Any]:
    made = client.post(f"/games/{source}/branches", json={"at": at, **body}, headers=ADMIN)
    assert made.status_code == 201, made.json
    created: dict[str, Any] = made.json
    return created


def grown_branch(client: FlaskClient, services: Services, events: int) -> str:
    """A branch of a finished Tally game grown to ``events`` events by its holder undoing and
    redoing its last two steps (appended straight to the store, as fast as it goes)."""
    game = finished_game(client, services)
    branch = make_branch(client, game["id"], services.store.version(game["id"]))["id"]
    settle(services)
    folded = services.folder.load(branch)
    version = folded.version
    while version < events:
        batch = []
        for _ in range(2):
            last = services.store.read(branch, after=folded.effective[-1] - 1, limit=1)[0]
            batch.append(undo_event(folded, last, None))
            folded.redo.append(folded.effective.pop())
        for _ in range(2):
            top = services.store.read(branch, after=folded.redo[-1] - 1, limit=1)[0]
            batch.append(redo_event(folded, top, None))
            folded.effective.append(folded.redo.pop())
        services.store.append(branch, batch, version)
        version += len(batch)
    return branch


def test_a_branch_stores_the_same_few_entries_however_long_its_source_has_grown(
    client: FlaskClient, services: Services
) -> None:
    source = grown_branch(client, services, 600)
    store = services.store

    held = []
    for at in (3, 40, 300, store.version(source)):
        made = make_branch(client, source, at)
        settle(services)
        assert client.get(f"/games/{made['id']}").json["version"] == at + 1
        held.append((stored_entries(store, made["id"]), stored_snapshots(store, made["id"])))

    # Its branched_from and one reference to the source's events; one snapshot at most (of
    # its branch point: those before it are the source's).
    assert held == [(2, held[0][1])] * 4 and held[0][1] <= 1


def test_a_branch_reads_folds_audits_and_exports_as_the_copy_it_stands_for(
    client: FlaskClient, services: Services
) -> None:
    source = grown_branch(client, services, 250)
    at = services.store.version(source) - 4  # the end of an undo-redo cycle: nothing due
    made = make_branch(client, source, at)
    settle(services)
    store = services.store

    log = store.read(made["id"])
    assert log[: at + 1] == as_copied(log[0], store.read(source, limit=at))
    assert store.read(made["id"], after=at - 7, limit=5) == log[at - 7 : at - 2]
    exported = client.get(f"/games/{made['id']}/export", headers=ADMIN)
    assert exported.data == b"".join(canonical_json(e) + b"\n" for e in log)
    assert audit(parse_jsonl(exported.data)).ok
    report = client.get(f"/games/{made['id']}/audit", headers=ADMIN).json
    assert report["ok"] and report["source_checked"] and report["events"] == at + 1
    mine = client.get(f"/games/{made['id']}/state", headers=ADMIN).json["state"]
    theirs = client.get(f"/games/{source}/state?at={at}", headers=ADMIN).json["state"]
    assert mine == theirs
    for seq in (2, at // 2, at):
        mine = client.get(f"/games/{made['id']}/state?at={seq + 1}", headers=ADMIN).json
        theirs = client.get(f"/games/{source}/state?at={seq}", headers=ADMIN).json
        assert mine["state"] == theirs["state"], seq


def test_a_branch_of_a_branch_by_reference_audits_and_exports_as_before(
    client: FlaskClient, services: Services
) -> None:
    source = grown_branch(client, services, 120)
    first = make_branch(client, source, 100)
    settle(services)
    # The first's event 97 is the source's 96, the end of an undo-redo cycle: nothing due.
    second = make_branch(client, first["id"], 97, reseed=True, seat=1)
    settle(services)
    store = services.store

    assert stored_entries(store, second["id"]) == 2
    log = store.read(second["id"])
    assert log == as_copied(log[0], store.read(first["id"], limit=97))
    report = client.get(f"/games/{second['id']}/audit", headers=ADMIN).json
    assert report["ok"] and report["source_checked"]
    exported = client.get(f"/games/{second['id']}/export", headers=ADMIN)
    assert audit(parse_jsonl(exported.data)).ok


def test_a_branch_stored_as_a_copy_still_reads_and_branches_by_reference(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    store = services.store
    at = store.version(game["id"])  # the end: nothing falls due in the branches
    plan = branch_events(
        store.read(game["id"]),
        at,
        new_seed="old-branch-seed",
        sandbox_token_hash="0" * 64,
        source_finished=True,
    )
    store.append("oldbranch", plan.events, 0)  # as earlier builds stored every branch
    assert stored_entries(store, "oldbranch") == at + 1

    report = client.get("/games/oldbranch/audit", headers=ADMIN).json
    assert report["ok"] and report["source_checked"]
    made = make_branch(client, "oldbranch", at + 1)
    settle(services)
    assert stored_entries(store, made["id"]) == 2
    log = store.read(made["id"])
    assert log == as_copied(log[0], store.read("oldbranch"))
    assert client.get(f"/games/{made['id']}/audit", headers=ADMIN).json["source_checked"]


def test_the_game_index_lists_a_branch_kept_by_reference_at_its_version(
    client: FlaskClient, services: Services
) -> None:
    source = grown_branch(client, services, 80)
    made = make_branch(client, source, 70)
    settle(services)
    services.game_index.catch_up(services.store, services.folder.load)

    listed = client.get(f"/games?branch_of={source}").json["games"]

    assert [(game["id"], game["version"]) for game in listed] == [(made["id"], 71)]
