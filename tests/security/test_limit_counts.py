"""How exactly the rate limits' counts hold, against real ``meeple serve`` processes: a burst
over many connections to two servers sharing one Redis gets no more through than the limit
(docs/operations.md, "Limits").

The bursts measure on the client's clock, which brackets the server's: a request answered
within a second of the burst's first request was counted within that second.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from tests.redis_servers import RedisServer
from tests.security.conftest import LiveServer

#: How far over a limit a burst may get (docs/security.md promises at most 10%).
TOLERANCE = 1.10


def redis_settings(redis_server: RedisServer, **more: str) -> dict[str, str]:
    """Two databases of one Redis: the events in 0, the queues and the limits in 1."""
    base = redis_server.url.rsplit("/", 1)[0]
    return {"MEEPLE_STORE_URL": f"{base}/0", "MEEPLE_REDIS_URL": f"{base}/1", **more}


def limit_keys(redis_server: RedisServer) -> set[str]:
    """The keys the rate limits keep in Redis (database 1), whatever their naming."""
    with redis.Redis(port=redis_server.port, db=1, decode_responses=True) as client:
        return {key for key in client.scan_iter(count=1000) if "rate" in key.lower()}


@dataclass
class Sent:
    began: float
    ended: float
    status: int


def burst(
    servers: list[LiveServer],
    connections: int,
    seconds: float,
    request: Callable[[], tuple[str, str, Any, dict[str, str]]],
) -> list[Sent]:
    """``connections`` keep-alive connections to each server, all sending ``request()`` one
    after another for ``seconds``, and on until one is refused (a slow machine's burst still
    reaches the limit); every answer with its times on this machine's clock."""
    answers: list[Sent] = []
    lock = threading.Lock()
    start = threading.Barrier(connections * len(servers))
    refused = threading.Event()

    def send(server: LiveServer) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        mine: list[Sent] = []
        try:
            start.wait()
            until, deadline = time.monotonic() + seconds, time.monotonic() + 60
            while time.monotonic() < until or not (refused.is_set() or time.monotonic() > deadline):
                method, path, body, headers = request()
                began = time.monotonic()
                connection.request(method, path, body=json.dumps(body).encode(), headers=headers)
                response = connection.getresponse()
                response.read()
                mine.append(Sent(began, time.monotonic(), response.status))
                if response.status == 429:
                    refused.set()
        finally:
            connection.close()
            with lock:
                answers.extend(mine)

    threads = [
        threading.Thread(target=send, args=(server,))
        for server in servers
        for _ in range(connections)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def assert_within(answers: list[Sent], amount: int, window: float) -> int:
    """No more than ``amount`` (and the tolerance) got through in the first ``window``
    seconds, nor in the whole burst; some were refused. What got through."""
    passed = [answer for answer in answers if answer.status != 429]
    assert any(answer.status == 429 for answer in answers), "the burst never reached the limit"
    assert all(answer.status in (201, 422, 429) for answer in answers), {a.status for a in answers}
    first = min(answer.began for answer in answers)
    last = max(answer.ended for answer in answers)
    early = [answer for answer in passed if answer.ended <= first + window]
    assert len(early) <= amount * TOLERANCE, (len(early), amount)
    # A sliding window lets ``amount`` through per window, and never more.
    windows = math.floor((last - first) / window) + 1
    assert len(passed) <= amount * windows * TOLERANCE, (len(passed), amount, windows)
    return len(passed)


def test_a_burst_over_two_servers_gets_no_more_actions_through_than_the_limit(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    redis_server = make_redis_server(tmp_path / "redis")
    settings = redis_settings(redis_server, MEEPLE_RATE_LIMIT_ACTIONS="20/second")
    servers = [live_server(**settings), live_server(**settings)]
    game = servers[0].create_game()
    token = game["seats"][0]["token"]
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    path = f"/games/{game['id']}/actions"
    before = limit_keys(redis_server)

    def action() -> tuple[str, str, Any, dict[str, str]]:
        return "POST", path, {"type": "no such action"}, headers  # 422, and counted

    answers = burst(servers, connections=8, seconds=2.5, request=action)
    assert assert_within(answers, amount=20, window=1.0) >= 20
    # The counts live in Redis for as long as their window, no longer.
    with redis.Redis(port=redis_server.port, db=1) as client:
        keys = list(limit_keys(redis_server) - before)  # the token's count of actions
        assert keys and all(0 < client.pttl(key) <= 1000 for key in keys), keys
        time.sleep(1.2)
        assert not any(client.exists(key) for key in keys)


def test_a_burst_over_two_servers_creates_no_more_games_than_the_limit(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    redis_server = make_redis_server(tmp_path / "redis")
    settings = redis_settings(redis_server, MEEPLE_RATE_LIMIT_GAMES="30/minute")
    servers = [live_server(**settings), live_server(**settings)]
    headers = {"Content-Type": "application/json"}
    body = {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}

    def new_game() -> tuple[str, str, Any, dict[str, str]]:
        return "POST", "/games", body, headers

    answers = burst(servers, connections=8, seconds=2.0, request=new_game)
    created = [answer for answer in answers if answer.status == 201]
    assert_within(answers, amount=30, window=60.0)
    assert len(created) == 30  # the store holds each, and no more
