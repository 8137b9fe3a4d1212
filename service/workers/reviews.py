"""Running a game review (docs/analysis.md, "Game review"): one job on the analyses' queue,
taken in the analyses' fair order and counted under their caps. It folds the game's log up to
the reviewed event once, then reviews its events a few at a time where ``Jobs.compute`` puts
searches (a child process of the embedded default, the analyses worker on Redis), writing the
partial result down and telling the live stream after each few, so a client follows it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from projections.agents.review import review_event, summarize_review
from projections.audit import read_log
from projections.fold import copy_state, replay, start, step_action
from projections.ruleset import from_reference, ruleset_reference
from service.application.analyses import ACTIVE, AnalysisStore, Record, now_text
from service.application.services import ComputeClosed

log = logging.getLogger(__name__)

#: The function a few events of a review run in (by name: in another process).
CHUNK_FUNCTION = "service.workers.reviews:review_chunk"
#: Events one computation reviews: the partial result is written down after each such chunk.
CHUNK = 6
#: Seconds beyond its budget after which a chunk that has not answered is killed.
COMPUTE_GRACE = 30.0


def review_chunk(
    reference: tuple[str, str],
    points: list[dict[str, Any]],
    seat: int,
    search_playouts: int,
    evaluations: int,
    seed: str,
    report: Callable[[int], bool],
) -> list[dict[str, Any]]:
    """Review ``points`` (events of the game), telling ``report`` how many are done after
    each; stops early when it answers True (cancelled)."""
    ruleset = from_reference(reference)
    done: list[dict[str, Any]] = []
    for point in points:
        done.append(review_event(ruleset, point, seat, search_playouts, evaluations, seed))
        if report(len(done)):
            break
    return done


def review_points(services: Any, game_id: str, seat: int, upto: int) -> tuple[Any, list[Any]]:
    """The game folded to ``upto`` and, for each event from its header on, the state after
    it and, at ``seat``'s own actions, the state before and the action played."""
    envelopes = list(read_log(services.store, game_id, upto=upto))
    by_seq = {envelope["seq"]: envelope for envelope in envelopes}
    game = start(envelopes[0], by_seq.__getitem__)
    points: list[dict[str, Any]] = []
    pending: dict[str, Any] = {"seq": game.version}
    for current, envelope in replay(envelopes, game):
        pending["after"] = copy_state(current.state)
        points.append(pending)
        pending = {"seq": envelope["seq"]}
        if envelope["type"] == "action" and envelope["actor"].get("seat") == seat:
            pending["before"] = copy_state(current.state)
            pending["played"] = step_action(envelope)
    pending["after"] = copy_state(game.state)
    points.append(pending)
    return game, points


def review_result(record: Record, ruleset_id: str, events: list[dict[str, Any]],
                  complete: bool) -> dict[str, Any]:  # fmt: skip
    """What a review's ``result`` shows of the events reviewed so far."""
    decisions = [{"seq": e["seq"], **e["decision"]} for e in events if e.get("decision")]
    return {
        "seat": record["seat"],
        "complete": complete,
        **summarize_review(ruleset_id, events),
        "moves": decisions,
        "evaluations": [{"seq": e["seq"], **e["evaluation"]} for e in events],
    }


def run_review(services: Any, review_id: str, run: int) -> str:
    """Run run number ``run`` of a review (the job); its status afterwards."""
    jobs = services.jobs
    store: AnalysisStore = jobs.analyses
    settings = jobs.settings
    announce = getattr(jobs, "announce_analysis", None)

    def mine(record: Record | None) -> bool:
        return record is not None and record["run"] == run

    def start_run(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or not mine(record) or record["status"] != "queued":
            return None
        lease = time.time() + settings.review_max_seconds + settings.analysis_lease
        return {**record, "status": "running", "started_at": now_text(), "lease_until": lease}

    record = store.change(review_id, start_run, time.time())
    if record is None or not mine(record) or record["status"] != "running":
        return "gone" if record is None else str(record["status"])
    game_id, seat = record["game_id"], int(record["seat"])
    budget = record["budget"]
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + settings.review_max_seconds
    try:
        game, points = review_points(services, game_id, seat, int(record["at"]))
        store.change(review_id, _total(run, len(points)), time.time())
        reference = ruleset_reference(game.ruleset)
        stopped = False
        for first in range(0, len(points), CHUNK):
            left = deadline - time.monotonic()
            if stopped or left <= 0:
                break
            reviewed = len(events)

            def progress(done: int, reviewed: int = reviewed) -> bool:
                current = store.change(review_id, _progress(run, reviewed + done), time.time())
                return not (
                    mine(current) and current is not None and current["status"] == "running"
                )

            chunk = points[first : first + CHUNK]
            arguments = (
                reference, chunk, seat, budget["playouts"], budget["evaluations"], record["seed"],
            )  # fmt: skip
            found = jobs.compute(
                "analyses", CHUNK_FUNCTION, arguments, left + COMPUTE_GRACE, on_progress=progress
            )
            events.extend(found)
            partial = review_result(record, game.ruleset.id, events, False)
            current = store.change(review_id, _partial(run, len(events), partial), time.time())
            stopped = len(found) < len(chunk) or not (
                mine(current) and current is not None and current["status"] == "running"
            )
            if announce is not None and current is not None and mine(current):
                announce(game_id, current)
        outcome = review_result(record, game.ruleset.id, events, len(events) == len(points))
        final = store.change(review_id, _finish(run, outcome, None), time.time())
    except ComputeClosed:
        failure = "The server stopped during the review; asking again starts it anew."
        final = store.change(review_id, _finish(run, None, failure), time.time())
    except Exception:
        log.exception("review %s of game %s failed", review_id, game_id)
        failure = "The review failed; asking again starts it anew."
        final = store.change(review_id, _finish(run, None, failure), time.time())
    if announce is not None and final is not None:
        announce(game_id, final)
    return "gone" if final is None else str(final["status"])


def _progress(run: int, done: int) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] != "running":
            return None
        return {**record, "progress": {**record["progress"], "done": done}}

    return decide


def _total(run: int, total: int) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] != "running":
            return None
        return {**record, "progress": {**record["progress"], "total": total}}

    return decide


def _partial(run: int, done: int, result: dict[str, Any]) -> Callable[..., Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] != "running":
            return None
        return {**record, "progress": {**record["progress"], "done": done}, "result": result}

    return decide


def _finish(
    run: int, outcome: dict[str, Any] | None, error: str | None
) -> Callable[[Record | None, list[Record]], Record | None]:
    def decide(record: Record | None, _: list[Record]) -> Record | None:
        if record is None or record["run"] != run or record["status"] not in (*ACTIVE, "cancelled"):
            return None
        if record["status"] == "cancelled":
            return {**record, "result": outcome} if outcome is not None else None
        status = "failed" if error is not None else "done"
        done = len(outcome["evaluations"]) if outcome is not None else record["progress"]["done"]
        return {
            **record,
            "status": status,
            "progress": {**record["progress"], "done": done},
            "result": outcome if outcome is not None else record.get("result"),
            "error": error,
            "finished_at": now_text(),
        }

    return decide
