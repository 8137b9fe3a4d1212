"""The stream-driven bot (tests/clients/stream_bot.py) plays a whole game of every hosted
ruleset from its seats' live streams alone, against a real ``meeple serve``: every message
says whose turn it is and the decision faced, so the bot never polls (docs/api.md, "Live
streams")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.security.conftest import LiveServer

BOT = Path(__file__).with_name("stream_bot.py")
ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "stream-bot-admin-key-0123456789"
#: What a client driven by the stream costs an action at most, in requests (the issue's mark).
MOST_REQUESTS_PER_ACTION = 1.3


def test_a_bot_driven_by_the_streams_alone_plays_every_ruleset_to_the_end(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMITS="off", MEEPLE_ADMIN_KEY=ADMIN_KEY)
    command = [sys.executable, str(BOT), "--base-url", server.base, "--seed", "12"]
    done = subprocess.run(
        [*command, "--admin-key", ADMIN_KEY],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.logs()[-4000:]}"
    games = [json.loads(line) for line in done.stdout.splitlines()]
    hosted = {ruleset["id"] for ruleset in server.call("GET", "/rulesets").body["rulesets"]}
    assert {game["ruleset"] for game in games} == hosted
    for game in games:
        print(json.dumps(game))
        finished = server.call("GET", f"/games/{game['game_id']}").body
        assert game["finished"] and finished["status"]["finished"], game
        assert game["actions"] > 0
        assert game["requests_per_action"] <= MOST_REQUESTS_PER_ACTION, game
