"""A TypeScript bot on openapi-typescript + openapi-fetch (docs/api.md, Generated clients): the
types are generated from openapi.yaml, tests/clients/ts/bot.mts compiles under ``tsc --strict`` and
posts a listed legal action back verbatim, and the compiled bot plays a game to its end
against a live server.

The npm packages are pinned in tests/package.json and installed by tests/npm_tools.py; the
generated types and the compiled bot go to tests/clients/ts/generated/ (ignored by git).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clients.spec import OPENAPI_FILE, legal_actions_are_typed
from tests.npm_tools import npm_bin
from tests.security.conftest import LiveServer

TS = Path(__file__).resolve().parent / "ts"
GENERATED = TS / "generated"


@pytest.fixture(scope="module")
def compiled() -> subprocess.CompletedProcess[str]:
    """The types generated afresh, then ``tsc`` over the bot (emitting generated/out/)."""
    tools = npm_bin()
    shutil.rmtree(GENERATED, ignore_errors=True)
    GENERATED.mkdir()
    generate = subprocess.run(
        [str(tools / "openapi-typescript"), str(OPENAPI_FILE), "-o", "generated/schema.d.ts"],
        cwd=TS,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert generate.returncode == 0, f"openapi-typescript failed:\n{generate.stderr}"
    return subprocess.run(
        [str(tools / "tsc"), "-p", str(TS / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_bot_compiles_under_tsc_strict(compiled: subprocess.CompletedProcess[str]) -> None:
    """No cast: the bot posts a listed action back as the generated types give it (the
    legal-action items reference the actions' union, so tsc accepts the post)."""
    assert legal_actions_are_typed(), "legal-action items must reference the Action union"
    config = json.loads((TS / "tsconfig.json").read_text())["compilerOptions"]
    assert config["strict"] is True
    errors = re.findall(r"^\S+\(\d+,\d+\): error TS\d+: .*$", compiled.stdout, re.MULTILINE)
    print(f"tsc --strict on bot.mts: {len(errors)} error(s)")
    assert errors == [] and compiled.returncode == 0, compiled.stdout


def test_the_compiled_bot_plays_a_game_to_the_end(
    compiled: subprocess.CompletedProcess[str], live_server: Callable[..., LiveServer]
) -> None:
    node = shutil.which("node")
    assert node is not None, "node is not on PATH: install Node.js (20 or newer)"
    bot = GENERATED / "out" / "bot.mjs"
    assert bot.exists(), compiled.stdout
    server = live_server(MEEPLE_RATE_LIMITS="off")
    done = subprocess.run(
        [node, str(bot), server.base, "gutenberg", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}\n{server.logs()[-4000:]}"
    played = json.loads(done.stdout)
    print(json.dumps(played))
    summary = server.call("GET", f"/games/{played['game_id']}").body
    assert summary["status"]["finished"] and summary["result"] is not None
    assert played["version"] == summary["version"] and played["actions"] > 0
    assert played["requests"] >= 3 * played["actions"]  # summary, legal actions, the post
