"""Opening an event store from a URL (``MEEPLE_STORE_URL``).

- ``sqlite:///var/meeple.db`` (relative to the working directory) or
  ``sqlite:////absolute/path.db``: the embedded store; parent directories are created.
- ``redis://host:port/db``: one Redis server.
- ``redis+cluster://host:port``: a Redis Cluster, reached through any of its nodes.
"""

from __future__ import annotations

from typing import Any

from events.store import EventStore, StoreError

DEFAULT_STORE_URL = "sqlite:///var/meeple.db"


def open_store(url: str = DEFAULT_STORE_URL, **options: Any) -> EventStore:
    """The event store ``url`` names; ``options`` go to the backend's constructor."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        raise StoreError(f"not a store URL: {url!r} (try {DEFAULT_STORE_URL})")
    if scheme == "sqlite":
        from events.sqlite_store import SQLiteEventStore

        path = rest.removeprefix("/")
        if not path:
            raise StoreError(f"the store URL {url!r} names no file")
        return SQLiteEventStore(path, **options)
    if scheme in ("redis", "rediss", "redis+cluster"):
        from events.redis_store import RedisEventStore

        return RedisEventStore.from_url(url, **options)
    raise StoreError(
        f"unknown store scheme {scheme!r} in {url!r}: use sqlite://, redis:// or redis+cluster://"
    )
