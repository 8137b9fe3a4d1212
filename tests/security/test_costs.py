"""Bounded costs (docs/security.md): what one client can make a real ``meeple serve`` do is bounded.

Undo and redo take a capped number of steps and cost about one snapshot interval of folding
however long the branch has grown; pages of the events and the timeline are capped; an
export streams; a grown branch's audit is computed once per version. Each finding is
reproduced as a hostile client would: a branch grown to thousands of events by alternating
``undo?steps=100`` and ``redo?steps=100``, then asked for its undo, audit and timeline, four
at once. The bounds on time are generous (they tell "answers" from "does not answer in any
useful time"), never a speed requirement.
"""

from __future__ import annotations

import json
import random
import time
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.security.conftest import Answer, LiveServer

ADMIN_KEY = "costs-admin-key-0123456789abcdef"
#: how long a grown branch's undo, audit or timeline may take to answer at all, four at once
ANSWERS_WITHIN = 10.0
GROWN_TO = 5000
STEPS = 100
#: picks the holder's moves (random play makes a game long enough; the first move may not)
CHOOSER = random.Random("costs")


@pytest.fixture
def server(live_server: Callable[..., LiveServer]) -> LiveServer:
    # The costs of one client's requests are the subject here, not how often it may send them
    # or how far undo may grow a game (tests/api/test_history.py tests the undo allowance).
    return live_server(
        MEEPLE_ADMIN_KEY=ADMIN_KEY, MEEPLE_RATE_LIMITS="off", MEEPLE_UNDO_ALLOWANCE="100000"
    )


def test_more_undo_or_redo_steps_than_the_cap_are_refused(server: LiveServer) -> None:
    game = server.create_game()
    token = game["seats"][0]["token"]
    for what in ("undo", "redo"):
        answer = server.call("POST", f"/games/{game['id']}/{what}?steps=101", token=token)
        assert answer.status == 422 and answer.code == "too_many_steps", answer
        assert answer.headers["content-type"].startswith("application/problem+json")
        answer = server.call("POST", f"/games/{game['id']}/{what}?steps=99999999999", token=token)
        assert answer.status == 422 and answer.code == "too_many_steps", answer
    assert server.call("GET", f"/games/{game['id']}").body["version"] == game["version"]


def test_the_cap_on_steps_is_a_setting(live_server: Callable[..., LiveServer]) -> None:
    server = live_server(MEEPLE_MAX_UNDO_STEPS="3")
    game = server.create_game()
    answer = server.call(
        "POST", f"/games/{game['id']}/undo?steps=4", token=game["seats"][0]["token"]
    )
    assert answer.status == 422 and answer.code == "too_many_steps", answer


def test_pages_of_events_and_timeline_are_capped_and_link_the_next(server: LiveServer) -> None:
    game = server.create_game()
    for what in ("events", "timeline"):
        answer = server.call("GET", f"/games/{game['id']}/{what}?limit=1001")
        assert answer.status == 422 and answer.code == "limit_too_large", answer
        page = server.call("GET", f"/games/{game['id']}/{what}?limit=1000")
        assert page.status == 200, page
        assert page.body["next_after"] is None  # the whole (short) game in one page


def test_an_export_streams_its_log(server: LiveServer) -> None:
    game = server.create_game()
    request = urllib.request.Request(
        f"{server.base}/games/{game['id']}/export",
        headers={"Authorization": f"Bearer {ADMIN_KEY}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("application/jsonl")
        # Streamed: sent in chunks as it is read, so its length is not known up front.
        assert response.headers.get("Transfer-Encoding") == "chunked"
        assert response.headers.get("Content-Length") is None
        lines = response.read().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, game["version"] + 1))


def test_a_grown_branch_still_answers_undo_audit_and_timeline(server: LiveServer) -> None:
    branch, token = _branch_in_play(server)
    _grow(server, branch, token)
    version = server.call("GET", f"/games/{branch}").body["version"]
    assert version >= GROWN_TO

    undone = _timed(lambda: server.call("POST", f"/games/{branch}/undo?steps={STEPS}", token=token))
    assert undone.status == 201, undone
    # As the issue found them: four at once of a branch's audit and its longest timeline.
    paths = [f"/games/{branch}/audit"] * 2 + [f"/games/{branch}/timeline?limit=1000"] * 2
    with ThreadPoolExecutor(len(paths)) as pool:
        answers = list(pool.map(lambda path: _timed(lambda: server.call("GET", path)), paths))
    for answer in answers:
        assert answer.status == 200, answer
    assert answers[0].body == answers[1].body and answers[0].body["ok"] is True
    assert answers[0].body["events"] == undone.body["version"] == version + STEPS
    redone = _timed(lambda: server.call("POST", f"/games/{branch}/redo?steps={STEPS}", token=token))
    assert redone.status == 201, redone


# -- helpers ------------------------------------------------------------------------------


def _timed(call: Callable[[], Answer]) -> Answer:
    began = time.monotonic()
    answer = call()
    took = time.monotonic() - began
    assert took < ANSWERS_WITHIN, f"took {took:.1f} s: {answer.status}"
    return answer


def _branch_in_play(server: LiveServer) -> tuple[str, str]:
    """A seat's branch of a new Gutenberg game, played on by its holder until at least
    ``STEPS`` + 50 steps, stopping where neither the state now nor ``STEPS`` steps back
    waits for an automatic step (the service would run it at once and end the redo)."""
    game = server.create_game(players=4)
    made = server.call(
        "POST", f"/games/{game['id']}/branches", {"at": 1}, token=game["seats"][0]["token"]
    )
    assert made.status == 201, made
    branch, token = made.body["id"], made.body["token"]
    floor = made.body["version"]
    while True:
        summary = server.call("GET", f"/games/{branch}").body
        version, status = summary["version"], summary["status"]
        assert not status["finished"], "the game ended before it grew long enough"
        if status["awaiting_system"]:
            time.sleep(0.05)
            continue
        if version - floor >= STEPS + 50 and _rests(server, branch, version - STEPS):
            return branch, token
        _play_one(server, branch, token, status["to_act"][0])


def _rests(server: LiveServer, branch: str, version: int) -> bool:
    """Whether the state after event ``version`` waits for no automatic step."""
    answer = server.call("GET", f"/games/{branch}/events?after={version}&limit=1")
    return bool(answer.body["events"]) and answer.body["events"][0]["type"] != "system"


def _play_one(server: LiveServer, branch: str, token: str, seat: int) -> None:
    legal = server.call("GET", f"/games/{branch}/seats/{seat}/legal-actions", token=token)
    assert legal.status == 200 and legal.body["actions"], legal
    # Passing ends a round sooner: a game played on ends after too few steps.
    moves = [move for move in legal.body["actions"] if move["type"] != "pass"]
    action = CHOOSER.choice(moves or legal.body["actions"])
    answer = server.call("POST", f"/games/{branch}/seats/{seat}/actions", action, token=token)
    assert answer.status in (201, 409), answer  # 409: an automatic step came first


def _grow(server: LiveServer, branch: str, token: str) -> None:
    """Alternate undo?steps=100 and redo?steps=100 until the log holds ``GROWN_TO`` events."""
    version = server.call("GET", f"/games/{branch}").body["version"]
    while version < GROWN_TO:
        for what in ("undo", "redo"):
            answer = server.call("POST", f"/games/{branch}/{what}?steps={STEPS}", token=token)
            assert answer.status == 201, answer
            version = answer.body["version"]
