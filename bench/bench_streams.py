"""POST /actions throughput of ``meeple serve`` with 1,000 idle live streams open, against none.

The embedded default as a newcomer runs it: one ``meeple serve`` (gunicorn's gevent worker,
SQLite under a scratch directory, jobs in-process) on a free loopback port. The load is the
HTTP bench's (``bench_http``): 16 keep-alive connections POSTing legal actions of games of
every product ruleset, created with known seeds and played ahead in memory.

Three phases of ``MEEPLE_BENCH_SECONDS`` (default 6) seconds on fresh games each: no stream,
then 1,000 streams open on 50 other games (idle: nobody plays those, so each stream only waits,
checks its client and sends heartbeats), then no stream again. The baseline is the mean of the
two stream-less phases, so a drift of the shared machine's load during the run counts on both
sides. Also printed: the server's CPU while the 1,000 streams stay idle, without any load.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from bench.bench_http import ADMIN_KEY, load, plan_games, status_of, stop, wait_for

ROOT = Path(__file__).resolve().parents[1]
MEEPLE = Path(sys.executable).with_name("meeple")
STREAMS = 1000
#: Games the idle streams watch (20 streams each).
IDLE_GAMES = 50
#: Games played in each phase.
GAMES = 32
#: Seconds over which the server's CPU is measured while the streams are idle.
IDLE_SECONDS = 5.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def meeple_serve(directory: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """``meeple serve`` on the embedded default in ``directory``; yields (port, process)."""
    port = free_port()
    clean = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    env = {
        **clean,
        "MEEPLE_ADMIN_KEY": ADMIN_KEY,
        # The bench's streams all come from loopback: room for them under the caps.
        "MEEPLE_STREAMS_PER_ADDRESS": str(STREAMS * 2),
        "MEEPLE_STREAMS_PER_GAME": str(STREAMS),
    }
    process = subprocess.Popen(
        [str(MEEPLE), "serve", "--port", str(port)],
        cwd=directory,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: status_of(port, "/health") == 200, "meeple serve")
        yield port, process
    finally:
        stop(process, grace=60)


def create_games(port: int, count: int) -> list[str]:
    """``count`` games, created with the admin key (which no rate limit counts)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN_KEY}"}
    ids = []
    for _ in range(count):
        body = json.dumps({"ruleset": "gutenberg", "players": ["Ann", "Bob"]})
        connection.request("POST", "/games", body, headers)
        response = connection.getresponse()
        created = json.loads(response.read())
        if response.status != 201:
            raise RuntimeError(f"could not create a game: {created}")
        ids.append(created["id"])
    connection.close()
    return ids


def open_streams(port: int, game_ids: list[str], count: int) -> list[socket.socket]:
    """``count`` streams spread over the games, each answered 200 before the next opens."""
    streams = []
    for number in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        game_id = game_ids[number % len(game_ids)]
        connection.sendall(f"GET /games/{game_id}/stream HTTP/1.0\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = connection.recv(4096)
            if not chunk:
                raise RuntimeError("a stream was closed before its answer")
            head += chunk
        if not head.startswith(b"HTTP/1.1 200") and not head.startswith(b"HTTP/1.0 200"):
            raise RuntimeError(f"a stream was refused: {head.splitlines()[0]!r}")
        streams.append(connection)
    return streams


def still_open(streams: list[socket.socket]) -> int:
    """How many streams the server has not closed (reading what heartbeats came)."""
    count = 0
    for connection in streams:
        connection.setblocking(False)
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
        except BlockingIOError:
            count += 1
        except OSError:
            pass
    return count


def worker_pids(arbiter: int) -> list[int]:
    """The gunicorn worker processes of ``meeple serve`` (the arbiter's children)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == arbiter:
                    pids.append(int(entry.name))
    return pids


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def run(report: Callable[..., None]) -> None:
    seconds = float(os.environ.get("MEEPLE_BENCH_SECONDS", "6"))
    with (
        tempfile.TemporaryDirectory(prefix="meeple-bench-streams-") as scratch,
        meeple_serve(Path(scratch)) as (port, process),
    ):
        phases = [plan_games(port, GAMES, first=GAMES * n) for n in range(3)]
        idle_games = create_games(port, IDLE_GAMES)
        before, quiet = load(port, phases[0], seconds)
        streams = open_streams(port, idle_games, STREAMS)
        try:
            pids = worker_pids(process.pid)
            used = cpu_seconds(pids)
            time.sleep(IDLE_SECONDS)
            idle_cpu = (cpu_seconds(pids) - used) / IDLE_SECONDS
            during_elapsed, during = load(port, phases[1], seconds)
            open_after = still_open(streams)
        finally:
            for connection in streams:
                connection.close()
        after, quiet_again = load(port, phases[2], seconds)
    without = (quiet.appended / before + quiet_again.appended / after) / 2
    with_streams = during.appended / during_elapsed
    errors = {**quiet.errors, **during.errors, **quiet_again.errors}
    if errors:
        print(f"   unexpected statuses from the API: {errors}", flush=True)
    print(
        f"   {during.appended} actions with {STREAMS} streams open ({open_after} still open "
        f"after the load), {quiet.appended} and {quiet_again.appended} without; the idle "
        f"streams used {idle_cpu:.1%} of a core",
        flush=True,
    )
    report(
        f"streams: actions/s with {STREAMS} idle streams open",
        with_streams,
        "actions/s",
        without,
        "none",
    )
