"""The composition root: the service's dependencies built once, from a Config (cosmicpython's
bootstrap).

Everything a handler or a job needs hangs off ``Services``; tests pass fakes for any part
(``bootstrap(config, jobs=FakeJobs())``) instead of patching modules.
"""

from __future__ import annotations

from typing import Any

from events.config import open_store
from events.redis_clients import SCHEMES
from events.store import EventStore
from projections.fold import Folder
from projections.readmodels.game_index import GameIndex, SQLiteGameIndex
from service.application.apps import open_registry
from service.application.quotas import Quota, StorageQuotas, open_ledger
from service.application.services import Services
from service.config import STORAGE_QUOTAS, Config, game_index_url, store_options
from service.monitoring import metrics
from service.workers import jobs as workers


def bootstrap(
    config: Config,
    *,
    store: EventStore | None = None,
    game_index: GameIndex | None = None,
    jobs: Any = None,
) -> Services:
    """The service's parts for ``config``; any part given is used as it is."""
    if store is None:
        store = open_store(config.store_url, **store_options(config))
    folder = Folder(store, config.snapshot_interval, config.cache_size, observe=metrics.count_fold)
    if game_index is None:
        game_index = open_game_index(config)
    services = Services(config, store, folder, game_index)
    services.quotas = open_quotas(config)
    services.apps = open_registry(config.store_url, config.redis_url)
    if jobs is None:
        jobs = workers.make_jobs(services)
    services.jobs = jobs
    return services


def open_quotas(config: Config) -> StorageQuotas:
    """Each owner's storage quota, counted where the job state lives."""
    quota = Quota(*(getattr(config, name) for name in STORAGE_QUOTAS))
    return StorageQuotas(open_ledger(config.store_url, config.redis_url), quota)


def open_game_index(config: Config) -> GameIndex:
    """The game index ``game_index_url(config)`` names."""
    url = game_index_url(config)
    scheme, _, rest = url.partition("://")
    if scheme == "sqlite":
        return SQLiteGameIndex(rest.removeprefix("/"))
    if scheme in SCHEMES:
        from projections.readmodels.redis_game_index import RedisGameIndex

        return RedisGameIndex.from_url(url)
    raise ValueError(f"no game index backend for {url!r}")


def run_worker(config: Config, **options: Any) -> int:
    """``meeple worker``: this process's services for ``config``, then an RQ worker on them
    until it stops (``options`` as ``service.workers.jobs.run_worker`` takes them)."""
    if not config.redis_url:
        raise SystemExit("meeple worker needs MEEPLE_REDIS_URL (the Redis that holds the queues)")
    return workers.run_worker(bootstrap(config), **options)
