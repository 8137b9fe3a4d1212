"""The running service's parts as the application layer sees them: ``Services``, built by the
composition root (``service.bootstrap``) and handed to every command and job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from events.store import EventStore
from projections.fold import Folder, Game
from projections.readmodels.game_index import GameIndex
from service.config import Config

#: A computation's progress report: given what it has done so far, whether to stop now.
Progress = Callable[[Any], bool]


class ComputeFailed(Exception):
    """A computation that gave no answer (``Jobs.compute``): its process died, or see below."""


class CallFailed(ComputeFailed):
    """The function raised (the message is its traceback); its process goes on."""


class ComputeTimedOut(ComputeFailed):
    """The computation passed its deadline: its process was killed."""


class ComputeClosed(ComputeFailed):
    """The service is stopping: no computation runs any more."""


class Jobs(Protocol):
    """What the application layer asks of the background jobs (service.workers.jobs builds it)."""

    def after_append(self, game_id: str, version: int, game: Game | None = None) -> None: ...

    def compute(
        self,
        queue: str,
        name: str,
        args: tuple[Any, ...],
        seconds: float,
        on_progress: Progress | None = None,
    ) -> Any:
        """Run the function named ``module:function`` on ``args`` where it holds up no request
        and no automatic step (a child process of the embedded default, an RQ worker of the
        queue's own), within ``seconds``; its result, or ``ComputeFailed``."""
        ...


@dataclass
class Services:
    """The running service's parts; built by ``bootstrap``, shared by requests and jobs."""

    config: Config
    store: EventStore
    folder: Folder
    game_index: GameIndex
    jobs: Any = None
    #: What each owner may append (service.application.quotas.StorageQuotas), or None.
    quotas: Any = None
    #: The client applications, their keys' hashes and the seats they hold
    #: (service.application.apps.AppRegistry), or None.
    apps: Any = None

    def close(self) -> None:
        """Stop the jobs, then release the index and the store."""
        close_jobs = getattr(self.jobs, "close", None)
        if close_jobs is not None:
            close_jobs()
        self.game_index.close()
        if self.quotas is not None:
            self.quotas.close()
        if self.apps is not None:
            self.apps.close()
        self.store.close()
