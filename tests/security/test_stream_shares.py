"""Fair shares of a game's live streams, against a real ``meeple serve`` (issue 36, item 5:
256 anonymous streams on one game filled its cap, and both seats and the admin then got 429
``too_many_streams`` on their own game).

Each seat of a game and the admin keep ``MEEPLE_STREAMS_PER_SEAT`` of the game's
``MEEPLE_STREAMS_PER_GAME`` streams for their own (a branch's holder, who plays every seat,
keeps every seat's); spectators share the rest. So spectators are refused before they fill the
game, a seat always finds a slot for its own streams up to its share and never beyond it, and a
closed spectator stream frees its slot. With Redis the shares are counted there, across every
API process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from itertools import cycle
from pathlib import Path
from typing import Any

from tests.redis_servers import RedisServer
from tests.security.conftest import LiveServer, RawStream
from tests.security.test_streams import PATIENCE, on_redis, wait_for_a_free_slot

ADMIN_KEY = "stream-shares-admin-key-0123456789"
#: A two-seat game's 12 streams: 2 kept for each seat and 2 for the admin, 6 for spectators.
SHARES = {
    "MEEPLE_ADMIN_KEY": ADMIN_KEY,
    "MEEPLE_STREAMS_PER_ADDRESS": "100",  # every client here is on loopback
    "MEEPLE_STREAMS_PER_GAME": "12",
    "MEEPLE_STREAMS_PER_SEAT": "2",
    "MEEPLE_STREAM_CHECK_INTERVAL": "0.5",
}
SPECTATORS = 6
PER_SEAT = 2


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def refusal(stream: RawStream) -> dict[str, Any]:
    """The problem a refused stream answered with (after ``answer``)."""
    assert stream.headers is not None
    assert stream.headers["content-type"] == "application/problem+json"
    assert int(stream.headers["retry-after"]) >= 1
    problem: dict[str, Any] = json.loads(stream.read_to_end(PATIENCE))
    assert problem["status"] == 429 and problem["code"] == "too_many_streams", problem
    return problem


def refused(server: LiveServer, game_id: str, token: str | None = None) -> dict[str, Any]:
    """Open a stream (with this token) that the server must refuse; its problem."""
    stream = server.open_stream(game_id, headers=bearer(token) if token else None)
    try:
        status = stream.answer(PATIENCE)
        assert status == 429, f"let in ({status}) where it should have been refused"
        return refusal(stream)
    finally:
        stream.close()


def fill_with_spectators(servers: Iterable[LiveServer], game_id: str) -> list[RawStream]:
    """Anonymous streams on the game, opened (in turn on each server) until one is refused;
    the open ones. More than the game's whole cap would mean that nothing refuses them."""
    held: list[RawStream] = []
    for server in cycle(servers):
        stream = server.open_stream(game_id)
        if stream.answer(PATIENCE) != 200:
            problem = refusal(stream)
            stream.close()
            assert "on this game" in problem["detail"], problem
            return held
        held.append(stream)
        assert len(held) <= int(SHARES["MEEPLE_STREAMS_PER_GAME"]), "spectators fill the game"
    raise AssertionError("unreachable")


def open_own(server: LiveServer, game_id: str, token: str, seat: int | None = None) -> RawStream:
    """A stream with this token (of ``seat``, if a seat's), answered 200 and past its opening
    ``turn`` message, which speaks to that seat."""
    stream = server.open_stream(game_id, headers=bearer(token))
    if stream.answer(PATIENCE) != 200:
        body = stream.read_to_end(PATIENCE)
        stream.close()
        raise AssertionError(f"{stream.status}: {body!r}")
    # Nothing before the turn message (``retry: 2000``) ends with ``}`` and a blank line.
    received = stream.read_until(b"}\n\n", PATIENCE)
    turn = json.loads(received.split(b"event: turn\ndata: ", 1)[1].split(b"\n", 1)[0])
    assert turn["game_id"] == game_id
    assert (turn.get("you") or {}).get("seat") == seat, turn
    return stream


def close_all(*groups: list[RawStream]) -> None:
    for group in groups:
        for stream in group:
            stream.close()


def test_spectators_filling_a_game_leave_each_seat_and_the_admin_their_streams(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(**SHARES)
    game = server.create_game()
    spectators = fill_with_spectators([server], game["id"])
    own: list[RawStream] = []
    try:
        owners = [(seat["token"], seat["seat"]) for seat in game["seats"]] + [(ADMIN_KEY, None)]
        for token, number in owners:
            own += [open_own(server, game["id"], token, number) for _ in range(PER_SEAT)]
        # Spectators had what the seats and the admin do not keep, and no more.
        assert len(spectators) == SPECTATORS
        # The game's whole cap is taken now: still nobody else is let in.
        late = refused(server, game["id"])
        assert f"{SPECTATORS} spectators' streams are open" in late["detail"]
    finally:
        close_all(spectators, own)


def test_a_seat_beyond_its_share_is_refused_and_its_closed_stream_lets_it_in_again(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(**SHARES)
    game = server.create_game()
    seat = game["seats"][1]
    own = [open_own(server, game["id"], seat["token"], 1) for _ in range(PER_SEAT)]
    admin = [open_own(server, game["id"], ADMIN_KEY) for _ in range(PER_SEAT)]
    try:
        for token, who in ((seat["token"], "seat 1"), (ADMIN_KEY, "the admin")):
            problem = refused(server, game["id"], token)
            assert f"{PER_SEAT} streams of {who} are open" in problem["detail"], problem
        # The other seat's share and the spectators' are untouched by it.
        own.append(open_own(server, game["id"], game["seats"][0]["token"], 0))
        own.append(server.open_stream(game["id"]))
        assert own[-1].answer(PATIENCE) == 200
        # A seat that closes one of its streams has its place back (once the server sees it).
        own.pop(0).close()
        wait_for_a_free_slot(
            server,
            game["id"],
            "the seat's closed stream never freed its place",
            headers=bearer(seat["token"]),
        )
    finally:
        close_all(own, admin)


def test_closing_spectator_streams_frees_their_slots(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(**SHARES)
    game = server.create_game()
    spectators = fill_with_spectators([server], game["id"])
    try:
        assert len(spectators) == SPECTATORS
        spectators.pop().close()
        spectators.pop().close()
        # Both places are free again once the server sees the clients gone, and no more.
        deadline = time.monotonic() + PATIENCE
        while len(spectators) < SPECTATORS:
            assert time.monotonic() < deadline, "closed spectator streams never freed their slots"
            time.sleep(0.2)
            spectators += fill_with_spectators([server], game["id"])
        assert len(spectators) == SPECTATORS
    finally:
        close_all(spectators)


def test_a_branch_holder_keeps_every_seat_share_of_its_branch(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(**SHARES)
    game = server.create_game()
    branch = server.call(
        "POST",
        f"/games/{game['id']}/branches",
        {"at": game["version"]},
        token=game["seats"][0]["token"],
        timeout=PATIENCE,
    )
    assert branch.status == 201, branch
    branch_id, holder = branch.body["id"], branch.body["token"]
    spectators = fill_with_spectators([server], branch_id)
    own: list[RawStream] = []
    try:
        # The holder plays both seats: it keeps both seats' shares.
        own = [open_own(server, branch_id, holder) for _ in range(2 * PER_SEAT)]
        assert "of this branch's holder" in refused(server, branch_id, holder)["detail"]
        # The source's seat tokens are nothing on the branch (401, not a spectator's slot).
        stranger = server.call(
            "GET", f"/games/{branch_id}/stream", token=game["seats"][1]["token"], timeout=PATIENCE
        )
        assert stranger.status == 401 and stranger.code == "invalid_token"
        assert len(spectators) == SPECTATORS
    finally:
        close_all(spectators, own)


def test_with_redis_the_shares_hold_across_processes(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    settings = {**SHARES, **on_redis(make_redis_server(tmp_path / "redis"))}
    first, second = live_server(**settings), live_server(**settings)
    game = first.create_game()
    spectators = fill_with_spectators([first, second], game["id"])
    own: list[RawStream] = []
    try:
        # Each seat and the admin find their places on either process ...
        owners = [(seat["token"], seat["seat"]) for seat in game["seats"]] + [(ADMIN_KEY, None)]
        for token, number in owners:
            own += [open_own(server, game["id"], token, number) for server in (first, second)]
        assert len(spectators) == SPECTATORS
        # ... and a seat's share, taken on both, is full on both.
        for server in (first, second):
            problem = refused(server, game["id"], game["seats"][0]["token"])
            assert "streams of seat 0 are open" in problem["detail"], problem
        # A spectator stream closed on one process frees a slot seen by the other.
        spectators.pop(0).close()
        wait_for_a_free_slot(second, game["id"], "a closed spectator stream never freed its slot")
    finally:
        close_all(spectators, own)
