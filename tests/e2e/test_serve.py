"""``meeple serve`` as a newcomer runs it: a real server process on the embedded default."""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

MEEPLE = Path(sys.executable).with_name("meeple")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def call(url: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@contextmanager
def serving(directory: Path, *arguments: str, **variables: str) -> Iterator[str]:
    """``meeple serve`` with ``arguments`` in ``directory``, no MEEPLE_* but ``variables``;
    yields its base URL once it answers, and stops it (SIGTERM, exit 0) after."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    log = directory / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(MEEPLE), "serve", "--port", str(port), *arguments],
            cwd=directory,
            env={**env, **variables},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                status, health = call(f"{base}/health")
                break
            except OSError:
                assert server.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.2)
        assert status == 200 and health["status"] == "ok"
        yield base
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0


def read(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_meeple_serve_runs_the_api_on_sqlite_under_var_of_the_working_directory(
    tmp_path: Path,
) -> None:
    with serving(tmp_path) as base:
        status, game = call(f"{base}/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]})
        assert status == 201
        token = game["seats"][0]["token"]
        status, legal = call(f"{base}/games/{game['id']}/legal-actions", token=token)
        assert status == 200 and legal["actions"]
        status, played = call(f"{base}/games/{game['id']}/actions", legal["actions"][0], token)
        assert status == 201 and played["version"] == 2
        assert (tmp_path / "var" / "meeple.db").is_file()


def test_the_served_spec_and_docs_name_the_address_served(tmp_path: Path) -> None:
    """On another port than 8000, a generated client and the docs' examples reach this
    server: the spec's ``servers`` is the address served, not the default."""
    with serving(tmp_path, "--host", "127.0.0.1") as base:
        assert not base.endswith(":8000")
        spec = yaml.safe_load(read(f"{base}/openapi.yaml"))
        assert spec["servers"] == [{"url": base}]
        assert base in read(f"{base}/docs")


def test_meeple_public_url_names_the_address_clients_reach(tmp_path: Path) -> None:
    """Behind a proxy the address served is not the one clients reach: MEEPLE_PUBLIC_URL
    says which, and the spec and the docs name it instead."""
    public = "https://games.example.org"
    with serving(tmp_path, MEEPLE_PUBLIC_URL=public) as base:
        spec = yaml.safe_load(read(f"{base}/openapi.yaml"))
        assert spec["servers"] == [{"url": public}]
        page = read(f"{base}/docs")
        assert public in page and base not in page


def test_a_bot_thinking_at_the_largest_budget_stalls_no_request_and_no_stop(
    tmp_path: Path,
) -> None:
    """An all-bot Impendium game at the most playouts the lobby allows plays on while
    ``/health``, another game's reads and its actions answer as usual: the bots think in
    processes of their own, not on the loop that serves requests (each request would
    otherwise wait out a whole search: 30 s and more). And the server stops at once."""
    from service.application.bot_seats import MAX_PLAYOUTS

    bot = {"bot": {"agent": "mcts", "playouts": MAX_PLAYOUTS}}
    with serving(tmp_path) as base:
        status, thinking = call(f"{base}/games", {"ruleset": "impendium", "players": [bot] * 3})
        assert status == 201, thinking
        status, other = call(f"{base}/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]})
        assert status == 201, other
        # Each answers within urlopen's 10 s (a stalled loop takes a whole search per request).
        for _ in range(10):
            status, health = call(f"{base}/health")
            assert status == 200 and health["status"] == "ok"
            status, read_back = call(f"{base}/games/{other['id']}")
            assert status == 200 and read_back["id"] == other["id"]
        seat = other["seats"][0]
        status, legal = call(f"{base}/games/{other['id']}/legal-actions", token=seat["token"])
        assert status == 200
        status, played = call(
            f"{base}/games/{other['id']}/actions", legal["actions"][0], token=seat["token"]
        )
        assert status == 201, played
        status, still = call(f"{base}/games/{thinking['id']}")
        assert status == 200 and not still["status"]["finished"]
    # ``serving`` stopped the server (SIGTERM, exit 0) with the bots mid-search.


def test_a_stream_whose_client_stops_reading_is_dropped_and_frees_its_place(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A client that opens a live stream and never reads it fills its socket's buffers; the
    stream's next write waits ``MEEPLE_STREAM_WRITE_TIMEOUT`` at most, then the server drops
    it, and its place under the caps is free for another stream."""
    settings = {
        "MEEPLE_RATE_LIMITS": "off",
        "MEEPLE_STREAMS_PER_ADDRESS": "1",
        "MEEPLE_STREAM_WRITE_TIMEOUT": "1",
        "MEEPLE_STREAM_SEND_BUFFER": "4096",
    }
    with serving(tmp_path, **settings) as base:
        # Impendium: random play takes dozens of rounds to end it, far more than needed here.
        status, game = call(f"{base}/games", {"ruleset": "impendium", "players": ["Ann", "Bob"]})
        assert status == 201, game
        port = int(base.rsplit(":", 1)[1])
        stuck = socket.socket()
        request.addfinalizer(stuck.close)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connect: no tuning
        stuck.connect(("127.0.0.1", port))
        stuck.sendall(f"GET /games/{game['id']}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())

        def open_stream() -> int:
            probe = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                probe.request("GET", f"/games/{game['id']}/stream")
                return probe.getresponse().status
            finally:
                probe.close()

        deadline = time.monotonic() + 60
        while open_stream() != 429:  # the stuck stream holds the one place
            assert time.monotonic() < deadline, "the stuck stream never took its place"
        tokens = {seat["seat"]: seat["token"] for seat in game["seats"]}
        rng = random.Random(5)
        for _ in range(300):
            status, now = call(f"{base}/games/{game['id']}")
            assert not now["status"]["finished"], "the game ended: its stream ends by itself"
            if not now["status"]["to_act"]:
                time.sleep(0.05)
                continue
            seat = now["status"]["to_act"][0]
            status, legal = call(f"{base}/games/{game['id']}/legal-actions", token=tokens[seat])
            if legal.get("actions"):
                action = rng.choice(legal["actions"])
                call(f"{base}/games/{game['id']}/actions", action, tokens[seat])
            if open_stream() == 200:
                break
        # Dropped: another stream may open now (within a write timeout of the buffers filling).
        deadline = time.monotonic() + 60
        while open_stream() != 200:
            assert time.monotonic() < deadline, "the stream that nobody reads was never dropped"
            time.sleep(0.2)
