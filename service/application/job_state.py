"""What the background jobs remember between runs: automatic steps due, webhooks, deliveries.

It lives where the deployment keeps its data: in Redis when ``MEEPLE_REDIS_URL`` is set (the
same Redis RQ uses, so every API and worker process shares it), else in a SQLite file beside
the event store (``var/meeple.db`` -> ``var/meeple.jobs.db``) for the embedded default, except
the due steps, which live in the event store's own file there (``SQLiteJobState``).

Records are plain dicts (JSON on disk):

- a *due step* is ``(game_id, version, since)``: the game awaited an automatic step after
  event ``version`` from time ``since``; the sweeper runs steps left due too long;
- a *webhook*: ``id, game_id, url, secret, events, owner ({"seat": n} | {"admin": true}),
  lane, created_at, cursor`` where ``cursor`` is the last version it was notified of and
  ``lane`` whose share of delivery it takes (``webhooks.owner_lane``: the client address that
  registered it, or the admin; none on webhooks older than lanes);
- a *delivery*: ``id, webhook_id, game_id, lane, receiver, kind, seq, body, status (pending |
  delivered | failed), attempts [{"at", "outcome", "status"}], next_attempt_at (also how
  long an attempt in progress holds it: ``take_delivery``), created_at``; the pending ones
  are found by lane and receiver (``due_by_lane``), so each owner's are taken in turn and,
  of an owner's, each receiver's;
- a *receiver*'s circuit breaker (``webhook_lanes.Breaker``): ``failures, reason,
  paused_until, probe_until``, kept while the receiver fails (``update_receiver``);
- a *reminder*: ``game_id, webhook_id, seat, version, sent, due_at``: the webhook's seat was
  told ``your_turn`` after event ``version`` and has not acted; reminder number ``sent + 1``
  is due at ``due_at`` (``service.workers.jobs.sweep`` sends it, taking it first:
  ``take_reminder``).
"""

from __future__ import annotations

import json
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from events.redis_clients import redis_client
from events.sqlite_pool import SQLitePool

Record = dict[str, Any]

#: How many recent deliveries per webhook are kept for ``GET .../webhooks`` (Redis).
RECENT_DELIVERIES = 50
#: How long a finished delivery stays readable in Redis (seconds).
DELIVERY_TTL = 7 * 24 * 3600


class JobState(ABC):
    """Storage of due steps, webhooks and deliveries; safe from many threads and processes."""

    # -- automatic steps due ------------------------------------------------------------

    @abstractmethod
    def mark_due(self, game_id: str, version: int, since: float) -> None:
        """Remember that the game awaits an automatic step after ``version`` (first time wins)."""

    @abstractmethod
    def clear_due(self, game_id: str, version: int) -> None:
        """Forget the step due after ``version`` (appended, or no longer due)."""

    @abstractmethod
    def due_since_before(self, moment: float, limit: int = 100) -> list[tuple[str, int]]:
        """Steps due since before ``moment``, oldest first, as (game_id, version)."""

    # -- webhooks ------------------------------------------------------------------------

    @abstractmethod
    def add_webhook(
        self, webhook: Record, fits: Callable[[list[Record]], bool] | None = None
    ) -> bool:
        """Store a new webhook (its ``cursor`` included); whether it was stored. With ``fits``,
        only if ``fits(the game's webhooks)`` says so, atomically (a cap holds under races).
        """

    @abstractmethod
    def webhooks(self, game_id: str) -> list[Record]:
        """The game's webhooks, oldest first, each with its current ``cursor``."""

    @abstractmethod
    def has_webhooks(self, game_id: str) -> bool:
        """Whether the game has any webhook (asked after every append, so kept cheap)."""

    @abstractmethod
    def remove_webhook(self, game_id: str, webhook_id: str) -> bool:
        """Delete a webhook (its deliveries stay readable until they expire)."""

    @abstractmethod
    def claim(self, webhook: Record, upto: int, deliveries: list[Record]) -> bool:
        """Atomically move the webhook's cursor from its ``cursor`` to ``upto`` and store the
        deliveries for that range; False (and nothing stored) when another run moved it."""

    # -- deliveries ----------------------------------------------------------------------

    @abstractmethod
    def delivery(self, game_id: str, delivery_id: str) -> Record | None:
        """One delivery, or None."""

    @abstractmethod
    def save_delivery(self, delivery: Record) -> None:
        """Store a delivery's new status, attempts and next attempt time."""

    @abstractmethod
    def take_delivery(
        self, game_id: str, delivery_id: str, attempts: int, now: float, until: float
    ) -> Record | None:
        """Atomically take a delivery for its next attempt: if it is pending, has made
        ``attempts`` attempts and is due by ``now``, its next attempt time becomes ``until``
        (no one else takes it before then) and it is returned; else None."""

    @abstractmethod
    def recent_deliveries(self, game_id: str, webhook_id: str, limit: int = 20) -> list[Record]:
        """The webhook's latest deliveries, newest first."""

    @abstractmethod
    def deliveries_due_before(self, moment: float, limit: int = 100) -> list[tuple[str, str]]:
        """Pending deliveries whose next attempt was due before ``moment``, as
        (game_id, delivery_id)."""

    @abstractmethod
    def due_by_lane(
        self, moment: float, per_receiver: int, lanes: list[str] | None = None
    ) -> dict[str, dict[str, list[Record]]]:
        """The pending deliveries due by ``moment``, by lane and in each lane by receiver
        (``""``: a delivery from before receivers were kept), of every lane (of ``lanes``
        only, when given): at most ``per_receiver`` of each receiver's, soonest due first;
        lanes and receivers in the order their first delivery fell due."""

    # -- receivers' circuit breakers ---------------------------------------------------------

    @abstractmethod
    def receivers(self, receivers: list[str]) -> dict[str, Record]:
        """The breaker records of those receivers that have one."""

    @abstractmethod
    def update_receiver(
        self, receiver: str, change: Callable[[Record | None], Record | None]
    ) -> Record | None:
        """Replace a receiver's record (None: none) by ``change(record)`` atomically (under
        races ``change`` may be called again with the newer record); the record now."""

    # -- your_turn reminders ---------------------------------------------------------------

    @abstractmethod
    def set_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int, due_at: float
    ) -> None:
        """Remind the webhook's seat of its turn after ``version`` at ``due_at`` (none sent
        yet), replacing any reminder it had."""

    @abstractmethod
    def clear_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int | None = None
    ) -> None:
        """Forget the seat's reminder (only the one for ``version`` when given)."""

    @abstractmethod
    def reminders_due_before(self, moment: float, limit: int = 100) -> list[Record]:
        """Reminders due before ``moment``, soonest first."""

    @abstractmethod
    def take_reminder(self, reminder: Record, next_due: float) -> bool:
        """Atomically count the reminder as sent once more and put the next one off to
        ``next_due``, if it still stands as read (same version, same count): whoever takes
        it sends it, so two sweeps never send the same reminder."""

    def close(self) -> None:  # noqa: B027 - optional
        """Release files and connections."""


# -- SQLite (the embedded default) ------------------------------------------------------


class SQLiteJobState(JobState):
    """Job state in its own SQLite file; one short transaction per call.

    The due steps live in the event store's own file when ``due_path`` names it
    (``open_job_state`` does): then an append and the step it makes due are committed in one
    transaction (``due_statements``, run by the store's ``append(..., then=...)``).
    """

    DUE_SCHEMA = """
    CREATE TABLE IF NOT EXISTS due_steps (
        game_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        since REAL NOT NULL,
        PRIMARY KEY (game_id, version)
    );
    CREATE INDEX IF NOT EXISTS due_steps_by_time ON due_steps (since)
    """
    SCHEMA = """
    CREATE TABLE IF NOT EXISTS webhooks (
        id TEXT PRIMARY KEY,
        game_id TEXT NOT NULL,
        cursor INTEGER NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS webhooks_by_game ON webhooks (game_id);
    CREATE TABLE IF NOT EXISTS deliveries (
        ord INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        webhook_id TEXT NOT NULL,
        game_id TEXT NOT NULL,
        status TEXT NOT NULL,
        next_attempt_at REAL,
        record TEXT NOT NULL,
        queue TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX IF NOT EXISTS deliveries_by_webhook ON deliveries (webhook_id, ord);
    CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_at);
    CREATE TABLE IF NOT EXISTS reminders (
        game_id TEXT NOT NULL,
        webhook_id TEXT NOT NULL,
        seat INTEGER NOT NULL,
        version INTEGER NOT NULL,
        sent INTEGER NOT NULL,
        due_at REAL NOT NULL,
        PRIMARY KEY (game_id, webhook_id, seat)
    );
    CREATE INDEX IF NOT EXISTS reminders_due ON reminders (due_at);
    CREATE TABLE IF NOT EXISTS receivers (
        receiver TEXT PRIMARY KEY,
        record TEXT NOT NULL
    );
    """
    #: Made once the deliveries table has its queue (``_file_deliveries_in_lanes``).
    QUEUE_INDEX = (
        "CREATE INDEX IF NOT EXISTS deliveries_by_queue"
        " ON deliveries (status, queue, next_attempt_at)"
    )

    def __init__(self, path: str | Path, due_path: str | Path | None = None) -> None:
        self._pool = SQLitePool(path)
        self.path = self._pool.path
        self._pool.create(self.SCHEMA + ";" + self.DUE_SCHEMA)
        self._file_deliveries_in_lanes()
        self._due = self._pool
        if due_path is not None and Path(due_path).resolve() != self.path.resolve():
            self._due = SQLitePool(due_path)
            self._due.create(self.DUE_SCHEMA)
            self._move_due_steps()
        self.due_path = self._due.path

    def _move_due_steps(self) -> None:
        """Due steps a build that kept them in this file left behind move to ``due_path``
        (copied first, then deleted here: a crash between leaves a duplicate, never a loss;
        a step marked due twice is appended once)."""
        rows = self._pool.query("SELECT game_id, version, since FROM due_steps")
        if not rows:
            return
        with self._due.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO due_steps (game_id, version, since) VALUES (?, ?, ?)", rows
            )
        with self._pool.transaction() as db:
            db.execute("DELETE FROM due_steps")

    def _file_deliveries_in_lanes(self) -> None:
        """A file from before lanes has no queue column (``delivery_queue``): it is added,
        each delivery in its game's lane (their webhooks kept no client address), receiver
        unknown."""
        with self._pool.transaction() as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(deliveries)")}
            if "queue" not in columns:
                db.execute("ALTER TABLE deliveries ADD COLUMN queue TEXT NOT NULL DEFAULT ''")
                db.execute("UPDATE deliveries SET queue = 'game:' || game_id || ' '")
            db.execute(self.QUEUE_INDEX)

    @staticmethod
    def due_statements(
        game_id: str, version: int, since: float | None, done: int | None = None
    ) -> list[tuple[str, tuple[Any, ...]]]:
        """The SQL that marks the step after ``version`` due (``since`` None: nothing due)
        and clears the mark of version ``done`` (one the append just made), for an append's
        own transaction in ``due_path``."""
        statements: list[tuple[str, tuple[Any, ...]]] = []
        if done is not None:
            statements.append(
                ("DELETE FROM due_steps WHERE game_id = ? AND version = ?", (game_id, done))
            )
        if since is not None:
            statements.append(
                (
                    "INSERT OR IGNORE INTO due_steps (game_id, version, since) VALUES (?, ?, ?)",
                    (game_id, version, since),
                )
            )
        return statements

    def mark_due(self, game_id: str, version: int, since: float) -> None:
        with self._due.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO due_steps (game_id, version, since) VALUES (?, ?, ?)",
                (game_id, version, since),
            )

    def clear_due(self, game_id: str, version: int) -> None:
        with self._due.transaction() as db:
            db.execute(
                "DELETE FROM due_steps WHERE game_id = ? AND version = ?", (game_id, version)
            )

    def due_since_before(self, moment: float, limit: int = 100) -> list[tuple[str, int]]:
        rows = self._due.query(
            "SELECT game_id, version FROM due_steps WHERE since < ? ORDER BY since LIMIT ?",
            (moment, limit),
        )
        return [(str(game_id), int(version)) for game_id, version in rows]

    def add_webhook(
        self, webhook: Record, fits: Callable[[list[Record]], bool] | None = None
    ) -> bool:
        # BEGIN IMMEDIATE: no other writer between the count and the insert.
        with self._pool.transaction() as db:
            if fits is not None:
                rows = db.execute(
                    "SELECT record FROM webhooks WHERE game_id = ? ORDER BY rowid",
                    (webhook["game_id"],),
                ).fetchall()
                if not fits([json.loads(record) for (record,) in rows]):
                    return False
            db.execute(
                "INSERT INTO webhooks (id, game_id, cursor, record) VALUES (?, ?, ?, ?)",
                (webhook["id"], webhook["game_id"], webhook["cursor"], json.dumps(webhook)),
            )
        return True

    def webhooks(self, game_id: str) -> list[Record]:
        rows = self._pool.query(
            "SELECT cursor, record FROM webhooks WHERE game_id = ? ORDER BY rowid", (game_id,)
        )
        return [{**json.loads(record), "cursor": int(cursor)} for cursor, record in rows]

    def has_webhooks(self, game_id: str) -> bool:
        return bool(
            self._pool.query("SELECT 1 FROM webhooks WHERE game_id = ? LIMIT 1", (game_id,))
        )

    def remove_webhook(self, game_id: str, webhook_id: str) -> bool:
        with self._pool.transaction() as db:
            deleted = db.execute(
                "DELETE FROM webhooks WHERE game_id = ? AND id = ?", (game_id, webhook_id)
            )
            return deleted.rowcount > 0

    def claim(self, webhook: Record, upto: int, deliveries: list[Record]) -> bool:
        with self._pool.transaction() as db:
            moved = db.execute(
                "UPDATE webhooks SET cursor = ? WHERE id = ? AND cursor = ?",
                (upto, webhook["id"], webhook["cursor"]),
            )
            if moved.rowcount != 1:
                return False
            for delivery in deliveries:
                self._insert_delivery(db, delivery)
        return True

    def _insert_delivery(self, db: sqlite3.Connection, delivery: Record) -> None:
        db.execute(
            "INSERT INTO deliveries (id, webhook_id, game_id, status, next_attempt_at, record,"
            " queue) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                delivery["id"],
                delivery["webhook_id"],
                delivery["game_id"],
                delivery["status"],
                delivery["next_attempt_at"],
                json.dumps(delivery),
                delivery_queue(delivery),
            ),
        )

    def delivery(self, game_id: str, delivery_id: str) -> Record | None:
        rows = self._pool.query(
            "SELECT record FROM deliveries WHERE id = ? AND game_id = ?", (delivery_id, game_id)
        )
        return dict(json.loads(rows[0][0])) if rows else None

    def save_delivery(self, delivery: Record) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "UPDATE deliveries SET status = ?, next_attempt_at = ?, record = ? WHERE id = ?",
                (
                    delivery["status"],
                    delivery["next_attempt_at"],
                    json.dumps(delivery),
                    delivery["id"],
                ),
            )

    def take_delivery(
        self, game_id: str, delivery_id: str, attempts: int, now: float, until: float
    ) -> Record | None:
        with self._pool.transaction() as db:
            row = db.execute(
                "SELECT record FROM deliveries WHERE id = ? AND game_id = ?",
                (delivery_id, game_id),
            ).fetchone()
            taken = _takeable(None if row is None else json.loads(row[0]), attempts, now, until)
            if taken is not None:
                db.execute(
                    "UPDATE deliveries SET next_attempt_at = ?, record = ? WHERE id = ?",
                    (until, json.dumps(taken), delivery_id),
                )
        return taken

    def recent_deliveries(self, game_id: str, webhook_id: str, limit: int = 20) -> list[Record]:
        rows = self._pool.query(
            "SELECT record FROM deliveries WHERE webhook_id = ? AND game_id = ?"
            " ORDER BY ord DESC LIMIT ?",
            (webhook_id, game_id, limit),
        )
        return [dict(json.loads(record)) for (record,) in rows]

    def deliveries_due_before(self, moment: float, limit: int = 100) -> list[tuple[str, str]]:
        rows = self._pool.query(
            "SELECT game_id, id FROM deliveries WHERE status = 'pending' AND next_attempt_at < ?"
            " ORDER BY next_attempt_at LIMIT ?",
            (moment, limit),
        )
        return [(str(game_id), str(delivery_id)) for game_id, delivery_id in rows]

    def due_by_lane(
        self, moment: float, per_receiver: int, lanes: list[str] | None = None
    ) -> dict[str, dict[str, list[Record]]]:
        # A queue is "<lane> <receiver>": one lane's queues are the range from "<lane> " to
        # "<lane>!" (the next character), all of them from "" on.
        ranges = [("", None)] if lanes is None else [(f"{lane} ", f"{lane}!") for lane in lanes]
        found: list[tuple[str, list[Record]]] = []
        with self._pool.connection() as db:
            for low, high in ranges:
                for queue in self._queues(db, low, high):
                    rows = db.execute(
                        "SELECT record FROM deliveries WHERE status = 'pending' AND queue = ?"
                        " AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
                        (queue, moment, per_receiver),
                    ).fetchall()
                    if rows:
                        found.append((queue, [dict(json.loads(record)) for (record,) in rows]))
        return _by_lane(found)

    @staticmethod
    def _queues(db: sqlite3.Connection, low: str, high: str | None) -> list[str]:
        """The queues holding a pending delivery from ``low`` (inclusive) up to ``high``:
        one step of the (status, queue, ...) index for each, however many deliveries each
        holds (a skip-scan by hand)."""
        below = "" if high is None else " AND queue < :high"
        rows = db.execute(
            "WITH RECURSIVE queues(queue) AS ("
            f" SELECT MIN(queue) FROM deliveries WHERE status = 'pending' AND queue >= :low{below}"
            " UNION ALL SELECT (SELECT MIN(queue) FROM deliveries"
            f"  WHERE status = 'pending' AND queue > queues.queue{below})"
            " FROM queues WHERE queues.queue IS NOT NULL"
            ") SELECT queue FROM queues WHERE queue IS NOT NULL",
            {"low": low, "high": high},
        ).fetchall()
        return [str(queue) for (queue,) in rows]

    def receivers(self, receivers: list[str]) -> dict[str, Record]:
        if not receivers:
            return {}
        marks = ", ".join("?" for _ in receivers)
        rows = self._pool.query(
            f"SELECT receiver, record FROM receivers WHERE receiver IN ({marks})",
            tuple(receivers),
        )
        return {str(receiver): dict(json.loads(record)) for receiver, record in rows}

    def update_receiver(
        self, receiver: str, change: Callable[[Record | None], Record | None]
    ) -> Record | None:
        with self._pool.transaction() as db:
            row = db.execute(
                "SELECT record FROM receivers WHERE receiver = ?", (receiver,)
            ).fetchone()
            changed = change(None if row is None else dict(json.loads(row[0])))
            if changed is None:
                db.execute("DELETE FROM receivers WHERE receiver = ?", (receiver,))
            else:
                db.execute(
                    "INSERT OR REPLACE INTO receivers (receiver, record) VALUES (?, ?)",
                    (receiver, json.dumps(changed)),
                )
        return changed

    def set_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int, due_at: float
    ) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO reminders (game_id, webhook_id, seat, version, sent, "
                "due_at) VALUES (?, ?, ?, ?, 0, ?)",
                (game_id, webhook_id, seat, version, due_at),
            )

    def clear_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int | None = None
    ) -> None:
        with self._pool.transaction() as db:
            db.execute(
                "DELETE FROM reminders WHERE game_id = ? AND webhook_id = ? AND seat = ?"
                " AND (? IS NULL OR version = ?)",
                (game_id, webhook_id, seat, version, version),
            )

    def reminders_due_before(self, moment: float, limit: int = 100) -> list[Record]:
        rows = self._pool.query(
            "SELECT game_id, webhook_id, seat, version, sent, due_at FROM reminders"
            " WHERE due_at < ? ORDER BY due_at LIMIT ?",
            (moment, limit),
        )
        names = ("game_id", "webhook_id", "seat", "version", "sent", "due_at")
        return [dict(zip(names, row, strict=True)) for row in rows]

    def take_reminder(self, reminder: Record, next_due: float) -> bool:
        with self._pool.transaction() as db:
            taken = db.execute(
                "UPDATE reminders SET sent = sent + 1, due_at = ? WHERE game_id = ?"
                " AND webhook_id = ? AND seat = ? AND version = ? AND sent = ?",
                (
                    next_due,
                    reminder["game_id"],
                    reminder["webhook_id"],
                    reminder["seat"],
                    reminder["version"],
                    reminder["sent"],
                ),
            )
            return taken.rowcount == 1

    def close(self) -> None:
        self._pool.close()
        if self._due is not self._pool:
            self._due.close()


# -- Redis (several API and worker processes) ---------------------------------------------


class RedisJobState(JobState):
    """Job state in Redis. A game's keys share the ``{game_id}`` hash tag; the indexes of
    due work (steps, deliveries, reminders) are one sorted set each."""

    DUE_STEPS = "meeple:jobs:due-steps"
    DUE_DELIVERIES = "meeple:jobs:due-deliveries"
    DUE_REMINDERS = "meeple:jobs:due-reminders"
    #: The lanes that may hold pending deliveries (a set); each lane's queues (a set of its
    #: own, ``_lane_key``), each queue's pending deliveries (a sorted set, ``_queue_key``), as
    #: DUE_DELIVERIES holds them all.
    LANES = "meeple:jobs:delivery-lanes"
    #: Set once the pending deliveries of a build from before lanes are filed in theirs.
    LANES_FILED = "meeple:jobs:delivery-lanes-filed"
    #: How long a receiver's breaker record outlives its last change (seconds).
    RECEIVER_TTL = 7 * 24 * 3600
    #: KEYS: 1 a queue's sorted set, 2 its lane's set, 3 LANES. ARGV: 1 the queue, 2 the
    #: lane. Forgets the queue if it is empty, and the lane if that was its last (in one
    #: step: a delivery filed meanwhile is never left in a forgotten queue).
    DROP_EMPTY_QUEUE = """
if redis.call('ZCARD', KEYS[1]) == 0 then
  redis.call('SREM', KEYS[2], ARGV[1])
  if redis.call('SCARD', KEYS[2]) == 0 then redis.call('SREM', KEYS[3], ARGV[2]) end
end
"""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._drop_empty_queue = client.register_script(self.DROP_EMPTY_QUEUE)
        self._lanes_filed = False

    @classmethod
    def from_url(cls, url: str) -> RedisJobState:
        return cls(redis_client(url, decode_responses=True))

    @staticmethod
    def webhooks_key(game_id: str) -> str:
        """The hash of a game's webhooks (its existence: the game has webhooks)."""
        return f"meeple:{{{game_id}}}:webhooks"

    @staticmethod
    def _cursors_key(game_id: str) -> str:
        return f"meeple:{{{game_id}}}:webhook-cursors"

    @staticmethod
    def _delivery_key(game_id: str, delivery_id: str) -> str:
        return f"meeple:{{{game_id}}}:delivery:{delivery_id}"

    @staticmethod
    def _recent_key(game_id: str, webhook_id: str) -> str:
        return f"meeple:{{{game_id}}}:webhook:{webhook_id}:deliveries"

    @staticmethod
    def _lane_key(lane: str) -> str:
        return f"meeple:jobs:delivery-lane:{lane}"

    @staticmethod
    def _queue_key(queue: str) -> str:
        return f"meeple:jobs:delivery-queue:{queue}"

    @staticmethod
    def _receiver_key(receiver: str) -> str:
        return f"meeple:jobs:receiver:{receiver}"

    def mark_due(self, game_id: str, version: int, since: float) -> None:
        self.client.zadd(self.DUE_STEPS, {f"{game_id}:{version}": since}, nx=True)

    def clear_due(self, game_id: str, version: int) -> None:
        self.client.zrem(self.DUE_STEPS, f"{game_id}:{version}")

    def due_since_before(self, moment: float, limit: int = 100) -> list[tuple[str, int]]:
        members = self.client.zrangebyscore(self.DUE_STEPS, "-inf", f"({moment}", 0, limit)
        found = []
        for member in members:
            game_id, _, version = str(member).rpartition(":")
            found.append((game_id, int(version)))
        return found

    def add_webhook(
        self, webhook: Record, fits: Callable[[list[Record]], bool] | None = None
    ) -> bool:
        record = {key: value for key, value in webhook.items() if key != "cursor"}
        webhooks = self.webhooks_key(webhook["game_id"])
        with self.client.pipeline() as pipe:
            while True:
                try:
                    # Watched: a webhook added meanwhile makes the transaction fail; count again.
                    pipe.watch(webhooks)
                    if fits is not None and not fits(
                        [json.loads(raw) for raw in pipe.hvals(webhooks)]
                    ):
                        pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.hset(webhooks, webhook["id"], json.dumps(record))
                    pipe.hset(
                        self._cursors_key(webhook["game_id"]), webhook["id"], webhook["cursor"]
                    )
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue

    def webhooks(self, game_id: str) -> list[Record]:
        with self.client.pipeline() as pipe:
            pipe.hgetall(self.webhooks_key(game_id))
            pipe.hgetall(self._cursors_key(game_id))
            records, cursors = pipe.execute()
        found = [
            {**json.loads(record), "cursor": int(cursors.get(webhook_id, 0))}
            for webhook_id, record in records.items()
        ]
        return sorted(found, key=lambda webhook: (webhook["created_at"], webhook["id"]))

    def has_webhooks(self, game_id: str) -> bool:
        return bool(self.client.exists(self.webhooks_key(game_id)))

    def remove_webhook(self, game_id: str, webhook_id: str) -> bool:
        with self.client.pipeline() as pipe:
            pipe.hdel(self.webhooks_key(game_id), webhook_id)
            pipe.hdel(self._cursors_key(game_id), webhook_id)
            removed, _ = pipe.execute()
        return bool(removed)

    def claim(self, webhook: Record, upto: int, deliveries: list[Record]) -> bool:
        game_id = webhook["game_id"]
        cursors = self._cursors_key(game_id)
        with self.client.pipeline() as pipe:
            try:
                pipe.watch(cursors)
                current = pipe.hget(cursors, webhook["id"])
                if current is None or int(current) != webhook["cursor"]:
                    pipe.unwatch()
                    return False
                pipe.multi()
                pipe.hset(cursors, webhook["id"], upto)
                for delivery in deliveries:
                    self._put_delivery(pipe, delivery, new=True)
                pipe.execute()
            except redis.WatchError:
                return False
        return True

    def _put_delivery(self, pipe: Any, delivery: Record, new: bool = False) -> None:
        game_id = delivery["game_id"]
        member = f"{game_id}:{delivery['id']}"
        pipe.set(self._delivery_key(game_id, delivery["id"]), json.dumps(delivery), ex=DELIVERY_TTL)
        if new:
            recent = self._recent_key(game_id, delivery["webhook_id"])
            pipe.lpush(recent, delivery["id"])
            pipe.ltrim(recent, 0, RECENT_DELIVERIES - 1)
            pipe.expire(recent, DELIVERY_TTL)
        queue = delivery_queue(delivery)
        if delivery["status"] == "pending":
            pipe.zadd(self.DUE_DELIVERIES, {member: delivery["next_attempt_at"]})
            self._file(pipe, delivery, member, delivery["next_attempt_at"])
        else:
            pipe.zrem(self.DUE_DELIVERIES, member)
            pipe.zrem(self._queue_key(queue), member)

    def _file(self, pipe: Any, delivery: Record, member: str, due: float) -> None:
        """Put a pending delivery in its queue, and the queue in its lane."""
        lane, queue = delivery_lane(delivery), delivery_queue(delivery)
        pipe.zadd(self._queue_key(queue), {member: due})
        pipe.sadd(self._lane_key(lane), queue)
        pipe.sadd(self.LANES, lane)

    def delivery(self, game_id: str, delivery_id: str) -> Record | None:
        raw = self.client.get(self._delivery_key(game_id, delivery_id))
        return None if raw is None else dict(json.loads(str(raw)))

    def save_delivery(self, delivery: Record) -> None:
        with self.client.pipeline() as pipe:
            self._put_delivery(pipe, delivery)
            pipe.execute()

    def take_delivery(
        self, game_id: str, delivery_id: str, attempts: int, now: float, until: float
    ) -> Record | None:
        key = self._delivery_key(game_id, delivery_id)
        with self.client.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw = pipe.get(key)
                taken = _takeable(None if raw is None else json.loads(raw), attempts, now, until)
                if taken is None:
                    pipe.unwatch()
                    return None
                pipe.multi()
                self._put_delivery(pipe, taken)
                pipe.execute()
            except redis.WatchError:
                return None  # another run changed it first: that run makes the attempt
        return taken

    def recent_deliveries(self, game_id: str, webhook_id: str, limit: int = 20) -> list[Record]:
        ids = self.client.lrange(self._recent_key(game_id, webhook_id), 0, limit - 1)
        if not ids:
            return []
        raws = self.client.mget([self._delivery_key(game_id, str(i)) for i in ids])
        return [dict(json.loads(raw)) for raw in raws if raw is not None]

    def deliveries_due_before(self, moment: float, limit: int = 100) -> list[tuple[str, str]]:
        members = self.client.zrangebyscore(self.DUE_DELIVERIES, "-inf", f"({moment}", 0, limit)
        found = []
        for member in members:
            game_id, _, delivery_id = str(member).rpartition(":")
            found.append((game_id, delivery_id))
        return found

    def due_by_lane(
        self, moment: float, per_receiver: int, lanes: list[str] | None = None
    ) -> dict[str, dict[str, list[Record]]]:
        self._file_in_lanes()
        if lanes is None:
            lanes = sorted(str(lane) for lane in self.client.smembers(self.LANES))
        with self.client.pipeline(transaction=False) as pipe:
            for lane in lanes:
                pipe.smembers(self._lane_key(lane))
            queues = sorted(str(queue) for found in pipe.execute() for queue in found)
        with self.client.pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.zrangebyscore(self._queue_key(queue), "-inf", moment, 0, per_receiver)
            members = {
                queue: [str(member) for member in due]
                for queue, due in zip(queues, pipe.execute(), strict=True)
            }
        idle = [queue for queue, due in members.items() if not due]
        if idle:
            with self.client.pipeline(transaction=False) as pipe:
                for queue in idle:
                    lane = queue.split(" ", 1)[0]
                    keys = [self._queue_key(queue), self._lane_key(lane), self.LANES]
                    self._drop_empty_queue(keys=keys, args=[queue, lane], client=pipe)
                pipe.execute()
        wanted = [member for due in members.values() for member in due]
        if not wanted:
            return {}
        keys = [self._delivery_key(*member.rsplit(":", 1)) for member in wanted]
        records = dict(zip(wanted, self.client.mget(keys), strict=True))
        found: list[tuple[str, list[Record]]] = []
        for queue, due in members.items():
            present = []
            for member in due:
                raw = records[member]
                if raw is None:  # expired with its key: nothing left to deliver
                    self.client.zrem(self._queue_key(queue), member)
                else:
                    present.append(dict(json.loads(str(raw))))
            if present:
                found.append((queue, present))
        return _by_lane(found)

    def _file_in_lanes(self) -> None:
        """Pending deliveries from a build before lanes are only in DUE_DELIVERIES: filed in
        their queues once (by whichever process comes first; filing twice is no matter)."""
        if self._lanes_filed or self.client.exists(self.LANES_FILED):
            self._lanes_filed = True
            return
        for member, score in self.client.zscan_iter(self.DUE_DELIVERIES):
            raw = self.client.get(self._delivery_key(*str(member).rsplit(":", 1)))
            if raw is not None:
                with self.client.pipeline() as pipe:
                    self._file(pipe, json.loads(str(raw)), str(member), score)
                    pipe.execute()
        self.client.set(self.LANES_FILED, "1")
        self._lanes_filed = True

    def receivers(self, receivers: list[str]) -> dict[str, Record]:
        if not receivers:
            return {}
        raws = self.client.mget([self._receiver_key(receiver) for receiver in receivers])
        return {
            receiver: dict(json.loads(str(raw)))
            for receiver, raw in zip(receivers, raws, strict=True)
            if raw is not None
        }

    def update_receiver(
        self, receiver: str, change: Callable[[Record | None], Record | None]
    ) -> Record | None:
        key = self._receiver_key(receiver)
        with self.client.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    changed = change(None if raw is None else dict(json.loads(str(raw))))
                    pipe.multi()
                    if changed is None:
                        pipe.delete(key)
                    else:
                        pipe.set(key, json.dumps(changed), ex=self.RECEIVER_TTL)
                    pipe.execute()
                    return changed
                except redis.WatchError:
                    continue  # changed meanwhile: change the newer record

    def _reminder_key(self, game_id: str, webhook_id: str, seat: int) -> str:
        return f"meeple:{{{game_id}}}:reminder:{webhook_id}:{seat}"

    def set_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int, due_at: float
    ) -> None:
        record = {
            "game_id": game_id,
            "webhook_id": webhook_id,
            "seat": seat,
            "version": version,
            "sent": 0,
            "due_at": due_at,
        }
        with self.client.pipeline() as pipe:
            pipe.set(self._reminder_key(game_id, webhook_id, seat), json.dumps(record))
            pipe.zadd(self.DUE_REMINDERS, {_reminder_member(game_id, webhook_id, seat): due_at})
            pipe.execute()

    def clear_reminder(
        self, game_id: str, webhook_id: str, seat: int, version: int | None = None
    ) -> None:
        key = self._reminder_key(game_id, webhook_id, seat)
        with self.client.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw = pipe.get(key)
                if raw is None or (version is not None and json.loads(raw)["version"] != version):
                    pipe.unwatch()
                    return
                pipe.multi()
                pipe.delete(key)
                pipe.zrem(self.DUE_REMINDERS, _reminder_member(game_id, webhook_id, seat))
                pipe.execute()
            except redis.WatchError:
                return  # set again meanwhile: that one stands

    def reminders_due_before(self, moment: float, limit: int = 100) -> list[Record]:
        members = self.client.zrangebyscore(self.DUE_REMINDERS, "-inf", f"({moment}", 0, limit)
        found = []
        for member in members:
            game_id, webhook_id, seat = json.loads(str(member))
            raw = self.client.get(self._reminder_key(game_id, webhook_id, int(seat)))
            if raw is None:
                self.client.zrem(self.DUE_REMINDERS, str(member))
            else:
                found.append(dict(json.loads(str(raw))))
        return found

    def take_reminder(self, reminder: Record, next_due: float) -> bool:
        game_id, webhook_id, seat = reminder["game_id"], reminder["webhook_id"], reminder["seat"]
        key = self._reminder_key(game_id, webhook_id, seat)
        with self.client.pipeline() as pipe:
            try:
                pipe.watch(key)
                raw = pipe.get(key)
                stored = None if raw is None else json.loads(raw)
                if stored is None or (stored["version"], stored["sent"]) != (
                    reminder["version"],
                    reminder["sent"],
                ):
                    pipe.unwatch()
                    return False
                stored.update(sent=stored["sent"] + 1, due_at=next_due)
                pipe.multi()
                pipe.set(key, json.dumps(stored))
                pipe.zadd(
                    self.DUE_REMINDERS, {_reminder_member(game_id, webhook_id, seat): next_due}
                )
                pipe.execute()
            except redis.WatchError:
                return False  # another sweep took it first
        return True

    def close(self) -> None:
        self.client.close()


def _reminder_member(game_id: str, webhook_id: str, seat: int) -> str:
    """A reminder in the index of due reminders (JSON: game ids may hold any character)."""
    return json.dumps([game_id, webhook_id, seat])


def delivery_lane(delivery: Record) -> str:
    """The lane a delivery waits in (``webhooks.webhook_lane``; one from before lanes: its
    game's)."""
    return str(delivery.get("lane") or f"game:{delivery['game_id']}")


def delivery_queue(delivery: Record) -> str:
    """The queue a pending delivery waits in, ``"<lane> <receiver>"``: neither has a space
    (a receiver is a URL's scheme, host and port)."""
    return f"{delivery_lane(delivery)} {delivery.get('receiver') or ''}"


def _by_lane(queues: list[tuple[str, list[Record]]]) -> dict[str, dict[str, list[Record]]]:
    """Queues' due deliveries by lane and receiver, lanes and receivers in the order their
    first delivery fell due."""
    queues = sorted(queues, key=lambda item: item[1][0]["next_attempt_at"])
    found: dict[str, dict[str, list[Record]]] = {}
    for queue, due in queues:
        lane, _, receiver = queue.partition(" ")
        found.setdefault(lane, {})[receiver] = due
    return found


def _takeable(delivery: Record | None, attempts: int, now: float, until: float) -> Record | None:
    """The delivery taken until ``until``, if it is pending, due and at ``attempts``."""
    if (
        delivery is None
        or delivery["status"] != "pending"
        or len(delivery["attempts"]) != attempts
        or delivery["next_attempt_at"] > now
    ):
        return None
    return {**delivery, "next_attempt_at": until}


def job_state_location(store_url: str, redis_url: str | None) -> str:
    """Where the job state of a deployment lives (see the module docstring)."""
    if redis_url:
        return redis_url
    scheme, _, rest = store_url.partition("://")
    if scheme == "sqlite":
        # The same path rule as events.config: one slash after sqlite:// -> relative path.
        path = Path(rest.removeprefix("/")).with_suffix(".jobs.db")
        return f"sqlite:///{path.as_posix()}"
    if scheme in ("redis", "rediss", "redis+sentinel"):
        return store_url
    raise ValueError(
        f"jobs cannot keep their state beside a {scheme!r} store: set MEEPLE_REDIS_URL"
    )


def open_job_state(store_url: str, redis_url: str | None) -> JobState:
    """The job state for a deployment with this store and (optional) jobs Redis."""
    location = job_state_location(store_url, redis_url)
    scheme, _, rest = location.partition("://")
    if scheme == "sqlite":
        # The due steps beside the events: an append and the step it makes due commit together.
        store_path = store_url.partition("://")[2].removeprefix("/")
        return SQLiteJobState(rest.removeprefix("/"), due_path=store_path)
    return RedisJobState.from_url(location)
