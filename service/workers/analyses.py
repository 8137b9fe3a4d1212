"""Running an analysis (the job on the ``analyses`` queue): the search within its budget,
its progress written down as it goes, cancellation heeded (docs/analysis.md). The search
itself runs where ``Jobs.compute`` puts it: a child process of the embedded default (never the
loop that serves requests), the analyses worker's own process on Redis.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, TypeGuard

from projections.agents.analysis import analyze
from projections.agents.budget import Budget
from projections.agents.lines import candidate_lines
from projections.fold import Game
from projections.ruleset import from_reference, ruleset_reference
from service.application.analyses import (
    ACTIVE,
    PROGRESS_EVERY,
    AnalysisStore,
    Record,
    now_text,
    search_seed,
)
from service.application.services import ComputeClosed

log = logging.getLogger(__name__)


#: The function an analysis's search runs in (by name: in another process).
SEARCH = "service.workers.analyses:search"
#: Seconds beyond its budget after which a search that has not answered is killed.
COMPUTE_GRACE = 10.0


def search(
    reference: tuple[str, str],
    state: dict[str, Any],
    seat: int,
    playouts: int | None,
    seconds: float,
    seed: Any,
    report: Callable[[int], bool],
) -> dict[str, Any]:
    """The search itself, where ``Jobs.compute`` runs it (a child process of the embedded
    default): it reports how many playouts it has done at most every ``PROGRESS_EVERY``
    seconds, and stops when the answer says so (cancelled, or replaced by a new run)."""
    budget = Budget(playouts, seconds, time.monotonic)
    reported = {"at": time.monotonic(), "cancelled": False}

    def progress(done: int) -> None:
        now = time.monotonic()
        if now - reported["at"] < PROGRESS_EVERY:
            return
        reported["at"] = now
        reported["cancelled"] = bool(report(done))

    result = analyze(
        from_reference(reference),
        state,
        seat,
        budget,
        seed,
        progress=progress,
        cancelled=lambda: bool(reported["cancelled"]),
    )
    return result.to_dict()


def run_analysis(services: Any, analysis_id: str, run: int) -> str:
    """Run run number ``run`` of an analysis (the job); its status afterwards.

    The search reports its progress and asks whether it was cancelled at most every
    ``PROGRESS_EVERY`` seconds; it stops after ``MEEPLE_ANALYSIS_MAX_SECONDS`` whatever the
    request asked.
    """
    jobs = services.jobs
    store: AnalysisStore = jobs.analyses
    settings = jobs.settings
    asked = store.get(analysis_id, time.time())
    if asked is not None and asked.get("kind") == "review":
        # A game review is a record of the same store and a job of the same queue.
        from service.workers.reviews import run_review

        return run_review(services, analysis_id, run)

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

        def progress(done: int) -> bool:
            current = store.change(analysis_id, _progress(run, done), time.time())
            if announce is not None and mine(current):
                announce(game_id, current)
            # Stopped when cancelled, or when a new run of it replaced this one.
            return not (mine(current) and current["status"] == "running")

        arguments = (
            ruleset_reference(game.ruleset),
            game.state,
            record["seat"],
            record["budget"]["playouts"],
            seconds,
            search_seed(record),
        )
        outcome = jobs.compute(
            "analyses", SEARCH, arguments, seconds + COMPUTE_GRACE, on_progress=progress
        )
        actions = [candidate["action"] for candidate in outcome["candidates"]]
        lines = candidate_lines(game.ruleset, game.state, record["seat"], actions)
        for candidate, line in zip(outcome["candidates"], lines, strict=True):
            candidate["summary"] = line
        final = store.change(analysis_id, _finish(run, outcome, None), time.time())
    except ComputeClosed:
        failure = "The server stopped during the analysis; asking again starts it anew."
        final = store.change(analysis_id, _finish(run, None, failure), time.time())
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
