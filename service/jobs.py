"""Background jobs: automatic steps, notifications and read-model catch-up (DESIGN.md, "Service").

Two runners execute the same job functions:

- ``InProcessJobs`` (no ``MEEPLE_REDIS_URL``): a small thread pool inside the API process, so
  the embedded default needs nothing else running;
- ``RQJobs`` (``MEEPLE_REDIS_URL`` set): jobs go to an RQ queue on Redis and ``meeple worker``
  processes (``run_worker``) run them.

A job function takes the process's ``Services`` first and plain JSON arguments after it, so
RQ can carry its arguments and the in-process runner can call it directly.

``system_step(game_id, version)`` appends the automatic step due at ``version`` exactly
once: it appends at the expected version with an idempotency key derived from
``(game_id, version)``, so a second run (a retry, a duplicate enqueue, a second worker, the
sweeper) either replays the first append or meets a conflict, and appends nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from events.store import ConcurrencyConflict
from projections.fold import Game, decide_system

log = logging.getLogger(__name__)


class ServicesLike(Protocol):
    """What a job needs of service.bootstrap.Services."""

    store: Any
    folder: Any
    jobs: Any


@dataclass(frozen=True)
class StepOutcome:
    """What one run of ``system_step`` did (for logs and tests)."""

    appended: bool
    version: int
    reason: str


def system_step_key(game_id: str, version: int) -> str:
    """The idempotency key (and job id) of the automatic step due after event ``version``."""
    return f"system_step:{game_id}:{version}"


# -- job functions -------------------------------------------------------------------


def system_step(services: ServicesLike, game_id: str, version: int) -> StepOutcome:
    """Append the automatic step due after event ``version``, once; then chain the next one."""
    game: Game = services.folder.load(game_id)
    if game.version != version:
        # Someone appended since this job was enqueued: either this very step (a duplicate
        # run) or the game moved on; whoever appended enqueued whatever is due now.
        return StepOutcome(False, game.version, "stale")
    decided = decide_system(game)
    if decided is None:
        return StepOutcome(False, game.version, "nothing_due")
    event, state = decided
    try:
        result = services.store.append(
            game_id,
            [event],
            expected_version=version,
            idempotency_key=system_step_key(game_id, version),
        )
    except ConcurrencyConflict as conflict:
        return StepOutcome(False, conflict.actual, "conflict")
    if result.replayed:
        return StepOutcome(False, result.version, "replayed")
    advanced = game.copy()
    advanced.state = state
    advanced.version = result.version
    advanced.effective.append(result.version)
    advanced.redo.clear()
    services.folder.remember(advanced)
    services.jobs.after_append(game_id, result.version)
    return StepOutcome(True, result.version, "appended")


JOB_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "system_step": system_step,
}


# -- runners ---------------------------------------------------------------------------


class Jobs:
    """What the application layer calls after every append; subclasses say where jobs run."""

    def __init__(self, services: ServicesLike) -> None:
        self.services = services

    def after_append(self, game_id: str, version: int) -> None:
        """Enqueue what an append makes due: the next automatic step, if the game awaits one."""
        try:
            game: Game = self.services.folder.load(game_id)
        except KeyError:
            return
        if game.version != version:
            return  # a later append is on its way to after_append and will see the latest state
        if game.ruleset.status(game.state).get("awaiting_system"):
            self.enqueue("system_step", game_id, version, job_id=system_step_key(game_id, version))

    def enqueue(self, name: str, *args: Any, job_id: str | None = None) -> None:
        raise NotImplementedError

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Whether every job enqueued so far (and what they chained) finished within ``timeout``."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop taking jobs and release threads and connections."""


class InProcessJobs(Jobs):
    """Jobs on a small thread pool in this process (the embedded default).

    A job id that is queued or running is not queued again, so the deterministic ids of
    ``system_step`` keep one run per due step here too.
    """

    def __init__(self, services: ServicesLike, threads: int = 4) -> None:
        super().__init__(services)
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="meeple-job")
        self._changed = threading.Condition()
        self._queued: set[str] = set()
        self._active = 0
        self._closed = False

    def enqueue(self, name: str, *args: Any, job_id: str | None = None) -> None:
        function = JOB_FUNCTIONS[name]
        with self._changed:
            if self._closed or (job_id is not None and job_id in self._queued):
                return
            if job_id is not None:
                self._queued.add(job_id)
            self._active += 1
        try:
            self._pool.submit(self._run, function, args, job_id)
        except RuntimeError:  # the pool shut down between the check and the submit
            self._finished(job_id)

    def _run(self, function: Callable[..., Any], args: tuple[Any, ...], job_id: str | None) -> None:
        try:
            function(self.services, *args)
        except Exception:
            # A failed job must not kill the pool; the step stays due and is retried by the
            # next append or the sweeper.
            log.exception("job %s%r failed", function.__name__, args)
        finally:
            self._finished(job_id)

    def _finished(self, job_id: str | None) -> None:
        with self._changed:
            if job_id is not None:
                self._queued.discard(job_id)
            self._active -= 1
            self._changed.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self._active == 0, timeout)

    def close(self) -> None:
        with self._changed:
            self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)


def make_jobs(services: ServicesLike) -> Jobs:
    """The runner for these services: in-process for now (the RQ runner comes next)."""
    return InProcessJobs(services)
