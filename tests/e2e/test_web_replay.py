"""Replaying and branching in the browser: the scrubber (keyboard too) walks a finished game
of each ruleset, the table and the score chart follow it, and a branch made at the
scrubber's position opens ready to play. Screenshots of each table at its start, middle and
end go to var/screenshots/."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import RULESETS, WebServer

WAIT_MS = 20_000


def open_game(page: Page, server: WebServer, game_id: str) -> int:
    """Open a game's page; its version once the table shows the latest event."""
    version = server.get(f"/games/{game_id}")["version"]
    page.goto(f"{server.url}/#/games/{game_id}")
    expect(page.locator(".table")).to_have_attribute("data-at", str(version), timeout=WAIT_MS)
    return version


def scrub(page: Page, seq: int) -> None:
    page.locator("#scrubber").fill(str(seq))
    expect(page.locator(".table")).to_have_attribute("data-at", str(seq), timeout=WAIT_MS)


def legend(page: Page) -> list[str]:
    return page.locator(".score-chart .legend-item").all_inner_texts()


def cursor(page: Page) -> str | None:
    return page.locator(".score-chart .chart-cursor").get_attribute("x1")


def a_seat_acts_after(server: WebServer, game_id: str, near: int) -> int:
    """An event near ``near`` after which a seat acts (not an automatic step)."""
    events = server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
    for entry, following in zip(events[near:], events[near + 1 :], strict=False):
        if following["type"] == "action":
            return int(entry["seq"])
    raise AssertionError("no seat acts after the middle")


def settled_version(server: WebServer, game_id: str) -> int:
    """The game's version once no automatic step is due (the service runs them at once)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        summary = server.get(f"/games/{game_id}")
        if not summary["status"]["awaiting_system"]:
            return int(summary["version"])
        assert time.monotonic() < deadline, "an automatic step never ran"
        time.sleep(0.1)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_scrubbing_a_finished_game_moves_its_table_and_its_score_chart(
    ruleset: str, web_server: WebServer, browser: Any, screenshots: Any
) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        game_id = web_server.finished[ruleset]
        summary = web_server.get(f"/games/{game_id}")
        version = open_game(page, web_server, game_id)
        table = page.locator(".table")
        end = table.inner_html()
        assert "could not be drawn" not in end
        table.screenshot(path=str(screenshots / f"replay-{ruleset}-end.png"))
        totals = {s["seat"]: s["total"] for s in summary["result"]["scores"]}
        players = summary["players"]
        end_legend = [f"{players[s]}: {totals[s]}" for s in range(len(players))]
        assert legend(page) == end_legend
        end_cursor = cursor(page)

        # Keyboard: Home jumps to the first event, the arrows step.
        page.locator("h1").click()
        page.keyboard.press("Home")
        expect(table).to_have_attribute("data-at", "1", timeout=WAIT_MS)
        page.keyboard.press("ArrowRight")
        expect(table).to_have_attribute("data-at", "2", timeout=WAIT_MS)
        page.keyboard.press("ArrowLeft")
        expect(table).to_have_attribute("data-at", "1", timeout=WAIT_MS)
        start = table.inner_html()
        table.screenshot(path=str(screenshots / f"replay-{ruleset}-start.png"))
        assert start != end
        start_legend = legend(page)
        assert start_legend != end_legend
        assert cursor(page) != end_cursor
        expect(page.locator(".event-log li.current")).to_have_attribute("data-seq", "1")

        middle_seq = version // 2
        scrub(page, middle_seq)
        middle = table.inner_html()
        table.screenshot(path=str(screenshots / f"replay-{ruleset}-middle.png"))
        assert middle not in (start, end)
        assert cursor(page) not in (end_cursor, None)
        expect(page.locator(".scrub-label")).to_contain_text(f"Event {middle_seq} of {version}")
        # The chart's readout is the public score the timeline notes at that event.
        noted = web_server.get(f"/games/{game_id}/timeline?after={middle_seq - 1}&limit=1")
        middle_scores = noted["events"][0]["scores"]
        if ruleset == "restoration":
            # Restoration notes a running score (the Achievement Points on the table), so
            # its chart moves during the game, not only at the final count.
            assert middle_scores is not None
            assert all(isinstance(score, int) for score in middle_scores)
        if middle_scores is not None and None not in middle_scores:
            middle_legend = [f"{players[s]}: {middle_scores[s]}" for s in range(len(players))]
            assert legend(page) == middle_legend
            if ruleset == "restoration":
                assert middle_legend not in (start_legend, end_legend)
        expect(page.locator(".audit-box .verdict")).to_have_text("✔ The log is sound.")
        assert not errors
    finally:
        context.close()


def test_a_branch_from_the_scrubbers_position_opens_for_its_holder_to_play_and_undo(
    web_server: WebServer, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        source = web_server.finished["gutenberg"]
        version = open_game(page, web_server, source)
        at = a_seat_acts_after(web_server, source, version // 2)
        scrub(page, at)
        expect(page.locator("#branch-here")).to_have_text(f"Branch from event {at}")
        page.click("#branch-here")
        page.wait_for_url(lambda url: source not in url, timeout=WAIT_MS)
        branch = page.url.rsplit("/", 1)[1]
        assert "token" not in page.url and "holder" not in page.url
        # The branch holds the source's first `at` events after its own first one.
        expect(page.locator(".table")).to_have_attribute("data-at", str(at + 1), timeout=WAIT_MS)
        expect(page.locator(".viewer-box")).to_contain_text("You hold this branch")
        expect(page.locator(f'.branch-box a[href="#/games/{source}"]')).to_be_visible()

        play = page.locator("form.play button[type=submit]")
        expect(play).to_be_enabled(timeout=WAIT_MS)
        play.click()
        # The move may bring automatic steps; undo once the page shows where they led.
        settled = settled_version(web_server, branch)
        assert settled >= at + 2
        page.wait_for_function(
            "v => Number(document.querySelector('#scrubber').max) === v",
            arg=settled,
            timeout=WAIT_MS,
        )
        page.click("#undo")
        expect(page.locator(".event-log li").last).to_contain_text("Undone", timeout=WAIT_MS)

        # The source's branch tree lists the new branch.
        open_game(page, web_server, source)
        expect(page.locator(f'.branch-box a[href="#/games/{branch}"]')).to_be_visible()
    finally:
        context.close()
