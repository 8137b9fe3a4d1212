"""The service's configuration: explicit values, read from ``MEEPLE_*`` environment variables.

``load_config()`` is the only place that reads the environment; everything else receives a
``Config`` (tests build one with ``load_config({}, store_url=...)``).
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from limits import parse_many

DEFAULT_STORE_URL = "sqlite:///var/meeple.db"
DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"


class ConfigError(ValueError):
    """A configuration value cannot be used (named, with what was expected)."""


@dataclass(frozen=True)
class Config:
    """Everything the service needs to start; see docs/operations.md for each variable."""

    #: MEEPLE_STORE_URL: ``sqlite:///relative/path.db``, ``sqlite:////abs.db`` or ``redis://...``
    store_url: str = DEFAULT_STORE_URL
    #: MEEPLE_REDIS_URL: where RQ keeps its queues; None runs jobs in-process.
    redis_url: str | None = None
    #: MEEPLE_ADMIN_KEY: bearer key that may choose seeds and read every secret; None disables it.
    admin_key: str | None = None
    #: MEEPLE_SNAPSHOT_INTERVAL: a snapshot every this many events of a game.
    snapshot_interval: int = 100
    #: MEEPLE_CACHE_SIZE: how many recently used games each process keeps folded in memory.
    cache_size: int = 256
    #: MEEPLE_MAX_BODY_BYTES: larger request bodies get 413.
    max_body_bytes: int = 64 * 1024
    #: MEEPLE_PUBLIC_URL: the base URL clients reach the API at (servers in openapi.yaml).
    public_url: str = DEFAULT_PUBLIC_URL
    #: MEEPLE_ACTION_RETRIES: appends retried on a concurrent write when no If-Match pinned it.
    action_retries: int = 5
    #: MEEPLE_RETRY_AFTER: seconds a client is told to wait while an automatic step is pending.
    retry_after_seconds: int = 1
    #: MEEPLE_READMODEL_URL: where the game index lives; None = beside the event store.
    readmodel_url: str | None = None
    #: MEEPLE_MAX_JSON_DEPTH: how deep objects and arrays may nest in a request body.
    max_json_depth: int = 32
    #: MEEPLE_TRUSTED_PROXIES: how many proxies in front of the API append to
    #: X-Forwarded-For (the client's address is the one the outermost of them saw); 0 = none,
    #: the header is ignored.
    trusted_proxies: int = 0
    #: MEEPLE_RATE_LIMITS: ``off`` disables every rate limit below (tests, trusted networks).
    rate_limits: bool = True
    #: MEEPLE_RATE_LIMIT_GAMES: POST /games per client address.
    rate_limit_games: str = "30/minute;300/hour"
    #: MEEPLE_RATE_LIMIT_BRANCHES: POST /games/{id}/branches per client address.
    rate_limit_branches: str = "30/minute;300/hour"
    #: MEEPLE_RATE_LIMIT_TOKEN_BRANCHES: POST /games/{id}/branches per token.
    rate_limit_token_branches: str = "10/minute;100/hour"
    #: MEEPLE_RATE_LIMIT_ACTIONS: actions (both action addresses together) per token.
    rate_limit_actions: str = "20/second"
    #: MEEPLE_RATE_LIMIT_UNDO: undo and redo together, per token.
    rate_limit_undo: str = "10/second"
    #: MEEPLE_RATE_LIMIT_ANALYSES: POST /games/{id}/analyses per token (else per address).
    rate_limit_analyses: str = "10/minute;100/hour"
    #: MEEPLE_MAX_UNDO_STEPS: the most steps one undo or redo request may take (``steps``).
    max_undo_steps: int = 100
    #: MEEPLE_UNDO_ALLOWANCE: how many events beyond its steps (undone, redone, and the steps
    #: they threw away) a game's log may hold before undo and redo are refused
    #: (``undo_allowance_spent``); each step the game holds adds
    #: MEEPLE_UNDO_ALLOWANCE_PER_STEP more. It bounds how much undo can grow a game.
    undo_allowance: int = 1000
    undo_allowance_per_step: int = 2
    #: MEEPLE_STORAGE_EVENTS_PER_DAY, MEEPLE_STORAGE_BYTES_PER_DAY, MEEPLE_STORAGE_EVENTS,
    #: MEEPLE_STORAGE_BYTES: what one owner's requests (a client address; the admin key is
    #: exempt) may append to the store a day (UTC) and in all; past one, its writes get 429
    #: ``storage_quota_exceeded``. 0: no quota of that kind (service.application.quotas).
    storage_events_per_day: int = 100_000
    storage_bytes_per_day: int = 64 * 1024 * 1024
    storage_events: int = 1_000_000
    storage_bytes: int = 512 * 1024 * 1024
    #: MEEPLE_MAX_PAGE: the most events one page of the events or the timeline holds (``limit``).
    max_page: int = 1000
    #: MEEPLE_AUDIT_CACHE_SIZE: how many audits (one per game version) each process keeps.
    audit_cache_size: int = 256
    #: MEEPLE_MAX_WAIT: the most seconds an action's answer waits for the automatic steps it
    #: makes due when the client asks (``Prefer: wait=N``); 0 never waits.
    max_wait_seconds: int = 10
    #: MEEPLE_WAITS_PER_ADDRESS: answers waiting at once for one client address in one API
    #: process; beyond it an action is answered at once, as without ``Prefer: wait``.
    waits_per_address: int = 16
    #: MEEPLE_REQUEST_SLOTS: requests each API process runs at once; the others wait for a
    #: place, given out to the owner that used the process least of late first
    #: (service.application.request_shares). 0: every request runs as it comes.
    request_slots: int = 2
    #: MEEPLE_RATE_LIMIT_LOBBY_GAMES: POST /games with an open or a bot seat, per client
    #: address (on top of MEEPLE_RATE_LIMIT_GAMES): such games wait or cost bot work.
    rate_limit_lobby_games: str = "5/minute;30/hour"
    #: MEEPLE_RATE_LIMIT_SEATS: joins, leaves, seat tokens and bot seats per client address.
    rate_limit_seats: str = "30/minute;300/hour"
    #: MEEPLE_RATE_LIMIT_HISTORY_READS: reads of a game's events, timeline, audit or export
    #: without a token, per client address (each may read a whole log; its answer is cached
    #: per version).
    rate_limit_history_reads: str = "20/second;600/minute"
    #: MEEPLE_RATE_LIMIT_INVALID_TOKENS: answers ``invalid_token`` per client address; an
    #: address over it is refused every token (429 ``too_many_invalid_tokens``) for the
    #: window it filled.
    rate_limit_invalid_tokens: str = "30/minute;300/hour"
    #: MEEPLE_MAX_OPEN_GAMES: games waiting for players at once; past it a new game with an
    #: open seat gets 429 ``too_many_open_games`` (the admin key excepted).
    max_open_games: int = 1000
    #: MEEPLE_MAX_BOT_GAMES: unfinished games with a bot seat at once (paused ones aside);
    #: past it a new game with a bot seat gets 429 ``too_many_bot_games`` (the admin key
    #: excepted).
    max_bot_games: int = 200
    #: MEEPLE_MAX_BOT_GAMES_PER_OWNER: the same, for one owner (a client address): no owner
    #: can fill the service-wide cap (service.application.bot_games).
    max_bot_games_per_owner: int = 10
    #: MEEPLE_LOG_FORMAT: ``plain`` (the default) or ``json``: one JSON line per request and
    #: per job, each with its request id (service.monitoring.logs).
    log_format: str = "plain"
    #: MEEPLE_METRICS_ALLOW: networks (CIDR), comma- or space-separated, whose clients may
    #: read ``GET /metrics`` besides loopback (the client address as MEEPLE_TRUSTED_PROXIES
    #: makes it); others get 403 ``metrics_forbidden``.
    metrics_allow: str = ""
    #: MEEPLE_RATE_LIMIT_APPS: POST /apps (registering a client application) per client address.
    rate_limit_apps: str = "5/minute;20/day"
    #: MEEPLE_MAX_APPS_PER_ADDRESS: client applications registered from one client address and
    #: not revoked; past it POST /apps gets 429 ``too_many_apps``. 0: no cap.
    max_apps_per_address: int = 20
    #: MEEPLE_REDIS_MIN_REPLICAS: replicas that must confirm an append (WAIT, or WAITAOF where
    #: the server has it) before it is acknowledged; fewer in time: 503 ``replication_lag``.
    #: 0 (the default) asks for none. Needs a Redis event store (docs/operations.md, Failover).
    redis_min_replicas: int = 0
    #: MEEPLE_REDIS_REPLICA_TIMEOUT: milliseconds an append waits for those replicas.
    redis_replica_timeout: int = 1000


_ENV_NAMES = {
    "store_url": "MEEPLE_STORE_URL",
    "redis_url": "MEEPLE_REDIS_URL",
    "admin_key": "MEEPLE_ADMIN_KEY",
    "snapshot_interval": "MEEPLE_SNAPSHOT_INTERVAL",
    "cache_size": "MEEPLE_CACHE_SIZE",
    "max_body_bytes": "MEEPLE_MAX_BODY_BYTES",
    "public_url": "MEEPLE_PUBLIC_URL",
    "action_retries": "MEEPLE_ACTION_RETRIES",
    "retry_after_seconds": "MEEPLE_RETRY_AFTER",
    "readmodel_url": "MEEPLE_READMODEL_URL",
    "max_json_depth": "MEEPLE_MAX_JSON_DEPTH",
    "trusted_proxies": "MEEPLE_TRUSTED_PROXIES",
    "rate_limits": "MEEPLE_RATE_LIMITS",
    "rate_limit_games": "MEEPLE_RATE_LIMIT_GAMES",
    "rate_limit_branches": "MEEPLE_RATE_LIMIT_BRANCHES",
    "rate_limit_token_branches": "MEEPLE_RATE_LIMIT_TOKEN_BRANCHES",
    "rate_limit_actions": "MEEPLE_RATE_LIMIT_ACTIONS",
    "rate_limit_undo": "MEEPLE_RATE_LIMIT_UNDO",
    "rate_limit_analyses": "MEEPLE_RATE_LIMIT_ANALYSES",
    "max_undo_steps": "MEEPLE_MAX_UNDO_STEPS",
    "undo_allowance": "MEEPLE_UNDO_ALLOWANCE",
    "undo_allowance_per_step": "MEEPLE_UNDO_ALLOWANCE_PER_STEP",
    "storage_events_per_day": "MEEPLE_STORAGE_EVENTS_PER_DAY",
    "storage_bytes_per_day": "MEEPLE_STORAGE_BYTES_PER_DAY",
    "storage_events": "MEEPLE_STORAGE_EVENTS",
    "storage_bytes": "MEEPLE_STORAGE_BYTES",
    "max_page": "MEEPLE_MAX_PAGE",
    "audit_cache_size": "MEEPLE_AUDIT_CACHE_SIZE",
    "max_wait_seconds": "MEEPLE_MAX_WAIT",
    "waits_per_address": "MEEPLE_WAITS_PER_ADDRESS",
    "request_slots": "MEEPLE_REQUEST_SLOTS",
    "rate_limit_lobby_games": "MEEPLE_RATE_LIMIT_LOBBY_GAMES",
    "rate_limit_seats": "MEEPLE_RATE_LIMIT_SEATS",
    "rate_limit_history_reads": "MEEPLE_RATE_LIMIT_HISTORY_READS",
    "rate_limit_invalid_tokens": "MEEPLE_RATE_LIMIT_INVALID_TOKENS",
    "max_open_games": "MEEPLE_MAX_OPEN_GAMES",
    "max_bot_games": "MEEPLE_MAX_BOT_GAMES",
    "max_bot_games_per_owner": "MEEPLE_MAX_BOT_GAMES_PER_OWNER",
    "log_format": "MEEPLE_LOG_FORMAT",
    "metrics_allow": "MEEPLE_METRICS_ALLOW",
    "rate_limit_apps": "MEEPLE_RATE_LIMIT_APPS",
    "max_apps_per_address": "MEEPLE_MAX_APPS_PER_ADDRESS",
}

#: The settings of each owner's storage quota (service.application.quotas.Quota's order).
STORAGE_QUOTAS = (
    "storage_events_per_day",
    "storage_bytes_per_day",
    "storage_events",
    "storage_bytes",
)

_INTEGERS = {"snapshot_interval", "cache_size", "max_body_bytes", "action_retries"} | {
    "retry_after_seconds",
    "max_json_depth",
    "trusted_proxies",
    "max_undo_steps",
    "undo_allowance",
    "undo_allowance_per_step",
    "storage_events_per_day",
    "storage_bytes_per_day",
    "storage_events",
    "storage_bytes",
    "max_page",
    "audit_cache_size",
    "max_wait_seconds",
    "waits_per_address",
    "request_slots",
    "max_open_games",
    "max_bot_games",
    "max_bot_games_per_owner",
    "max_apps_per_address",
}
# Failover (docs/operations.md, "Failover"): how many replicas confirm an append.
_ENV_NAMES.update(
    redis_min_replicas="MEEPLE_REDIS_MIN_REPLICAS",
    redis_replica_timeout="MEEPLE_REDIS_REPLICA_TIMEOUT",
)
_INTEGERS |= {"redis_min_replicas", "redis_replica_timeout"}


def store_options(config: Config) -> dict[str, int]:
    """What ``events.config.open_store`` takes beside the URL: the replicas a Redis store
    waits for (nothing for SQLite, which has none)."""
    if not config.redis_min_replicas:
        return {}
    return {
        "min_replicas": config.redis_min_replicas,
        "replica_timeout": config.redis_replica_timeout,
    }


def _check_replication(config: Config) -> None:
    if config.redis_min_replicas < 0:
        raise ConfigError("MEEPLE_REDIS_MIN_REPLICAS cannot be negative")
    if config.redis_replica_timeout < 1:
        # WAIT 0 would wait for ever: a dead replica would hold every action.
        raise ConfigError("MEEPLE_REDIS_REPLICA_TIMEOUT must be at least 1 (milliseconds)")
    if config.redis_min_replicas and config.store_url.startswith("sqlite:"):
        raise ConfigError("MEEPLE_REDIS_MIN_REPLICAS needs a Redis event store (MEEPLE_STORE_URL)")


_SWITCHES = {"rate_limits"}
_ON, _OFF = {"on", "true", "yes", "1"}, {"off", "false", "no", "0"}
#: Rate limits, each in the ``limits`` library's notation: "30/minute;300/hour".
RATE_LIMITS = (
    "rate_limit_games",
    "rate_limit_branches",
    "rate_limit_token_branches",
    "rate_limit_actions",
    "rate_limit_undo",
    "rate_limit_analyses",
    "rate_limit_lobby_games",
    "rate_limit_seats",
    "rate_limit_invalid_tokens",
    "rate_limit_history_reads",
    "rate_limit_apps",
)


def load_config(env: Mapping[str, str] = os.environ, **overrides: Any) -> Config:
    """The configuration from ``env`` (empty values count as unset), then ``overrides``."""
    values: dict[str, Any] = {}
    for name, variable in _ENV_NAMES.items():
        raw = env.get(variable, "").strip()
        if not raw:
            continue
        if name in _INTEGERS:
            try:
                values[name] = int(raw)
            except ValueError:
                raise ConfigError(f"{variable} must be a whole number, not {raw!r}") from None
        elif name in _SWITCHES:
            if raw.lower() not in _ON | _OFF:
                raise ConfigError(f"{variable} must be on or off, not {raw!r}")
            values[name] = raw.lower() in _ON
        else:
            values[name] = raw
    known = {field.name for field in fields(Config)}
    unknown = set(overrides) - known
    if unknown:
        raise ConfigError(f"unknown configuration keys: {', '.join(sorted(unknown))}")
    config = replace(Config(), **{**values, **overrides})
    _check(config)
    return config


def _check(config: Config) -> None:
    if config.snapshot_interval < 1:
        raise ConfigError("MEEPLE_SNAPSHOT_INTERVAL must be at least 1")
    if config.max_body_bytes < 1024:
        raise ConfigError("MEEPLE_MAX_BODY_BYTES must be at least 1024")
    if config.action_retries < 0:
        raise ConfigError("MEEPLE_ACTION_RETRIES cannot be negative")
    if not 2 <= config.max_json_depth <= 200:
        raise ConfigError("MEEPLE_MAX_JSON_DEPTH must be between 2 and 200")
    if config.trusted_proxies < 0:
        raise ConfigError("MEEPLE_TRUSTED_PROXIES cannot be negative")
    for name in RATE_LIMITS:
        _check_rate_limit(_ENV_NAMES[name], getattr(config, name))
    for name in ("max_wait_seconds", "waits_per_address", "request_slots"):
        if getattr(config, name) < 0:
            raise ConfigError(f"{_ENV_NAMES[name]} cannot be negative")
    for name in ("max_undo_steps", "max_page"):
        if getattr(config, name) < 1:
            raise ConfigError(f"{_ENV_NAMES[name]} must be at least 1")
    for name in (
        "max_open_games",
        "max_bot_games",
        "max_bot_games_per_owner",
        "max_apps_per_address",
        "undo_allowance",
        "undo_allowance_per_step",
        *STORAGE_QUOTAS,
    ):
        if getattr(config, name) < 0:
            raise ConfigError(f"{_ENV_NAMES[name]} cannot be negative")
    if config.audit_cache_size < 0:
        raise ConfigError("MEEPLE_AUDIT_CACHE_SIZE cannot be negative")
    if config.log_format not in ("plain", "json"):
        raise ConfigError(f"MEEPLE_LOG_FORMAT must be plain or json, not {config.log_format!r}")
    metrics_networks(config.metrics_allow)
    _check_replication(config)


#: Who may always read GET /metrics: this machine.
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


def metrics_networks(
    allow: str,
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The networks whose clients may read ``GET /metrics``: loopback and MEEPLE_METRICS_ALLOW's
    (``10.0.0.0/8, 2001:db8::/32``; a single address is its own network)."""
    networks = list(LOOPBACK)
    for entry in re.split(r"[\s,]+", allow.strip()):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ConfigError(
                f"MEEPLE_METRICS_ALLOW: {entry!r} is not an address or a network (CIDR)"
            ) from None
    return tuple(networks)


def _check_rate_limit(variable: str, value: str) -> None:
    try:
        parse_many(value)
    except ValueError:
        raise ConfigError(
            f"{variable} must be limits like '30/minute;300/hour', not {value!r}"
        ) from None


def game_index_url(config: Config) -> str:
    """Where the game index lives: MEEPLE_READMODEL_URL, else beside the event store
    (``var/meeple.db`` -> ``var/meeple.index.db``; a Redis store's own Redis)."""
    if config.readmodel_url:
        return config.readmodel_url
    scheme, _, rest = config.store_url.partition("://")
    if scheme == "sqlite":
        # The same path rule as events.config: one slash after sqlite:// -> relative path.
        path = Path(rest.removeprefix("/")).with_suffix(".index.db")
        return f"sqlite:///{path.as_posix()}"
    return config.store_url
