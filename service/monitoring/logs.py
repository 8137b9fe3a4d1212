"""Log lines and the request id (docs/operations.md, "Logs").

``MEEPLE_LOG_FORMAT=json`` makes every log line of a process one JSON object (``use_json``):
``time``, ``level``, ``logger``, ``message``, the ``request_id`` of the request or job it was
written for, and the fields the line was logged with (``log.info("request", extra=
{"fields": {...}})``). The HTTP edge writes one line per request, the job runners one per
job; plain (the default, ``make run``) keeps the lines as they were.

A request's id is the client's ``X-Request-ID`` when it is a valid one (``valid_request_id``),
else a new one; the answer carries it back, and the jobs the request causes carry it in their
own lines (RQ: in the job's meta; in-process: handed to the job's thread). Never a token, a
key or a header's value other than the id is written: lines name routes, statuses, games,
jobs and outcomes only.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

#: The request id of what this thread or greenlet does now (a request, or a job it caused).
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "meeple_request_id", default=None
)
#: What a client's X-Request-ID may be: 1-128 letters, digits and ``._:-`` (UUIDs, ULIDs,
#: W3C trace ids, AWS's ``Root=1-...`` ids once ``;=`` are taken out of them).
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
FORMATS = ("plain", "json")


def valid_request_id(given: str | None) -> str | None:
    """``given`` if it is a request id a log line may carry as it is, else None."""
    if given is not None and _VALID_ID.fullmatch(given):
        return given
    return None


def new_request_id() -> str:
    return uuid.uuid4().hex


def current_request_id() -> str | None:
    return REQUEST_ID.get()


@contextlib.contextmanager
def request_id_of(request_id: str | None) -> Iterator[None]:
    """Run the block as part of ``request_id``'s work (a job it caused)."""
    token = REQUEST_ID.set(request_id)
    try:
        yield
    finally:
        REQUEST_ID.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object a line (see the module's docstring)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or REQUEST_ID.get(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


#: The logger of the lines written per request and per job.
REQUESTS = logging.getLogger("meeple.request")
JOBS = logging.getLogger("meeple.job")


def use_json(stream: Any = None) -> None:
    """Every log line of this process as JSON on ``stream`` (standard error), from INFO up:
    one handler on the root logger, replacing any there."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in ("meeple.request", "meeple.job"):
        logging.getLogger(name).setLevel(logging.INFO)


def configure(log_format: str) -> None:
    """Set this process's log lines up for MEEPLE_LOG_FORMAT (plain: as they are)."""
    if log_format == "json":
        use_json()


def announce(message: str, log_format: str) -> None:
    """A command's own line on standard error (the address it serves, the workers it
    started): as it is, or as a JSON line when ``log_format`` is ``json``."""
    if log_format == "json":
        record = logging.LogRecord("meeple", logging.INFO, __file__, 0, message, None, None)
        message = JsonFormatter().format(record)
    print(message, file=sys.stderr, flush=True)


def log_job(name: str, queue: str, ok: bool, began: float, game_id: str | None) -> None:
    """The line of one job that ran (its request id is the one it runs under)."""
    fields: dict[str, Any] = {
        "kind": "job",
        "job": name,
        "queue": queue,
        "outcome": "ok" if ok else "failed",
        "duration_ms": round((time.perf_counter() - began) * 1000, 3),
    }
    if game_id is not None:
        fields["game_id"] = game_id
    JOBS.info("job", extra={"fields": fields})


def gunicorn_log_config() -> dict[str, Any]:
    """gunicorn's ``logconfig_dict`` for JSON lines: its own lines (a worker booting ...)
    through ``JsonFormatter``, and no access log (the app writes a line per request)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.monitoring.logs.JsonFormatter"}},
        "handlers": {
            "json": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            }
        },
        "root": {"level": "INFO", "handlers": ["json"]},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
            "gunicorn.access": {"level": "CRITICAL", "handlers": [], "propagate": False},
        },
    }
