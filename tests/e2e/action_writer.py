"""A writer for the crash tests that plays through the application layer on the embedded
default (SQLite store, in-process jobs): it starts Tally games and plays both seats' bids as
fast as it can; the second bid of a round makes the automatic step due. For every action
acknowledged it prints ``<game id> <version>``, flushed at once.

    python -m tests.e2e.action_writer STORE_URL

The test kills it with SIGKILL mid-load.
"""

from __future__ import annotations

import sys

from projections.ruleset import register
from service.application import commands
from service.bootstrap import bootstrap
from service.config import load_config
from tests.rulesets.tally import TALLY


def main(url: str) -> int:
    register(TALLY)
    services = bootstrap(load_config({}, store_url=url, rate_limits=False))
    number = 0
    while True:
        number += 1
        created = commands.create_game(services, "tally", ["Ann", "Bob"], seed=f"crash-{number}")
        for seat, amount in ((0, 3), (1, 5)):
            result = commands.act(
                services, created.game_id, seat, {"type": "bid", "amount": amount}
            )
            print(f"{created.game_id} {result.version}", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
