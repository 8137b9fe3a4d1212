"""Throwaway Redis servers for the tests: a single server, a 3-master Redis Cluster, and
servers a test starts itself (e.g. with AOF for the crash test).

Every server is started here, on a free loopback port, and stopped afterwards; a test never
touches a Redis it did not start (mirakuru refuses to start on a port that already answers).
Ports are reserved with files in the directory pytest-redis uses for the same purpose, so
parallel pytest-xdist workers never pick the same one. Without ``redis-server`` the
fixtures fail, naming the Debian package: a Redis test is never skipped.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import port_for
import pytest
import redis
from mirakuru import TCPExecutor
from pytest_redis import factories

HOST = "127.0.0.1"
#: Redis Cluster nodes talk to each other on their port + 10000.
CLUSTER_BUS_OFFSET = 10000
MISSING = (
    "The Redis tests need {binary} on PATH: install the Debian package 'redis-server' "
    "(apt-get install redis-server), or run `bash tests/ensure-redis-server.sh`."
)


def redis_binary(name: str = "redis-server") -> str:
    """The path of a Redis program; fails the test (never skips it) when it is missing."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(MISSING.format(binary=name), pytrace=False)
    return path


def free_port(reservations: Path | None = None, with_bus_port: bool = False) -> int:
    """A free loopback port, reserved with a file under ``reservations`` when given (the
    same ``redis-<port>.port`` files pytest-redis writes, so its servers and ours agree)."""
    for _ in range(100):
        port = port_for.select_random()
        ports = [port, port + CLUSTER_BUS_OFFSET] if with_bus_port else [port]
        if any(p > 65535 or not port_for.is_available(p) for p in ports):
            continue
        if reservations is None:
            return port
        try:
            for p in ports:
                (reservations / f"redis-{p}.port").open("x").close()
        except FileExistsError:
            continue
        return port
    raise RuntimeError("no free port found for a test Redis server")


@dataclass
class RedisServer:
    """One redis-server process we started: no persistence unless ``args`` ask for it."""

    port: int
    directory: Path
    args: tuple[str, ...] = ()
    executor: TCPExecutor | None = field(default=None, init=False)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def command(self) -> list[str]:
        return [
            redis_binary("redis-server"),
            "--port", str(self.port),
            "--bind", HOST,
            "--dir", str(self.directory),
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--logfile", str(self.directory / f"redis-{self.port}.log"),
            "--protected-mode", "no",
            *self.args,
        ]  # fmt: skip

    def start(self) -> RedisServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.executor = TCPExecutor(self.command(), host=HOST, port=self.port, timeout=60)
        self.executor.start()
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(host=HOST, port=self.port, decode_responses=True)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync; what the AOF holds is what survives."""
        if self.executor is not None:
            self.executor.kill(sig=signal.SIGKILL)

    def stop(self) -> None:
        if self.executor is not None and self.executor.running():
            self.executor.stop()


@dataclass
class RedisCluster:
    """A Redis Cluster of masters on loopback, started and joined by the tests."""

    nodes: list[RedisServer]

    @property
    def url(self) -> str:
        return f"redis+cluster://{HOST}:{self.nodes[0].port}"

    def flush(self) -> None:
        for node in self.nodes:
            with node.client() as client:
                client.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def reservation_dir(request: pytest.FixtureRequest, factory: pytest.TempPathFactory) -> Path:
    """The directory shared by every xdist worker of this run (pytest-redis uses it too)."""
    base = factory.getbasetemp()
    return base.parent if hasattr(request.config, "workerinput") else base


CLUSTER_NODE_ARGS = (
    "--cluster-enabled", "yes",
    "--cluster-config-file", "nodes.conf",
    "--cluster-node-timeout", "5000",
)  # fmt: skip


def start_cluster(directory: Path, reservations: Path | None, masters: int = 3) -> RedisCluster:
    nodes = [
        RedisServer(
            free_port(reservations, with_bus_port=True),
            directory / f"node-{number}",
            CLUSTER_NODE_ARGS,
        )
        for number in range(masters)
    ]
    cluster = RedisCluster(nodes)
    try:
        for node in nodes:
            node.start()
        create = [redis_binary("redis-cli"), "--cluster", "create"]
        create += [f"{HOST}:{node.port}" for node in nodes]
        create += ["--cluster-replicas", "0", "--cluster-yes"]
        subprocess.run(create, check=True, capture_output=True, text=True, timeout=120)
        wait_until_cluster_is_ok(nodes)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def wait_until_cluster_is_ok(nodes: list[RedisServer], patience: float = 60.0) -> None:
    """Until every node reports ``cluster_state:ok`` and knows every other node."""
    deadline = time.monotonic() + patience
    while True:
        ready = True
        for node in nodes:
            with node.client() as client:
                info = client.cluster("INFO")
            if info.get("cluster_state") != "ok" or int(info["cluster_known_nodes"]) != len(nodes):
                ready = False
        if ready:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("the test Redis Cluster did not reach cluster_state:ok")
        time.sleep(0.1)


# -- fixtures -------------------------------------------------------------------------

# pytest-redis starts the single server: a random free port, no RDB saves, no AOF.
# (pytest-redis documents port None as "any free port"; its annotation leaves None out.)
redis_single_proc = factories.redis_proc(port=None, save='""')  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def redis_server_url(request: pytest.FixtureRequest) -> str:
    """The URL of a single redis-server this test run started (session-wide)."""
    redis_binary("redis-server")
    executor = request.getfixturevalue("redis_single_proc")
    return f"redis://{executor.host}:{executor.port}/0"


@pytest.fixture(scope="session")
def redis_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RedisCluster]:
    """A 3-master Redis Cluster on loopback, started for this test run (session-wide)."""
    redis_binary("redis-server")
    redis_binary("redis-cli")
    cluster = start_cluster(
        tmp_path_factory.mktemp("redis-cluster"),
        reservation_dir(request, tmp_path_factory),
    )
    yield cluster
    cluster.stop()


@pytest.fixture
def make_redis_server(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., RedisServer]]:
    """Start redis-servers of a test's own (``make_redis_server(directory, *args)``);
    every one is stopped when the test ends."""
    started: list[RedisServer] = []
    reservations = reservation_dir(request, tmp_path_factory)

    def make(directory: Path, *args: str, port: int | None = None) -> RedisServer:
        redis_binary("redis-server")
        server = RedisServer(port or free_port(reservations), directory, args)
        started.append(server)
        return server.start()

    yield make
    for server in started:
        server.stop()
