"""The web app's pages pass axe-core (vendored: tests/e2e/vendor/axe-core) with no serious
or critical violation: the lobby, a seat's live table and a finished game of each ruleset."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import RULESETS, WebServer

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
WAIT_MS = 20_000
BLOCKING = ("serious", "critical")


def test_the_vendored_axe_core_is_the_pinned_release() -> None:
    assert hashlib.sha256(AXE.read_bytes()).hexdigest() == AXE_SHA256
    assert (AXE.parent / "LICENSE").read_text().startswith("Mozilla Public License")


def violations(page: Page) -> list[dict[str, Any]]:
    found = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        where: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))"""
    )
    return [v for v in found if v["impact"] in BLOCKING]


@pytest.fixture
def page(browser: Any) -> Any:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    # An init script runs before the page's own and is not subject to its CSP.
    context.add_init_script(path=str(AXE))
    yield context.new_page()
    context.close()


def test_the_lobby_has_no_serious_accessibility_violation(
    page: Page, web_server: WebServer
) -> None:
    page.goto(web_server.url + "/")
    expect(page.locator("table.games tbody tr").first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#c-seat-1")).to_be_visible()
    assert violations(page) == []


def test_a_seats_live_table_has_no_serious_accessibility_violation(
    page: Page, web_server: WebServer
) -> None:
    page.goto(web_server.url + "/")
    page.select_option("#c-ruleset", "restoration")
    page.click("text=Create the game")
    page.click(".seat-links a.button >> nth=0")
    expect(page.locator("form.play button[type=submit]")).to_be_enabled(timeout=WAIT_MS)
    expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
    assert violations(page) == []


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_finished_games_page_has_no_serious_accessibility_violation(
    ruleset: str, page: Page, web_server: WebServer
) -> None:
    game_id = web_server.finished[ruleset]
    version = web_server.get(f"/games/{game_id}")["version"]
    page.goto(f"{web_server.url}/#/games/{game_id}")
    expect(page.locator(".table")).to_have_attribute("data-at", str(version), timeout=WAIT_MS)
    expect(page.locator(".audit-box .verdict")).to_be_visible(timeout=WAIT_MS)
    found = violations(page)
    assert found == [], json.dumps(found, indent=1)
