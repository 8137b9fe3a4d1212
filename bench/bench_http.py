"""HTTP actions/s and latency of the API (gunicorn, Redis store) against one bare XADD per request.

The deployment of compose.yaml on loopback: a redis-server started here on a free port with
AOF ``appendfsync always``, gunicorn with 2 workers of compose's worker class (gevent) serving
``create_app()`` on the Redis store, and the three ``meeple worker`` processes compose.yaml
runs that take automatic steps (two ``worker`` on steps and notifications, one
``steps-worker`` on steps only). Games of every product ruleset are created with a known
seed (admin key) and played ahead in memory, so the load generator knows a legal action for
every position and only POSTs actions: 16 keep-alive connections (2 processes x 8 threads,
so the client's GIL is not the bottleneck) spread over many games; a game waiting for its
automatic step (409) is set aside and retried later.

The baseline is the same gunicorn serving a bare Flask endpoint that does one XADD per
request to the same Redis, driven by the same load generator in the same run: both servers
run side by side, and after ``WARM_UP`` seconds of load on each that are not counted (each
gunicorn worker folds and caches the games it serves, and opens its Redis connections, once;
a server that runs for long does that once too), ``ROUNDS`` rounds each load the baseline,
then ours, then ours with ``Prefer: wait=10`` on every action (docs/api.md: an action that
makes an automatic step due is answered after it, so no answer is 409), for
``MEEPLE_BENCH_SECONDS / 2`` seconds each (default 3). Each line gives the rates over all
the rounds; the ratio of each round is printed too, which shows how much the shared
machine's load moved under the bench.

It also prints the CPU each kind of process used per answer in the measured phases (the
gunicorn workers, redis-server, and in ours the RQ workers, which share the cores: a cost
the baseline does not have, shown rather than hidden), and the load generator's too. From
them it prints what the ratio 0.5 allows an action in CPU, and the stack's own share of
that: a bare request, and RQ's cost per job (measured on empty jobs queued as the steps are)
times the automatic steps per action (``budget``).

``MEEPLE_BENCH_PROFILE=1`` also prints where the API's time goes: one process serving the
same POSTs through the Flask test client under cProfile.
"""

from __future__ import annotations

import contextlib
import cProfile
import http.client
import json
import multiprocessing
import os
import pstats
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ADMIN_KEY = "bench-admin-key-0123456789abcdef"
CONNECTIONS = 16
PROCESSES = 2
#: Enough games that none runs out of planned moves before the bench ends (about 21,000
#: moves in all; the rounds play some 13,000).
GAMES = 192
#: Measured rounds: in each, the baseline, ours, and ours with ``Prefer: wait``, one after
#: the other, ``MEEPLE_BENCH_SECONDS / 2`` seconds each, so a change of the shared machine's
#: load during the bench weighs on every side alike.
ROUNDS = 3
GUNICORN_WORKERS = 2
#: As compose.yaml runs them (gevent: a request, or a live stream, is a greenlet).
WORKER_CLASS = "service.http.gevent_worker.StreamingWorker"
#: The queues of each RQ worker that takes automatic steps, as compose.yaml runs them: its
#: ``worker`` service (two replicas) and its ``steps-worker``.
RQ_WORKERS = (["steps", "notifications"], ["steps", "notifications"], ["steps"])
#: Seconds a connection leaves a game alone after hearing 409 awaiting_system_step (a client
#: told Retry-After: 1 would wait longer; this keeps the games busy without hammering them).
SET_ASIDE = 0.025
#: Seconds of load before each measured phase, not counted.
WARM_UP = 2.0


def worker_code(queues: list[str]) -> str:
    """The code of a ``meeple worker`` process on ``queues`` (none: its default queues)."""
    arguments = ["worker"] + [part for queue in queues for part in ("--queue", queue)]
    return f"from service.cli import main; raise SystemExit(main({arguments!r}))"


WORKER_CODE = worker_code([])


#: The process id of each server the bench started (its URL or gunicorn port -> pid).
PIDS: dict[str, int] = {}


def stop(*processes: subprocess.Popen[Any], grace: float = 30.0) -> None:
    """Ask each process to stop (SIGTERM) and wait ``grace`` seconds for them all; one that
    is still running is killed (a worker killed mid-job loses nothing: its step stays due).
    A bench never fails because a process it started was slow to stop."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"   pid {process.pid} did not stop within {grace:g} s: killed", flush=True)
            process.kill()
            process.wait()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(check: Callable[[], bool], what: str, patience: float = 60.0) -> None:
    deadline = time.monotonic() + patience
    while True:
        with contextlib.suppress(OSError, http.client.HTTPException):
            if check():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up")
        time.sleep(0.1)


@contextlib.contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A throwaway redis-server with AOF fsync'd on every write; yields its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("the HTTP bench needs redis-server (apt-get install redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--appendonly", "yes", "--appendfsync", "always", "--save", "",
         "--maxmemory-policy", "noeviction", "--protected-mode", "no"],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        import redis

        client = redis.Redis(port=port)
        wait_for(lambda: bool(client.ping()), "redis-server")
        client.close()
        PIDS[f"redis://127.0.0.1:{port}"] = process.pid
        yield f"redis://127.0.0.1:{port}"
    finally:
        stop(process)


@contextlib.contextmanager
def gunicorn(app: str, env: dict[str, str]) -> Iterator[int]:
    """gunicorn serving ``app`` with the bench's workers; yields its port."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", f"--bind=127.0.0.1:{port}",
         f"--workers={GUNICORN_WORKERS}", f"--worker-class={WORKER_CLASS}",
         "--keep-alive=30", "--log-level=warning", app],
        cwd=ROOT, env=env,
    )  # fmt: skip
    try:
        # Patient: on a machine shared with other suites a niced start can take minutes.
        wait_for(lambda: status_of(port, "/health") < 500, f"gunicorn {app}", patience=600)
        PIDS[f"gunicorn:{port}"] = process.pid
        yield port
    finally:
        stop(process)


def cpu_seconds(pids: list[int]) -> float:
    """The CPU time (user + system) the processes have used so far (Linux ``/proc``; 0 for
    a process that is gone)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (gunicorn's workers)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


@contextlib.contextmanager
def cpu_of(groups: dict[str, list[int]], spent: dict[str, float]) -> Iterator[None]:
    """Adds to ``spent`` the CPU seconds each group of processes used inside the block."""
    before = {name: cpu_seconds(pids) for name, pids in groups.items()}
    yield
    for name, pids in groups.items():
        spent[name] = spent.get(name, 0.0) + cpu_seconds(pids) - before[name]


def status_of(port: int, path: str) -> int:
    """The status a GET of ``path`` gets from the server on ``port``."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return int(response.status)
    finally:
        connection.close()


def baseline_app() -> Any:
    """The baseline: a bare Flask endpoint appending its body with one XADD."""
    import redis
    from flask import Flask, jsonify, request

    app = Flask("baseline")
    client = redis.Redis.from_url(os.environ["MEEPLE_STORE_URL"])

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.post("/games/<game_id>/actions")
    def append(game_id: str) -> Any:
        body = request.get_json()
        entry = client.xadd(f"baseline:{{{game_id}}}", {"e": json.dumps(body)})
        return jsonify({"id": entry.decode() if isinstance(entry, bytes) else entry}), 201

    return app


# -- the games and their plans ------------------------------------------------------------


@dataclass
class Plan:
    """A game the load generator plays: its id, seat tokens and the seat actions in order;
    ``steps[i]``: how many automatic steps the game takes before its move ``i`` (the seeds are
    known, so the workers take the same steps as the playout did)."""

    game_id: str
    tokens: list[str]
    moves: list[tuple[int, dict[str, Any]]]
    next: int = 0
    steps: list[int] = field(default_factory=list)

    def steps_between(self, first: int, last: int) -> int:
        """The automatic steps that moves ``first`` to ``last - 1`` made due."""
        if not self.steps or last <= first:
            return 0
        return self.steps[min(last, len(self.steps) - 1)] - self.steps[first]


def game_plan(number: int) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]], list[int]]:
    """The body creating game ``number`` (a product ruleset, a known seed), the seat actions
    of a random playout of it in order (the automatic steps are the workers'), and how many
    automatic steps come before each action (and, last, in the whole playout)."""
    from projections.simulate import play_random
    from service.http.openapi import product_rulesets

    rulesets = product_rulesets()
    ruleset = rulesets[number % len(rulesets)]
    players = [f"P{seat}" for seat in range(min(max(2, ruleset.min_players), 4))]
    seed = f"bench-{number}"
    # A round limit, where a game offers one, keeps planning short; the load generator never
    # gets that far into a game within the bench's seconds anyway.
    options = {"round_limit": 3} if "round_limit" in ruleset.options else {}
    _, log = play_random(ruleset, players, seed, options)
    moves, steps = seat_moves(log.envelopes)
    body = {"ruleset": ruleset.id, "players": players, "seed": seed, "options": options}
    return body, moves, steps


def seat_moves(
    envelopes: list[dict[str, Any]],
) -> tuple[list[tuple[int, dict[str, Any]]], list[int]]:
    """The seat actions of a played log in order, as (seat, action) a client POSTs (the
    automatic steps are the workers'), and how many automatic steps come before each action
    (and, last, in the whole log)."""
    from projections.fold import step_action

    moves = []
    steps = []
    taken = 0
    for envelope in envelopes:
        if envelope["type"] == "action":
            action = step_action(envelope)
            seat = action.pop("seat")
            moves.append((int(seat), action))
            steps.append(taken)
        elif envelope["type"] == "system":
            taken += 1
    steps.append(taken)
    return moves, steps


def plan_games(port: int, count: int, first: int = 0) -> list[Plan]:
    """Create ``count`` games over HTTP with known seeds, each played ahead in memory."""
    plans = []
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN_KEY}"}
    for number in range(first, first + count):
        body, moves, steps = game_plan(number)
        connection.request("POST", "/games", json.dumps(body), headers)
        response = connection.getresponse()
        created = json.loads(response.read())
        if response.status != 201:
            raise RuntimeError(f"could not create a {body['ruleset']} game: {created}")
        tokens = [seat["token"] for seat in created["seats"]]
        plans.append(Plan(created["id"], tokens, moves, steps=steps))
    connection.close()
    return plans


def baseline_plans(count: int, moves: int = 10_000) -> list[Plan]:
    return [
        Plan(f"baseline-{number}", ["-"], [(0, {"type": "bid", "amount": 1})] * moves)
        for number in range(count)
    ]


# -- the load generator ---------------------------------------------------------------------


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    appended: int = 0
    waits: int = 0
    errors: dict[int, int] = field(default_factory=dict)
    #: game -> the index of its next move when the load stopped
    positions: dict[str, int] = field(default_factory=dict)
    #: the CPU seconds the load generator's processes used
    client_cpu: float = 0.0

    def add(self, other: Tally) -> None:
        """Count ``other``'s answers in this tally too."""
        self.positions.update(other.positions)
        self.latencies.extend(other.latencies)
        self.appended += other.appended
        self.waits += other.waits
        self.client_cpu += other.client_cpu
        for status, count in other.errors.items():
            self.errors[status] = self.errors.get(status, 0) + count


def drive(
    port: int,
    plans: list[Plan],
    seconds: float,
    tally: Tally,
    lock: threading.Lock,
    prefer: dict[str, str],
) -> None:
    """One connection: POST the next move of each of its games in turn until time is up."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    deadline = time.perf_counter() + seconds
    waiting: dict[str, float] = {}
    mine = Tally()
    while time.perf_counter() < deadline:
        ready = [plan for plan in plans if plan.next < len(plan.moves)]
        if not ready:
            break
        progressed = False
        for plan in ready:
            if waiting.get(plan.game_id, 0.0) > time.perf_counter():
                continue
            seat, action = plan.moves[plan.next]
            headers = {
                "Content-Type": "application/json",
                "Authorization": f"Bearer {plan.tokens[seat]}",
                **prefer,
            }
            began = time.perf_counter()
            connection.request(
                "POST", f"/games/{plan.game_id}/actions", json.dumps(action), headers
            )
            response = connection.getresponse()
            response.read()
            took = time.perf_counter() - began
            if response.status in (201, 202):
                mine.latencies.append(took)
                mine.appended += 1
                plan.next += 1
                progressed = True
            elif response.status == 409:
                mine.waits += 1  # the automatic step is pending: come back to this game later
                waiting[plan.game_id] = time.perf_counter() + SET_ASIDE
            else:
                mine.errors[response.status] = mine.errors.get(response.status, 0) + 1
                plan.next = len(plan.moves)  # stop playing a game that went astray
            if time.perf_counter() >= deadline:
                break
        if not progressed:
            time.sleep(0.001)
    connection.close()
    mine.positions = {plan.game_id: plan.next for plan in plans}
    with lock:
        tally.add(mine)


def _load_process(
    port: int, slices: list[list[Plan]], seconds: float, prefer: dict[str, str], results: Any
) -> None:
    tally = Tally()
    lock = threading.Lock()
    threads = [
        threading.Thread(target=drive, args=(port, games, seconds, tally, lock, prefer))
        for games in slices
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results.put((tally.latencies, tally.appended, tally.waits, tally.errors, tally.positions))


def load(
    port: int, plans: list[Plan], seconds: float, prefer: dict[str, str] | None = None
) -> tuple[float, Tally]:
    """Drive ``CONNECTIONS`` connections over ``PROCESSES`` processes (each request with the
    ``prefer`` headers); (elapsed, tally). The plans move on as far as the load played them."""
    per_connection = [plans[index::CONNECTIONS] for index in range(CONNECTIONS)]
    threads_each = CONNECTIONS // PROCESSES
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    processes = [
        context.Process(
            target=_load_process,
            args=(
                port,
                per_connection[n * threads_each : (n + 1) * threads_each],
                seconds,
                prefer or {},
                results,
            ),
        )
        for n in range(PROCESSES)
    ]
    # The load generator's CPU: what the children reaped meanwhile used (only its processes
    # end here; the servers are reaped when the bench stops them).
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    for process in processes:
        process.start()
    total = Tally()
    for _ in processes:
        latencies, appended, waits, errors, positions = results.get(timeout=seconds + 120)
        total.add(Tally(latencies, appended, waits, errors, positions))
    elapsed = time.perf_counter() - began
    for process in processes:
        process.join(timeout=30)
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    total.client_cpu = now.ru_utime + now.ru_stime - reaped.ru_utime - reaped.ru_stime
    for plan in plans:  # the load ran in other processes: move the plans on as they did
        plan.next = total.positions.get(plan.game_id, plan.next)
    return elapsed, total


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


# -- what the stack costs on its own --------------------------------------------------------

#: No-op jobs that measure RQ's own cost per job.
EMPTY_JOBS = 600


def empty_job() -> None:
    """A job that does nothing: what an RQ worker spends on it is RQ's own bookkeeping."""


def rq_cost_per_job(redis_url: str, workers: list[int], count: int = EMPTY_JOBS) -> float:
    """The CPU seconds the RQ workers spend per job on ``count`` jobs that do nothing, queued
    as the service queues its automatic steps (the same queue and options) once the load
    stopped."""
    spent, _ = rq_cost(redis_url, {"RQ workers": workers}, count)
    return spent["RQ workers"] / count


def rq_cost(
    redis_url: str, groups: dict[str, list[int]], count: int = EMPTY_JOBS
) -> tuple[dict[str, float], float]:
    """The CPU seconds each group of processes (the RQ workers, redis-server...) spent while
    ``count`` jobs that do nothing, queued in one pipeline as the service queues its
    automatic steps (the same queue and options), were taken; and the seconds from the
    queueing to the last one finished."""
    import redis
    from rq import Queue
    from rq.registry import FinishedJobRegistry

    from service.workers.jobs import STEPS_QUEUE, RQJobs

    connection = redis.Redis.from_url(redis_url)
    queue = Queue(STEPS_QUEUE, connection=connection)
    finished = FinishedJobRegistry(queue=queue)
    done = finished.count + count
    spent: dict[str, float] = {}
    began = time.perf_counter()
    with cpu_of(groups, spent):
        with connection.pipeline(transaction=False) as pipe:
            for _ in range(count):
                queue.enqueue(
                    empty_job,
                    result_ttl=RQJobs.RESULT_TTL,
                    failure_ttl=RQJobs.FAILURE_TTL,
                    job_timeout=RQJobs.JOB_TIMEOUT,
                    pipeline=pipe,
                )
            pipe.execute()
        wait_for(lambda: finished.count >= done, "the empty jobs", patience=120)
        elapsed = time.perf_counter() - began
    connection.close()
    return spent, elapsed


# -- the run --------------------------------------------------------------------------------


@dataclass
class Side:
    """What one side of the comparison did over the rounds: its answers, its seconds of load,
    and the CPU seconds each kind of its processes spent meanwhile."""

    tally: Tally = field(default_factory=Tally)
    seconds: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)
    rates: list[float] = field(default_factory=list)
    #: the automatic steps its actions made due (known from the games' plans)
    steps: int = 0

    def phase(
        self,
        port: int,
        plans: list[Plan],
        seconds: float,
        groups: dict[str, list[int]],
        prefer: dict[str, str] | None = None,
    ) -> None:
        before = [plan.next for plan in plans]
        with cpu_of(groups, self.cpu):
            elapsed, tally = load(port, plans, seconds, prefer)
        self.steps += sum(
            plan.steps_between(first, plan.next) for plan, first in zip(plans, before, strict=True)
        )
        self.tally.add(tally)
        self.seconds += elapsed
        self.rates.append(tally.appended / elapsed)

    @property
    def rate(self) -> float:
        return self.tally.appended / self.seconds

    def per_answer(self, name: str) -> float:
        """CPU milliseconds per answer of one kind of process (``client``: the load's)."""
        spent = self.tally.client_cpu if name == "client" else self.cpu.get(name, 0.0)
        return spent / max(1, self.tally.appended) * 1000

    @property
    def cores(self) -> float:
        """How many cores the side kept busy, the load generator's share included."""
        return (sum(self.cpu.values()) + self.tally.client_cpu) / self.seconds


def run(report: Callable[..., None]) -> None:
    phase = float(os.environ.get("MEEPLE_BENCH_SECONDS", "6")) / 2
    with tempfile.TemporaryDirectory(prefix="meeple-bench-http-") as scratch:
        directory = Path(scratch)
        with redis_server(directory) as url:
            env = {
                **os.environ,
                "MEEPLE_STORE_URL": f"{url}/0",
                "MEEPLE_REDIS_URL": f"{url}/1",
                "MEEPLE_ADMIN_KEY": ADMIN_KEY,
                "PYTHONPATH": str(ROOT),
                # Counted as compose.yaml counts them, but each seat's token may post this
                # fast: the load generator plays one seat's moves back to back, faster than
                # the 20 a second a client gets (its 429s would measure the limit).
                "MEEPLE_RATE_LIMIT_ACTIONS": "1000/second",
            }
            workers = [
                subprocess.Popen(
                    [sys.executable, "-c", worker_code(queues)],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                for queues in RQ_WORKERS
            ]
            base, ours, waited = Side(), Side(), Side()
            per_job = float("nan")
            try:
                with (
                    gunicorn("bench.bench_http:baseline_app()", env) as base_port,
                    gunicorn("service.app:create_app()", env) as port,
                ):
                    base_plans = baseline_plans(GAMES)
                    plans = plan_games(port, GAMES)
                    load(base_port, base_plans, WARM_UP)
                    load(port, plans, WARM_UP)
                    redis_pids = [PIDS[url]]
                    base_groups = {
                        "gunicorn": children_of(PIDS[f"gunicorn:{base_port}"]),
                        "redis": redis_pids,
                    }
                    groups = {
                        "gunicorn": children_of(PIDS[f"gunicorn:{port}"]),
                        "redis": redis_pids,
                        "RQ workers": [worker.pid for worker in workers],
                    }
                    for _ in range(ROUNDS):
                        base.phase(base_port, base_plans, phase, base_groups)
                        ours.phase(port, plans, phase, groups)
                        waited.phase(port, plans, phase, groups, {"Prefer": "wait=10"})
                    per_job = rq_cost_per_job(env["MEEPLE_REDIS_URL"], groups["RQ workers"])
            finally:
                stop(*workers)
            if os.environ.get("MEEPLE_BENCH_PROFILE"):
                profile(env)
    api = ours.tally
    if api.errors:
        print(f"   unexpected statuses from the API: {api.errors}", flush=True)
    print(
        f"   {api.appended} actions on {GAMES} games, {api.waits} answers 'awaiting the "
        f"automatic step' (409) set aside; baseline {base.tally.appended} XADDs; "
        f"{ROUNDS} rounds of {phase:g} s a side",
        flush=True,
    )
    report("http: actions/s, 16 connections, gunicorn 2 workers", ours.rate, "actions/s",
           base.rate, "XADD/s")  # fmt: skip
    # CPU per answer, by process (the cores are shared: this says where the work goes).
    mine = ", ".join(
        f"{name} {ours.per_answer(name):.2f} ({spent / ours.seconds:.0%} of a core)"
        for name, spent in [*ours.cpu.items(), ("client", api.client_cpu)]
    )
    theirs = ", ".join(f"{name} {base.per_answer(name):.2f}" for name in [*base.cpu, "client"])
    print(f"   CPU ms per action: {mine}; per XADD: {theirs}", flush=True)
    budget(base, ours, per_job)
    if waited.tally.errors:
        print(f"   unexpected statuses with Prefer: wait: {waited.tally.errors}", flush=True)
    print(
        f"   with Prefer: wait=10: {waited.tally.appended} actions, "
        f"{waited.tally.waits} answers 409",
        flush=True,
    )
    report("http: actions/s with Prefer: wait=10", waited.rate, "actions/s",
           base.rate, "XADD/s")  # fmt: skip
    # The ratio of each round on its own: how much the machine's load moved under the bench.
    for name, side in (("actions", ours), ("with Prefer: wait", waited)):
        ratios = ", ".join(
            f"{rate / baseline:.3f}" for rate, baseline in zip(side.rates, base.rates, strict=True)
        )
        print(f"   ratio of each round, {name}: {ratios}", flush=True)
    for name, fraction in (("p50", 0.50), ("p99", 0.99)):
        value = percentile(api.latencies, fraction) * 1000
        baseline = percentile(base.tally.latencies, fraction) * 1000
        report(f"http: {name} latency of POST /actions (ratio: lower is better)", value, "ms",
               baseline, f"XADD {name}")  # fmt: skip


def budget(base: Side, ours: Side, per_job: float) -> None:
    """What the CPU allows: the ratio 0.5 as CPU per action, and the stack's own share of it.

    Both sides keep the cores busy (printed), so each side's rate goes as the inverse of the
    CPU one answer costs, the load generator's included: the ratio 0.5 leaves an action
    2 x (a bare request + its client) - its own client. Of that, the stack spends some
    whatever the service does: a request through gunicorn, Flask and Redis (the bare one),
    and RQ's own bookkeeping of each automatic step's job (an empty job's cost, times the
    steps the actions made due).
    """
    bare = base.per_answer("gunicorn") + base.per_answer("redis")
    allowed = 2 * (bare + base.per_answer("client")) - ours.per_answer("client")
    spent = sum(ours.per_answer(name) for name in ours.cpu)
    steps = ours.steps / max(1, ours.tally.appended)
    stack = bare + steps * per_job * 1000
    predicted = (bare + base.per_answer("client")) / (spent + ours.per_answer("client"))
    print(
        f"   cores kept busy, the load generator's included: baseline {base.cores:.2f}, "
        f"ours {ours.cores:.2f} (of {os.cpu_count()}); the CPU per answer predicts the "
        f"ratio {predicted:.3f}, measured {ours.rate / base.rate:.3f}",
        flush=True,
    )
    print(
        f"   CPU ms per action that the ratio 0.5 allows: {allowed:.2f}; ours spent "
        f"{spent:.2f}. The stack's own share: a bare request {bare:.2f} + {steps:.3f} "
        f"automatic steps per action x RQ's own {per_job * 1000:.2f} per job (an empty "
        f"job) = {stack:.2f}, which leaves {allowed - stack:.2f} for the service's own work",
        flush=True,
    )


def profile(env: dict[str, str], count: int = 400) -> None:
    """Where one API process spends its time serving POST /actions (cProfile, top 25).

    Jobs run in-process here (no MEEPLE_REDIS_URL), so the automatic steps' cost shows too.
    """
    saved = dict(os.environ)
    os.environ.update({key: value for key, value in env.items() if key.startswith("MEEPLE_")})
    os.environ.pop("MEEPLE_REDIS_URL", None)
    try:
        from service.app import create_app

        app = create_app()
        client = app.test_client()
        admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
        plans = []
        for number in range(1000, 1016):
            body, moves, _ = game_plan(number)
            created: dict[str, Any] = client.post("/games", json=body, headers=admin).json or {}
            plans.append(Plan(created["id"], [s["token"] for s in created["seats"]], moves))
        sent = 0
        profiler = cProfile.Profile()
        profiler.enable()
        while sent < count and any(plan.next < len(plan.moves) for plan in plans):
            for plan in plans:
                if plan.next >= len(plan.moves):
                    continue
                seat, action = plan.moves[plan.next]
                answer = client.post(
                    f"/games/{plan.game_id}/actions",
                    json=action,
                    headers={"Authorization": f"Bearer {plan.tokens[seat]}"},
                )
                if answer.status_code == 201:
                    plan.next += 1
                    sent += 1
                elif answer.status_code == 409:
                    app.extensions["meeple"].jobs.wait_idle(10)
                else:
                    plan.next = len(plan.moves)
        profiler.disable()
        app.extensions["meeple"].close()
        print(f"   profile of {sent} POST /actions in one process (cumulative, top 25):")
        pstats.Stats(profiler, stream=sys.stdout).sort_stats(
            os.environ.get("MEEPLE_BENCH_PROFILE_SORT", "cumulative")
        ).print_stats(25)
    finally:
        os.environ.clear()
        os.environ.update(saved)
