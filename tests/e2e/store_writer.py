"""A writer for the crash tests: appends batches to one game as fast as it can and prints
``<last seq> <its hash>`` for every append the store acknowledged, flushed at once.

    python -m tests.e2e.store_writer STORE_URL GAME_ID WRITER_NAME [BATCH_SIZE]

It stops quietly when the store goes away (the test has just killed it).
"""

from __future__ import annotations

import sys

from events.config import open_store
from events.envelope import NewEvent
from events.store import ConcurrencyConflict, StoreError


def main(url: str, game_id: str, writer: str, batch_size: int) -> int:
    store = open_store(url)
    number = 0
    try:
        version = store.version(game_id)
        while True:
            number += 1
            batch = [
                NewEvent(
                    type="action",
                    data={"action": {"type": "write", "writer": writer, "n": number, "part": part}},
                    actor={"seat": 0},
                )
                for part in range(batch_size)
            ]
            try:
                # The key makes a retry after a lost reply harmless: it replays, never doubles.
                result = store.append(game_id, batch, version, idempotency_key=f"{writer}-{number}")
            except ConcurrencyConflict as conflict:
                version = conflict.actual
                continue
            version = result.version
            last = result.envelopes[-1]
            print(f"{last['seq']} {last['hash']}", flush=True)
    except StoreError:
        return 0


if __name__ == "__main__":
    arguments = sys.argv[1:]
    sys.exit(
        main(arguments[0], arguments[1], arguments[2], int(arguments[3] if arguments[3:] else 2))
    )
