"""A small pool of SQLite connections to one file, shared by everything kept in SQLite
(the event store, the game index, the jobs' records).

A pool rather than a connection per thread: a server that starts a thread per request
(``meeple serve``) would otherwise leave a connection, and a file descriptor, behind for
every request. Connections are in WAL mode; ``synchronous=FULL`` fsyncs the WAL at every
commit, so what was committed survives a power cut, not only a crash of the process.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from events.store import StoreError, StoreFull

#: How long a writer waits for another process's write lock before giving up (seconds).
BUSY_TIMEOUT = 30.0
#: Connections kept open between uses (more are opened when more threads need one at once).
IDLE_CONNECTIONS = 8


class SQLitePool:
    """Connections to one SQLite file, lent to one thread at a time."""

    def __init__(self, path: str | Path, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.busy_timeout = busy_timeout
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        try:
            # isolation_level=None: transactions are opened explicitly (BEGIN IMMEDIATE).
            connection = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as error:
            raise StoreError(f"cannot open {self.path}: {error}") from error
        return connection

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """A connection for this thread's use until the block ends."""
        with self._lock:
            if self._closed:
                raise StoreError(f"{self.path} is closed")
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self._connect()
        try:
            yield connection
        except sqlite3.Error as error:
            if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
                raise StoreFull(f"{self.path} is full: {error}") from error
            raise StoreError(f"{self.path} failed: {error}") from error
        finally:
            with self._lock:
                keep = (
                    not self._closed
                    and not connection.in_transaction
                    and len(self._idle) < IDLE_CONNECTIONS
                )
                if keep:
                    self._idle.append(connection)
            if not keep:
                connection.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A connection inside ``BEGIN IMMEDIATE`` (the write lock is taken before any read);
        committed when the block ends, rolled back if it raises."""
        with self.connection() as connection:
            connection.execute("BEGIN IMMEDIATE")
            try:
                yield connection
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise

    def query(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        """Every row a read-only statement gives."""
        with self.connection() as connection:
            return connection.execute(sql, parameters).fetchall()

    def create(self, schema: str) -> None:
        """Run ``CREATE ... IF NOT EXISTS`` statements (``;``-separated) in one transaction."""
        with self.transaction() as connection:
            # executescript would COMMIT first; one statement at a time stays in the transaction.
            for statement in schema.split(";"):
                if statement.strip():
                    connection.execute(statement)

    def close(self) -> None:
        """Close the idle connections now and the ones in use when their block ends."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            connection.close()
