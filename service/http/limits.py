"""Rate limits: what an anonymous client, one token or one address may start, and how many
invalid tokens one address may send.

Creating a game, branching one and reading games' histories without a token (events,
timeline, audit, export) are counted per client address (``request.remote_addr``,
the proxy's view of it when ``MEEPLE_TRUSTED_PROXIES`` says proxies stand in front; an IPv6
address counts as its /64 network); actions, undo/redo and branching with a token are counted
per token, under a hash of it, once the token has proved itself (a request without a token
counts against its address). A token that proves nothing is never counted as a token: each
``invalid_token`` answer counts against its address instead (``MEEPLE_RATE_LIMIT_INVALID_TOKENS``),
and an address that sends too many is locked out for the window it filled: any request of it
that carries a token gets 429 ``too_many_invalid_tokens`` before the token is looked at. The
admin key is not limited.

The counts are sliding logs (``service.http.rate_counts``), exact across processes: in Redis
when ``MEEPLE_REDIS_URL`` is set (one script per limited request, one round trip), else in the
process; when Redis stops answering, in the process until it is back (logged).

A client over a limit gets 429 ``rate_limited`` with ``Retry-After``; every counted response
carries ``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``. The limits
and their defaults are in service/config.py and docs/operations.md.

The order and the headers are Flask-Limiter's, as the API always answered: an endpoint's
limits are checked shortest window first (by rule, then as written, among equal windows), each
counted until one is over; the headers show the one over, else the first counted
(tests/security/test_limits.py).
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from flask import Flask, Response, current_app, request
from limits import RateLimitItem, parse_many

from service.application.auth import AuthError, bearer_token, is_admin_token
from service.config import Config
from service.http import app_keys
from service.http.rate_counts import Count, Counts, Lockouts, MemoryCounts, RedisCounts
from service.monitoring import metrics

log = logging.getLogger(__name__)

#: The prefix of every count's key in the counts' store.
KEY_PREFIX = "meeple-rate-limit"
#: Where the app keeps its ``RateLimits`` (absent when the limits are off).
EXTENSION = "meeple_rate_limits"


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
    #: counted only for requests that carry none (a token that proves nothing is refused,
    #: and counted as such: ``token_refused``)
    only_anonymous: bool = False
    #: counted only for new games with an open or a bot seat
    only_lobby_games: bool = False
    #: with a client application's key, counted per application instead of per address or
    #: token (its address and its tokens are then nobody's but its own business)
    per_app: bool = True


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
         ("analyses.post_analysis", "reviews.post_review")),
    Rule("rate_limit_lobby_games", "lobby-games",
         "Too many new games with open or bot seats from this address", "address",
         ("api.create_game",), only_lobby_games=True),
    Rule("rate_limit_seats", "seats", "Too many seat changes from this address", "address",
         ("lobby.join_seat", "lobby.leave_seat", "lobby.post_seat_token", "lobby.post_seat_bot")),
    Rule("rate_limit_history_reads", "history-reads",
         "Too many anonymous reads of games' histories from this address", "address",
         ("api.get_events", "time_travel.get_timeline", "audits.get_audit",
          "audits.get_export"), only_anonymous=True),
    Rule("rate_limit_apps", "apps", "Too many applications registered from this address",
         "address", ("apps.register_app",), per_app=False),
)  # fmt: skip

#: Every endpoint that may answer 429 (openapi.yaml says so).
LIMITED_ENDPOINTS = frozenset(endpoint for rule in RULES for endpoint in rule.endpoints)

#: Seconds between two checks that an unreachable limits store is back: 2, 4 ... 32, 1, 2 ...
BACKEND_CHECKS = 5

T = TypeVar("T")


class RateLimited(Exception):
    """A request over one of its limits (answered 429 ``rate_limited``: service.http.errors)."""

    def __init__(self, rule: Rule, item: RateLimitItem) -> None:
        super().__init__(f"{rule.what}: at most {item}")
        self.rule = rule
        self.item = item

    @property
    def description(self) -> str:
        return self.rule.what


class LockedOut(Exception):
    """A request with a token from an address locked out for the invalid tokens it sent
    (answered 429 ``too_many_invalid_tokens``: service.http.errors)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"locked out for {seconds:.0f} s")
        #: how long the lock-out lasts yet
        self.retry_after = max(1, math.ceil(seconds))


@dataclass(frozen=True)
class Check:
    """One limit of one rule (a rule's setting may hold several, "30/minute;300/hour")."""

    rule: Rule
    item: RateLimitItem


@dataclass(frozen=True)
class Counted:
    """The count a limited request was checked against, for its headers."""

    item: RateLimitItem
    remaining: int
    #: when its oldest request leaves the window (Unix time)
    reset_at: float


#: Where a request keeps its ``Counted`` and the checks left until its token proves itself
#: (its WSGI environ: one per request, whatever the application context).
COUNTED = "meeple.rate_limit"
PENDING = "meeple.rate_limit.pending"


class RateLimits:
    """The limits of ``RULES`` on an app's views: one count before a limited view runs (or,
    for a request with a token where a limit counts per token, once the token has proved
    itself), the ``X-RateLimit-*`` and ``Retry-After`` headers on its answer, and the count
    and lock-out of invalid tokens per address.

    A store that fails falls back to counting in memory (logged) and is tried again every few
    seconds.
    """

    def __init__(self, config: Config, counts: Counts) -> None:
        self.admin_key = config.admin_key
        self.counts = counts
        self._fallback = MemoryCounts()
        self._counts_dead = False
        self._last_backend_check = 0.0
        self._backend_checks = 0
        #: the invalid tokens an address may send
        self.invalid_tokens = tuple(parse_many(config.rate_limit_invalid_tokens))
        #: who is locked out for its invalid tokens, as this process last heard
        self.lockouts = Lockouts()
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
    def store(self) -> Counts:
        return self._fallback if self._counts_dead else self.counts

    def limit(self, endpoint: str, view: Callable[..., Any]) -> Callable[..., Any]:
        """``view``, checked against ``endpoint``'s limits before it runs."""
        checks = self.checks[endpoint]
        per_token = any(check.rule.key == "token" for check in checks)

        @functools.wraps(view)
        def limited(*args: Any, **kwargs: Any) -> Any:
            token = _bearer()
            if is_admin_token(token, self.admin_key):
                pass
            elif token is not None and app_keys.request_key() is not None:
                # An application's key: every limit counts per application, once the key
                # proves itself here; an unknown key is refused by the view as invalid_token.
                self.refuse_locked_out()
                app = app_keys.request_app()
                if app is not None:
                    self._count(checks, None, anonymous=False, app=app.id)
            elif token is not None and per_token:
                # Counted when the view has seen the token prove itself (``token_proven``);
                # a token that proves nothing is counted as a failure of its address instead.
                self.refuse_locked_out()
                request.environ[PENDING] = checks
            else:
                self._count(checks, None, anonymous=token is None)
            return view(*args, **kwargs)

        return limited

    def token_proven(self, token: str) -> None:
        """The request's token belongs to a seat or a branch: count what waited for it."""
        checks = request.environ.pop(PENDING, None)
        if checks is not None:
            self._count(checks, token, anonymous=False)

    def refuse_locked_out(self) -> None:
        """LockedOut when the request's address is locked out for invalid tokens."""
        seconds = self.lockouts.remaining(_address_who())
        if seconds is not None:
            metrics.refused("invalid-tokens")
            raise LockedOut(seconds)

    def token_refused(self) -> None:
        """The request's token proved nothing: count it against its address, which is locked
        out once it fills a count."""
        who = _address_who()
        if self.lockouts.remaining(who) is not None:
            return
        counts = [_count_of(who, "invalid-tokens", item) for item in self.invalid_tokens]
        lockout = f"{KEY_PREFIX}:{who}:invalid-tokens:locked"
        locked = self._on_store("count an invalid token", lambda store: store.fail(lockout, counts))
        if locked is not None:
            self.lockouts.lock(who, locked)

    def _count(
        self, checks: Sequence[Check], token: str | None, anonymous: bool, app: str | None = None
    ) -> None:
        """Count this request (``anonymous``: it sent no token; ``app``: the application whose
        key it sent) against ``checks``; RateLimited when one is over."""
        counted: list[Check] = []
        counts: list[Count] = []
        address = _address_who()
        for check in checks:
            rule = check.rule
            if rule.only_with_token and token is None:
                continue
            if rule.only_anonymous and not anonymous:
                continue
            if rule.only_lobby_games and _not_a_lobby_game():
                continue
            if app is not None and rule.per_app:
                who = f"app:{app}"
            else:
                who = address if rule.key == "address" or token is None else _token_who(token)
            counted.append(check)
            counts.append(_count_of(who, rule.scope, check.item))
        if not counts:
            return
        found = self._on_store("count a request; not limited", lambda store: store.hit(counts))
        if found is None:
            return
        shown = counted[found.over or 0]
        request.environ[COUNTED] = Counted(
            shown.item, found.remaining, time.time() + found.reset_after
        )
        if found.over is not None:
            metrics.refused(shown.rule.scope)
            raise RateLimited(shown.rule, shown.item)

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
            back = bool(self.counts.check())
        except Exception:
            back = False
        if back:
            log.info("Rate limit storage recovered")
            self._counts_dead = False
            self._backend_checks = 0

    def _on_store(self, what: str, run: Callable[[Counts], T]) -> T | None:
        """``run`` on the store; when the store fails, once more on the in-memory fallback
        (from then on until the store is back, logged); when that fails too, log and let
        the request through (None)."""
        if self._counts_dead:
            self._try_backend()
        try:
            return run(self.store)
        except Exception:
            if self._counts_dead:
                log.exception("rate limits: could not %s", what)
                return None
            log.warning("Rate limit storage unreachable - falling back to in-memory storage")
            self._counts_dead = True
            return run(self.store)

    def add_headers(self, response: Response) -> Response:
        """The limit this request was counted against, in the answer's headers."""
        counted: Counted | None = request.environ.get(COUNTED)
        if counted is None:
            return response
        reset_at = counted.reset_at
        headers = response.headers
        headers.add("X-RateLimit-Limit", str(counted.item.amount))
        headers.add("X-RateLimit-Remaining", str(counted.remaining))
        headers.add("X-RateLimit-Reset", str(math.ceil(reset_at)))
        # Retry-After only where it means something (service.http.errors.settle_retry_after):
        # a 429 of this limit says when its window frees a request; an answer that says when
        # to come back itself (409 awaiting a step, another cap's 429) keeps its own, or this
        # limit's when that is later and nothing is left in the window.
        status = response.status_code
        existing = headers.get("Retry-After")
        if existing is None and status != 429:
            return response
        seconds = max(1, math.ceil(reset_at - time.time()))
        if existing is not None:
            if counted.remaining > 0 or not existing.isdigit():
                return response
            seconds = max(seconds, int(existing))
        headers.set("Retry-After", str(seconds))
        return response


def install_rate_limits(app: Flask, config: Config) -> RateLimits | None:
    """Limit ``app``'s views as ``RULES`` say (after its blueprints are registered)."""
    if not config.rate_limits:
        return None
    counts: Counts = RedisCounts(config.redis_url) if config.redis_url else MemoryCounts()
    limits = RateLimits(config, counts)
    for endpoint in limits.checks:
        # A missing endpoint is a limit silently gone: fail at start instead.
        app.view_functions[endpoint] = limits.limit(endpoint, app.view_functions[endpoint])
    app.after_request(limits.add_headers)
    app.extensions[EXTENSION] = limits
    return limits


# -- what the views tell the limits (service.http.shared.authenticate) ------------------------


def refuse_locked_out() -> None:
    """429 ``too_many_invalid_tokens`` (LockedOut) when the request's address is locked out."""
    limits: RateLimits | None = current_app.extensions.get(EXTENSION)
    if limits is not None:
        limits.refuse_locked_out()


def token_proven(token: str) -> None:
    """The request's token belongs to a seat or a branch of the game it asks about."""
    limits: RateLimits | None = current_app.extensions.get(EXTENSION)
    if limits is not None:
        limits.token_proven(token)


def token_refused() -> None:
    """The request was answered ``invalid_token`` (service.http.errors)."""
    limits: RateLimits | None = current_app.extensions.get(EXTENSION)
    if limits is not None:
        limits.token_refused()


# -- who is counted ---------------------------------------------------------------------------


def client_address(remote_addr: str | None) -> str:
    """What the per-address limits and caps count: the IPv4 address, or the /64 network of
    an IPv6 one (one subscriber's share of the IPv6 space: otherwise one client would have
    2**64 addresses to count from)."""
    try:
        address = ipaddress.ip_address(remote_addr or "")
    except ValueError:
        return remote_addr or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def _address_who() -> str:
    return f"address:{client_address(request.remote_addr)}"


def _token_who(token: str) -> str:
    return f"token:{token_key(token)}"


def token_key(token: str) -> str:
    """What the limits keep of a token: a hash of its own, not the seat hash of the log."""
    return hashlib.sha256(b"meeple rate limit\0" + token.encode()).hexdigest()[:32]


def _count_of(who: str, scope: str, item: RateLimitItem) -> Count:
    window = item.get_expiry()
    return Count(f"{KEY_PREFIX}:{who}:{scope}:{item.amount}/{window}", item.amount, window)


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
