"""eventsourcing's SQLite application appending one event per save (``make bench-peers``).

Run with the throwaway folder holding eventsourcing on PYTHONPATH:
``python eventsourcing_append.py DBFILE APPENDS REPEATS`` prints ``{"appends_per_second": x}``
(best of REPEATS runs, each a fresh aggregate saved once per new event).
"""

from __future__ import annotations

import json
import sys
import time

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Game(Aggregate):
    @event("Created")
    def __init__(self) -> None:
        self.played: list[int] = []

    @event("Played")
    def play(self, card: int) -> None:
        self.played.append(card)


def main(path: str, appends: int, repeats: int) -> None:
    app: Application = Application(
        env={"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
    )
    best = float("inf")
    for _ in range(repeats):
        game = Game()
        app.save(game)
        began = time.perf_counter()
        for card in range(appends):
            game.play(card % 5 + 1)
            app.save(game)
        best = min(best, time.perf_counter() - began)
    print(json.dumps({"appends_per_second": appends / best}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
