"""A whole game of each ruleset played in the browser, from the first action to the end, with
the page's controls alone: two browser contexts (one per seat, its token in the URL
fragment) choose the action type and each parameter among what the controls offer, with a
seeded random generator, and press Play. Then the finished game's replay shows the final
scores and the audit's verdict.

The game's seed is chosen at creation (with the admin key, which never reaches a browser) and
the choices are drawn from a seeded generator, so a run plays the same game every time.
Screenshots of each table at its start, middle and end go to
var/screenshots/<ruleset>-play-{start,middle,end}.png; the actions and the wall time of each
game go to var/screenshots/whole-games.jsonl (a record, never a verdict).

Every game runs in CI; ``MEEPLE_WEB_WHOLE_GAMES`` lists the rulesets to play when set (``make
soak`` plays them all).
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import MEEPLE, free_port

#: how long a page may take to show what the stream brought (a wait, not a timing verdict)
WAIT_MS = 20_000
#: ruleset -> the options of its game: Impendium's competitive game may run long, and its
#: round limit (a rule option of the game) ends it after two whole rounds.
GAMES: dict[str, dict[str, Any]] = {
    "gutenberg": {},
    "restoration": {},
    "impression": {},
    "impendium": {"round_limit": 2},
}
#: a game that has not ended after this many actions is stuck: the test says so
MAX_ACTIONS = 800
#: a screenshot of the table is kept every this many actions, to pick the middle one at the end
MIDDLE_EVERY = 10
PLAYERS = ["Ann", "Bob"]


def selected_games() -> list[str]:
    chosen = os.environ.get("MEEPLE_WEB_WHOLE_GAMES", "").strip()
    if not chosen or chosen == "all":
        return list(GAMES)
    return [name for name in GAMES if name in chosen.split(",")]


@dataclass
class Server:
    url: str
    log: Path
    admin_key: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def call(self, path: str, body: Any = None, admin: bool = False) -> Any:
        headers = {"Content-Type": "application/json"}
        if admin:
            headers["Authorization"] = f"Bearer {self.admin_key}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A ``meeple serve`` of its own, with an admin key so a test game's seed is fixed."""
    folder = tmp_path_factory.mktemp("whole-games")
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("MEEPLE_")}
    env["MEEPLE_STORE_URL"] = f"sqlite:///{folder}/meeple.db"
    env["MEEPLE_ADMIN_KEY"] = secrets.token_urlsafe(24)
    log = folder / "server.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(MEEPLE), "serve", "--port", str(port)],
            cwd=folder,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    found = Server(f"http://127.0.0.1:{port}", log, env["MEEPLE_ADMIN_KEY"])
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                found.call("/health")
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.2)
        yield found
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)


def settled(page: Page) -> None:
    """Wait until the page shows the game's latest state and no automatic step is due: the
    table and the status line are at the same version, and the line names no pending step."""
    page.wait_for_function(
        """() => {
            const table = document.querySelector('.table');
            const line = document.querySelector('.status-line');
            if (!table || !line || !table.dataset.at) return false;
            const version = /version (\\d+)/.exec(line.textContent);
            return version && version[1] === table.dataset.at
                && !line.textContent.includes('automatic step due');
        }""",
        timeout=WAIT_MS,
    )


def shown_version(page: Page) -> int:
    return int(page.locator(".table").get_attribute("data-at") or 0)


def wait_for_version(page: Page, version: int) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('.table')?.dataset.at) >= v",
        arg=version,
        timeout=WAIT_MS,
    )


def choose_and_play(page: Page, rng: random.Random) -> dict[str, Any]:
    """Choose the action type and every parameter among the options the controls offer,
    at random, and press Play; the action the form posts (its preview)."""
    form = page.locator("form.play")
    expect(form).to_be_visible(timeout=WAIT_MS)
    types = form.locator("#play-type option")
    count = types.count()
    assert count > 0, "the controls offer no action type"
    form.locator("#play-type").select_option(index=rng.randrange(count))
    # Choosing a parameter redraws the ones after it (cascading): walk them in order.
    index = 0
    while True:
        selects = form.locator(".params select")
        if index >= selects.count():
            break
        select = selects.nth(index)
        options = select.locator("option").count()
        assert options > 1, "a parameter with one value is shown as a fixed value, not a choice"
        select.select_option(index=rng.randrange(options))
        index += 1
    preview = form.locator(".action-preview").inner_text()
    assert preview, "the controls name no action to post"
    play = form.locator("button[type=submit]")
    expect(play).to_be_enabled()
    play.click()
    return dict(json.loads(preview))


def control_labels(page: Page) -> list[str]:
    """Every option and fixed value the controls show, for the words-not-JSON check."""
    return page.locator("form.play option, form.play output").all_inner_texts()


@pytest.mark.parametrize("ruleset", selected_games())
def test_a_whole_game_is_played_with_the_page_controls_and_replayed(
    ruleset: str, server: Server, browser: Any, screenshots: Path
) -> None:
    started = time.monotonic()
    options = GAMES[ruleset]
    created = server.call(
        "/games",
        {"ruleset": ruleset, "players": PLAYERS, "options": options, "seed": f"whole-{ruleset}"},
        admin=True,
    )
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    rng = random.Random(f"whole-game-{ruleset}")
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in PLAYERS]
    pages = [context.new_page() for context in contexts]
    problems: list[str] = []
    for seat, page in enumerate(pages):
        page.on("pageerror", lambda error, seat=seat: problems.append(f"seat {seat}: {error}"))

        def answered(response: Any, seat: int = seat) -> None:
            if response.request.method == "POST" and response.status >= 400:
                problems.append(f"seat {seat}: {response.status} {response.url}")

        page.on("response", answered)
    try:
        for seat, page in enumerate(pages):
            page.goto(f"{server.url}/#/games/{game_id}?token={tokens[seat]}")
            expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
            assert "token" not in page.url
        settled(pages[0])
        pages[0].locator(".table").screenshot(path=str(screenshots / f"{ruleset}-play-start.png"))

        played: list[dict[str, Any]] = []
        kept: list[tuple[int, bytes]] = []  # (actions played, a table screenshot)
        raw_json: list[str] = []
        while True:
            summary = server.call(f"/games/{game_id}")
            if summary["status"]["finished"]:
                break
            assert len(played) < MAX_ACTIONS, f"{ruleset} has not ended after {MAX_ACTIONS} actions"
            seat = summary["status"]["to_act"][0]
            page = pages[seat]
            wait_for_version(page, summary["version"])
            settled(page)
            raw_json += [text for text in control_labels(page) if re.search(r"[\[{\"]", text)]
            before = shown_version(page)
            played.append(choose_and_play(page, rng))
            assert not problems, problems
            wait_for_version(page, before + 1)
            settled(page)
            if len(played) % MIDDLE_EVERY == 0:
                kept.append((len(played), pages[0].locator(".table").screenshot()))
            assert not problems, problems

        # The end: both seats' pages show the finished game.
        version = server.call(f"/games/{game_id}")["version"]
        for page in pages:
            wait_for_version(page, version)
            expect(page.locator(".status-line")).to_contain_text("finished")
            expect(page.locator(".play-box")).to_contain_text("The game is over.")
        pages[0].locator(".table").screenshot(path=str(screenshots / f"{ruleset}-play-end.png"))
        if kept:
            middle = min(kept, key=lambda entry: abs(entry[0] - len(played) / 2))
            (screenshots / f"{ruleset}-play-middle.png").write_bytes(middle[1])
        assert not raw_json, f"the controls show JSON where words belong: {sorted(set(raw_json))}"
        assert not problems, problems
    finally:
        for context in contexts:
            context.close()

    # The replay of the finished game, as anyone sees it.
    result = server.call(f"/games/{game_id}")["result"]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.on("pageerror", lambda error: problems.append(f"replay: {error}"))
    try:
        page.goto(f"{server.url}/#/games/{game_id}")
        expect(page.locator(".table")).to_have_attribute("data-at", str(version), timeout=WAIT_MS)
        totals = {entry["seat"]: entry["total"] for entry in result["scores"]}
        legend = [f"{name}: {totals[seat]}" for seat, name in enumerate(PLAYERS)]
        expect(page.locator(".score-chart .legend-item")).to_have_text(legend)
        final = page.locator(".table").get_by_role("table", name="Final scores")
        expect(final).to_be_visible()
        for seat, name in enumerate(PLAYERS):
            row = final.locator("tbody tr", has=page.locator("th", has_text=name))
            expect(row.locator("td.total")).to_have_text(str(totals[seat]))
        expect(page.locator(".audit-box .verdict")).to_have_text("✔ The log is sound.")
        expect(page.locator(".audit-box")).to_contain_text("revealed and matching its commitment")
        # The scrubber walks back to the first event and forth to the end.
        page.locator("h1").click()
        page.keyboard.press("Home")
        expect(page.locator(".table")).to_have_attribute("data-at", "1", timeout=WAIT_MS)
        page.keyboard.press("End")
        expect(page.locator(".table")).to_have_attribute("data-at", str(version), timeout=WAIT_MS)
        assert not problems, problems
    finally:
        context.close()

    seconds = time.monotonic() - started
    record = {"ruleset": ruleset, "actions": len(played), "events": version, "seconds": seconds}
    with (screenshots / "whole-games.jsonl").open("a") as out:
        out.write(json.dumps(record) + "\n")
    print(f"{ruleset}: {len(played)} actions, {version} events, {seconds:.1f} s")
    log = server.log.read_text()
    for token in tokens:
        assert token not in log, "a seat token reached the server's log"
