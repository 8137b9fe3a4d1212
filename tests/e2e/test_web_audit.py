"""The game page's audit while a game is played: the audit folds the whole log again on the
server, so a page asks for it at most once every AUDIT_INTERVAL_MS while events keep
arriving, and the check it shows catches up with the last event when that time is up.

The page's clock is Playwright's fake one, paused from the start: no time passes in the page
unless the test moves it, so the count of audit requests depends on the page's logic alone,
not on how fast the machine is."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import expect

from tests.e2e.conftest import WebServer
from tests.e2e.test_web_play import seen_up_to
from tests.e2e.test_web_seat_controls import call

WAIT_MS = 20_000
#: service/http/web/static/app/game.js
AUDIT_INTERVAL_MS = 5000
MOVES = 4
#: the page's fake clock at its start (ms since the epoch)
START = 1_800_000_000_000


def play_one(server: WebServer, game_id: str, tokens: list[str]) -> int:
    """The first legal action of the seat to act, posted through the API; the version after
    it once any automatic step it made due has run."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        status, summary = call(server, f"/games/{game_id}")
        assert status == 200, summary
        if not summary["status"]["awaiting_system"]:
            break
        assert time.monotonic() < deadline, "an automatic step never ran"
        time.sleep(0.05)
    seat = summary["status"]["to_act"][0]
    path = f"/games/{game_id}/legal-actions"
    status, legal = call(server, path, token=tokens[seat])
    assert status == 200 and legal["actions"], legal
    status, posted = call(server, f"/games/{game_id}/actions", legal["actions"][0], tokens[seat])
    assert status == 201, posted
    return int(posted["version"])


def test_a_page_audits_a_game_in_play_at_most_once_an_interval_and_catches_up(
    web_server: WebServer, browser: Any, screenshots: Any
) -> None:
    status, created = call(
        web_server, "/games", {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}
    )
    assert status == 201, created
    game_id = created["id"]
    tokens = [seat["token"] for seat in created["seats"]]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    # From the page's first script on, no time passes in it but what the test gives it.
    context.clock.install(time=START)
    context.clock.pause_at(START + 1000)
    page = context.new_page()
    audits: list[str] = []
    page.on("request", lambda request: "/audit" in request.url and audits.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    box = page.locator(".audit-box")
    try:
        page.goto(f"{web_server.url}/#/games/{game_id}")
        expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
        version = web_server.get(f"/games/{game_id}")["version"]
        expect(box).to_contain_text(f"the hash chain of {version} events holds", timeout=WAIT_MS)
        assert len(audits) == 1, audits

        for _ in range(MOVES):
            version = play_one(web_server, game_id, tokens)
            seen_up_to(page, version)
        # Every move reached the page, and none asked for the audit: the first check is
        # younger than the interval. The box still shows that check.
        assert len(audits) == 1, audits
        expect(box).to_contain_text("the hash chain of")
        expect(box).not_to_contain_text(f"the hash chain of {version} events holds")

        # When the interval is up, one audit covers every move made meanwhile.
        page.clock.run_for(AUDIT_INTERVAL_MS)
        expect(box).to_contain_text(f"the hash chain of {version} events holds", timeout=WAIT_MS)
        assert len(audits) == 2, audits
        expect(page.locator(".audit-box .verdict")).to_have_text("✔ The log is sound.")

        # One more move, an interval after the last check: audited once more, no sooner.
        version = play_one(web_server, game_id, tokens)
        seen_up_to(page, version)
        assert len(audits) == 2, audits
        page.clock.run_for(AUDIT_INTERVAL_MS)
        expect(box).to_contain_text(f"the hash chain of {version} events holds", timeout=WAIT_MS)
        assert len(audits) == 3, audits
        page.get_by_role("region", name="Audit").screenshot(
            path=str(screenshots / "audit-in-play.png")
        )
        assert errors == []
    finally:
        context.close()
