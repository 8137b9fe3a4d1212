"""The gunicorn worker class of ``meeple serve`` and compose: gunicorn's gevent worker, so that
an open live stream (SSE) is a greenlet waiting on its game's feed, not a request thread.

``gunicorn --worker-class service.http.gevent_worker.StreamingWorker`` (docs/operations.md says why
gevent and what it changes). On top of gunicorn's ``GeventWorker`` it:

- raises the process's soft limit of open files towards ``worker_connections`` (each open
  stream holds a socket; the usual soft limit of 1,024 would refuse connections long before
  the worker's capacity);
- answers the requests gunicorn cannot parse (a bad request line, an invalid header, too long
  a URL, a broken chunk ...) and bodies over the limit as problems, one log line each
  (``service.http.serving.ProblemErrors``);
- asks every open stream to end at once when the worker is told to stop (SIGTERM), so a
  restart does not wait ``graceful_timeout`` for streams that would otherwise run their
  whole lifetime; their clients reconnect with ``Last-Event-ID`` and miss nothing.
"""

from __future__ import annotations

import resource
from typing import Any

import gevent
from gunicorn.workers.ggevent import GeventWorker

from service.http.serving import ProblemErrors

#: Descriptors beyond the connections: the store's files, Redis connections, logs, pipes.
SPARE_FILES = 256


def raise_open_files_limit(wanted: int) -> int:
    """Raise the soft limit of open files to ``wanted`` (never above the hard limit, never
    lowered); the soft limit afterwards."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


class StreamingWorker(ProblemErrors, GeventWorker):
    """gunicorn's gevent worker that ends live streams promptly on shutdown and answers
    gunicorn's own refusals as problems (``service.http.serving``)."""

    def init_process(self) -> None:
        raise_open_files_limit(self.cfg.worker_connections + SPARE_FILES)
        super().init_process()

    def handle_exit(self, sig: int, frame: Any) -> None:
        # Imported here, not above: gunicorn's arbiter imports this module before the worker
        # patches the standard library, and the service's modules (redis-py ...) should be
        # imported only after that.
        from service.live.hub import end_all_streams

        # In a greenlet of its own: a signal handler must not wait for a lock.
        gevent.spawn(end_all_streams)
        super().handle_exit(sig, frame)
