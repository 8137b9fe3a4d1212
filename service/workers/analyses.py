"""Running an analysis (the job on the ``analyses`` queue): the search within its budget,
its progress written down as it goes, cancellation heeded (docs/analysis.md).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, TypeGuard

from projections.agents.analysis import analyze
from projections.agents.budget import Budget
from projections.fold import Game
from service.application.analyses import (
    ACTIVE,
    PROGRESS_EVERY,
    AnalysisStore,
    Record,
    now_text,
    search_seed,
)

log = logging.getLogger(__name__)


def _let_others_run() -> None:
    """Between two playouts: under ``meeple serve`` (gevent's worker, in-process jobs) this
    job's thread is a greenlet, and a search that never yields holds every request of the
    process, a cancel included, until it ends. It waits for the event loop to be idle (every
    request that can go on has gone on); in an RQ worker or a plain thread it does nothing."""
    if _cooperative():
        import gevent

        gevent.idle()


def _cooperative() -> bool:
    """Whether the standard library's threads are gevent's greenlets in this process."""
    import sys

    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("threading"))


def run_analysis(services: Any, analysis_id: str, run: int) -> str:
    """Run run number ``run`` of an analysis (the job); its status afterwards.

    The search reports its progress and asks whether it was cancelled at most every
    ``PROGRESS_EVERY`` seconds; it stops after ``MEEPLE_ANALYSIS_MAX_SECONDS`` whatever the
    request asked.
    """
    jobs = services.jobs
    store: AnalysisStore = jobs.analyses
    settings = jobs.settings

    def mine(record: Record | None) -> TypeGuard[Record]:
        return record is not None and record["run"] == run

    def start(record: Record | None, _: list[Record]) -> Record | None:
        if not mine(record) or record is None or record["status"] != "queued":
            return None
        lease = time.time() + settings.analysis_max_seconds + settings.analysis_lease
        return {**record, "status": "running", "started_at": now_text(), "lease_until": lease}

    record = store.change(analysis_id, start, time.time())
    if not mine(record) or record is None or record["status"] != "running":
        return "gone" if record is None else str(record["status"])
    game_id = record["game_id"]
    announce = getattr(jobs, "announce_analysis", None)
    try:
        game: Game = services.folder.load(game_id, at=record["at"])
        seconds = min(record["budget"]["seconds"] or math.inf, settings.analysis_max_seconds)
        budget = Budget(record["budget"]["playouts"], seconds, time.monotonic)
        reported = {"at": time.monotonic(), "cancelled": False}

        def progress(done: int) -> None:
            _let_others_run()
            now = time.monotonic()
            if now - reported["at"] < PROGRESS_EVERY:
                return
            reported["at"] = now
            current = store.change(analysis_id, _progress(run, done), time.time())
            # Stopped when cancelled, or when a new run of it replaced this one.
            reported["cancelled"] = not (mine(current) and current["status"] == "running")
            if announce is not None and mine(current):
                announce(game_id, current)

        result = analyze(
            game.ruleset,
            game.state,
            record["seat"],
            budget,
            search_seed(record),
            progress=progress,
            cancelled=lambda: bool(reported["cancelled"]),
        )
        outcome = result.to_dict()
        for candidate in outcome["candidates"]:
            candidate["summary"] = _describe(game, record["seat"], candidate["action"])
        final = store.change(analysis_id, _finish(run, outcome, None), time.time())
    except Exception:
        log.exception("analysis %s of game %s failed", analysis_id, game_id)
        failure = "The analysis failed; asking again starts it anew."
        final = store.change(analysis_id, _finish(run, None, failure), time.time())
    if announce is not None and final is not None:
        announce(game_id, final)
    return "gone" if final is None else str(final["status"])


def _progress(run: int, done: int) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] != "running":
            return None
        return {**record, "progress": {**record["progress"], "done": done}}

    return decide


def _finish(
    run: int, outcome: dict[str, Any] | None, error: str | None
) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] not in (*ACTIVE, "cancelled"):
            return None
        if record["status"] == "cancelled":
            # Cancelled meanwhile: it stays cancelled, with what was found before it stopped.
            return {**record, "result": outcome} if record.get("result") is None else None
        status = "failed" if error is not None else "done"
        done = outcome["playouts"] if outcome is not None else record["progress"]["done"]
        return {
            **record,
            "status": status,
            "progress": {**record["progress"], "done": done},
            "result": outcome,
            "error": error,
            "finished_at": now_text(),
        }

    return decide


def _describe(game: Game, seat: int, action: dict[str, Any]) -> str | None:
    """The game's own line for a candidate, if it has one (a courtesy: the action says all)."""
    try:
        return str(game.ruleset.summarize(game.state, {**action, "seat": seat}))
    except Exception:
        return None
