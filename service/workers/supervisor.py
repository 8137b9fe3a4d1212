"""``meeple worker`` with no ``--queue``: RQ worker processes per group of queues, so that no
client's work waits behind another's (docs/operations.md, "What a worker does").

An RQ worker runs one job at a time. One worker serving every queue would hold the next
automatic step back for as long as a bot's search (up to ``MEEPLE_BOT_MAX_SECONDS``), an
analysis (up to ``MEEPLE_ANALYSIS_MAX_SECONDS``) or a webhook attempt at a receiver that never
answers (``MEEPLE_WEBHOOK_TIMEOUT``) runs; and one worker per queue would let one owner's bot
game or black-hole webhooks hold that queue for everyone. So the plain command starts
``GROUPS``: the automatic steps alone, two notification workers, two bot workers and one
analyses worker (each is ``meeple worker --queue ...``, what compose runs as services of its
own). One owner holds at most one bot turn at a time (``MEEPLE_BOT_TURNS_PER_OWNER``), and,
unless ``MEEPLE_WEBHOOK_PER_OWNER`` says otherwise, one webhook attempt at a time
(``OWNER_DELIVERIES``): another owner's always finds a worker free. The supervisor restarts a
worker that dies (after a pause that doubles up to ``MAX_PAUSE``), and on SIGTERM or SIGINT
asks them all to stop and waits for them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import FrameType

from service.monitoring.logs import announce

#: The queue groups of a plain ``meeple worker``, one process each (``--queue`` names).
GROUPS: tuple[tuple[str, ...], ...] = (
    ("steps",),
    ("notifications",),
    ("notifications",),
    ("bots",),
    ("bots",),
    ("analyses",),
)
#: Webhook attempts one owner may have in flight at once across the workers, when
#: ``MEEPLE_WEBHOOK_PER_OWNER`` is not set: fewer than the notification workers, so an owner
#: whose receivers never answer holds one of them and the others go on delivering.
OWNER_DELIVERIES = sum(group == ("notifications",) for group in GROUPS) - 1
#: Seconds a stopping supervisor gives its workers (an RQ worker ends its job first).
STOP_GRACE = 30.0
#: Seconds before a worker that died is started again; doubled each time it dies soon
#: after its start, up to ``MAX_PAUSE``.
FIRST_PAUSE = 1.0
MAX_PAUSE = 30.0
#: A worker that ran this long before it died is started again after ``FIRST_PAUSE``.
HEALTHY_AFTER = 60.0


@dataclass
class Member:
    """One worker process of the group and its restarts."""

    queues: tuple[str, ...]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    pause: float = FIRST_PAUSE
    restart_at: float | None = None
    restarts: int = field(default=0)

    @property
    def name(self) -> str:
        return " and ".join(self.queues)

    def environment(self) -> dict[str, str]:
        """The worker's environment: the supervisor's, with the per-owner share of webhook
        attempts the group's shape needs when none is set."""
        env = dict(os.environ)
        if not env.get("MEEPLE_WEBHOOK_PER_OWNER", "").strip():
            env["MEEPLE_WEBHOOK_PER_OWNER"] = str(max(1, OWNER_DELIVERIES))
        return env

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "service.cli",
            "worker",
            *(part for queue in self.queues for part in ("--queue", queue)),
        ]


def supervise(
    groups: Sequence[tuple[str, ...]] = GROUPS, poll: float = 0.5, log_format: str = "plain"
) -> int:
    """Run one worker per group until told to stop; 0 once they all ended (its own lines
    in ``log_format``: MEEPLE_LOG_FORMAT's)."""
    members = [Member(tuple(group)) for group in groups]
    stopping = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for member in members:
            _start(member)
        started = ", ".join(f"{m.name} (pid {m.process.pid})" for m in members if m.process)
        announce(
            f"meeple worker: a process per queue group: {started}; "
            "`meeple worker --queue NAME` runs one group alone",
            log_format,
        )
        while not stopping.wait(poll):
            now = time.monotonic()
            for member in members:
                _look_after(member, now, log_format)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _stop_all(members)
    return 0


def _start(member: Member) -> None:
    member.process = subprocess.Popen(member.command(), env=member.environment())
    member.started_at = time.monotonic()
    member.restart_at = None


def _look_after(member: Member, now: float, log_format: str = "plain") -> None:
    """Start a dead worker again once its pause is over."""
    if member.process is not None:
        code = member.process.poll()
        if code is None:
            return
        ran = now - member.started_at
        member.pause = FIRST_PAUSE if ran >= HEALTHY_AFTER else min(member.pause * 2, MAX_PAUSE)
        announce(
            f"meeple worker: the {member.name} worker ended (exit {code}); "
            f"starting it again in {member.pause:.0f} s",
            log_format,
        )
        member.process = None
        member.restart_at = now + member.pause
    if member.restart_at is not None and now >= member.restart_at:
        member.restarts += 1
        _start(member)


def _stop_all(members: list[Member]) -> None:
    """SIGTERM to every worker (RQ ends its job, then stops), SIGKILL past the grace."""
    running = [m.process for m in members if m.process is not None and m.process.poll() is None]
    for process in running:
        process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE
    for process in running:
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
