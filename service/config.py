"""The service's configuration: explicit values, read from ``MEEPLE_*`` environment variables.

``load_config()`` is the only place that reads the environment; everything else receives a
``Config`` (tests build one with ``load_config({}, store_url=...)``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

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
    #: MEEPLE_MAX_UNDO_STEPS: the most steps one undo or redo request may take (``steps``).
    max_undo_steps: int = 100
    #: MEEPLE_MAX_PAGE: the most events one page of the events or the timeline holds (``limit``).
    max_page: int = 1000
    #: MEEPLE_AUDIT_CACHE_SIZE: how many audits (one per game version) each process keeps.
    audit_cache_size: int = 256


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
    "max_undo_steps": "MEEPLE_MAX_UNDO_STEPS",
    "max_page": "MEEPLE_MAX_PAGE",
    "audit_cache_size": "MEEPLE_AUDIT_CACHE_SIZE",
}

_INTEGERS = {"snapshot_interval", "cache_size", "max_body_bytes", "action_retries"} | {
    "retry_after_seconds",
    "max_undo_steps",
    "max_page",
    "audit_cache_size",
}


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
    for name in ("max_undo_steps", "max_page"):
        if getattr(config, name) < 1:
            raise ConfigError(f"{_ENV_NAMES[name]} must be at least 1")
    if config.audit_cache_size < 0:
        raise ConfigError("MEEPLE_AUDIT_CACHE_SIZE cannot be negative")
