"""Fair shares of webhook delivery (docs/security.md, "What each owner may take of webhook
delivery"), against a real ``meeple serve``: embedded, and on Redis with a real ``meeple
worker``. Once, 40 black-hole receivers (accepting connections, never answering) of one client
kept another client's deliveries from arriving at all for 277 s; under RQ nothing bounded
what one receiver or one owner took of the notification workers.

Here one client registers webhooks at several black holes, another at an honest receiver.
The honest delivery must arrive while the black holes are still being tried, after at most
one of the hostile owner's attempts (counted by the connections the black holes accepted,
never by a clock), and each black hole must be paused once it failed
MEEPLE_WEBHOOK_BREAKER_FAILURES times in a row, as its owner's listing shows.

The two clients are told apart by ``X-Forwarded-For`` behind one trusted proxy, as a deployment
behind a reverse proxy sees them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_webhooks import SECRET, Receiver, running_receiver
from tests.redis_servers import RedisServer
from tests.security.conftest import ROOT, LiveServer
from tests.security.test_streams import on_redis
from tests.security.test_webhooks import LOOPBACK_ALLOWED, SilentReceiver, act, wait_until

HOSTILE = {"X-Forwarded-For": "203.0.113.66"}
HONEST = {"X-Forwarded-For": "198.51.100.7"}
BLACK_HOLES = 6
FAILURES = 2
#: Every attempt at a black hole takes 2 s; one owner has one delivery in flight at a time.
SETTINGS = {
    **LOOPBACK_ALLOWED,
    "MEEPLE_TRUSTED_PROXIES": "1",
    "MEEPLE_WEBHOOK_TIMEOUT": "2",
    "MEEPLE_WEBHOOK_RETRY_BASE": "0.5",
    "MEEPLE_WEBHOOK_PER_OWNER": "1",
    "MEEPLE_WEBHOOK_BREAKER_FAILURES": str(FAILURES),
    "MEEPLE_WEBHOOK_BREAKER_SECONDS": "600",
    "MEEPLE_WEBHOOK_MAX_PER_SEAT": str(BLACK_HOLES),
    "MEEPLE_WEBHOOK_MAX_PER_GAME": str(BLACK_HOLES),
    "MEEPLE_SWEEP_INTERVAL": "0.2",
}
#: The most black-hole connections before the honest delivery arrives: the one in flight when
#: the honest client acts, the next its owner's turn brought, and one of slack. Without lanes
#: every black hole had its attempt first.
BEFORE_THE_HONEST = 3
PATIENCE = 120  # seconds: the black holes need BLACK_HOLES * FAILURES attempts of 2 s


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


@pytest.fixture
def black_holes() -> Iterator[list[SilentReceiver]]:
    holes = [SilentReceiver() for _ in range(BLACK_HOLES)]
    yield holes
    for hole in holes:
        hole.close()


def new_game(server: LiveServer, client: dict[str, str]) -> dict[str, Any]:
    answer = server.call("POST", "/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]},
                         headers=client)  # fmt: skip
    assert answer.status == 201, answer
    game: dict[str, Any] = answer.body
    return game


def register(server: LiveServer, game: dict[str, Any], url: str, client: dict[str, str]) -> None:
    body = {"url": url, "secret": SECRET, "events": ["action"]}
    token = game["seats"][0]["token"]
    answer = server.call("POST", f"/games/{game['id']}/webhooks", body, token, headers=client)
    assert answer.status == 201, answer


def listed(server: LiveServer, game: dict[str, Any]) -> list[dict[str, Any]]:
    token = game["seats"][0]["token"]
    answer = server.call("GET", f"/games/{game['id']}/webhooks", token=token)
    assert answer.status == 200, answer
    webhooks: list[dict[str, Any]] = answer.body["webhooks"]
    return webhooks


def black_holes_cost_only_their_owner(
    server: LiveServer, holes: list[SilentReceiver], receiver: Receiver
) -> None:
    hostile = new_game(server, HOSTILE)
    for hole in holes:
        register(server, hostile, f"http://127.0.0.1:{hole.port}/", HOSTILE)
    honest = new_game(server, HONEST)
    register(server, honest, receiver.url, HONEST)

    def tried() -> int:
        return sum(hole.accepted for hole in holes)

    act(server, hostile)  # a delivery to every black hole
    wait_until(lambda: tried() >= 1, "the black holes were never tried", PATIENCE)
    act(server, honest)
    receiver.wait_for(lambda bodies: len(bodies) >= 1, patience=PATIENCE)
    before = tried()
    assert before <= BEFORE_THE_HONEST, f"the honest delivery came after {before} black holes"
    assert receiver.bodies()[0]["game_id"] == honest["id"]
    # The black holes were still being tried: the honest delivery did not wait them out.
    wait_until(lambda: tried() > before, "the black holes were not tried again", PATIENCE)

    def paused() -> bool:
        pauses = [hook.get("pause") for hook in listed(server, hostile)]
        return all(pause is not None and pause["state"] == "paused" for pause in pauses)

    wait_until(paused, "the black holes were not all paused", PATIENCE)
    for hook in listed(server, hostile):
        pause = hook["pause"]
        assert (pause["reason"], pause["failures"]) == ("timeout", FAILURES), hook
        assert pause["until"] > 0
    assert [hook["pause"] for hook in listed(server, honest)] == [None]


def test_black_holes_of_one_client_cost_only_its_deliveries_in_the_embedded_runner(
    live_server: Callable[..., LiveServer], black_holes: list[SilentReceiver], receiver: Receiver
) -> None:
    # Two notification threads: without lanes, the black holes took both, in turn.
    server = live_server(MEEPLE_NOTIFY_THREADS="2", **SETTINGS)
    black_holes_cost_only_their_owner(server, black_holes, receiver)


WORKER = (
    "from service.cli import main; raise SystemExit(main(['worker'] + __import__('sys').argv[1:]))"
)


@pytest.fixture
def rq_worker(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], None]]:
    """``rq_worker(env)`` starts one ``meeple worker --queue steps --queue notifications`` of
    this checkout; stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(env: dict[str, str]) -> None:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("MEEPLE_")}
        path = os.pathsep.join(filter(None, [str(ROOT), clean.get("PYTHONPATH")]))
        with (tmp_path / "worker.log").open("wb") as log:
            started.append(
                subprocess.Popen(
                    [sys.executable, "-c", WORKER, "--queue", "steps", "--queue", "notifications"],
                    cwd=tmp_path,
                    env={**clean, "PYTHONPATH": path, **env},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )

    yield start
    for worker in started:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def test_black_holes_of_one_client_cost_only_its_deliveries_on_rq_workers(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    rq_worker: Callable[[dict[str, str]], None],
    tmp_path: Path,
    black_holes: list[SilentReceiver],
    receiver: Receiver,
) -> None:
    # One worker: without a share per owner, every black hole held it in turn.
    settings = {**SETTINGS, **on_redis(make_redis_server(tmp_path / "redis"))}
    server = live_server(**settings)
    rq_worker(settings)
    black_holes_cost_only_their_owner(server, black_holes, receiver)
