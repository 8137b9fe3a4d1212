"""The web app is a client application (docs/web.md, "My games"): a player creates a game in
the lobby, closes the tab, opens the site again in a new tab and finds the game under "My
games" with their seat, and plays it from there; the device's key lives in localStorage,
never in a URL, and "Forget this device" revokes it. Screenshots in var/screenshots/:
``my-games.png``, ``my-games-seat.png``."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from playwright.sync_api import expect

from tests.e2e.conftest import WebServer
from tests.e2e.test_web_accessibility import violations

WAIT_MS = 20_000


def status_with_key(server: WebServer, path: str, key: str) -> int:
    request = urllib.request.Request(server.url + path, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_a_game_created_in_one_tab_is_found_under_my_games_in_a_new_tab(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    first = contexts()
    first.goto(web_server.url + "/")
    expect(first.locator("#my-games-title")).to_have_text("My games")
    first.select_option("#c-ruleset", "restoration")
    first.select_option("#c-count", "2")
    first.fill("#c-seat-0", "Ann")
    first.fill("#c-seat-1", "Bob")
    first.click("text=Create the game")
    expect(first.locator(".created h3")).to_contain_text("created", timeout=WAIT_MS)
    game_id = first.locator(".created h3").inner_text().split()[1]
    key = first.evaluate("() => localStorage.getItem('meeple.app.key')")
    assert key and key.startswith("mla_")
    context = first.context
    first.close()  # the tab, and its sessionStorage, are gone

    again = context.new_page()
    again.goto(web_server.url + "/")
    row = again.locator(f'.my-games-list li[data-game="{game_id}"]')
    expect(row).to_be_visible(timeout=WAIT_MS)
    expect(row).to_contain_text("your turn")
    expect(row.locator("a.button")).to_have_count(2)  # both named seats are this device's
    assert violations(again) == []
    again.locator("section.my-games").screenshot(path=str(screenshots / "my-games.png"))

    row.locator('a.button[data-seat="0"]').click()
    expect(again.locator(".seats-box .badge-you")).to_have_text("you", timeout=WAIT_MS)
    expect(again.locator("main")).to_contain_text("this device holds the seat")
    expect(again.locator("form.play button[type=submit]")).to_be_enabled(timeout=WAIT_MS)
    assert key not in again.url and "token" not in again.url
    again.screenshot(path=str(screenshots / "my-games-seat.png"))
    # The seat plays with the device's key: the page's move reaches the log.
    before = web_server.get(f"/games/{game_id}")["version"]
    again.click("form.play button[type=submit]")
    expect(again.locator(".notice")).to_contain_text("Played", timeout=WAIT_MS)
    assert web_server.get(f"/games/{game_id}")["version"] > before
    events = web_server.get(f"/games/{game_id}/events?after={before}")["events"]
    assert any(event["actor"] == {"seat": 0} for event in events)

    # Forget this device: the key is revoked and gone from the browser.
    again.goto(web_server.url + "/")
    again.on("dialog", lambda dialog: dialog.accept())
    again.click("#forget-device")
    expect(again.locator("section.my-games")).to_contain_text("Games you create or join")
    assert again.evaluate("() => localStorage.getItem('meeple.app.key')") is None
    assert status_with_key(web_server, "/apps/me", key) == 401
