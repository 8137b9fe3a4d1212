"""Crash tests: what a store acknowledged survives a SIGKILL, in order, with its hash chain.

A writer process (tests/e2e/store_writer.py) appends batches of two as fast as it can and
prints each acknowledged append's last seq and hash; the test kills the store (redis-server)
or the writer itself (SQLite) mid-load, then checks the log from a fresh connection; on the
embedded default, also that no automatic step an acknowledged action made due goes unrecorded.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from events.config import open_store
from events.envelope import verify_chain
from projections.fold import Folder
from projections.ruleset import register
from service.application.job_state import open_job_state
from tests.redis_servers import RedisServer
from tests.rulesets.tally import TALLY

ROOT = Path(__file__).resolve().parents[2]
ACKNOWLEDGED_BEFORE_THE_KILL = 300
BATCH_SIZE = 2
AOF_ALWAYS = ("--appendonly", "yes", "--appendfsync", "always")


def start_writer(url: str, game_id: str, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.store_writer", url, game_id, name, str(BATCH_SIZE)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def stop(writer: subprocess.Popen[str]) -> None:
    """Make sure the writer is gone and its pipe closed, whatever the test did."""
    with writer:
        writer.kill()


def read_acknowledgements(writer: subprocess.Popen[str], count: int) -> list[tuple[int, str]]:
    """The first ``count`` acknowledgements the writer printed (waits for them)."""
    assert writer.stdout is not None
    acknowledged = []
    for _ in range(count):
        line = writer.stdout.readline()
        assert line, f"the writer stopped early with exit code {writer.wait()}"
        seq, digest = line.split()
        acknowledged.append((int(seq), digest))
    return acknowledged


def rest_of_acknowledgements(writer: subprocess.Popen[str]) -> list[tuple[int, str]]:
    """What the writer printed before it died: those appends were acknowledged too. A last
    line cut short by the kill (no newline) was never a complete acknowledgement."""
    assert writer.stdout is not None
    # read() and not communicate(): it starts from what readline() already buffered.
    lines = writer.stdout.read().split("\n")[:-1]
    writer.wait()
    return [(int(seq), digest) for seq, digest in (line.split() for line in lines)]


def assert_every_acknowledged_append_survived(
    url: str, game_id: str, acknowledged: list[tuple[int, str]]
) -> None:
    store = open_store(url)
    try:
        log = store.read(game_id)
    finally:
        store.close()
    assert verify_chain(log, game_id) is None
    # A batch is all or nothing, even when the process dies in the middle of it.
    assert len(log) % BATCH_SIZE == 0
    by_seq = {envelope["seq"]: envelope["hash"] for envelope in log}
    missing = [(seq, digest) for seq, digest in acknowledged if by_seq.get(seq) != digest]
    assert missing == []


def test_every_append_redis_acknowledged_survives_a_sigkill_of_redis_with_aof_always(
    make_redis_server: Callable[..., RedisServer], tmp_path: Path
) -> None:
    server = make_redis_server(tmp_path / "aof", *AOF_ALWAYS)
    writer = start_writer(server.url, "crash-game", "w1")
    try:
        acknowledged = read_acknowledgements(writer, ACKNOWLEDGED_BEFORE_THE_KILL)
        server.kill()
        acknowledged += rest_of_acknowledgements(writer)
    finally:
        stop(writer)

    restarted = make_redis_server(tmp_path / "aof", *AOF_ALWAYS, port=server.port)

    assert len(acknowledged) >= ACKNOWLEDGED_BEFORE_THE_KILL
    assert_every_acknowledged_append_survived(restarted.url, "crash-game", acknowledged)


def test_every_append_sqlite_acknowledged_survives_sigkill_of_two_writer_processes(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'crash.db'}"
    open_store(url).close()  # the schema exists before two processes race to create it
    writers = [start_writer(url, "crash-game", name) for name in ("w1", "w2")]
    acknowledged: list[tuple[int, str]] = []
    try:
        for writer in writers:
            acknowledged += read_acknowledgements(writer, ACKNOWLEDGED_BEFORE_THE_KILL // 2)
        for writer in writers:
            writer.send_signal(signal.SIGKILL)
        for writer in writers:
            acknowledged += rest_of_acknowledgements(writer)
    finally:
        for writer in writers:
            stop(writer)

    with closing(sqlite3.connect(tmp_path / "crash.db")) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert len({seq for seq, _ in acknowledged}) == len(acknowledged)
    assert_every_acknowledged_append_survived(url, "crash-game", acknowledged)


def test_a_sigkill_never_loses_an_acknowledged_action_nor_the_step_it_made_due(
    tmp_path: Path,
) -> None:
    """The embedded default: the application layer's writer (tests/e2e/action_writer.py)
    plays Tally games through ``commands.act`` with its in-process step runner, and is killed
    mid-load. Every acknowledged action is in the log, and every game whose log ends waiting
    for its automatic step has that step marked due (what the sweep runs after a restart):
    the append and the mark are one transaction."""
    url = f"sqlite:///{tmp_path / 'meeple.db'}"
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.action_writer", url],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    acknowledged: list[tuple[str, int]] = []
    try:
        assert writer.stdout is not None
        for _ in range(ACKNOWLEDGED_BEFORE_THE_KILL // 2):
            line = writer.stdout.readline()
            assert line, f"the writer stopped early with exit code {writer.wait()}"
            game_id, version = line.split()
            acknowledged.append((game_id, int(version)))
        writer.send_signal(signal.SIGKILL)
        for line in writer.stdout.read().split("\n")[:-1]:
            game_id, version = line.split()
            acknowledged.append((game_id, int(version)))
    finally:
        stop(writer)

    register(TALLY)
    store = open_store(url)
    state = open_job_state(url, None)
    try:
        for game_id, version in acknowledged:
            assert store.version(game_id) >= version, (game_id, version)
        due = set(state.due_since_before(float("inf"), limit=100_000))
        folder = Folder(store)
        for game_id in store.game_ids():
            game = folder.load(game_id)
            if game.ruleset.status(game.state).get("awaiting_system"):
                assert (game_id, game.version) in due, (game_id, game.version)
    finally:
        state.close()
        store.close()
