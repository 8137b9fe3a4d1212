"""Noisy neighbours: an honest player's service while one hostile client does its worst.

The Redis deployment as compose.yaml runs it, one process each (a redis-server with AOF
``appendfsync always``, ``meeple serve`` on it with the rate limits on, one plain ``meeple
worker``). The honest side plays from 127.0.0.1: human games of every product ruleset (known
seeds, one action at a time), a game against an MCTS bot, and a webhook on one of its games
to a receiver of its own. Each attack of issue 36 runs in a process of its own from other
loopback addresses (127.0.0.x: every address is an owner), within every limit, for
``MEEPLE_BENCH_SECONDS`` (default 8) seconds while the honest side is measured, after the
same measurement with no attack (quiet), each attack on a deployment of its own
(``MEEPLE_BENCH_ATTACKS=bots,reads`` runs some of them):

- ``store``: ten addresses creating games and growing them with undo and redo;
- ``bots``: one address's all-bot games at the largest MCTS budget;
- ``webhooks``: one address's games with webhooks to black holes (accept, never answer);
- ``tokens``: requests with random bearer tokens, as fast as one address sends them;
- ``streams``: anonymous streams on the honest game, from eight addresses;
- ``reads``: eight anonymous readers of the honest game's audit, events and past states;
- ``malformed``: malformed request lines.

Printed for each attack, against quiet: the p99 of the honest actions' latency, of the bot's
turns (from the honest action to the bot's answer, both ``recorded_at``) and of the honest
receiver's deliveries (arrival against the event's ``recorded_at``). Lower is better; 1 means
the attack costs the honest player nothing. The store growth per branch of a 20,000-event game
is ``python -m bench branches``'s.
"""

from __future__ import annotations

import contextlib
import http.client
import http.server
import itertools
import json
import multiprocessing
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.bench_http import ADMIN_KEY, ROOT, percentile, redis_server, stop
from bench.bench_liveness import Client, create_plans, recorded, serving

#: How each attack is named in the table, in the order they run.
ATTACKS = ("store", "bots", "webhooks", "tokens", "streams", "reads", "malformed")
#: The honest bot's budget (a default seat's).
HONEST_PLAYOUTS = 50
#: Seconds given to an attack to reach its strength before the honest side is measured.
RAMP = 3.0


class Source(Client):
    """A keep-alive connection from one loopback address (an owner of its own)."""

    def __init__(self, port: int, address: str = "127.0.0.1") -> None:
        self.connection = http.client.HTTPConnection(
            "127.0.0.1", port, timeout=60, source_address=(address, 0)
        )

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any, float]:
        """As ``Client.call``, once more on a fresh connection when the server closed an
        idle one (its keep-alive ran out between two requests)."""
        try:
            return super().call(method, path, body, token)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.connection.close()
            return super().call(method, path, body, token)

    def safe(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        """The answer, or None when the connection failed (it is opened again next time)."""
        try:
            return self.call(method, path, body, token)
        except (OSError, http.client.HTTPException, ValueError):
            self.connection.close()
            return None


# -- the honest side ------------------------------------------------------------------------


class Receiver:
    """The honest webhook receiver: when each delivery arrived, and its event's time."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                arrived = time.time()
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                event = body.get("event") or {}
                if "recorded_at" in event:
                    owner.delays.append(arrived - recorded(event))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


class Honest:
    """The honest player's games: human games, one against a bot, one webhook."""

    def __init__(self, port: int, receiver: Receiver) -> None:
        self.client = Source(port)
        self.plans = create_plans(self.client, 5000)
        status, created, _ = self.client.call(
            "POST",
            "/games",
            {
                "ruleset": "restoration",
                "players": ["Ann", {"bot": {"agent": "mcts", "playouts": HONEST_PLAYOUTS}}],
            },
        )
        assert status == 201, created
        self.bot_game, self.bot_token = created["id"], created["seats"][0]["token"]
        self.watched = self.plans[0]
        status, hook, _ = self.client.call(
            "POST",
            f"/games/{self.watched.game_id}/webhooks",
            {"url": f"http://127.0.0.1:{receiver.port}/hook", "secret": "honest-secret-0123456789"},
            self.watched.tokens[0],
        )
        assert status == 201, hook
        self.receiver = receiver

    def play(self, seconds: float) -> dict[str, list[float]]:
        """Play for ``seconds``; the latencies of the actions, the bot turns, the deliveries."""
        actions: list[float] = []
        delivered = len(self.receiver.delays)
        since = self._version(self.bot_game)
        deadline = time.perf_counter() + seconds
        for plan in itertools.cycle(self.plans):
            if time.perf_counter() >= deadline:
                break
            self._against_the_bot()
            if plan.next >= len(plan.moves):
                continue
            seat, action = plan.moves[plan.next]
            status, answer, took = self.client.call(
                "POST", f"/games/{plan.game_id}/actions", action, plan.tokens[seat]
            )
            if status == 201:
                plan.next += 1
                actions.append(took)
            elif status not in (409, 429):  # a step due, or over the honest token's limit
                raise RuntimeError(f"an honest action was refused: {status} {answer}")
        time.sleep(1.0)
        return {
            "action": actions,
            "bot turn": self._bot_turns(since),
            "webhook": self.receiver.delays[delivered:],
        }

    def _version(self, game_id: str) -> int:
        return int(self.client.call("GET", f"/games/{game_id}")[1]["version"])

    def _against_the_bot(self) -> None:
        path = f"/games/{self.bot_game}"
        status = self.client.call("GET", path)[1]["status"]
        if status["finished"] or 0 not in status["to_act"]:
            return
        legal = self.client.call("GET", f"{path}/legal-actions", token=self.bot_token)[1]
        if legal.get("actions"):
            self.client.call("POST", f"{path}/actions", legal["actions"][0], self.bot_token)

    def _bot_turns(self, since: int) -> list[float]:
        """Seconds from each event to the bot's action right after it, after ``since``."""
        page = self.client.call("GET", f"/games/{self.bot_game}/events?after={since}&limit=1000")
        turns = []
        for before, after in itertools.pairwise(page[1]["events"]):
            if after["type"] == "action" and after["actor"].get("seat") == 1:
                turns.append(recorded(after) - recorded(before))
        return turns


# -- the attacks (each in a process of its own) --------------------------------------------


def _attack_store(port: int, target: str, stop_at: float) -> None:
    sources = [Source(port, f"127.0.0.{10 + n}") for n in range(10)]
    while time.time() < stop_at:
        for source in sources:
            made = source.safe("POST", "/games", {"ruleset": "impression", "players": ["A", "B"]})
            if not made or made[0] != 201:
                continue
            game, token = made[1]["id"], made[1]["seats"][0]["token"]
            legal = source.safe("GET", f"/games/{game}/legal-actions", token=token)
            if legal and legal[0] == 200 and legal[1].get("actions"):
                source.safe("POST", f"/games/{game}/actions", legal[1]["actions"][0], token)
                for what in ("undo", "redo") * 20:
                    source.safe("POST", f"/games/{game}/{what}", token=token)


def _attack_bots(port: int, target: str, stop_at: float) -> None:
    from service.application.bot_seats import MAX_PLAYOUTS

    source = Source(port, "127.0.0.30")
    bot = {"bot": {"agent": "mcts", "playouts": MAX_PLAYOUTS}}
    while time.time() < stop_at:
        source.safe("POST", "/games", {"ruleset": "impendium", "players": [bot] * 3})
        time.sleep(0.5)


def _black_hole() -> tuple[socket.socket, int]:
    hole = socket.socket()
    hole.bind(("127.0.0.40", 0))
    hole.listen(1024)
    return hole, hole.getsockname()[1]


def _attack_webhooks(port: int, target: str, stop_at: float) -> None:
    holes = [_black_hole() for _ in range(40)]
    held: list[socket.socket] = []

    def accept(hole: socket.socket) -> None:
        while True:
            connection, _ = hole.accept()
            held.append(connection)  # never answered

    for hole, _ in holes:
        threading.Thread(target=accept, args=(hole,), daemon=True).start()
    source = Source(port, "127.0.0.41")
    games = []
    for number in range(10):
        made = source.safe("POST", "/games", {"ruleset": "impression", "players": ["A", "B"]})
        if not made or made[0] != 201:
            continue
        game, token = made[1]["id"], made[1]["seats"][0]["token"]
        for _, hole_port in holes[number * 4 : number * 4 + 4]:
            source.safe(
                "POST",
                f"/games/{game}/webhooks",
                {
                    "url": f"http://127.0.0.40:{hole_port}/hook",
                    "secret": "hole-secret-0123456789ab",
                },
                token,
            )
        games.append((game, made[1]["seats"]))
    while time.time() < stop_at:
        for game, seats in games:
            for seat in seats:
                legal = source.safe("GET", f"/games/{game}/legal-actions", token=seat["token"])
                if legal and legal[0] == 200 and legal[1].get("actions"):
                    source.safe(
                        "POST", f"/games/{game}/actions", legal[1]["actions"][0], seat["token"]
                    )
        time.sleep(0.2)


def _attack_tokens(port: int, target: str, stop_at: float) -> None:
    source = Source(port, "127.0.0.50")
    while time.time() < stop_at:
        source.safe("GET", f"/games/{target}/state", token=secrets.token_urlsafe(32))


def _attack_streams(port: int, target: str, stop_at: float) -> None:
    sockets = []
    for number in range(256):
        try:
            held = socket.create_connection(
                ("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{60 + number % 8}", 0)
            )
            held.sendall(f"GET /games/{target}/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sockets.append(held)  # read nothing: a slow consumer
        except OSError:
            break
    while time.time() < stop_at:
        time.sleep(0.2)
    for held in sockets:
        held.close()


def _attack_reads(port: int, target: str, stop_at: float) -> None:
    def read(number: int) -> None:
        source = Source(port, f"127.0.0.{70 + number}")
        paths = [
            f"/games/{target}/audit",
            f"/games/{target}/events?limit=1000",
            f"/games/{target}/state?at=2",
        ]
        for path in itertools.cycle(paths):
            if time.time() >= stop_at:
                return
            source.safe("GET", path)

    readers = [threading.Thread(target=read, args=(n,)) for n in range(8)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()


def _attack_malformed(port: int, target: str, stop_at: float) -> None:
    spellings = [b"GET /\r\n\r\n", b"GET /\x00 HTTP/1.1\r\n\r\n", b"GET /\xff HTTP/1.1\r\n\r\n"]
    while time.time() < stop_at:
        with (
            contextlib.suppress(OSError),
            socket.create_connection(
                ("127.0.0.1", port), timeout=5, source_address=("127.0.0.80", 0)
            ) as bad,
        ):
            bad.sendall(random.choice(spellings))
            bad.recv(4096)


def _attack(name: str, port: int, target: str, stop_at: float) -> None:
    globals()[f"_attack_{name}"](port, target, stop_at)


# -- the run --------------------------------------------------------------------------------


@contextlib.contextmanager
def deployment(scratch: Path) -> Iterator[int]:
    """Redis (AOF always), ``meeple serve`` with the rate limits on, one ``meeple worker``."""
    with redis_server(scratch) as url:
        env = {
            "MEEPLE_ADMIN_KEY": ADMIN_KEY,
            "MEEPLE_STORE_URL": f"{url}/0",
            "MEEPLE_REDIS_URL": f"{url}/1",
            "MEEPLE_WEBHOOK_ALLOW_HOSTS": "127.0.0.0/8",
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with serving(scratch, env) as port:
                yield port
        finally:
            stop(worker)


def run(report: Callable[..., None]) -> None:
    seconds = float(os.environ.get("MEEPLE_BENCH_SECONDS", "8"))
    wanted = os.environ.get("MEEPLE_BENCH_ATTACKS", "").split(",")
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="meeple-bench-neighbours-") as scratch:
        receiver = Receiver()
        try:
            for name in ATTACKS:
                if wanted != [""] and name not in wanted:
                    continue
                # A deployment of its own for each attack: what one attack leaves behind (bot
                # games still thinking, deliveries still due) must not weigh on the next.
                directory = Path(scratch) / name
                directory.mkdir()
                with deployment(directory) as port:
                    honest = Honest(port, receiver)
                    quiet = honest.play(seconds)
                    stop_at = time.time() + RAMP + seconds + 1.0
                    attacker = context.Process(
                        target=_attack, args=(name, port, honest.watched.game_id, stop_at)
                    )
                    attacker.start()
                    time.sleep(RAMP)
                    busy = honest.play(seconds)
                    attacker.join(timeout=RAMP + seconds + 30)
                    if attacker.is_alive():
                        attacker.kill()
                counts = ", ".join(f"{len(busy[k])}/{len(quiet[k])} {k}" for k in busy)
                print(f"   {name}: {counts} (attacked / quiet)", flush=True)
                for kind in ("action", "bot turn", "webhook"):
                    if not busy[kind] or not quiet[kind]:
                        print(f"   {name}: no {kind} measured", flush=True)
                        continue
                    report(
                        f"neighbours {name}: p99 honest {kind} (lower is better)",
                        percentile(busy[kind], 0.99) * 1000,
                        "ms",
                        percentile(quiet[kind], 0.99) * 1000,
                        "quiet",
                    )
        finally:
            receiver.close()
