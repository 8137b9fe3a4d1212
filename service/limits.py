"""Rate limits (Flask-Limiter): what an anonymous client or one token may start per minute.

Creating a game and branching one are counted per client address (``request.remote_addr``,
the proxy's view of it when ``MEEPLE_TRUSTED_PROXIES`` says proxies stand in front); actions,
undo/redo and branching with a token are counted per token, under a hash of it (a request
without a token counts against its address). The admin key is not limited. With
``MEEPLE_REDIS_URL`` set, each process counts in memory and shares its counts through Redis
every ``MEEPLE_RATE_LIMIT_SYNC_MS`` milliseconds (``service.rate_counts``: no round trip per
request), or, with 0 there, counts in Redis on every request; without it, in the process.

A client over a limit gets 429 ``rate_limited`` with ``Retry-After``; every limited response
carries ``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset``. The
limits and their defaults are in service/config.py and docs/operations.md.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from flask import Flask, request
from flask_limiter import Limiter

from service import rate_counts  # noqa: F401 - registers the meeple+redis:// counts
from service.auth import AuthError, bearer_token, is_admin_token
from service.config import Config

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


def install_rate_limits(app: Flask, config: Config) -> Limiter | None:
    """Limit ``app``'s views as ``RULES`` say (after its blueprints are registered)."""
    if not config.rate_limits:
        return None
    storage_uri, storage_options = "memory://", {}
    if config.redis_url and config.rate_limit_sync_ms > 0:
        # Counted in the process, shared through Redis in the background (service.rate_counts).
        storage_uri = "meeple+" + config.redis_url
        storage_options = {"sync_interval": config.rate_limit_sync_ms / 1000}
    elif config.redis_url:
        storage_uri = config.redis_url
    limiter = Limiter(
        key_func=client_address,
        app=app,
        storage_uri=storage_uri,
        storage_options=storage_options,
        # Two counters per key and no burst of twice the limit at a window's edge.
        strategy="sliding-window-counter",
        headers_enabled=True,
        key_prefix=KEY_PREFIX,
        # A limit store that does not answer must not take the API down: count in memory
        # until it is back (and log it).
        in_memory_fallback_enabled=True,
        swallow_errors=True,
    )
    # The operator's own tools (the admin key: benchmarks, imports, scripts) are not limited.
    limiter.request_filter(lambda: is_admin_token(_bearer(), config.admin_key))
    for rule in RULES:
        limit = limiter.shared_limit(
            getattr(config, rule.setting),
            scope=rule.scope,
            key_func=token_or_address if rule.key == "token" else client_address,
            error_message=rule.what,
            exempt_when=_without_token
            if rule.only_with_token
            else _not_a_lobby_game
            if rule.only_lobby_games
            else None,
        )
        for endpoint in rule.endpoints:
            # A missing endpoint is a limit silently gone: fail at start instead.
            app.view_functions[endpoint] = limit(app.view_functions[endpoint])
    return limiter


def client_address() -> str:
    return f"address:{request.remote_addr or 'unknown'}"


def token_or_address() -> str:
    token = _bearer()
    return client_address() if token is None else f"token:{token_key(token)}"


def token_key(token: str) -> str:
    """What the limits keep of a token: a hash of its own, not the seat hash of the log."""
    return hashlib.sha256(b"meeple rate limit\0" + token.encode()).hexdigest()[:32]


def _bearer() -> str | None:
    try:
        return bearer_token(request.headers.get("Authorization"))
    except AuthError:
        return None  # refused as invalid_token by the view; counted against the address


def _without_token() -> bool:
    return _bearer() is None


def _not_a_lobby_game() -> bool:
    """Whether a POST /games body seats only named players (a malformed body counts as a
    lobby game: the view refuses it anyway)."""
    try:
        body = json.loads(request.get_data(cache=True) or b"null")
    except Exception:  # too large, too deep, not JSON: the view answers with its problem
        return False
    players = body.get("players") if isinstance(body, dict) else None
    return isinstance(players, list) and all(isinstance(seat, str) for seat in players)
