"""Fixtures for the security tests: each finding is reproduced against a real ``meeple serve``
process, as a hostile client on the network would meet it (not through Flask's test client).

``live_server(**env)`` starts one on a free port with the given ``MEEPLE_*`` settings (the
embedded default unless ``MEEPLE_STORE_URL``/``MEEPLE_REDIS_URL`` say otherwise), waits until
``/health`` answers, and stops it after the test. ``start_gunicorn`` starts gunicorn itself
with compose's command line for the API instead. Either imports the service from this
checkout (``PYTHONPATH``), not from wherever the virtualenv's package was installed from.

``raw_request`` sends bytes no client library would send and reads the whole answer.
"""

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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MEEPLE = Path(sys.executable).with_name("meeple")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def code(self) -> str | None:
        """The problem's stable code, when the answer is a problem."""
        return self.body.get("code") if isinstance(self.body, dict) else None


@dataclass
class LiveServer:
    process: subprocess.Popen[bytes]
    port: int
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
        timeout: float = 30,
    ) -> Answer:
        """One request; the body is JSON unless ``raw`` bytes are given."""
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as error:
            return _answer(error.code, dict(error.headers), error.read())

    def create_game(self, ruleset: str = "gutenberg", players: int = 2) -> dict[str, Any]:
        names = ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"][:players]
        answer = self.call("POST", "/games", {"ruleset": ruleset, "players": names})
        assert answer.status == 201, answer
        game: dict[str, Any] = answer.body
        return game

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    def open_stream(
        self, game_id: str, headers: dict[str, str] | None = None, query: str = ""
    ) -> RawStream:
        """Send ``GET /games/{id}/stream`` on a raw socket of its own and return at once,
        without waiting for the answer (``RawStream.answer`` reads it). HTTP/1.0, so the body
        comes unchunked and ends when the server closes the connection."""
        connection = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        lines = [f"GET /games/{game_id}/stream{query} HTTP/1.0", "Host: 127.0.0.1"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return RawStream(connection)


@dataclass
class RawStream:
    """One live stream on a socket of its own (``LiveServer.open_stream``)."""

    connection: socket.socket
    received: bytes = b""
    status: int | None = None
    headers: dict[str, str] | None = None
    ended: bool = False

    def answer(self, timeout: float = 10) -> int:
        """Read the status line and headers (within ``timeout`` seconds); the status."""
        head = self.read_until(b"\r\n\r\n", timeout)
        status_line, *header_lines = head.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")
        self.status = int(status_line.split()[1])
        self.headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in header_lines)
        }
        self.received = self.received.split(b"\r\n\r\n", 1)[1]
        return self.status

    def body(self) -> Any:
        """The body read so far, as JSON (a refusal's problem)."""
        return json.loads(self.received)

    def read_until(self, marker: bytes, timeout: float = 10) -> bytes:
        """Read until ``marker`` has arrived (or the server closed the stream); everything
        received so far. Raises TimeoutError if neither happens within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while marker not in self.received and not self.ended:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{marker!r} did not come within {timeout} s")
            self.connection.settimeout(left)
            chunk = self.connection.recv(65536)
            if not chunk:
                self.ended = True
            self.received += chunk
        return self.received

    def read_to_end(self, timeout: float = 10) -> bytes:
        """Read until the server closes the stream (within ``timeout`` seconds)."""
        return self.read_until(b"\0never sent\0", timeout) if not self.ended else self.received

    def close(self) -> None:
        self.connection.close()


def _answer(status: int, headers: dict[str, str], raw: bytes) -> Answer:
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode(errors="replace")
    return Answer(status, {name.lower(): value for name, value in headers.items()}, body)


def start_server(directory: Path, env: dict[str, str], args: list[str]) -> LiveServer:
    port = free_port()
    return _start(directory, env, [str(MEEPLE), "serve", "--port", str(port), *args], port)


def start_gunicorn(directory: Path, env: dict[str, str], workers: int = 1) -> LiveServer:
    """gunicorn with compose's command line for the API (compose.yaml), bound to a free
    loopback port with ``workers`` workers; the embedded default unless ``env`` says
    otherwise."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    command = compose["services"]["api"]["command"]
    assert command[0] == "gunicorn", command
    port = free_port()
    options = {"--bind": f"127.0.0.1:{port}", "--workers": str(workers)}
    arguments = [
        f"{name}={options[name]}" if name in options else argument
        for argument in command[1:]
        for name in [argument.partition("=")[0]]
    ]
    return _start(directory, env, [sys.executable, "-m", "gunicorn", *arguments], port)


def stop_server(server: LiveServer) -> None:
    server.process.send_signal(signal.SIGTERM)
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


def _start(directory: Path, env: dict[str, str], command: list[str], port: int) -> LiveServer:
    clean = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    path = os.pathsep.join(filter(None, [str(ROOT), clean.get("PYTHONPATH")]))
    log = directory / f"server-{port}.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=directory,
            env={**clean, "PYTHONPATH": path, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer(process, port, log)
    deadline = time.monotonic() + 60
    while True:
        try:
            if server.call("GET", "/health", timeout=2).status == 200:
                return server
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"{command[0]} did not start:\n{server.logs()}", pytrace=False)
        time.sleep(0.2)


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[Callable[..., LiveServer]]:
    """``live_server(MEEPLE_X="...", args=[...])`` starts a real server; all stop afterwards."""
    started: list[LiveServer] = []

    def start(args: list[str] | None = None, **env: str) -> LiveServer:
        server = start_server(tmp_path, env, args or [])
        started.append(server)
        return server

    yield start
    for server in started:
        stop_server(server)


@dataclass
class RawAnswer:
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, Any]:
        assert self.headers.get("content-type") == "application/problem+json", self
        problem: dict[str, Any] = json.loads(self.body)
        assert problem["status"] == self.status
        return problem


def raw_request(server: LiveServer, head: bytes) -> RawAnswer:
    """Send ``head`` as is (no client library would send these) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as connection:
        connection.sendall(head)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    header_block, _, body = rest.partition(b"\r\n\r\n")
    headers = {}
    for line in header_block.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return RawAnswer(int(status_line.split()[1]), headers, body)
