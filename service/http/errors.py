"""Problems: every error response is ``application/problem+json`` (RFC 9457) with a stable code.

Domain code raises domain errors (``IllegalAction``, ``ConcurrencyConflict``,
``GameNotFound`` ...); only this module, at the HTTP edge, turns them into statuses.
Each body holds ``type, title, status, detail, code`` and sometimes more members
(``errors`` naming the invalid fields, ``current_version`` ...). ``type`` points at the
code's entry in the reference page (``/docs#problem-<code>``).
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from typing import Any

import redis
from flask import Flask, Response
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from events.store import ConcurrencyConflict, ReplicationLag, StoreError, StoreFull
from projections.fold import ReplayError, RulesVersionMismatch
from projections.ruleset import IllegalAction
from service.application.auth import AuthError
from service.application.commands import (
    AwaitingSystemStep,
    CapReached,
    CommandError,
    GameNotFound,
)
from service.http.limits import LockedOut, RateLimited, token_refused

PROBLEM_MEDIA_TYPE = "application/problem+json"

log = logging.getLogger(__name__)

#: code -> (status, title): every code the API itself may answer with (openapi and docs list
#: them); a ruleset's own illegal-action codes come with status 422 on top of these.
PROBLEMS: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "The body is not valid JSON"),
    "invalid_request": (400, "The HTTP request is malformed"),
    "bad_request": (400, "The request is malformed"),
    "invalid_header": (400, "A request header is malformed"),
    "missing_token": (401, "A seat token is needed"),
    "invalid_token": (401, "The token is not valid for this game"),
    "seat_required": (403, "Only a seat may do this"),
    "admin_required": (403, "Only the admin key may do this"),
    "metrics_forbidden": (403, "The metrics are not served to this address"),
    "not_found": (404, "No such resource"),
    "game_not_found": (404, "No such game"),
    "method_not_allowed": (405, "Method not allowed"),
    "not_acceptable": (406, "Not acceptable"),
    "version_conflict": (409, "The game has moved on"),
    "awaiting_system_step": (409, "An automatic step is pending"),
    "idempotency_key_reused": (422, "The idempotency key was used for another action"),
    "payload_too_large": (413, "The body is too large"),
    "uri_too_long": (414, "The request line is too long"),
    "expectation_failed": (417, "The expectation cannot be met"),
    "unsupported_media_type": (415, "The body must be JSON"),
    "invalid_body": (422, "The body does not match its schema"),
    "invalid_query": (422, "A query parameter is invalid"),
    "too_many_steps": (422, "Too many steps in one request"),
    "undo_allowance_spent": (422, "This game may not be undone further"),
    "limit_too_large": (422, "The page asked for is too large"),
    "unknown_ruleset": (422, "No such game to create"),
    "invalid_player_count": (422, "The game is not played by that many players"),
    "unknown_option": (422, "The game has no such option"),
    "invalid_option": (422, "An option's value does not fit the game"),
    "game_finished": (422, "The game is over"),
    "not_your_turn": (422, "It is not this seat's turn"),
    "illegal_action": (422, "The rules forbid this action"),
    "sealed_history": (403, "This part of the history is sealed"),
    "not_your_seat": (403, "Not your seat"),
    "seat_not_held": (403, "Your application does not hold this seat"),
    "too_many_apps": (429, "Too many applications from this address"),
    "game_not_finished": (403, "The game has not finished"),
    "rules_version_mismatch": (409, "The game was played under other rules"),
    "branch_point_out_of_range": (422, "No such event to branch at"),
    "nothing_to_undo": (422, "There is nothing to undo"),
    "nothing_to_redo": (422, "There is nothing to redo"),
    "not_your_action": (422, "Only your own actions may be undone or redone"),
    "turn_over": (422, "The turn is over"),
    "hidden_information_revealed": (422, "Hidden information has come to light since"),
    "before_branch_point": (422, "A sealed branch cannot undo its copied history"),
    "redraw_needs_reseed": (422, "Redrawing hidden information needs new luck"),
    "no_such_seat": (422, "No such seat"),
    "invalid_webhook_url": (422, "The webhook URL is malformed"),
    "invalid_webhook_events": (422, "No such webhook event"),
    "webhook_url_forbidden": (422, "Webhooks may not be sent to this host"),
    "too_many_webhooks": (409, "Too many webhooks"),
    "too_many_streams": (429, "Too many open streams"),
    "too_many_analyses": (429, "Too many analyses at once"),
    "budget_too_large": (422, "The analysis budget is too large"),
    "no_decision": (422, "The seat has no decision to make there"),
    "rate_limited": (429, "Too many requests"),
    "storage_quota_exceeded": (429, "Your share of the store is used up"),
    "too_many_invalid_tokens": (429, "Too many invalid tokens from this address"),
    "seats_open": (409, "The game waits for its players"),
    "seat_taken": (409, "The seat is taken"),
    "game_started": (409, "The game has started"),
    "seat_open": (409, "The seat is open"),
    "seat_is_bot": (409, "The seat is played by a bot"),
    "seats_fixed": (409, "A branch has no lobby"),
    "too_many_open_games": (429, "Too many games wait for players"),
    "too_many_bot_games": (429, "Too many games with bots are under way"),
    "request_header_fields_too_large": (431, "The request's headers are too large"),
    "internal_error": (500, "Internal error"),
    "unsupported_transfer_coding": (501, "The transfer coding is not supported"),
    "store_unavailable": (503, "The event store is unavailable"),
    "store_full": (503, "The store takes no more writes"),
    "replication_lag": (503, "The store's replicas did not confirm the write"),
    "no_analysis_worker": (503, "No worker takes analyses"),
    "not_ready": (503, "The service is not ready"),
}

_HTTP_CODES = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


class ApiError(Exception):
    """A problem raised by an HTTP handler itself (bad header, bad query ...)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.title = title or PROBLEMS.get(code, (status, code.replace("_", " ")))[1]
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def problem(
    status: int,
    code: str,
    title: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response:
    """An ``application/problem+json`` response."""
    body = problem_document(status, code, title, detail, **extra)
    response = Response(
        json.dumps(body, ensure_ascii=False), status=status, mimetype=PROBLEM_MEDIA_TYPE
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def problem_document(status: int, code: str, title: str, detail: str, **extra: Any) -> dict:
    """The body of a problem response (also written by service.http.serving, outside Flask)."""
    return {
        "type": f"/docs#problem-{code}",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }


def known_problem(code: str, detail: str, **extra: Any) -> Response:
    status, title = PROBLEMS[code]
    return problem(status, code, title, detail, **extra)


#: Seconds a client is told to wait when the replicas did not confirm a write (a failover takes
#: Sentinel some seconds).
REPLICATION_RETRY_AFTER = 1

#: Seconds a client is told to wait when the store is full (an operator must make room).
FULL_RETRY_AFTER = 60


def _full() -> Response:
    status, title = PROBLEMS["store_full"]
    detail = "The store is full and takes no more writes until room is made; reads still work."
    return problem(status, "store_full", title, detail, {"Retry-After": str(FULL_RETRY_AFTER)})


#: The answers that say when to come back: over a limit (429), a conflict that passes (409: an
#: automatic step pending), unavailable for now (503). No other answer carries ``Retry-After``.
RETRY_STATUSES = frozenset({409, 429, 503})


def settle_retry_after(response: Response) -> Response:
    """``Retry-After`` as a client can obey it, on the final answer: whole seconds rounded up
    and at least 1 (a sub-second wait shown as 0 makes an obedient client busy-loop), only on
    ``RETRY_STATUSES``, and the same seconds in a problem body's ``retry_after``."""
    value = response.headers.get("Retry-After")
    if value is None:
        return response
    if response.status_code not in RETRY_STATUSES:
        del response.headers["Retry-After"]
        return response
    try:
        seconds = max(1, math.ceil(float(value)))
    except ValueError:
        return response  # an HTTP date (none of ours): as it is
    response.headers["Retry-After"] = str(seconds)
    if response.mimetype == PROBLEM_MEDIA_TYPE and not response.is_streamed:
        body = json.loads(response.get_data())
        body["retry_after"] = seconds
        response.set_data(json.dumps(body, ensure_ascii=False))
    return response


def register_error_handlers(app: Flask) -> None:
    """Map every domain error and every HTTP error to a problem response."""

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Response:
        return problem(
            error.status, error.code, error.title, error.detail, error.headers, **error.extra
        )

    @app.errorhandler(AuthError)
    def auth_error(error: AuthError) -> Response:
        if error.code == "invalid_token":
            token_refused()  # counted against the address, never as a token of its own
        headers = {"WWW-Authenticate": 'Bearer realm="meeple"'} if error.status == 401 else {}
        status, title = PROBLEMS[error.code]
        return problem(status, error.code, title, error.message, headers)

    @app.errorhandler(GameNotFound)
    def game_not_found(error: GameNotFound) -> Response:
        return known_problem("game_not_found", f"There is no game {error.game_id!r}.")

    @app.errorhandler(IllegalAction)
    def illegal_action(error: IllegalAction) -> Response:
        return problem(422, error.code, PROBLEMS["illegal_action"][1], error.message)

    @app.errorhandler(CommandError)
    def command_error(error: CommandError) -> Response:
        status, title = PROBLEMS.get(error.code, (422, "The request cannot be done"))
        extra = {"errors": error.fields} if error.fields else {}
        return problem(status, error.code, title, error.message, **extra)

    @app.errorhandler(CapReached)
    def cap_reached(error: CapReached) -> Response:
        status, title = PROBLEMS[error.code]
        return problem(
            status, error.code, title, error.message, {"Retry-After": str(error.retry_after)}
        )

    @app.errorhandler(AwaitingSystemStep)
    def awaiting_system_step(error: AwaitingSystemStep) -> Response:
        status, title = PROBLEMS["awaiting_system_step"]
        seconds = str(app.extensions["meeple"].config.retry_after_seconds)
        detail = f"The game is waiting for its automatic step {error.step!r}; try again shortly."
        return problem(
            status, "awaiting_system_step", title, detail, {"Retry-After": seconds}, step=error.step
        )

    @app.errorhandler(ConcurrencyConflict)
    def version_conflict(error: ConcurrencyConflict) -> Response:
        return known_problem(
            "version_conflict",
            f"The game is at version {error.actual}, not {error.expected}; "
            "read it again and retry.",
            current_version=error.actual,
        )

    @app.errorhandler(ValidationError)
    def validation_error(error: ValidationError) -> Response:
        return known_problem(
            "invalid_body",
            "Some fields are invalid: " + ", ".join(_field_names(error.messages)) + ".",
            errors=error.messages,
        )

    @app.errorhandler(RateLimited)
    def rate_limited(error: RateLimited) -> Response:
        # Retry-After and the X-RateLimit-* headers are added by service.http.limits after this.
        status, title = PROBLEMS["rate_limited"]
        detail = (
            f"{error.description}: at most {error.item}. Retry after the seconds in "
            "Retry-After (also retry_after here)."
        )
        return problem(status, "rate_limited", title, detail)

    @app.errorhandler(LockedOut)
    def locked_out(error: LockedOut) -> Response:
        return known_problem(
            "too_many_invalid_tokens",
            "Too many tokens that belong to no seat came from this address; no token from "
            "it is looked at until the seconds in Retry-After have passed.",
            headers={"Retry-After": str(error.retry_after)},
        )

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        status = error.code or 500
        code = _HTTP_CODES.get(status, "bad_request" if status < 500 else "internal_error")
        title = PROBLEMS[code][1]
        detail = {
            404: "Nothing lives at this address.",
            405: "This address does not accept that method.",
            413: f"Bodies are limited to {app.config.get('MAX_CONTENT_LENGTH')} bytes.",
        }.get(status, error.description or title)
        headers = {}
        if status == 405 and error.get_response().headers.get("Allow"):
            headers["Allow"] = error.get_response().headers["Allow"]
        return problem(status, code, title, str(detail), headers)

    @app.errorhandler(StoreError)
    def store_error(error: StoreError) -> Response:
        log.exception("event store failure")
        return known_problem("store_unavailable", "The event store cannot be reached.")

    @app.errorhandler(ReplicationLag)
    def replication_lag(error: ReplicationLag) -> Response:
        log.warning("an append was not acknowledged: %s", error)
        detail = (
            "The write reached the primary but not enough of its replicas in time, so it may "
            "yet be lost. Send the same request again with the same Idempotency-Key: you get "
            "its result once the replicas have it, never a second copy."
        )
        status, title = PROBLEMS["replication_lag"]
        headers = {"Retry-After": str(REPLICATION_RETRY_AFTER)}
        return problem(status, "replication_lag", title, detail, headers)

    @app.errorhandler(StoreFull)
    def store_full(error: StoreFull) -> Response:
        log.error("the store takes no more writes: %s", error)
        return _full()

    # What the service keeps beside the events (job state, read models, queues, counters) is
    # stored in the same Redis or SQLite: its failures are the store's, never a 500.
    @app.errorhandler(redis.RedisError)
    def redis_error(error: redis.RedisError) -> Response:
        if isinstance(error, redis.exceptions.OutOfMemoryError):
            log.error("Redis takes no more writes: %s", error)
            return _full()
        log.exception("Redis failure")
        return known_problem("store_unavailable", "The store cannot be reached.")

    @app.errorhandler(sqlite3.Error)
    def sqlite_error(error: sqlite3.Error) -> Response:
        if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL:
            log.error("SQLite takes no more writes: %s", error)
            return _full()
        log.exception("SQLite failure")
        return known_problem("store_unavailable", "The store cannot be read or written.")

    @app.errorhandler(RulesVersionMismatch)
    def other_rules(error: RulesVersionMismatch) -> Response:
        # Never fold old events through changed rules: refuse, saying which rules they need.
        return known_problem(
            "rules_version_mismatch",
            f"This game was {error.reason}; it cannot be folded here. An export can be "
            "verified with `meeple verify` on a build that has those rules.",
        )

    @app.errorhandler(ReplayError)
    def replay_error(error: ReplayError) -> Response:
        log.exception("a stored game cannot be folded")
        return known_problem("internal_error", "This game's log cannot be read.")

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> Response:
        # Never a traceback or a state in the body: it might hold another seat's secrets.
        log.exception("unexpected error")
        return known_problem("internal_error", "Something went wrong on our side.")


def _field_names(messages: Any, prefix: str = "") -> list[str]:
    if isinstance(messages, dict):
        names: list[str] = []
        for key, value in messages.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            nested = _field_names(value, path) if isinstance(value, dict) else []
            names.extend(nested or [path])
        return names
    return [prefix or "body"]
