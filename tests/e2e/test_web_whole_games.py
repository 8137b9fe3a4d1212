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

``make test`` plays Gutenberg, Impression and Impendium (at a round limit of 2); Restoration,
the longest (some 180 actions), is played where ``MEEPLE_WEB_WHOLE_GAMES=all`` is set, as
``make soak`` does (a comma-separated list of rulesets chooses those instead).
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
from playwright.sync_api import Error as PlaywrightError
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
MIDDLE_EVERY = 20
PLAYERS = ["Ann", "Bob"]


#: the games ``make test`` plays; the others wait for MEEPLE_WEB_WHOLE_GAMES (``make soak``)
IN_CI = ("gutenberg", "impression", "impendium")


def selected_games() -> list[Any]:
    """Each ruleset as a test case; one not chosen is skipped, saying how to play it."""
    chosen = os.environ.get("MEEPLE_WEB_WHOLE_GAMES", "").strip()
    if chosen == "all":
        playing = set(GAMES)
    elif chosen:
        playing = set(chosen.split(","))
    else:
        playing = set(IN_CI)
    reason = "a whole game of it is played in `make soak` (MEEPLE_WEB_WHOLE_GAMES=all)"
    return [
        pytest.param(name, marks=() if name in playing else pytest.mark.skip(reason=reason))
        for name in GAMES
    ]


def cpu_seconds() -> float:
    """CPU time used so far by this test process and every process it started that is still
    running (the server, the Playwright driver, chromium's processes): a figure of the work a
    game costs that a busy machine does not inflate as it does the wall time."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        parents[int(entry.name)] = int(fields[1])
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    ours = {os.getpid()}
    grew = True
    while grew:
        found = {pid for pid, parent in parents.items() if parent in ours}
        grew = not found <= ours
        ours |= found
    return sum(used[pid] for pid in ours if pid in used)


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


def settled(page: Page, after: int = 0) -> None:
    """Wait until the page shows the game past event ``after`` and no automatic step is due:
    the table and the status line are at the same version, and the line names no pending
    step (the controls are drawn in the same step as the table)."""
    page.wait_for_function(
        """after => {
            const table = document.querySelector('.table');
            const line = document.querySelector('.status-line');
            if (!table || !line || !(Number(table.dataset.at) > after)) return false;
            const version = /version (\\d+)/.exec(line.textContent);
            return version && version[1] === table.dataset.at
                && !line.textContent.includes('automatic step due');
        }""",
        arg=after,
        timeout=WAIT_MS,
    )


def shown_version(page: Page) -> int:
    return int(page.locator(".table").get_attribute("data-at") or 0)


#: the number of options of the controls' n-th parameter choice (0: there is none), read at once
OPTIONS_OF = "n => document.querySelectorAll('form.play .params select')[n]?.options.length || 0"
#: every option and fixed value the controls show (the words-not-JSON check)
LABELS = """() => [...document.querySelectorAll('form.play option, form.play output')]
    .map(e => e.textContent)"""


def choose_and_play(page: Page, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """Choose the action type and every parameter among the options the controls offer,
    at random, and press Play: the action the form posts (its preview), and the labels the
    controls showed for the type chosen."""
    form = page.locator("form.play")
    count = page.evaluate("() => document.querySelectorAll('#play-type option').length")
    assert count > 0, "the controls offer no action type"
    form.locator("#play-type").select_option(index=rng.randrange(count))
    # Choosing a parameter redraws the ones after it (cascading): walk them in order.
    index = 0
    while options := page.evaluate(OPTIONS_OF, index):
        assert options > 1, "a parameter with one value is shown as a fixed value, not a choice"
        form.locator(".params select").nth(index).select_option(index=rng.randrange(options))
        index += 1
    labels = page.evaluate(LABELS)
    preview = form.locator(".action-preview").inner_text()
    assert preview, "the controls name no action to post"
    form.locator("button[type=submit]").click()
    return dict(json.loads(preview)), labels


@pytest.mark.timeout(900)  # a whole game on a busy machine; no figure here is a verdict
@pytest.mark.parametrize("ruleset", selected_games())
def test_a_whole_game_is_played_with_the_page_controls_and_replayed(
    ruleset: str, server: Server, browser: Any, screenshots: Path
) -> None:
    started = time.monotonic()
    cpu_before = cpu_seconds()
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
        waited = chose = 0.0  # seconds waiting for the pages, and choosing with the controls
        while True:
            summary = server.call(f"/games/{game_id}")
            if summary["status"]["finished"]:
                break
            assert len(played) < MAX_ACTIONS, f"{ruleset} has not ended after {MAX_ACTIONS} actions"
            seat = summary["status"]["to_act"][0]
            page = pages[seat]
            mark = time.monotonic()
            settled(page, summary["version"] - 1)
            waited += time.monotonic() - mark
            mark = time.monotonic()
            before = shown_version(page)
            action, labels = choose_and_play(page, rng)
            played.append(action)
            raw_json += [text for text in labels if re.search(r"[\[{\"]", text)]
            chose += time.monotonic() - mark
            assert not problems, problems
            mark = time.monotonic()
            try:
                settled(page, before)
            except PlaywrightError as error:
                raise AssertionError(f"the move {action} never showed: {problems}") from error
            waited += time.monotonic() - mark
            if len(played) % MIDDLE_EVERY == 0:
                kept.append((len(played), pages[0].locator(".table").screenshot()))
            assert not problems, problems

        # The end: both seats' pages show the finished game.
        version = server.call(f"/games/{game_id}")["version"]
        for page in pages:
            settled(page, version - 1)
            expect(page.locator(".status-line")).to_contain_text("finished")
            expect(page.locator(".play-box")).to_contain_text("The game is over.")
        cpu = cpu_seconds() - cpu_before  # before the contexts close and their processes go
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
        # One heading says so on screen (the table's caption is for screen readers).
        titles = page.locator(".table").get_by_text(re.compile(r"^Final scor(es|ing)$"))
        shown = "all => all.filter((e) => e.getBoundingClientRect().width > 1).length"
        assert titles.evaluate_all(shown) == 1
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
    record = {
        "ruleset": ruleset,
        "actions": len(played),
        "events": version,
        "seconds": round(seconds, 1),
        "cpu_seconds_playing": round(cpu, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "waiting_for_pages": round(waited, 1),
        "choosing": round(chose, 1),
    }
    with (screenshots / "whole-games.jsonl").open("a") as out:
        out.write(json.dumps(record) + "\n")
    print(json.dumps(record))
    log = server.log.read_text()
    for token in tokens:
        assert token not in log, "a seat token reached the server's log"
