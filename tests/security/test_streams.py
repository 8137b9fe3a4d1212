"""Live streams (``GET /games/{id}/stream``) against a real ``meeple serve``, as anonymous
clients on the network would open them (docs/security.md, Live streams: 16 open streams once froze
the API).

A stream costs a greenlet, not one of a few request threads; open streams are capped per
client address and per game (429 ``too_many_streams`` with ``Retry-After``; how a game's are
shared between its seats, the admin and spectators: test_stream_shares.py); a client that
vanishes frees its slot within seconds; a stream ends after its lifetime telling the client to
reconnect with ``Last-Event-ID``, and the reconnection misses nothing.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.redis_servers import RedisServer
from tests.security.conftest import LiveServer, RawStream

#: Far more than the 16 request threads ``meeple serve`` had.
MANY = 200
#: What tells "answered" from "blocked": generous, never a measure of speed.
PATIENCE = 10.0


def messages(raw: bytes) -> list[dict[str, Any]]:
    """The events' SSE messages (``id``, ``event``, ``data``) in a stream's body; comments
    and the opening ``turn`` message (no ``id``: not an event) skipped."""
    found = []
    for block in raw.decode().split("\n\n"):
        message: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name in ("id", "event", "data"):
                message[name] = value
        if "data" in message and "id" in message:
            message["data"] = json.loads(message["data"])
            found.append(message)
    return found


def play(server: LiveServer, game: dict[str, Any]) -> int:
    """A legal action by a seat the game is waiting for; the game's version afterwards."""
    for seat in game["seats"]:
        path = f"/games/{game['id']}"
        legal = server.call("GET", f"{path}/legal-actions", token=seat["token"], timeout=PATIENCE)
        if legal.status == 200 and legal.body["actions"]:
            answer = server.call(
                "POST",
                f"{path}/actions",
                legal.body["actions"][0],
                token=seat["token"],
                timeout=PATIENCE,
            )
            assert answer.status == 201, answer
            return int(answer.body["version"])
    raise AssertionError(f"no seat of {game['id']} has a legal action")


def open_streams(server: LiveServer, game_id: str, count: int, **request: Any) -> list[RawStream]:
    return [server.open_stream(game_id, **request) for _ in range(count)]


def wait_for_a_free_slot(
    server: LiveServer, game_id: str, failure: str, headers: dict[str, str] | None = None
) -> None:
    """Open (and close) streams (with these headers) until one is let in, for at most
    ``PATIENCE`` seconds."""
    deadline = time.monotonic() + PATIENCE
    while True:
        again = server.open_stream(game_id, headers=headers)
        status = again.answer()
        again.close()
        if status == 200:
            return
        assert time.monotonic() < deadline, failure
        time.sleep(0.2)


def on_redis(server: RedisServer) -> dict[str, str]:
    """The settings of a deployment on this Redis: the store on db 0, the queues on db 1."""
    url = server.url.removesuffix("/0")
    return {"MEEPLE_STORE_URL": f"{url}/0", "MEEPLE_REDIS_URL": f"{url}/1"}


def test_many_open_streams_leave_health_and_actions_answering(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_STREAMS_PER_ADDRESS="1000", MEEPLE_STREAMS_PER_GAME="1000")
    game = server.create_game()
    streams = open_streams(server, game["id"], MANY)
    try:
        # Every stream is open and waiting; the old server had answered 16 of them.
        assert all(stream.answer(PATIENCE) == 200 for stream in streams)
        health = server.call("GET", "/health", timeout=PATIENCE)
        assert health.status == 200 and health.body["status"] == "ok"
        version = play(server, game)
        # And each of the streams gets the action, pushed at once.
        for stream in streams:
            stream.read_until(f"id: {version}\n".encode(), PATIENCE)
            assert [m["id"] for m in messages(stream.received)] == [str(version)]
    finally:
        for stream in streams:
            stream.close()


def test_over_the_caps_a_stream_is_refused_with_429_and_retry_after(
    live_server: Callable[..., LiveServer],
) -> None:
    # Of a two-seat game's 5 streams, one is kept for each seat and one for the admin
    # (tests/security/test_stream_shares.py): spectators may open 2.
    server = live_server(
        MEEPLE_STREAMS_PER_ADDRESS="3", MEEPLE_STREAMS_PER_GAME="5", MEEPLE_STREAMS_PER_SEAT="1"
    )
    busy, other, third = (server.create_game() for _ in range(3))
    held = open_streams(server, busy["id"], 2)
    try:
        assert [stream.answer() for stream in held] == [200, 200]
        refused = server.call("GET", f"/games/{busy['id']}/stream", timeout=PATIENCE)
        assert refused.status == 429
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.code == "too_many_streams" and "on this game" in refused.body["detail"]
        assert int(refused.headers["retry-after"]) >= 1
        # Another game still has room, until the address has its three.
        held.append(server.open_stream(other["id"]))
        assert held[-1].answer() == 200
        refused = server.call("GET", f"/games/{third['id']}/stream", timeout=PATIENCE)
        assert refused.status == 429 and refused.code == "too_many_streams"
        assert "from your address" in refused.body["detail"]
        assert int(refused.headers["retry-after"]) >= 1
    finally:
        for stream in held:
            stream.close()


def test_a_client_that_vanishes_frees_its_slot_within_seconds(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_STREAMS_PER_ADDRESS="1")
    game = server.create_game()
    first = server.open_stream(game["id"])
    assert first.answer() == 200
    second = server.open_stream(game["id"])
    assert second.answer() == 429
    second.close()
    first.close()  # the client goes away without a word
    wait_for_a_free_slot(server, game["id"], "the vanished client's slot was never freed")


def test_a_stream_ends_after_its_lifetime_and_a_reconnection_misses_nothing(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_STREAM_MAX_SECONDS="2")
    game = server.create_game()
    stream = server.open_stream(game["id"], query="?after=0")
    assert stream.answer() == 200
    stream.read_until(b"id: 1\n")
    play(server, game)
    ended = stream.read_to_end(PATIENCE)  # the server ends it, after about 2 s
    stream.close()
    assert b"reconnect with Last-Event-ID" in ended.rsplit(b"\n\n", 2)[-2]
    seen = [int(m["id"]) for m in messages(ended)]
    last = seen[-1]
    version = play(server, game)  # appended while the client was away
    again = server.open_stream(game["id"], headers={"Last-Event-ID": str(last)})
    assert again.answer() == 200
    again.read_to_end(PATIENCE)  # this one too ends after its lifetime
    again.close()
    seen += [int(m["id"]) for m in messages(again.received)]
    now = server.call("GET", f"/games/{game['id']}", timeout=PATIENCE).body["version"]
    assert now >= version
    assert seen == list(range(1, now + 1))  # each event once, none missing


def test_stopping_the_server_ends_open_streams_at_once(
    live_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    server = live_server()
    game = server.create_game()
    streams = open_streams(server, game["id"], 5)
    assert all(stream.answer() == 200 for stream in streams)
    server.process.send_signal(signal.SIGTERM)
    for stream in streams:
        ended = stream.read_to_end(PATIENCE)
        assert b"reconnect with Last-Event-ID" in ended
        stream.close()
    assert server.process.wait(timeout=PATIENCE) == 0


def test_with_redis_the_caps_hold_across_processes_and_a_crashed_ones_slots_expire(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    settings = {
        **on_redis(make_redis_server(tmp_path / "redis")),
        "MEEPLE_STREAMS_PER_ADDRESS": "2",
        "MEEPLE_STREAM_SLOT_LEASE": "3",
        "MEEPLE_STREAM_CHECK_INTERVAL": "0.5",
    }
    first, second = live_server(**settings), live_server(**settings)
    game = first.create_game()
    held = [first.open_stream(game["id"]), second.open_stream(game["id"])]
    assert [stream.answer() for stream in held] == [200, 200]
    time.sleep(4)  # longer than a lease: the open streams renew theirs
    for server in (first, second):
        refused = server.call("GET", f"/games/{game['id']}/stream", timeout=PATIENCE)
        assert refused.status == 429 and refused.code == "too_many_streams"
    second.process.kill()  # no goodbye: its slot stays in Redis until its lease runs out
    second.process.wait()
    held[1].close()
    wait_for_a_free_slot(first, game["id"], "the crashed process's slot never expired")
    held[0].close()
