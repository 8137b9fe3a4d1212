"""The running service's parts as the application layer sees them: ``Services``, built by the
composition root (``service.bootstrap``) and handed to every command and job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from events.store import EventStore
from projections.fold import Folder, Game
from projections.readmodels.game_index import GameIndex
from service.config import Config


class Jobs(Protocol):
    """What the application layer asks of the background jobs (service.workers.jobs builds it)."""

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
