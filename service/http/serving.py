"""gunicorn workers whose own refusals are problems, like every other error of the API.

gunicorn answers a request it cannot parse (a request line without an HTTP version or with a
NUL byte, an invalid header name, a bare LF, a request line over ``limit_request_line``, more
or larger header fields than ``limit_request_fields`` / ``limit_request_field_size`` allow, a
broken chunk ...) itself, in ``Worker.handle_error``, as an HTML page, before the app ever sees
it. ``problem_worker(base)`` makes a subclass of any worker class (``gthread``, ``gevent``,
``sync``, a class or its dotted path) that answers those with ``application/problem+json`` and
a stable code instead, writes one short line about each to the error log (no access line, no
traceback: a stream of them must not flood the log) and closes the connection gracefully, so
a reset does not swallow the answer; gunicorn's limits stay as they are.

Its workers also bound request bodies before the app runs (``BoundedBodies``): one over the
app's ``MAX_CONTENT_LENGTH`` is refused as 413 ``payload_too_large`` whether it has a
Content-Length or is chunked, and a chunked body is read whole first, so a broken chunk is a
refusal like any other rather than an error inside a view (werkzeug cuts a chunked body at
the limit without a word, and the app then found it malformed JSON).

``meeple serve`` and compose run ``service.http.gevent_worker.StreamingWorker``, which mixes
``ProblemErrors`` in; a gunicorn command line may instead name one of this module's classes:
``--worker-class=service.http.serving.ThreadWorker`` (or ``GeventWorker``,
``SyncWorker``), made on first use.
"""

from __future__ import annotations

import gc
import io
import json
import socket
import time
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn import util
from gunicorn.http import errors as http_errors


class BodyTooLarge(http_errors.ParseException):
    """A request body over the app's ``MAX_CONTENT_LENGTH`` (gunicorn itself sets no limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __str__(self) -> str:
        return f"Bodies are limited to {self.limit} bytes."


#: gunicorn's refusals -> (status, reason phrase, code); any other parse error is 400.
_REFUSALS: dict[type[Exception], tuple[int, str, str]] = {
    BodyTooLarge: (413, "Content Too Large", "payload_too_large"),
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
#: How long, and how much of what a client still sends, a refused connection is read on
#: before it is closed (``_close_gracefully``).
_LINGER_SECONDS = 2.0
_LINGER_BYTES = 64 * 1024

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
    """Mixin for a gunicorn worker: its refusals are ``application/problem+json``, and the
    app behind it gets bounded bodies (``BoundedBodies``)."""

    #: The app the worker serves (gunicorn's ``Worker.load_wsgi`` sets it).
    wsgi: Any

    def load_wsgi(self) -> None:
        super().load_wsgi()  # type: ignore[misc]
        self.wsgi = BoundedBodies(self.wsgi)
        # What the app holds from now on for good (modules, the games' tables, the app) is
        # set aside from the cyclic garbage collector: a full collection traversed it all,
        # pausing every request and step of the process for 10-40 ms now and then.
        gc.freeze()

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
        addr = addr or ("", -1)  # a unix socket
        detail = (str(exc) or reason)[:_DETAIL_LENGTH]
        # The only line about it (gunicorn would add an access line): what was refused and why,
        # cut short and with control characters escaped, whatever the client sent.
        self.log.warning(  # type: ignore[attr-defined]
            "Invalid request from ip=%s (%s %s): %s", addr[0], status, code, _printable(detail)
        )
        body = json.dumps(problem_document(status, code, PROBLEMS[code][1], detail)).encode()
        head = (
            f"HTTP/1.1 {status} {reason}\r\n"
            "Connection: close\r\n"
            f"Content-Type: {PROBLEM_MEDIA_TYPE}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except Exception:
            self.log.debug("Failed to send error message.")  # type: ignore[attr-defined]
        _close_gracefully(client)


class BoundedBodies:
    """A WSGI app behind a check of each request's body, made before the app runs: a
    Content-Length over the app's ``MAX_CONTENT_LENGTH`` raises ``BodyTooLarge``, and a chunked
    body is read whole (at most one byte past the limit; ``BodyTooLarge`` beyond it, gunicorn's
    ``ParseException`` for a broken chunk) and handed on with its Content-Length. The worker
    answers either as a refusal."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app
        limit = getattr(app, "config", {}).get("MAX_CONTENT_LENGTH")  # a Flask app's
        self.limit: int | None = limit

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        length = environ.get("CONTENT_LENGTH")
        if length is not None:
            # A number: gunicorn refuses any other Content-Length.
            if self.limit is not None and int(length) > self.limit:
                raise BodyTooLarge(self.limit)
        elif "HTTP_TRANSFER_ENCODING" in environ:
            # Chunked: gunicorn refuses any other transfer coding, one beside a
            # Content-Length, and chunked HTTP/1.0.
            body = environ["wsgi.input"].read(None if self.limit is None else self.limit + 1)
            if self.limit is not None and len(body) > self.limit:
                raise BodyTooLarge(self.limit)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.app(environ, start_response)


def _close_gracefully(client: socket.socket) -> None:
    """Close ``client`` as RFC 9112 (9.6) says: the write side first, then read and drop what
    the client still sends (a body too large ...) for a moment, then the rest. A socket closed
    with input unread answers it with a reset, which may discard the answer unread."""
    try:
        client.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + _LINGER_SECONDS
        drained = 0
        while drained < _LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
            client.settimeout(left)
            received = client.recv(4096)
            if not received:
                break
            drained += len(received)
    except OSError:  # the client has gone, or the moment has passed
        pass
    finally:
        util.close(client)


def _printable(text: str) -> str:
    return "".join(char if char.isprintable() else repr(char)[1:-1] for char in text)


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
