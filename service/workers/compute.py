"""Compute in processes of its own: bot turns and analyses never run where requests are served
(docs/operations.md, "Where compute runs").

A bot's search or an analysis is CPU-bound Python: on ``meeple serve``'s gevent loop it holds
every request of the process until it ends (a 1,000-playout bot turn stalled ``/health`` for
half a minute), and in a thread it holds the GIL that the request threads need. So the
embedded default runs them in a ``ComputePool``: a few child processes (``python -m
service.workers.compute``) that the service starts on first use and stops when it closes.

- A call sends the child a function's dotted name and its arguments (pickled: the parent
  names the function, never a client), and waits for the answer without blocking the
  process: the pipes are read after ``select`` says so, and under gevent both are
  cooperative, so the loop serves requests meanwhile.
- A function that reports progress (an analysis) is given ``report(value) -> bool``: each
  report goes to the parent's ``on_progress``, and its answer (stop now?) comes back.
- Every call has a deadline: a child that passes it (a search that never ends, a bug that
  loops) is killed and the call raises ``ComputeTimedOut``; the pool starts a new child for
  the next call. Closing the pool kills every child, busy or not, at once.
- The pool holds at most ``size`` children, each running one call at a time; a call that
  finds them all busy waits its turn. The children give way to the server (``be_nice``:
  nicer, ``SCHED_IDLE``, and off one core), so on a machine short of cores the requests and
  steps get the CPU first.

An RQ worker is already a process of its own: there ``run_here`` runs the same functions in
the worker process (``service.workers.jobs.Jobs.compute``).
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import logging
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from service.application.services import (
    CallFailed,
    ComputeClosed,
    ComputeFailed,
    ComputeTimedOut,
    Progress,
)

__all__ = ["CallFailed", "ComputeClosed", "ComputeFailed", "ComputePool", "ComputeTimedOut"]

log = logging.getLogger(__name__)

#: A frame's length, before its pickled body.
_LENGTH = struct.Struct("!I")
#: How much nicer than the process that serves requests and steps a computation runs: on a
#: machine short of cores, the scheduler gives the requests and steps their CPU first.
NICENESS = 10
#: Cores a computation never runs on, when it may use more than that: the first of those it
#: may use, left to the server and its steps.
SERVING_CORES = 1
#: Seconds a closing pool waits for a child to end after SIGTERM before it kills it.
STOP_GRACE = 1.0


def resolve(name: str) -> Callable[..., Any]:
    """The function a dotted ``module:function`` name gives."""
    module, _, function = name.partition(":")
    found = getattr(importlib.import_module(module), function)
    if not callable(found):
        raise TypeError(f"{name} is not a function")
    return found


#: Set when this process is told to stop (an RQ worker's SIGTERM): a computation running
#: here ends at its next report (``run_here``) instead of holding the stop up for its whole
#: budget; its job is left undone (a bot's turn stays due, and a sweep plays it again).
STOPPING = threading.Event()


def run_here(name: str, args: tuple[Any, ...], on_progress: Progress | None = None) -> Any:
    """Run the function in this process (an RQ worker: already a process of its own)."""

    def report(value: Any) -> bool:
        if STOPPING.is_set():
            raise ComputeClosed("this process is stopping")
        return bool(on_progress(value)) if on_progress is not None and value is not None else False

    return resolve(name)(*args, report=report)


# -- the parent's side ----------------------------------------------------------------------


class Child:
    """One child process and the two ends of its pipes."""

    def __init__(self, process: subprocess.Popen[bytes], reader: int, writer: int) -> None:
        self.process = process
        self.reader = reader
        self.writer = writer
        self._buffer = b""

    @classmethod
    def start(cls) -> Child:
        # The child's requests come on its stdin; its answers go to a pipe of its own
        # (``--answers FD``), so nothing it prints can be taken for an answer.
        answers_read, answers_write = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "service.workers.compute", "--answers", str(answers_write)],
                stdin=subprocess.PIPE,
                pass_fds=(answers_write,),
                env=env,
                close_fds=True,
                start_new_session=True,  # a Ctrl-C to the service is the service's to pass on
            )
        finally:
            os.close(answers_write)
        assert process.stdin is not None
        writer = os.dup(process.stdin.fileno())
        process.stdin.close()
        os.set_blocking(writer, False)
        os.set_blocking(answers_read, False)
        return cls(process, answers_read, writer)

    def send(self, message: Any, deadline: float) -> None:
        body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        data = memoryview(_LENGTH.pack(len(body)) + body)
        while data:
            self._wait(self.writer, deadline, write=True)
            try:
                written = os.write(self.writer, data)
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise ComputeFailed("the compute process ended") from None
            data = data[written:]

    def receive(self, deadline: float) -> Any:
        header = self._read(_LENGTH.size, deadline)
        (length,) = _LENGTH.unpack(header)
        return pickle.loads(self._read(length, deadline))

    def _read(self, count: int, deadline: float) -> bytes:
        while len(self._buffer) < count:
            self._wait(self.reader, deadline, write=False)
            try:
                chunk = os.read(self.reader, max(65536, count - len(self._buffer)))
            except BlockingIOError:
                continue
            if not chunk:
                raise ComputeFailed(f"the compute process ended ({self.process.poll()})")
            self._buffer += chunk
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        return taken

    def _wait(self, fd: int, deadline: float, write: bool) -> None:
        """Until ``fd`` is ready; ``select`` is gevent's under gevent, so this yields."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ComputeTimedOut("the computation passed its deadline")
            try:
                ready = (
                    select.select([], [fd], [], left)
                    if write
                    else select.select([fd], [], [], left)
                )
            except InterruptedError:
                continue
            except OSError as error:
                if error.errno == errno.EBADF:
                    raise ComputeClosed("the compute pool closed") from None
                raise
            if ready[1 if write else 0]:
                return

    def kill(self) -> None:
        """Kill the child at once; whoever waits on its answer hears it end."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    def stop(self, grace: float = 0.0) -> None:
        """End the child (SIGTERM, then SIGKILL after ``grace``) and close its pipes (only
        by whoever holds the child: no other thread waits on them)."""
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGTERM if grace > 0 else signal.SIGKILL)
                self.process.wait(timeout=grace if grace > 0 else 5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
            except ProcessLookupError:
                pass
        for fd in (self.writer, self.reader):
            with contextlib.suppress(OSError):
                os.close(fd)


_pools: weakref.WeakSet[ComputePool] = weakref.WeakSet()


def close_all() -> None:
    """Close every pool of this process (it is exiting): no child outlives it, and no thread
    that waits on a child holds the exit up."""
    for pool in list(_pools):
        pool.close()


# Before the interpreter joins its threads at exit (a job thread waiting on a child's answer
# would hold the exit up until the search ends): threading's own exit hooks run first.
_register_at_exit = getattr(threading, "_register_atexit", None)
if _register_at_exit is not None:
    _register_at_exit(close_all)


class ComputePool:
    """At most ``size`` child processes, each running one call at a time."""

    def __init__(self, name: str, size: int) -> None:
        if size < 1:
            raise ValueError(f"a compute pool needs at least one process, not {size}")
        _pools.add(self)
        self.name = name
        self.size = size
        self._lock = threading.Lock()
        self._free = threading.Semaphore(size)
        self._idle: list[Child] = []
        self._busy: set[Child] = set()
        self._closed = False
        #: Calls waiting for a free child now, and calls that ran (for tests and /health).
        self.waiting = 0
        self.started = 0

    def run(
        self,
        name: str,
        args: tuple[Any, ...],
        seconds: float,
        on_progress: Progress | None = None,
    ) -> Any:
        """The function's result, computed in a child within ``seconds`` (from now, waiting
        for a free child included); ``ComputeTimedOut`` past them."""
        deadline = time.monotonic() + seconds
        with self._lock:
            self.waiting += 1
        try:
            taken = self._free.acquire(timeout=max(0.0, seconds))
        finally:
            with self._lock:
                self.waiting -= 1
        if not taken:
            raise ComputeTimedOut(f"no {self.name} process was free within {seconds:g} s")
        try:
            child = self._take()
            try:
                answer = self._call(child, name, args, deadline, on_progress)
            except CallFailed:
                self._give_back(child)
                raise
            except ComputeTimedOut:
                self._discard(child)
                raise
            except ComputeFailed as failure:
                self._discard(child)
                if self._closed:
                    raise ComputeClosed("the compute pool closed") from failure
                raise
            except BaseException:
                self._discard(child)
                raise
            self._give_back(child)
            return answer
        finally:
            self._free.release()

    def _call(
        self,
        child: Child,
        name: str,
        args: tuple[Any, ...],
        deadline: float,
        on_progress: Progress | None,
    ) -> Any:
        child.send(("call", name, args, on_progress is not None), deadline)
        while True:
            kind, value = child.receive(deadline)
            if kind == "progress":
                stop = bool(on_progress(value)) if on_progress is not None else False
                child.send(("answer", stop), deadline)
            elif kind == "done":
                return value
            elif kind == "error":
                raise CallFailed(str(value))
            else:
                raise ComputeFailed(f"a compute process said {kind!r}")

    def _take(self) -> Child:
        with self._lock:
            if self._closed:
                raise ComputeClosed("the compute pool closed")
            child = self._idle.pop() if self._idle else None
        if child is None or child.process.poll() is not None:
            if child is not None:
                child.stop()
            child = Child.start()
            self.started += 1
        with self._lock:
            if self._closed:
                child.stop()
                raise ComputeClosed("the compute pool closed")
            self._busy.add(child)
        return child

    def _give_back(self, child: Child) -> None:
        with self._lock:
            self._busy.discard(child)
            if not self._closed:
                self._idle.append(child)
                return
        child.stop()

    def _discard(self, child: Child) -> None:
        with self._lock:
            self._busy.discard(child)
        child.stop()

    def processes(self) -> list[int]:
        """The children's process ids (idle and busy)."""
        with self._lock:
            return [child.process.pid for child in (*self._idle, *self._busy)]

    def close(self) -> None:
        """Stop every child now, busy ones included (their calls raise ``ComputeClosed``)."""
        with self._lock:
            self._closed = True
            children = [*self._idle, *self._busy]
            self._idle.clear()
            busy = set(self._busy)
        for child in children:
            if child in busy:
                child.kill()  # its caller hears it end, and closes its pipes
            else:
                child.stop(grace=STOP_GRACE)


# -- the child's side -----------------------------------------------------------------------


def be_nice() -> None:
    """Give way to the processes that serve requests and steps (a computation's process).

    Three things, each where the system allows it: the process is ``NICENESS`` nicer; it runs
    under ``SCHED_IDLE``, so a request or a step that wakes up takes its core at once instead
    of waiting out the computation's time slice; and it keeps off ``SERVING_CORES`` of the
    cores it may use, so the server always has a core no computation competes for (a bot
    game at the largest budget took a step's p99 from 4 to 24 ms on two cores without it).
    """
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    with contextlib.suppress(OSError, AttributeError):
        allowed = sorted(os.sched_getaffinity(0))
        if len(allowed) > SERVING_CORES:
            os.sched_setaffinity(0, allowed[SERVING_CORES:])


def _read_exactly(fd: int, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = os.read(fd, count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _receive(fd: int) -> Any:
    header = _read_exactly(fd, _LENGTH.size)
    if header is None:
        return None
    body = _read_exactly(fd, _LENGTH.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def _send(fd: int, message: Any) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _LENGTH.pack(len(body)) + body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def serve(requests: int, answers: int) -> int:
    """The child's loop: one call after another until its parent closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when a child ends
    while True:
        message = _receive(requests)
        if message is None:
            return 0
        _, name, args, reports = message

        def report(value: Any, reports: bool = reports) -> bool:
            if not reports:
                return False
            _send(answers, ("progress", value))
            answer = _receive(requests)
            if answer is None:
                raise SystemExit(0)
            return bool(answer[1])

        try:
            result = resolve(name)(*args, report=report)
        except Exception:
            _send(answers, ("error", traceback.format_exc(limit=20)))
            continue
        _send(answers, ("done", result))


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "--answers" or not argv[1].isdigit():
        print("usage: python -m service.workers.compute --answers FD", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    be_nice()
    return serve(sys.stdin.fileno(), int(argv[1]))


if __name__ == "__main__":  # pragma: no cover - the child process
    sys.exit(main(sys.argv[1:]))
