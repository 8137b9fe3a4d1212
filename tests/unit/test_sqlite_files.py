"""Everything kept in SQLite (events, the game index, the jobs' records) shares one pool
kind, so a server that starts a thread per request never leaks connections."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from events.sqlite_pool import IDLE_CONNECTIONS, SQLitePool
from events.store import StoreError
from projections.readmodels.game_index import SQLiteGameIndex
from service.application.job_state import SQLiteJobState


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def in_short_lived_threads(work: Callable[[], object], count: int = 60) -> None:
    for _ in range(count):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()


def test_the_jobs_records_leave_no_connection_behind_per_request_thread(tmp_path: Path) -> None:
    state = SQLiteJobState(tmp_path / "jobs.db")
    before = open_files()
    in_short_lived_threads(lambda: state.has_webhooks("g1"))
    # Each open connection holds the database and its WAL files open.
    assert open_files() - before <= 3 * IDLE_CONNECTIONS
    state.close()


def test_the_game_index_leaves_no_connection_behind_per_request_thread(tmp_path: Path) -> None:
    index = SQLiteGameIndex(tmp_path / "index.db")
    before = open_files()
    in_short_lived_threads(lambda: index.query(player="Ann"))
    assert open_files() - before <= 3 * IDLE_CONNECTIONS
    index.close()


def test_a_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    pool = SQLitePool(tmp_path / "t.db")
    pool.create("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    with pytest.raises(RuntimeError), pool.transaction() as connection:
        connection.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("half-way")
    assert pool.query("SELECT count(*) FROM t") == [(0,)]


def test_sqlite_failures_are_store_errors_and_a_closed_pool_lends_nothing(tmp_path: Path) -> None:
    pool = SQLitePool(tmp_path / "t.db")
    with pytest.raises(StoreError):
        pool.query("SELECT * FROM no_such_table")
    pool.close()
    with pytest.raises(StoreError):
        pool.query("SELECT 1")
