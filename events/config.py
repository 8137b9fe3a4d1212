"""Opening an event store from a URL (``MEEPLE_STORE_URL``).

- ``sqlite:///var/meeple.db`` (relative to the working directory) or
  ``sqlite:////absolute/path.db``: the embedded store; parent directories are created.
- ``redis://host:port/db``: one Redis server.
- ``redis+cluster://host:port``: a Redis Cluster, reached through any of its nodes.
- ``redis+sentinel://host:port[,host:port]/service_name[/db]``: the primary the Sentinels
  name for that service, followed through failovers (events.redis_clients).
"""

from __future__ import annotations

from typing import Any

from events.redis_clients import SCHEMES, RedisURLError
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
    if scheme in SCHEMES:
        from events.redis_store import RedisEventStore

        try:
            return RedisEventStore.from_url(url, **options)
        except RedisURLError as error:
            raise StoreError(str(error)) from None
    raise StoreError(
        f"unknown store scheme {scheme!r}: use sqlite://, redis://, redis+sentinel:// or "
        "redis+cluster://"
    )
