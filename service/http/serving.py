"""gunicorn workers whose own refusals are problems, like every other error of the API.

gunicorn answers a request it cannot parse (an invalid header name, a request line over
``limit_request_line``, more or larger header fields than ``limit_request_fields`` /
``limit_request_field_size`` allow ...) itself, in ``Worker.handle_error``, as an HTML page,
before the app ever sees it. ``problem_worker(base)`` makes a subclass of any worker class
(``gthread``, ``gevent``, ``sync``, a class or its dotted path) that answers those with
``application/problem+json`` and a stable code instead; gunicorn's limits stay as they are.

``meeple serve`` and compose run ``service.http.gevent_worker.StreamingWorker``, which mixes
``ProblemErrors`` in; a gunicorn command line may instead name one of this module's classes:
``--worker-class=service.http.serving.ThreadWorker`` (or ``GeventWorker``,
``SyncWorker``), made on first use.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from gunicorn import util
from gunicorn.http import errors as http_errors
from gunicorn.http.wsgi import Response, default_environ

#: gunicorn's refusals -> (status, reason phrase, code); any other parse error is 400.
_REFUSALS: dict[type[Exception], tuple[int, str, str]] = {
    http_errors.LimitRequestLine: (414, "URI Too Long", "uri_too_long"),
    http_errors.LimitRequestHeaders: (
        431,
        "Request Header Fields Too Large",
        "request_header_fields_too_large",
    ),
    http_errors.UnsupportedTransferCoding: (
        501,
        "Not Implemented",
        "unsupported_transfer_coding",
    ),
    http_errors.ExpectationFailed: (417, "Expectation Failed", "expectation_failed"),
}
_BAD_REQUEST = (400, "Bad Request", "invalid_request")
#: Left to gunicorn: the app's own faults (a bad response header: 500), a server
#: misconfiguration, and the proxy protocol's refusal (403).
_NOT_THE_CLIENTS = tuple(
    getattr(http_errors, name)
    for name in (
        "InvalidResponseHeader",
        "InvalidResponseHeaderName",
        "ConfigurationProblem",
        "ForbiddenProxyRequest",
    )
    if hasattr(http_errors, name)
)
_DETAIL_LENGTH = 200

#: Names this module offers for gunicorn's --worker-class, and the worker each extends.
_NAMED = {"ThreadWorker": "gthread", "GeventWorker": "gevent", "SyncWorker": "sync"}


def refusal(exc: BaseException) -> tuple[int, str, str] | None:
    """(status, reason, code) of a request gunicorn refuses to parse; None if not one."""
    if not isinstance(exc, http_errors.ParseException) or isinstance(exc, _NOT_THE_CLIENTS):
        return None
    for kind, answer in _REFUSALS.items():
        if isinstance(exc, kind):
            return answer
    return _BAD_REQUEST


class ProblemErrors:
    """Mixin for a gunicorn worker: its refusals are ``application/problem+json``."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        answer = refusal(exc)
        if answer is None:
            super().handle_error(req, client, addr, exc)  # type: ignore[misc]
            return
        # Imported here: gunicorn's arbiter imports this module (by the worker class's dotted
        # path) before a gevent worker patches the standard library, and the service's
        # modules (Flask, redis-py ...) should be imported only after that.
        from service.http.errors import PROBLEM_MEDIA_TYPE, PROBLEMS, problem_document

        status, reason, code = answer
        started = datetime.now()
        addr = addr or ("", -1)  # a unix socket
        self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)  # type: ignore[attr-defined]
        detail = (str(exc) or reason)[:_DETAIL_LENGTH]
        body = json.dumps(problem_document(status, code, PROBLEMS[code][1], detail)).encode()
        head = (
            f"HTTP/1.1 {status} {reason}\r\n"
            "Connection: close\r\n"
            f"Content-Type: {PROBLEM_MEDIA_TYPE}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        req = req or getattr(exc, "req", None)
        if req is not None:  # an access-log line, as gunicorn writes for its own answers
            cfg = self.cfg  # type: ignore[attr-defined]
            environ = default_environ(req, client, cfg)
            environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = addr[0], str(addr[1])
            response = Response(req, client, cfg)
            response.status = f"{status} {reason}"
            response.response_length = len(body)
            self.log.access(response, req, environ, datetime.now() - started)  # type: ignore[attr-defined]
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except Exception:
            self.log.debug("Failed to send error message.")  # type: ignore[attr-defined]


def problem_worker(base: type | str) -> type:
    """A subclass of the gunicorn worker class ``base`` (a class, ``"gthread"``, a dotted
    path ...) that answers gunicorn's own refusals as problems."""
    worker = base if isinstance(base, type) else util.load_class(base)
    if issubclass(worker, ProblemErrors):
        return worker
    return type(f"Problem{worker.__name__}", (ProblemErrors, worker), {})


def __getattr__(name: str) -> type:
    if name in _NAMED:
        worker = problem_worker(_NAMED[name])
        globals()[name] = worker
        return worker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
