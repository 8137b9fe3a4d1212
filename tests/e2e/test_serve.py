"""``meeple serve`` as a newcomer runs it: a real server process on the embedded default."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

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


def test_meeple_serve_runs_the_api_on_sqlite_under_var_of_the_working_directory(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(
            [str(MEEPLE), "serve", "--port", str(port)],
            cwd=tmp_path,
            env=env,
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
        status, game = call(f"{base}/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]})
        assert status == 201
        token = game["seats"][0]["token"]
        status, legal = call(f"{base}/games/{game['id']}/legal-actions", token=token)
        assert status == 200 and legal["actions"]
        status, played = call(f"{base}/games/{game['id']}/actions", legal["actions"][0], token)
        assert status == 201 and played["version"] == 2
        assert (tmp_path / "var" / "meeple.db").is_file()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
