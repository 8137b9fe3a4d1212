"""What every request leaves behind for the operator (docs/operations.md, "Metrics" and
"Logs"): its request id (taken from a valid ``X-Request-ID``, else new; sent back in the
answer's ``X-Request-ID``, and carried into the jobs it causes), its count and duration by
route template and status, and, with ``MEEPLE_LOG_FORMAT=json``, one JSON line.
"""

from __future__ import annotations

import time

from flask import Flask, Response, request

from service.http.limits import client_address
from service.monitoring import logs, metrics

#: The header a request id comes in and goes back in.
HEADER = "X-Request-ID"
#: Where a request keeps its id, its start and its context token (its WSGI environ).
_STARTED = "meeple.observing.started"
_TOKEN = "meeple.observing.token"


def install_observing(app: Flask, log_format: str) -> None:
    """Give every request of ``app`` its id, its metrics and (json) its log line. Installed
    before the other after-request functions, so it runs last and sees the final status."""
    lines = log_format == "json"

    @app.before_request
    def take_request_id() -> None:
        request.environ[_STARTED] = time.perf_counter()
        request_id = logs.valid_request_id(request.headers.get(HEADER)) or logs.new_request_id()
        request.environ[_TOKEN] = logs.REQUEST_ID.set(request_id)

    @app.after_request
    def observe(response: Response) -> Response:
        request_id = logs.current_request_id()
        if request_id is not None:
            response.headers[HEADER] = request_id
        started = request.environ.get(_STARTED)
        if started is None:
            return response
        seconds = time.perf_counter() - started
        route = request.url_rule.rule if request.url_rule is not None else "unmatched"
        metrics.observe_request(request.method, route, response.status_code, seconds)
        if lines:
            # The path's template and the path (its game, never its query); no header.
            logs.REQUESTS.info(
                "request",
                extra={
                    "fields": {
                        "kind": "request",
                        "method": request.method,
                        "route": route,
                        "path": request.path,
                        "status": response.status_code,
                        "duration_ms": round(seconds * 1000, 3),
                        "client": client_address(request.remote_addr),
                    }
                },
            )
        return response

    @app.teardown_request
    def forget_request_id(error: BaseException | None = None) -> None:
        token = request.environ.pop(_TOKEN, None)
        if token is not None:
            try:
                logs.REQUEST_ID.reset(token)
            except ValueError:  # set in another context (a streamed answer's end)
                logs.REQUEST_ID.set(None)
