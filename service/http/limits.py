"""Rate limits: what an anonymous client or one token may start per minute.

Creating a game and branching one are counted per client address (``request.remote_addr``,
the proxy's view of it when ``MEEPLE_TRUSTED_PROXIES`` says proxies stand in front); actions,
undo/redo and branching with a token are counted per token, under a hash of it (a request
without a token counts against its address). The admin key is not limited. With
``MEEPLE_REDIS_URL`` set, each process counts in memory and shares its counts through Redis
every ``MEEPLE_RATE_LIMIT_SYNC_MS`` milliseconds (``service.http.rate_counts``: no round trip per
request), or, with 0 there, counts in Redis on every request; without it, in the process.

A client over a limit gets 429 ``rate_limited`` with ``Retry-After``; every limited response
carries ``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``. The
limits and their defaults are in service/config.py and docs/operations.md.

The counting is the ``limits`` library's sliding-window counter; the check is ``RateLimits``
here, one pass per limited request: it answers exactly as Flask-Limiter did (the same keys,
headers and order of checks: tests/security/test_limits.py) without its generic per-request
machinery, which cost a limited request about a quarter of its CPU (docs/operations.md,
"Speed").
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, request
from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from werkzeug.http import parse_date

from service.application.auth import AuthError, bearer_token, is_admin_token
from service.config import Config
from service.http import rate_counts  # noqa: F401 - registers the meeple+redis:// counts

log = logging.getLogger(__name__)

#: The prefix of every count's key in the limits' storage.
KEY_PREFIX = "meeple-rate-limit"


@dataclass(frozen=True)
class Rule:
    """One limit: its setting (a ``Config`` field), the count it keeps, and where it applies."""

    setting: str
    #: the name of the count, shared by all of ``endpoints``
    scope: str
    #: what a client over the limit is told it did too often (completed by the limit itself)
    what: str
    #: ``address``: per client address; ``token``: per bearer token (else per address)
    key: str
    endpoints: tuple[str, ...]
    #: counted only for requests that carry a token
    only_with_token: bool = False
    #: counted only for new games with an open or a bot seat
    only_lobby_games: bool = False


RULES = (
    Rule("rate_limit_games", "games", "Too many new games from this address", "address",
         ("api.create_game",)),
    Rule("rate_limit_branches", "branches", "Too many branches from this address", "address",
         ("branches.post_branch",)),
    Rule("rate_limit_token_branches", "token-branches", "Too many branches with this token",
         "token", ("branches.post_branch",), only_with_token=True),
    Rule("rate_limit_actions", "actions", "Too many actions with this token", "token",
         ("api.post_action", "branches.post_seat_action")),
    Rule("rate_limit_undo", "undo", "Too many undos and redos with this token", "token",
         ("undo.post_undo", "undo.post_redo")),
    Rule("rate_limit_analyses", "analyses", "Too many analyses asked for", "token",
         ("analyses.post_analysis",)),
    Rule("rate_limit_lobby_games", "lobby-games",
         "Too many new games with open or bot seats from this address", "address",
         ("api.create_game",), only_lobby_games=True),
    Rule("rate_limit_seats", "seats", "Too many seat changes from this address", "address",
         ("lobby.join_seat", "lobby.leave_seat", "lobby.post_seat_token", "lobby.post_seat_bot")),
)  # fmt: skip

#: Every endpoint that may answer 429 (openapi.yaml says so).
LIMITED_ENDPOINTS = frozenset(endpoint for rule in RULES for endpoint in rule.endpoints)

#: Seconds between two checks that an unreachable limits store is back: 2, 4 ... 32, 1, 2 ...
BACKEND_CHECKS = 5


class RateLimited(Exception):
    """A request over one of its limits (answered 429 ``rate_limited``: service.http.errors)."""

    def __init__(self, rule: Rule, item: RateLimitItem) -> None:
        super().__init__(f"{rule.what}: at most {item}")
        self.rule = rule
        self.item = item

    @property
    def description(self) -> str:
        return self.rule.what


@dataclass(frozen=True)
class Check:
    """One limit of one rule (a rule's setting may hold several, "30/minute;300/hour")."""

    rule: Rule
    item: RateLimitItem


#: The count a limited request was checked against, for its headers: (item, key parts).
Counted = tuple[RateLimitItem, tuple[str, str, str]]
#: Where a request keeps its ``Counted`` (its WSGI environ: one per request, whatever the
#: application context).
COUNTED = "meeple.rate_limit"


class RateLimits:
    """The limits of ``RULES`` on an app's views: one check before a limited view runs, the
    ``X-RateLimit-*`` and ``Retry-After`` headers on its answer.

    The order and the headers are Flask-Limiter's, as the API always answered: an endpoint's
    limits are checked shortest window first (by rule, then as written, among equal
    windows), each counted until one is over; the headers show the one over, else the first
    counted. A store that fails falls back to counting in memory (logged) and is tried again
    every few seconds.
    """

    def __init__(self, config: Config, storage_uri: str, storage_options: dict[str, Any]) -> None:
        self.admin_key = config.admin_key
        self.storage = storage_from_string(storage_uri, **storage_options)
        self._limiter = SlidingWindowCounterRateLimiter(self.storage)
        self._fallback = SlidingWindowCounterRateLimiter(MemoryStorage())
        self._storage_dead = False
        self._last_backend_check = 0.0
        self._backend_checks = 0
        #: endpoint -> its checks, in the order they are made
        self.checks: dict[str, tuple[Check, ...]] = {}
        for endpoint in sorted(LIMITED_ENDPOINTS):
            found = [
                Check(rule, item)
                for rule in RULES
                if endpoint in rule.endpoints
                for item in parse_many(getattr(config, rule.setting))
            ]
            # Stable: among limits of equal windows, the order of RULES and of the setting.
            found.sort(key=lambda check: check.item.GRANULARITY.seconds)
            self.checks[endpoint] = tuple(found)

    @property
    def limiter(self) -> SlidingWindowCounterRateLimiter:
        return self._fallback if self._storage_dead else self._limiter

    def limit(self, endpoint: str, view: Callable[..., Any]) -> Callable[..., Any]:
        """``view``, checked against ``endpoint``'s limits before it runs."""
        checks = self.checks[endpoint]

        @functools.wraps(view)
        def limited(*args: Any, **kwargs: Any) -> Any:
            self.check(checks)
            return view(*args, **kwargs)

        return limited

    def check(self, checks: tuple[Check, ...]) -> None:
        """Count this request against ``checks``; RateLimited when one is over."""
        token = _bearer()
        if is_admin_token(token, self.admin_key):
            return
        if self._storage_dead:
            self._try_backend()
        self._counting("count a request; not limited", lambda: self._count(checks, token))

    def _count(self, checks: tuple[Check, ...], token: str | None) -> None:
        limiter = self.limiter
        shown: Counted | None = None
        address = client_address()
        for check in checks:
            rule = check.rule
            if rule.only_with_token and token is None:
                continue
            if rule.only_lobby_games and _not_a_lobby_game():
                continue
            who = address if rule.key == "address" or token is None else _token_who(token)
            key = (KEY_PREFIX, who, rule.scope)
            if shown is None:
                shown = (check.item, key)
            if not limiter.hit(check.item, *key):
                request.environ[COUNTED] = (check.item, key)
                raise RateLimited(rule, check.item)
        request.environ[COUNTED] = shown

    def _try_backend(self) -> None:
        """Whether the store is back, asked at growing intervals while it is not."""
        if self._backend_checks > BACKEND_CHECKS:
            self._backend_checks = 0
        now = time.time()
        if now - self._last_backend_check <= 2**self._backend_checks:
            return
        self._last_backend_check = now
        self._backend_checks += 1
        try:
            back = bool(self.storage.check())
        except Exception:
            back = False
        if back:
            log.info("Rate limit storage recovered")
            self._storage_dead = False
            self._backend_checks = 0

    def add_headers(self, response: Response) -> Response:
        """The limit this request was counted against, in the answer's headers."""
        counted: Counted | None = request.environ.get(COUNTED)
        if counted is None:
            return response
        self._counting("add the headers", lambda: self._add_headers(response, *counted))
        return response

    def _counting(self, what: str, run: Callable[[], None]) -> None:
        """``run`` on the store; when the store fails, once more on the in-memory fallback
        (from then on until the store is back, logged); when that fails too, log and let
        the request through."""
        try:
            run()
        except RateLimited:
            raise
        except Exception:
            if self._storage_dead:
                log.exception("rate limits: could not %s", what)
                return
            log.warning("Rate limit storage unreachable - falling back to in-memory storage")
            self._storage_dead = True
            run()

    def _add_headers(self, response: Response, item: RateLimitItem, key: tuple[str, ...]) -> None:
        reset, remaining = self.limiter.get_window_stats(item, *key)
        reset_at = int(reset + 1)
        headers = response.headers
        headers.add("X-RateLimit-Limit", str(item.amount))
        headers.add("X-RateLimit-Remaining", str(remaining))
        headers.add("X-RateLimit-Reset", str(reset_at))
        # An answer that says when to come back itself (409 awaiting a step) keeps the later.
        existing = headers.get("Retry-After")
        if existing is not None:
            retry_at: Any = parse_date(existing)
            if retry_at is None:
                retry_at = time.time() + int(existing)
            else:
                retry_at = time.mktime(retry_at.timetuple())
            reset_at = max(int(retry_at), reset_at)
        headers.set("Retry-After", str(int(reset_at - time.time())))


def install_rate_limits(app: Flask, config: Config) -> RateLimits | None:
    """Limit ``app``'s views as ``RULES`` say (after its blueprints are registered)."""
    if not config.rate_limits:
        return None
    storage_uri, storage_options = "memory://", {}
    if config.redis_url and config.rate_limit_sync_ms > 0:
        # Counted in the process, shared through Redis in the background (service.http.rate_counts).
        storage_uri = "meeple+" + config.redis_url
        storage_options = {"sync_interval": config.rate_limit_sync_ms / 1000}
    elif config.redis_url:
        storage_uri = config.redis_url
    limits = RateLimits(config, storage_uri, storage_options)
    for endpoint in limits.checks:
        # A missing endpoint is a limit silently gone: fail at start instead.
        app.view_functions[endpoint] = limits.limit(endpoint, app.view_functions[endpoint])
    app.after_request(limits.add_headers)
    app.extensions["meeple_rate_limits"] = limits
    return limits


def client_address() -> str:
    return f"address:{request.remote_addr or 'unknown'}"


def _token_who(token: str) -> str:
    return f"token:{token_key(token)}"


def token_key(token: str) -> str:
    """What the limits keep of a token: a hash of its own, not the seat hash of the log."""
    return hashlib.sha256(b"meeple rate limit\0" + token.encode()).hexdigest()[:32]


def _bearer() -> str | None:
    try:
        return bearer_token(request.headers.get("Authorization"))
    except AuthError:
        return None  # refused as invalid_token by the view; counted against the address


def _not_a_lobby_game() -> bool:
    """Whether a POST /games body seats only named players (a malformed body counts as a
    lobby game: the view refuses it anyway)."""
    try:
        body = json.loads(request.get_data(cache=True) or b"null")
    except Exception:  # too large, too deep, not JSON: the view answers with its problem
        return False
    players = body.get("players") if isinstance(body, dict) else None
    return isinstance(players, list) and all(isinstance(seat, str) for seat in players)
