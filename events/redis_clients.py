"""Every Redis client of the service, made from its URL in one place (docs/operations.md,
"Failover").

- ``redis://[user:password@]host:port/db``, ``rediss://...``, ``unix:///path?db=n``: one
  server (redis-py's own URL forms).
- ``redis+cluster://host:port``: a Redis Cluster, reached through any of its nodes.
- ``redis+sentinel://[user:password@]host:port[,host:port...]/service_name[/db]``: the
  primary that the Sentinels at those addresses name for ``service_name``. The client asks
  them again whenever a connection to it fails (redis-py's ``Sentinel.master_for``), so after
  a failover the service follows the new primary by itself. The user and password are the
  primary's; the Sentinels are reached without.

The event store, RQ's queues, the job state, the rate counts, the live hub and the read
models all take their client from ``redis_client``, so one URL form serves them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import redis
from redis.cluster import RedisCluster
from redis.sentinel import Sentinel

#: The URL schemes ``redis_client`` opens.
SCHEMES = ("redis", "rediss", "unix", "redis+cluster", "redis+sentinel")

#: Seconds a Sentinel is given to answer which server is the primary.
SENTINEL_TIMEOUT = 2.0


class RedisURLError(ValueError):
    """A Redis URL that names no server, cluster or Sentinel service we can open."""


@dataclass(frozen=True)
class SentinelTarget:
    """What a ``redis+sentinel://`` URL names."""

    sentinels: tuple[tuple[str, int], ...]
    service_name: str
    db: int = 0
    username: str | None = None
    password: str | None = None


def scheme_of(url: str) -> str:
    """The URL's scheme (``redis``, ``redis+sentinel`` ...), lower-cased; '' without one."""
    scheme, separator, _ = url.partition("://")
    return scheme.lower() if separator else ""


def is_redis_url(url: str | None) -> bool:
    """Whether ``url`` is one of the Redis forms ``redis_client`` opens."""
    return bool(url) and scheme_of(url or "") in SCHEMES


def is_cluster_url(url: str | None) -> bool:
    return scheme_of(url or "") == "redis+cluster"


def parse_sentinel_url(url: str) -> SentinelTarget:
    """The Sentinels, service name, database and credentials of a ``redis+sentinel://`` URL."""
    if scheme_of(url) != "redis+sentinel":
        raise RedisURLError(f"not a redis+sentinel:// URL: {_shown(url)}")
    rest = url.partition("://")[2]
    authority, _, path = rest.partition("/")
    path = path.partition("?")[0].partition("#")[0]
    username = password = None
    if "@" in authority:
        credentials, _, authority = authority.rpartition("@")
        user, has_password, secret = credentials.partition(":")
        username = unquote(user) or None
        password = unquote(secret) if has_password else None
    sentinels = tuple(_address(part, url) for part in authority.split(","))
    parts = [part for part in path.split("/") if part]
    if not parts:
        raise RedisURLError(f"{_shown(url)} names no Sentinel service: add /service_name")
    if len(parts) > 2:
        raise RedisURLError(f"{_shown(url)}: the path is /service_name[/db]")
    db = 0
    if len(parts) == 2:
        if not parts[1].isdigit():
            raise RedisURLError(f"{_shown(url)}: the database must be a number, not {parts[1]!r}")
        db = int(parts[1])
    return SentinelTarget(sentinels, unquote(parts[0]), db, username, password)


def redis_client(url: str, *, decode_responses: bool = False, **options: Any) -> Any:
    """A client of what ``url`` names: ``redis.Redis`` (a server, or a Sentinel service's
    primary) or ``RedisCluster``; ``options`` go to the client (timeouts ...)."""
    scheme = scheme_of(url)
    if scheme == "redis+cluster":
        address = "redis://" + url.partition("://")[2]
        return RedisCluster.from_url(address, decode_responses=decode_responses, **options)
    if scheme == "redis+sentinel":
        target = parse_sentinel_url(url)
        timeout = options.get("socket_timeout") or SENTINEL_TIMEOUT
        sentinel = Sentinel(
            list(target.sentinels),
            sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout},
        )
        return sentinel.master_for(
            target.service_name,
            db=target.db,
            username=target.username,
            password=target.password,
            decode_responses=decode_responses,
            **options,
        )
    if scheme in ("redis", "rediss", "unix"):
        return redis.Redis.from_url(url, decode_responses=decode_responses, **options)
    raise RedisURLError(
        f"not a Redis URL: {_shown(url)} (use redis://, rediss://, unix://, redis+cluster:// "
        "or redis+sentinel://)"
    )


def with_database(url: str, db: int) -> str:
    """The same server, Sentinel service or cluster with database ``db`` (a cluster has
    only database 0, so its URL is returned as it is)."""
    scheme = scheme_of(url)
    if scheme == "redis+cluster":
        return url
    if scheme == "redis+sentinel":
        target = parse_sentinel_url(url)
        head = url.partition("://")[2].partition("/")[0]
        return f"redis+sentinel://{head}/{target.service_name}/{db}"
    parts = urlsplit(url)
    return parts._replace(path=f"/{db}").geturl()


def same_place(one: Any, other: Any) -> bool:
    """Whether two plain (not cluster) clients reach the same server, maybe other databases
    of it: the same address and user, or the same Sentinel service through the same
    Sentinels (whichever server is its primary now)."""
    if not (isinstance(one, redis.Redis) and isinstance(other, redis.Redis)):
        return False
    ours, theirs = one.connection_pool, other.connection_pool
    ours_sentinel = getattr(ours, "service_name", None)
    theirs_sentinel = getattr(theirs, "service_name", None)
    if ours_sentinel is not None or theirs_sentinel is not None:
        return ours_sentinel == theirs_sentinel and _sentinels(ours) == _sentinels(theirs)
    place = ("host", "port", "path", "username", "password")
    return all(
        ours.connection_kwargs.get(name) == theirs.connection_kwargs.get(name) for name in place
    )


def _sentinels(pool: Any) -> set[tuple[Any, Any]]:
    manager = getattr(pool, "sentinel_manager", None)
    found = set()
    for sentinel in getattr(manager, "sentinels", ()):
        kwargs = sentinel.connection_pool.connection_kwargs
        found.add((kwargs.get("host"), kwargs.get("port")))
    return found


def _address(part: str, url: str) -> tuple[str, int]:
    host, separator, port = part.strip().rpartition(":")
    if not separator or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RedisURLError(f"{_shown(url)}: each Sentinel is host:port, not {part!r}")
    return host.strip("[]"), int(port)


def _shown(url: str) -> str:
    """The URL without its password, for an error message (a key never goes to a log)."""
    scheme, separator, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rpartition("@")[2]
    return repr(f"{scheme}{separator}{authority}{slash}{path}")
