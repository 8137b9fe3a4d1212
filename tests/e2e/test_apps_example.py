"""The worked example of docs/api.md, "Applications", run as it is written (bash, curl, jq)
against a real ``meeple serve``: what the page promises is what the service does."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.e2e.conftest import WebServer

ROOT = Path(__file__).resolve().parents[2]


def example() -> str:
    """The first ``sh`` block of the Applications section."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = text[text.index("## Applications") :]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match is not None, "docs/api.md's Applications section has no sh example"
    return match.group(1)


def test_the_applications_example_of_the_docs_runs_as_written(web_server: WebServer) -> None:
    ran = subprocess.run(
        ["bash", "-e", "-c", example()],
        env={**os.environ, "BASE": web_server.url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert re.fullmatch(r'\{"id":"[0-9a-f]+","my_turn":true\}', lines[0]), lines
    assert lines[1] == '{"seq":2,"version":2}'
    assert lines[2] == '{"seat":1,"version":3}'
    assert lines[3:6] == ["id: 1;1:1", "id: 1;1:2", "id: 1;1:3"]
    assert lines[6] == '{"games":1,"active_games":1,"bot_games":0}'
    assert lines[7:] == ["204", "401"]
