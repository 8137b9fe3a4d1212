"""Fold rate (events/s) of the generic fold against a trivial dict-dispatch fold.

The log is a long random game of the test-only Tally ruleset, so this measures the fold's
own machinery (upcasting, rng derivation, dispatch) rather than a game's rules; each game's
own bench module measures its rules. The baseline folds the same number of events through a
dict of handlers that only count, in the same run. Also: time travel — ``Folder.load(at=N)``
near the end of a 10,000-event game against N near its start (ratio near 1 means answering
``at=N`` costs one snapshot interval of folding whatever N is).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import best_of
from bench.foldrate import report_fold_rate
from projections.fold import Folder
from projections.ruleset import register
from tests.rulesets.tally import TALLY


def run(report: Callable[..., None]) -> None:
    register(TALLY)
    events = report_fold_rate(report, TALLY, 4, "bench", {"rounds": 720})
    _time_travel(report, events)


def _time_travel(report: Callable[..., None], events: list[dict[str, Any]]) -> None:
    try:
        from events.config import open_store
        from events.envelope import NewEvent
    except ImportError:  # the stores land separately; the fold bench stands alone
        return
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'bench.db'}")
        try:
            game_id = events[0]["game_id"]
            batch = 500
            for start in range(0, len(events), batch):
                chunk = [NewEvent.copy_of(envelope) for envelope in events[start : start + batch]]
                store.append(game_id, chunk, start)
            folder_ = Folder(store, snapshot_interval=100)
            folder_.load(game_id)  # writes the snapshots
            n = len(events)
            early = best_of(5, lambda: Folder(store, 100).load(game_id, at=150))
            late = best_of(5, lambda: Folder(store, 100).load(game_id, at=n - 50))
            report(
                f"time travel: load(at={n - 50}) vs load(at=150)",
                1 / late,
                "loads/s",
                1 / early,
                "at=150",
            )
        finally:
            store.close()
