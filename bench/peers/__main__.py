"""``make bench-peers`` (not part of CI or ``make bench``): Meeple Ledger beside its peers.

Installs the peers at pinned versions into a throwaway folder - boardgame.io from npm
(``package.json``) and eventsourcing from PyPI (``requirements.txt``) - then prints, in the
same run, each line ending in the ratio ours/theirs:

1. actions/s through boardgame.io's server (Koa + socket.io, its default in-memory storage),
   16 matches of Tally (``tally.js``, the test-only ruleset written as a boardgame.io game)
   driven by boardgame.io's own clients from another process, against actions/s of the same
   game through Meeple Ledger over HTTP (one gunicorn process with the worker class ``meeple
   serve`` runs, the embedded
   SQLite store with durable commits, jobs in-process), 16 connections over 16 games;
2. the replay of one long Tally game: boardgame.io's reducer running the game's moves from
   its initial state, against Meeple Ledger's fold of the same game's log;
3. eventsourcing's SQLite application saving one new event at a time, against Meeple
   Ledger's SQLite event store appending one event at a time.

``MEEPLE_BENCH_SECONDS`` (default 6) bounds each load phase; ``MEEPLE_BENCH_KEEP=1`` keeps
the throwaway folder.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.__main__ import best_of, report
from bench.bench_http import ADMIN_KEY, WORKER_CLASS, Plan, free_port, load, status_of, wait_for
from bench.bench_stores import APPENDS, REPEATS, _append_rate
from events.sqlite_store import SQLiteEventStore
from projections.fold import fold, step_action
from projections.ruleset import register
from projections.simulate import play_random
from tests.rulesets.tally import TALLY

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MATCHES = 16
#: Rounds of the long game replayed (6 moves a round at 2 players).
REPLAY_ROUNDS = 1600
#: Rounds of the games played under load: more than a load phase can reach.
LOAD_ROUNDS = 100_000
NODE_FILES = ("tally.js", "bgio_server.js", "bgio_replay.js")


def install(scratch: Path) -> tuple[Path, Path]:
    """The peers, at their pinned versions, in ``scratch``: (node folder, python folder)."""
    node = scratch / "node"
    node.mkdir()
    for name in ("package.json", *NODE_FILES):
        shutil.copy(HERE / name, node / name)
    print("installing boardgame.io (npm) and eventsourcing (PyPI) into", scratch, flush=True)
    subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=node, check=True
    )
    python = scratch / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--target", str(python), "-r", str(HERE / "requirements.txt")],
        check=True,
    )  # fmt: skip
    return node, python


def node_json(node: Path, *args: str, timeout: float = 600) -> dict[str, float]:
    """Run a node script and read the JSON line it prints last."""
    done = subprocess.run(
        ["node", *args], cwd=node, capture_output=True, text=True, timeout=timeout, check=True
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result: dict[str, float] = json.loads(lines[-1])
    return result


@contextlib.contextmanager
def boardgame_io_server(node: Path) -> Iterator[int]:
    process = subprocess.Popen(
        ["node", "bgio_server.js", "serve"], cwd=node, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("{"):
                yield int(json.loads(line)["port"])
                break
        else:
            raise RuntimeError("boardgame.io's server did not start")
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextlib.contextmanager
def meeple_server(scratch: Path) -> Iterator[int]:
    """Meeple Ledger with Tally registered, as ``meeple serve`` runs it."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    env |= {
        "MEEPLE_STORE_URL": f"sqlite:///{scratch / 'meeple.db'}",
        "MEEPLE_ADMIN_KEY": ADMIN_KEY,
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", f"--bind=127.0.0.1:{port}", "--workers=1",
         f"--worker-class={WORKER_CLASS}", "--keep-alive=30", "--log-level=warning",
         "bench.peers.tally_app:app"],
        cwd=scratch, env=env,
    )  # fmt: skip
    try:
        wait_for(lambda: status_of(port, "/health") == 200, "Meeple Ledger")
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def tally_plans(port: int, count: int) -> list[Plan]:
    """``count`` long Tally games created over HTTP with known seeds, played ahead in memory
    so the load generator knows each seat's next action."""
    plans = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN_KEY}"}
    for number in range(count):
        seed = f"peers-{number}"
        # Only the first rounds can be reached in a load phase: plan those.
        options = {"rounds": 400}
        _, log = play_random(TALLY, ["P0", "P1"], seed, options)
        moves = []
        for envelope in log.envelopes:
            if envelope["type"] == "action":
                action = step_action(envelope)
                moves.append((int(action.pop("seat")), action))
        body = {"ruleset": "tally", "players": ["P0", "P1"], "seed": seed, "options": options}
        connection.request("POST", "/games", json.dumps(body), headers)
        response = connection.getresponse()
        created = json.loads(response.read())
        if response.status != 201:
            raise RuntimeError(f"could not create a Tally game: {created}")
        plans.append(Plan(created["id"], [seat["token"] for seat in created["seats"]], moves))
    connection.close()
    return plans


def main() -> int:
    register(TALLY)
    seconds = float(os.environ.get("MEEPLE_BENCH_SECONDS", "6"))
    scratch = Path(tempfile.mkdtemp(prefix="meeple-bench-peers-"))
    try:
        node, python = install(scratch)
        print("== peers: Meeple Ledger against boardgame.io 0.50.2 and eventsourcing 9.5.6")

        with boardgame_io_server(node) as port:
            theirs = node_json(node, "bgio_server.js", "load", str(port), str(seconds), "16")
        with meeple_server(scratch) as port:
            elapsed, tally = load(port, tally_plans(port, MATCHES), seconds)
        report(
            f"Tally over HTTP, {MATCHES} games at once (ours: {tally.waits} waits)",
            tally.appended / elapsed,
            "actions/s",
            theirs["actions"] / theirs["seconds"],
            "boardgame.io server",
        )

        replayed = node_json(node, "bgio_replay.js", str(REPLAY_ROUNDS), "3")
        _, log = play_random(TALLY, ["P0", "P1"], "peers-replay", {"rounds": REPLAY_ROUNDS})
        events = log.envelopes
        ours = len(events) / best_of(3, lambda: fold(events))
        report(
            f"replay Tally, {REPLAY_ROUNDS} rounds ({len(events)} events)",
            ours,
            "events/s",
            replayed["moves"] / replayed["seconds"],
            "boardgame.io reducer",
        )

        done = subprocess.run(
            [sys.executable, str(HERE / "eventsourcing_append.py"), str(scratch / "es.db"),
             str(APPENDS), str(REPEATS)],
            env={**os.environ, "PYTHONPATH": str(python)}, capture_output=True, text=True,
            check=True,
        )  # fmt: skip
        theirs_append = json.loads(done.stdout)["appends_per_second"]
        store = SQLiteEventStore(scratch / "ours.db")
        try:
            ours_append = _append_rate(store)
        finally:
            store.close()
        report(
            "SQLite append, 1 event (WAL)",
            ours_append,
            "appends/s",
            theirs_append,
            "eventsourcing",
        )
    finally:
        if not os.environ.get("MEEPLE_BENCH_KEEP"):
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
