"""Fixtures of the browser tests (tests/e2e/test_web_*.py): a real ``meeple serve`` holding a
finished game of each ruleset, and Debian's chromium driven by Playwright.

The finished games are played by ``meeple simulate`` (random legal moves) and loaded with
``meeple import``, as an organiser would load a log, so a replay test starts at once. The
browser is the ``chromium`` executable on PATH (tests/ensure-chromium.sh installs Debian's
package when it is missing); nothing downloads a browser of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MEEPLE = Path(sys.executable).with_name("meeple")
RULESETS = ("gutenberg", "restoration", "impression", "impendium")
#: Where the browser tests leave their screenshots (git-ignored with the rest of var/).
SCREENSHOTS = ROOT / "var" / "screenshots"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class WebServer:
    url: str
    log: Path
    #: a finished two-player game of each ruleset: ruleset id -> game id
    finished: dict[str, str]

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            return json.loads(response.read())


def _meeple(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(MEEPLE), *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    folder = tmp_path_factory.mktemp("web")
    store = f"sqlite:///{folder}/meeple.db"
    finished = {}
    for ruleset in RULESETS:
        log = folder / f"{ruleset}.jsonl"
        _meeple(
            "simulate",
            ruleset,
            "--players",
            "2",
            "--seed",
            f"web-{ruleset}",
            "--out",
            str(log),
            cwd=folder,
        )
        _meeple("import", str(log), "--store", store, cwd=folder)
        finished[ruleset] = f"sim-{ruleset}-1"
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    env["MEEPLE_STORE_URL"] = store
    log_path = folder / "server.log"
    with log_path.open("wb") as output:
        server = subprocess.Popen(
            [str(MEEPLE), "serve", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    found = WebServer(f"http://127.0.0.1:{port}", log_path, finished)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                found.get("/health")
                break
            except OSError:
                assert server.poll() is None, log_path.read_text()
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.2)
        # The game index follows the event feed in the background: wait for the imports.
        while len(found.get("/games?status=finished")["games"]) < len(RULESETS):
            assert time.monotonic() < deadline, "the imported games never reached the index"
            time.sleep(0.2)
        yield found
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    subprocess.run(["bash", str(ROOT / "tests" / "ensure-chromium.sh")], check=True, timeout=900)
    executable = shutil.which("chromium")
    assert executable, "chromium is not on PATH (tests/ensure-chromium.sh should have installed it)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def contexts(browser: Any) -> Any:
    """``new()`` opens a page in a fresh browser context with axe-core loaded; each page's
    script errors are collected in ``page.errors``. Every context is closed afterwards."""
    from tests.e2e.test_web_accessibility import AXE

    made: list[Any] = []

    def new() -> Any:
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.add_init_script(path=str(AXE))
        made.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.errors = errors  # type: ignore[attr-defined]
        return page

    yield new
    for context in made:
        context.close()
