"""A Redis Cluster with a replica per master loses no acknowledged append when a master dies.

On loopback: three masters with a replica each (``redis-cli --cluster create ...
--cluster-replicas 1``), and a second replica for the master that holds the test's games, so
that once its first replica is promoted a replica is left to confirm appends. Writers
append to their games on that master with ``min_replicas=1`` (each append with an
idempotency key, sent again with the same key after an error until it is answered); the
master is killed with SIGKILL, the cluster fails its slots over to a replica, the store
follows (a MOVED reply or a refused connection refreshes its map) and the writers go on.
Every acknowledged append is then in its game's log exactly once, at its seq, on a valid
hash chain. (docs/operations.md, "Failover"; the Sentinel deployment is
tests/api/test_failover.py.)
"""

from __future__ import annotations

import subprocess
import threading
import time
import uuid
from collections import Counter

import pytest
from redis.cluster import RedisCluster as ClusterClient

from events.envelope import NewEvent, verify_chain
from events.redis_store import RedisEventStore
from events.store import ConcurrencyConflict, StoreError
from tests.redis_servers import (
    CLUSTER_NODE_ARGS,
    HOST,
    RedisServer,
    free_port,
    redis_binary,
    reservation_dir,
    wait_until_cluster_is_ok,
)

#: Seconds before a silent master is failed (the fixture's 5 s, shorter: a faster test).
NODE_TIMEOUT = ("--cluster-node-timeout", "2000")
WRITERS = 3
BEFORE = AFTER = 30


def test_no_acknowledged_append_is_lost_when_a_cluster_master_dies(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    redis_binary("redis-server")
    reservations = reservation_dir(request, tmp_path_factory)
    directory = tmp_path_factory.mktemp("cluster-failover")
    args = (*CLUSTER_NODE_ARGS[:4], *NODE_TIMEOUT)
    nodes = [
        RedisServer(free_port(reservations, with_bus_port=True), directory / f"n{n}", args)
        for n in range(7)
    ]
    try:
        for node in nodes:
            node.start()
        create = [redis_binary("redis-cli"), "--cluster", "create"]
        create += [f"{HOST}:{node.port}" for node in nodes[:6]]
        create += ["--cluster-replicas", "1", "--cluster-yes"]
        subprocess.run(create, check=True, capture_output=True, text=True, timeout=120)
        wait_until_cluster_is_ok(nodes[:6])
        _run(nodes)
    finally:
        for node in nodes:
            node.kill()


def _run(nodes: list[RedisServer]) -> None:
    masters = [node for node in nodes[:6] if _role(node) == "master"]
    victim, entry = masters[1], masters[0]  # the store is reached through a survivor
    victim_id = _node_id(victim)
    extra = nodes[6]
    add = [redis_binary("redis-cli"), "--cluster", "add-node", f"{HOST}:{extra.port}"]
    add += [f"{HOST}:{victim.port}", "--cluster-slave", "--cluster-master-id", victim_id]
    subprocess.run(add, check=True, capture_output=True, text=True, timeout=120)
    _wait(lambda: _replicas_online(victim) == 2, "both replicas of the victim to sync")

    url = f"redis+cluster://{HOST}:{entry.port}"
    store = RedisEventStore.from_url(url, min_replicas=1, replica_timeout=1000)
    games = _games_on(store.client, victim.port, WRITERS)
    acknowledged: list[tuple[str, str, int]] = []
    refused: Counter[str] = Counter()
    lock = threading.Lock()
    halt = threading.Event()

    def write(game_id: str) -> None:
        version = 0
        while not halt.is_set():
            key = uuid.uuid4().hex
            event = NewEvent("action", {"n": version + 1}, {"seat": 0})
            while not halt.is_set():
                try:
                    result = store.append(game_id, [event], version, key)
                except ConcurrencyConflict:
                    version = store.version(game_id)  # never ours: our key would replay
                    break
                except StoreError as error:
                    with lock:
                        refused[type(error).__name__] += 1
                    time.sleep(0.05)
                    continue
                version = result.version
                with lock:
                    acknowledged.append((game_id, key, result.version))
                break

    writers = [threading.Thread(target=write, args=(game,), daemon=True) for game in games]
    for writer in writers:
        writer.start()
    _wait(lambda: len(acknowledged) >= BEFORE, "appends before the kill")
    before = len(acknowledged)
    victim.kill()
    _wait(lambda: len(acknowledged) >= before + AFTER, "appends after the failover", 120)
    halt.set()
    for writer in writers:
        writer.join(timeout=60)

    survivors = [node for node in nodes if node is not victim]
    _wait(lambda: _slots_served(survivors), "the cluster to serve every slot")
    lost = duplicated = 0
    for game_id in games:
        events = store.read(game_id)
        assert verify_chain(events, game_id) is None
        held = Counter(event.get("idempotency_key") for event in events)
        at = {event.get("idempotency_key"): event["seq"] for event in events}
        for game, key, seq in acknowledged:
            if game != game_id:
                continue
            lost += held[key] == 0
            duplicated += held[key] > 1
            assert held[key] == 0 or at[key] == seq
    print(
        f"\ncluster failover, min_replicas=1: {len(acknowledged)} acknowledged ({before} "
        f"before the kill), {lost} lost, {duplicated} duplicated; refused: {dict(refused)}"
    )
    assert lost == 0
    assert duplicated == 0
    store.close()


def _games_on(client: ClusterClient, port: int, count: int) -> list[str]:
    """Game ids whose slot the master on ``port`` serves."""
    found: list[str] = []
    while len(found) < count:
        game_id = uuid.uuid4().hex
        node = client.get_node_from_key(f"meeple:{{{game_id}}}:events")
        if node.port == port:
            found.append(game_id)
    return found


def _role(node: RedisServer) -> str:
    with node.client() as client:
        return str(client.info("replication")["role"])


def _node_id(node: RedisServer) -> str:
    with node.client() as client:
        return str(client.execute_command("CLUSTER", "MYID"))


def _replicas_online(node: RedisServer) -> int:
    with node.client() as client:
        info = client.info("replication")
    return sum(
        1
        for name, value in info.items()
        if name.startswith("slave") and isinstance(value, dict) and value.get("state") == "online"
    )


def _slots_served(nodes: list[RedisServer]) -> bool:
    with nodes[0].client() as client:
        return client.cluster("INFO").get("cluster_state") == "ok"


def _wait(check: object, what: str, patience: float = 60.0) -> None:
    assert callable(check)
    deadline = time.monotonic() + patience
    while True:
        try:
            if check():
                return
        except Exception:  # a node that is starting or failing over: ask again
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {patience:g} s for {what}")
        time.sleep(0.1)
