"""A whole game of each ruleset played in the browser, from the first action to the end, with
the page's controls alone: two browser contexts (one per seat, its token in the URL
fragment) choose the action type and each parameter among what the controls offer, with a
seeded random generator, and press Play. Then the finished game's replay shows the final
scores and the audit's verdict.

The chooser draws an action type in proportion to the number of actions the controls list
for it (so each listed action is about as likely as in the sim suite's random games, which
pick among all legal actions), then each parameter at random. Drawn uniformly, the types
with one action (Impendium's ``pass`` and ``end_turn``) come up so often that an Impendium
game at its default options hardly moves: one played that way straight on the rules ended
after 2,063 actions and 162 rounds, and one in the browser had not ended after 185 rounds.
Drawn by count, three games on the rules ended in 800-1,300 actions, and the browser's in
about 2,000.

The game's seed is chosen at creation (with the admin key, which never reaches a browser) and
the choices are drawn from a seeded generator, so a run plays the same game every time.
Screenshots of each table at its start, middle and end go to
var/screenshots/<case>-play-{start,middle,end}.png; the actions and the wall time of each
game go to var/screenshots/whole-games.jsonl (a record, never a verdict).

``make test`` plays Gutenberg, Impression and Impendium at a round limit of 2; Restoration
(some 180 actions) and Impendium at its default options (``impendium-full``: to its own
end, 25 victory points or a galaxy of each colour; some 2,000 actions and 20-odd minutes)
are played where ``MEEPLE_WEB_WHOLE_GAMES=all`` is set, as ``make soak`` does (a
comma-separated list of cases chooses those instead).
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


@dataclass(frozen=True)
class Case:
    """One whole game: its ruleset and options, and the actions and seconds it may take
    before the test calls it stuck (bounds, not timing verdicts)."""

    ruleset: str
    options: dict[str, Any] = field(default_factory=dict)
    max_actions: int = 800
    timeout: int = 900


#: case -> its game. Impendium's competitive game runs long: ``make test`` plays it at a
#: round limit (a rule option of the game) that ends it after two whole rounds, ``make soak``
#: to its own end as well.
GAMES: dict[str, Case] = {
    "gutenberg": Case("gutenberg"),
    "restoration": Case("restoration"),
    "impression": Case("impression"),
    "impendium": Case("impendium", {"round_limit": 2}),
    "impendium-full": Case("impendium", max_actions=6_000, timeout=3 * 3600),
}
#: a screenshot of the table is kept every this many actions, to pick the middle one at the end
MIDDLE_EVERY = 20
PLAYERS = ["Ann", "Bob"]


#: the games ``make test`` plays; the others wait for MEEPLE_WEB_WHOLE_GAMES (``make soak``)
IN_CI = ("gutenberg", "impression", "impendium")


def selected_games() -> list[Any]:
    """Each case as a test case; one not chosen is skipped, saying how to play it."""
    chosen = os.environ.get("MEEPLE_WEB_WHOLE_GAMES", "").strip()
    if chosen == "all":
        playing = set(GAMES)
    elif chosen:
        playing = set(chosen.split(","))
    else:
        playing = set(IN_CI)
    reason = "a whole game of it is played in `make soak` (MEEPLE_WEB_WHOLE_GAMES=all)"
    return [
        pytest.param(
            name,
            marks=[pytest.mark.timeout(case.timeout)]
            + ([] if name in playing else [pytest.mark.skip(reason=reason)]),
        )
        for name, case in GAMES.items()
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


#: how many actions each action type the controls offer lists: its option reads "Move (12)"
TYPE_COUNTS = """() => [...document.querySelectorAll('#play-type option')]
    .map(o => Number(/\\((\\d+)\\)$/.exec(o.textContent)[1]))"""
#: the number of options of the controls' n-th parameter choice (0: there is none), read at once
OPTIONS_OF = "n => document.querySelectorAll('form.play .params select')[n]?.options.length || 0"
#: every option and fixed value the controls show (the words-not-JSON check)
LABELS = """() => [...document.querySelectorAll('form.play option, form.play output')]
    .map(e => e.textContent)"""


def choose_and_play(page: Page, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """Choose the action type (in proportion to its actions) and every parameter among the
    options the controls offer, at random, and press Play: the action the form posts (its
    preview), and the labels the controls showed for the type chosen."""
    form = page.locator("form.play")
    counts = page.evaluate(TYPE_COUNTS)
    assert counts and min(counts) > 0, "the controls offer no action type"
    chosen = rng.choices(range(len(counts)), weights=counts)[0]
    form.locator("#play-type").select_option(index=chosen)
    # Choosing a parameter redraws the ones after it (cascading): walk them in order.
    index = 0
    while options := page.evaluate(OPTIONS_OF, index):
        assert options > 1, "a parameter with one value is shown as a fixed value, not a choice"
        form.locator(".params select").nth(index).select_option(index=rng.randrange(options))
        index += 1
    labels = page.evaluate(LABELS)
    assert form.locator(".action-preview").inner_text(), "the controls name no action to post"
    posted = form.get_attribute("data-action")
    assert posted, "the form holds no action to post"
    form.locator("button[type=submit]").click()
    return dict(json.loads(posted)), labels


@pytest.mark.parametrize("name", selected_games())
def test_a_whole_game_is_played_with_the_page_controls_and_replayed(
    name: str, server: Server, browser: Any, screenshots: Path
) -> None:
    started = time.monotonic()
    cpu_before = cpu_seconds()
    case = GAMES[name]
    created = server.call(
        "/games",
        {
            "ruleset": case.ruleset,
            "players": PLAYERS,
            "options": case.options,
            "seed": f"whole-{name}",
        },
        admin=True,
    )
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    rng = random.Random(f"whole-game-{name}")
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
        pages[0].locator(".table").screenshot(path=str(screenshots / f"{name}-play-start.png"))

        played: list[dict[str, Any]] = []
        kept: list[tuple[int, bytes]] = []  # (actions played, a table screenshot)
        raw_json: list[str] = []
        waited = chose = 0.0  # seconds waiting for the pages, and choosing with the controls
        while True:
            summary = server.call(f"/games/{game_id}")
            if summary["status"]["finished"]:
                break
            assert len(played) < case.max_actions, (
                f"{name} has not ended after {len(played)} actions"
            )
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
                settled(pages[0], shown_version(page) - 1)  # the other seat's page too
                kept.append((len(played), pages[0].locator(".table").screenshot()))
            assert not problems, problems

        # The end: both seats' pages show the finished game.
        version = server.call(f"/games/{game_id}")["version"]
        for page in pages:
            settled(page, version - 1)
            expect(page.locator(".status-line")).to_contain_text(" won")
            expect(page.locator(".play-box")).to_contain_text("The game is over.")
        cpu = cpu_seconds() - cpu_before  # before the contexts close and their processes go
        pages[0].locator(".table").screenshot(path=str(screenshots / f"{name}-play-end.png"))
        if kept:
            middle = min(kept, key=lambda entry: abs(entry[0] - len(played) / 2))
            (screenshots / f"{name}-play-middle.png").write_bytes(middle[1])
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
        legend = [f"{player}: {totals[seat]}" for seat, player in enumerate(PLAYERS)]
        expect(page.locator(".score-chart .legend-item")).to_have_text(legend)
        final = page.locator(".table").get_by_role("table", name="Final scores")
        expect(final).to_be_visible()
        # One heading says so on screen (the table's caption is for screen readers).
        titles = page.locator(".table").get_by_text(re.compile(r"^Final scor(es|ing)$"))
        shown = "all => all.filter((e) => e.getBoundingClientRect().width > 1).length"
        assert titles.evaluate_all(shown) == 1
        for seat, player in enumerate(PLAYERS):
            row = final.locator("tbody tr", has=page.locator("th", has_text=player))
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
        "case": name,
        "ruleset": case.ruleset,
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
