"""A bot that follows all its games through one application stream: requests per action.

A client application (docs/api.md, "Applications") registers once, creates one two-seat game
of each product ruleset with its key (it holds both seats of each) and follows them all on one
``GET /apps/me/stream``: it never polls. Every message carries, for each seat it holds, whether
that seat must act and the decision it faces; the bot draws an action from the decision's exact
types (``projections.decisions.sample``) and posts it at the seat's address with
``?include=legal_actions``, going on from the listed actions while the answer says the seat
acts again; only a decision with no exact type costs a ``GET .../legal-actions``. A stream the
server ends is resumed with ``Last-Event-ID``. Every request counts, the stream's connections
included. Against ``meeple serve`` (the embedded default, rate limits off), printed per game
and for all: requests per action, against the floor of one request per action (1.00: nothing
but the actions themselves).
"""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import connect_sse

from bench.bench_http import free_port, stop, wait_for
from projections import decisions

#: The games the bot plays at once, one of each product ruleset (short options where a random
#: game could run long).
GAMES: dict[str, dict[str, Any]] = {
    "gutenberg": {},
    "restoration": {},
    "impression": {},
    "impendium": {"round_limit": 2},
}
#: Seconds to wait for the stream's next message before giving up.
MESSAGE_WAIT = 120.0
#: A random game ends long before this many actions.
MAX_ACTIONS = 20_000


@dataclass
class Counts:
    """Requests sent, in all and per game (the stream's connections are the app's own)."""

    requests: int = 0
    stream: int = 0
    per_game: dict[str, int] = field(default_factory=dict)
    actions: dict[str, int] = field(default_factory=dict)
    lists: int = 0

    def count(self, game_id: str | None) -> None:
        self.requests += 1
        if game_id is None:
            self.stream += 1
        else:
            self.per_game[game_id] = self.per_game.get(game_id, 0) + 1


def follow(http: httpx.Client, key: str, messages: queue.Queue[Any], done: threading.Event,
           counts: Counts) -> None:  # fmt: skip
    """Read the application's stream, resuming with Last-Event-ID, until ``done``."""
    last = "0"  # every game from its first event (they are all new to this client)
    try:
        while not done.is_set():
            headers = {"Authorization": f"Bearer {key}", "Last-Event-ID": last}
            counts.count(None)
            with connect_sse(http, "GET", "/apps/me/stream", headers=headers) as source:
                source.response.raise_for_status()
                for event in source.iter_sse():
                    if done.is_set():
                        return
                    if not event.data:
                        continue  # the opening retry: message
                    data = json.loads(event.data)
                    if event.id:
                        last = event.id
                        messages.put((int(data["seq"]), data))
                    elif event.event == "turn":
                        messages.put((int(data["version"]), data))
    except BaseException as error:
        if not done.is_set():
            messages.put(error)


def choose(http: httpx.Client, key: str, game_id: str, seat: int, decision: dict[str, Any],
           rng: random.Random, counts: Counts) -> dict[str, Any]:  # fmt: skip
    exact = [kind for kind in decision["types"] if kind.get("exact") and kind.get("count")]
    if exact:
        try:
            return decisions.sample(rng.choices(exact, [k["count"] for k in exact])[0], rng)
        except ValueError:
            pass
    counts.lists += 1
    counts.count(game_id)
    listed = http.get(
        f"/games/{game_id}/seats/{seat}/legal-actions", headers={"Authorization": f"Bearer {key}"}
    )
    listed.raise_for_status()
    actions: list[dict[str, Any]] = listed.json()["actions"]
    return rng.choice(actions)


def act(
    http: httpx.Client, key: str, game_id: str, seat: int, version: int,
    decision: dict[str, Any], rng: random.Random, counts: Counts,
) -> tuple[int, bool]:  # fmt: skip
    """The seat's turn while the answers say it acts again: (the version after, finished)."""
    action = choose(http, key, game_id, seat, decision, rng, counts)
    while True:
        counts.count(game_id)
        answer = http.post(
            f"/games/{game_id}/seats/{seat}/actions",
            params={"include": "legal_actions"},
            json=action,
            headers={"Authorization": f"Bearer {key}", "If-Match": f'"{version}"'},
        )
        if answer.status_code in (409, 412, 422):
            return version, False  # the game moved on: the stream says where it stands
        answer.raise_for_status()
        counts.actions[game_id] = counts.actions.get(game_id, 0) + 1
        assert counts.actions[game_id] < MAX_ACTIONS, f"{game_id} does not end"
        result = answer.json()
        version, status = int(result["version"]), result["status"]
        if status["finished"]:
            return version, True
        again = seat in status["to_act"] and not status["awaiting_system"]
        if not (again and result.get("legal_actions")):
            return version, False
        action = rng.choice(result["legal_actions"])


def play(base_url: str, rng: random.Random) -> tuple[Counts, dict[str, str]]:
    """Register, create the games, play them all to their end from the one stream."""
    counts = Counts()
    http = httpx.Client(base_url=base_url, timeout=httpx.Timeout(60))
    key = http.post("/apps", json={"name": "bench bot"}).json()["key"]
    rulesets: dict[str, str] = {}
    for ruleset, options in GAMES.items():
        body = {"ruleset": ruleset, "players": ["Bot 1", "Bot 2"], "options": options}
        created = http.post("/games", json=body, headers={"Authorization": f"Bearer {key}"})
        created.raise_for_status()
        rulesets[created.json()["id"]] = ruleset
    messages: queue.Queue[Any] = queue.Queue()
    done = threading.Event()
    reader = threading.Thread(target=follow, args=(http, key, messages, done, counts), daemon=True)
    reader.start()
    latest: dict[str, int] = {}
    finished: set[str] = set()
    try:
        while len(finished) < len(rulesets):
            found = messages.get(timeout=MESSAGE_WAIT)
            if isinstance(found, BaseException):
                raise found
            version, data = found
            game_id = data["game_id"]
            if game_id in finished:
                continue
            if data["status"]["finished"]:
                finished.add(game_id)
                continue
            if version < latest.get(game_id, 0):
                continue  # overtaken by a newer message of its game
            latest[game_id] = version
            for you in [entry.get("you", entry) for entry in data["seats"]]:
                if not you["must_act"]:
                    continue
                after, ended = act(
                    http, key, game_id, you["seat"], version, you["decision"], rng, counts
                )
                latest[game_id] = max(latest[game_id], after)
                if ended:
                    finished.add(game_id)
                break  # the next message says who acts next
    finally:
        done.set()
        http.close()
    return counts, rulesets


def serve(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEEPLE_")}
    env.update(MEEPLE_STORE_URL=f"sqlite:///{folder}/meeple.db", MEEPLE_RATE_LIMITS="off")
    meeple = Path(sys.executable).with_name("meeple")
    log = (folder / "server.log").open("wb")
    server = subprocess.Popen(
        [str(meeple), "serve", "--port", str(port)], cwd=folder, env=env, stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        try:
            return httpx.get(f"{base}/health", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(up, "meeple serve")
    return server, base


def run(report: Callable[..., None]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        server, base = serve(Path(directory))
        try:
            counts, rulesets = play(base, random.Random("bench-apps"))
        finally:
            stop(server)
    for game_id, ruleset in rulesets.items():
        actions = counts.actions.get(game_id, 0)
        requests = counts.per_game.get(game_id, 0)
        report(f"apps: {ruleset} requests per action", requests / max(actions, 1), "req/action",
               1.0, "floor")  # fmt: skip
        print(f"   {ruleset}: {actions} actions, {requests} requests", flush=True)
    actions = sum(counts.actions.values())
    report("apps: all games, stream connections included", counts.requests / max(actions, 1),
           "req/action", 1.0, "floor")  # fmt: skip
    print(
        f"   {actions} actions in {len(rulesets)} games, {counts.requests} requests "
        f"({counts.stream} stream connections, {counts.lists} legal-actions lists)",
        flush=True,
    )
