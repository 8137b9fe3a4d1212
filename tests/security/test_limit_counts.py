"""What the rate limits' counts cost and how exactly they hold, against real ``meeple serve``
processes: a token that proves nothing leaves no count of its own behind (its address is
counted, and locked out after a few), and a burst over many connections to two servers
sharing one Redis gets no more through than the limit (docs/security.md, "Rate limits").

The bursts measure on the client's clock, which brackets the server's: a request answered
within a second of the burst's first request was counted within that second.
"""

from __future__ import annotations

import http.client
import json
import math
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from service.http.limits import token_key
from tests.redis_servers import RedisServer
from tests.security.conftest import LiveServer
from tests.security.test_limits import OTHER_ADDRESS, call_from

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


def random_token() -> str:
    return secrets.token_urlsafe(32)


def test_random_tokens_leave_no_count_behind_and_lock_their_address_out(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    redis_server = make_redis_server(tmp_path / "redis")
    server = live_server(**redis_settings(redis_server, MEEPLE_RATE_LIMIT_INVALID_TOKENS="5/hour"))
    game = server.create_game()
    path = f"/games/{game['id']}/actions"
    before = limit_keys(redis_server)
    sent = [random_token() for _ in range(40)]
    answers = [server.call("POST", path, {"type": "x"}, token=token) for token in sent]
    assert [answer.status for answer in answers[:5]] == [401] * 5
    assert {answer.code for answer in answers[:5]} == {"invalid_token"}
    for refused in answers[5:]:
        assert refused.status == 429, refused
        assert refused.code == "too_many_invalid_tokens"
        assert 1 <= int(refused.headers["retry-after"]) <= 3600
    after = limit_keys(redis_server)
    assert not any(token_key(token) in key for key in after for token in sent), after
    # The address's own count and its lock-out: a few keys, however many tokens came.
    assert len(after - before) <= 4, after - before

    # Locked out: no token is looked at, not even a seat's; reading without one goes on.
    seat_token = game["seats"][0]["token"]
    assert server.call("POST", path, {"type": "x"}, token=seat_token).status == 429
    assert server.call("GET", f"/games/{game['id']}").status == 200
    # Another address has its own count.
    other = call_from(OTHER_ADDRESS, server, "POST", path, {"type": "x"}, Authorization="Bearer x")
    assert other.status == 401 and other.code == "invalid_token"
    answer = call_from(
        OTHER_ADDRESS, server, "POST", path, {"type": "x"}, Authorization=f"Bearer {seat_token}"
    )
    assert answer.status == 422, answer


def test_random_tokens_on_reads_are_counted_against_the_address_too(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_INVALID_TOKENS="3/hour")
    game = server.create_game()
    statuses = [
        server.call("GET", f"/games/{game['id']}/state", token=random_token()).status
        for _ in range(6)
    ]
    assert statuses == [401, 401, 401, 429, 429, 429]


@dataclass
class Sent:
    began: float
    ended: float
    status: int


def burst(
    servers: list[LiveServer],
    connections: int,
    seconds: float,
    request: tuple[str, str, Any, dict[str, str]],
) -> list[Sent]:
    """``connections`` keep-alive connections to each server, all sending ``request`` (method,
    path, body, headers) one after another for ``seconds``, and on until one is refused (a
    slow machine's burst still reaches the limit); every answer with its times on this
    machine's clock."""
    answers: list[Sent] = []
    lock = threading.Lock()
    start = threading.Barrier(connections * len(servers))
    refused = threading.Event()

    method, path, body, headers = request

    def send(server: LiveServer) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        mine: list[Sent] = []
        try:
            start.wait()
            until, deadline = time.monotonic() + seconds, time.monotonic() + 60
            while time.monotonic() < until or not (refused.is_set() or time.monotonic() > deadline):
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
    action = ("POST", f"/games/{game['id']}/actions", {"type": "no such action"}, headers)
    before = limit_keys(redis_server)
    answers = burst(servers, connections=8, seconds=2.5, request=action)  # 422s, each counted
    assert assert_within(answers, amount=20, window=1.0) >= 20
    # The counts live in Redis for as long as their window, no longer.
    with redis.Redis(port=redis_server.port, db=1) as client:
        keys = list(limit_keys(redis_server) - before)  # the token's count of actions
        ttls = [client.pttl(key) for key in keys]
        assert all(ttl == -2 or 0 < ttl <= 1000 for ttl in ttls), ttls  # -2: gone already
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
    body = {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}
    new_game = ("POST", "/games", body, {"Content-Type": "application/json"})
    answers = burst(servers, connections=8, seconds=2.0, request=new_game)
    assert_within(answers, amount=30, window=60.0)
    assert sum(1 for answer in answers if answer.status == 201) == 30  # the limit, exactly
