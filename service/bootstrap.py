"""Building the service's dependencies once, from a Config (cosmicpython's bootstrap).

Everything a handler or a job needs hangs off ``Services``; tests pass fakes for any part
(``bootstrap(config, jobs=FakeJobs())``) instead of patching modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from events.config import open_store
from events.store import EventStore
from projections.fold import Folder, Game
from projections.readmodels.game_index import GameIndex, SQLiteGameIndex
from service.config import Config


class Jobs(Protocol):
    """What the application layer asks of the background jobs (service.jobs builds it)."""

    def after_append(self, game_id: str, version: int, game: Game | None = None) -> None: ...


@dataclass
class Services:
    """The running service's parts; built by ``bootstrap``, shared by requests and jobs."""

    config: Config
    store: EventStore
    folder: Folder
    game_index: GameIndex
    jobs: Any = None

    def close(self) -> None:
        """Stop the jobs, then release the index and the store."""
        close_jobs = getattr(self.jobs, "close", None)
        if close_jobs is not None:
            close_jobs()
        self.game_index.close()
        self.store.close()


def bootstrap(
    config: Config,
    *,
    store: EventStore | None = None,
    game_index: GameIndex | None = None,
    jobs: Any = None,
) -> Services:
    """The service's parts for ``config``; any part given is used as it is."""
    store = store if store is not None else open_store(config.store_url)
    folder = Folder(store, config.snapshot_interval, config.cache_size)
    if game_index is None:
        game_index = open_game_index(config)
    services = Services(config, store, folder, game_index)
    if jobs is None:
        # Imported here: the jobs module builds on Services, and importing it lazily keeps
        # the dependency one way (jobs -> bootstrap) at import time.
        from service.jobs import make_jobs

        jobs = make_jobs(services)
    services.jobs = jobs
    return services


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


def open_game_index(config: Config) -> GameIndex:
    """The game index ``game_index_url(config)`` names."""
    url = game_index_url(config)
    scheme, _, rest = url.partition("://")
    if scheme == "sqlite":
        return SQLiteGameIndex(rest.removeprefix("/"))
    if scheme in ("redis", "rediss", "redis+cluster"):
        from projections.readmodels.redis_game_index import RedisGameIndex

        return RedisGameIndex.from_url(url)
    raise ValueError(f"no game index backend for {url!r}")
