"""A Python client generated from openapi.yaml by openapi-python-client (pinned in the dev
extras) serves a bot as it is (docs/api.md, Generated clients): it generates with no warning, the
bot written against it (tests/clients/python_bot.py) passes ``mypy --strict``, and the bot
plays one game of every ruleset to the end through it against a live server, following the
game's live stream.

The client is generated into a temporary folder on every run, never committed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.clients.spec import OPENAPI_FILE, legal_actions_are_typed
from tests.security.conftest import LiveServer

HERE = Path(__file__).resolve().parent
BOT = HERE / "python_bot.py"
GENERATOR = Path(sys.executable).with_name("openapi-python-client")
MYPY = Path(sys.executable).with_name("mypy")
ADMIN_KEY = "clients-test-admin-key-0123456789"


def run(command: list[str], timeout: float, **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, **options)


@dataclass
class Generated:
    folder: Path  # holds the package meeple_ledger_client
    output: str  # what the generator printed


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    """The client, generated from the committed openapi.yaml."""
    assert GENERATOR.exists(), (
        f"{GENERATOR} is missing: install the dev extras (pip install -e '.[dev]')"
    )
    folder = tmp_path_factory.mktemp("generated")
    done = run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(OPENAPI_FILE),
            "--config",
            str(HERE / "openapi-python-client.yaml"),
            "--meta",
            "none",
            "--output-path",
            str(folder / "meeple_ledger_client"),
        ],
        timeout=300,
    )
    assert done.returncode == 0, f"openapi-python-client failed:\n{done.stdout}\n{done.stderr}"
    return Generated(folder, done.stdout + done.stderr)


def test_the_generator_keeps_every_operation_and_response(generated: Generated) -> None:
    assert "Warning" not in generated.output, generated.output
    api = generated.folder / "meeple_ledger_client" / "api"
    export = (api / "history" / "export_game.py").read_text()
    assert "File(" in export, "the JSON Lines export is kept, as bytes"
    stream = (api / "play" / "stream_events.py").read_text()
    assert "response_200 = response.text" in stream, "the stream is text, never parsed as JSON"


def test_the_bot_passes_mypy_strict(generated: Generated, tmp_path: Path) -> None:
    """No cast, no ``Any`` leak: the bot posts a listed action back as the client types it
    (legal-action items reference the actions' union, so the generated types agree)."""
    assert legal_actions_are_typed(), "legal-action items must reference the Action union"
    assert MYPY.exists(), f"{MYPY} is missing: install the dev extras"
    done = run(
        [
            str(MYPY),
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            str(BOT),
        ],
        timeout=300,
        cwd=tmp_path,  # no pyproject.toml here: --strict alone decides
        env={**os.environ, "MYPYPATH": str(generated.folder)},
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    print(f"mypy --strict on python_bot.py: {len(errors)} error(s)")
    assert errors == [], done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_bot_plays_every_ruleset_to_the_end_following_the_stream(
    generated: Generated, live_server: Callable[..., LiveServer]
) -> None:
    server = live_server(MEEPLE_RATE_LIMITS="off", MEEPLE_ADMIN_KEY=ADMIN_KEY)
    # the admin key lets the bot seed the games too: the same games on every run
    command = [sys.executable, str(BOT), "--base-url", server.base, "--seed", "12"]
    done = run(
        [*command, "--admin-key", ADMIN_KEY],
        timeout=900,
        env={**os.environ, "PYTHONPATH": str(generated.folder)},
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.logs()[-4000:]}"
    games = [json.loads(line) for line in done.stdout.splitlines()]
    hosted = {ruleset["id"] for ruleset in server.call("GET", "/rulesets").body["rulesets"]}
    assert {game["ruleset"] for game in games} == hosted
    for game in games:
        print(json.dumps(game))
        finished = server.call("GET", f"/games/{game['game_id']}").body
        assert finished["status"]["finished"] and finished["result"] is not None, game
        assert game["version"] == finished["version"]
        assert game["stream_in_order"] and game["events_on_stream"] == game["version"], game
        assert game["exported_lines"] == game["version"], game
        assert game["actions"] > 0
        # three requests an action at most (status, legal actions, the post) plus the game's
        # creation, its stream and the last checks; fewer once the answer carries status
        assert game["requests"] <= 3 * game["actions"] + 10, game
    total = sum(game["requests"] for game in games) / sum(game["actions"] for game in games)
    print(f"requests per action, all games: {total:.3f}")
