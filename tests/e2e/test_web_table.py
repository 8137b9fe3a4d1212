"""A table players want (issue 32): the layout from a phone to a desktop, undo offered only
when the API says it would succeed, the opponent's last move where the player looks, a turn
alert, choices named as the table names them and made on the board. Screenshots of every
page at 1280x800 and 390x844 go to var/screenshots/table-*.png."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.conftest import RULESETS, WebServer
from tests.e2e.test_web_accessibility import AXE, violations
from tests.e2e.test_web_play import create_restoration_game, seen_up_to

WAIT_MS = 20_000
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.fixture
def sized(browser: Any) -> Any:
    """``sized(name)`` opens a page at one of SIZES with axe-core loaded; script errors are
    collected in ``page.errors``."""
    made: list[Any] = []

    def new(size: str) -> Page:
        width, height = SIZES[size]
        context = browser.new_context(viewport={"width": width, "height": height})
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


def sideways_overflow(page: Page) -> int:
    """How many pixels the page scrolls sideways (0: none)."""
    return int(page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth"))


def overlapping_panels(page: Page) -> list[str]:
    """Pairs of the page's main parts whose boxes overlap (the table, the side panels)."""
    return list(
        page.evaluate(
            """() => {
              const parts = [...document.querySelectorAll('.table-area, .side > .panel')]
                .filter(n => n.offsetParent !== null);
              const found = [];
              parts.forEach((a, i) => parts.slice(i + 1).forEach(b => {
                if (a.contains(b) || b.contains(a)) return;
                const r = a.getBoundingClientRect(), s = b.getBoundingClientRect();
                if (r.left < s.right - 1 && s.left < r.right - 1
                    && r.top < s.bottom - 1 && s.top < r.bottom - 1)
                  found.push(`${a.className} / ${b.className}`);
              }));
              return found;
            }"""
        )
    )


def play_panel_in_view(page: Page) -> bool:
    """The Play panel's title is on the screen now."""
    return bool(
        page.evaluate(
            """() => { const r = document.querySelector('#play-title').getBoundingClientRect();
                       return r.top >= 0 && r.bottom <= innerHeight; }"""
        )
    )


@pytest.mark.parametrize("size", SIZES)
def test_the_lobby_fits_the_screen(
    size: str, sized: Any, web_server: WebServer, screenshots: Any
) -> None:
    page = sized(size)
    page.goto(web_server.url + "/")
    expect(page.locator("table.games tbody tr").first).to_be_visible(timeout=WAIT_MS)
    page.screenshot(path=str(screenshots / f"table-lobby-{size}.png"), full_page=True)
    assert sideways_overflow(page) == 0
    assert violations(page) == []
    assert page.errors == []


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_finished_games_page_fits_the_screen(
    ruleset: str, size: str, sized: Any, web_server: WebServer, screenshots: Any
) -> None:
    page = sized(size)
    game_id = web_server.finished[ruleset]
    version = web_server.get(f"/games/{game_id}")["version"]
    page.goto(f"{web_server.url}/#/games/{game_id}")
    expect(page.locator(".table")).to_have_attribute("data-at", str(version), timeout=WAIT_MS)
    page.screenshot(path=str(screenshots / f"table-{ruleset}-finished-{size}.png"))
    page.screenshot(
        path=str(screenshots / f"table-{ruleset}-finished-{size}-full.png"), full_page=True
    )
    assert sideways_overflow(page) == 0
    assert overlapping_panels(page) == []
    assert play_panel_in_view(page)
    # A desktop's side column stays in view as the table scrolls by.
    page.evaluate(
        "window.scrollTo(0, document.querySelector('.table').getBoundingClientRect().bottom"
        " + window.scrollY - innerHeight)"
    )
    if size == "desktop":
        assert play_panel_in_view(page)
    assert violations(page) == []
    assert page.errors == []


def seat_get(server: WebServer, path: str, token: str) -> Any:
    request = urllib.request.Request(
        server.url + path, headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def in_first_screen(page: Page, selector: str) -> bool:
    """The element is on the screen as the page stands, scrolled to its top."""
    page.evaluate("window.scrollTo(0, 0)")
    return bool(
        page.evaluate(
            """s => { const n = document.querySelector(s); if (!n) return false;
                      const r = n.getBoundingClientRect();
                      return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }""",
            selector,
        )
    )


def test_two_seats_play_on_a_desktop_and_a_phone_with_turn_alerts_last_moves_and_honest_undo(
    web_server: WebServer, sized: Any, screenshots: Any
) -> None:
    ann, bob = sized("desktop"), sized("phone")
    game_id, links = create_restoration_game(ann, web_server)
    tokens = [link.split("token=")[1] for link in links]
    ann.goto(links[0])
    bob.goto(links[1])
    pages = {0: ann, 1: bob}
    for page in pages.values():
        expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
    undone = offered_and_refused = 0
    for _ in range(10):
        summary = web_server.get(f"/games/{game_id}")
        seat = summary["status"]["to_act"][0]
        version = summary["version"]
        page, other = pages[seat], pages[1 - seat]
        for each in pages.values():
            seen_up_to(each, version)
        # The title and the icon say whose turn it is (both seats' in a simultaneous phase).
        for number, each in pages.items():
            if number in summary["status"]["to_act"]:
                expect(each).to_have_title(re.compile(r"^▶ Your turn"), timeout=WAIT_MS)
                assert each.locator('link[rel="icon"]').get_attribute("data-turn") == "yes"
            else:
                expect(each).not_to_have_title(re.compile("Your turn"), timeout=WAIT_MS)
                assert each.locator('link[rel="icon"]').get_attribute("data-turn") == "no"
        # Undo is enabled exactly when the service says it would take it.
        for number, each in pages.items():
            offer = seat_get(
                web_server, f"/games/{game_id}/legal-actions?list=false", tokens[number]
            )
            button = each.locator("#undo")
            if offer["undo"]["allowed"]:
                expect(button).to_be_enabled(timeout=WAIT_MS)
            else:
                expect(button).to_be_disabled(timeout=WAIT_MS)
                offered_and_refused += 1
        play = page.locator("form.play button[type=submit]")
        expect(play).to_be_enabled(timeout=WAIT_MS)
        play.click()
        seen_up_to(other, version + 1)
        mover = summary["players"][seat]
        entry = web_server.get(f"/games/{game_id}/timeline?after={version}")["events"][0]
        # The other seat sees the move in its first screen, and marked on the table.
        expect(other.locator(".last-move")).to_contain_text(entry["summary"], timeout=WAIT_MS)
        assert entry["summary"].startswith(mover) or mover in entry["summary"]
        assert in_first_screen(other, ".last-move")
        expect(other.locator(f'.table [data-seat="{seat}"].last-mover').first).to_be_visible()
        offer = seat_get(web_server, f"/games/{game_id}/legal-actions?list=false", tokens[seat])
        if offer["undo"]["allowed"] and not undone:
            settled = web_server.get(f"/games/{game_id}")["version"]
            seen_up_to(page, settled)
            expect(page.locator("#undo")).to_be_enabled(timeout=WAIT_MS)
            page.locator("#undo").click()
            seen_up_to(other, settled + 1)
            expect(other.locator(".last-move")).to_contain_text("Undone", timeout=WAIT_MS)
            undone += 1
    assert undone == 1, "no move could be undone"
    assert offered_and_refused, "undo was never refused, so its button was never checked disabled"
    ann.screenshot(path=str(screenshots / "table-restoration-live-desktop.png"))
    bob.screenshot(path=str(screenshots / "table-restoration-live-phone.png"))
    for page in pages.values():
        assert sideways_overflow(page) == 0
        assert violations(page) == []
        assert page.errors == []


def post_json(server: WebServer, path: str, body: Any) -> Any:
    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.mark.parametrize("size", SIZES)
def test_an_impression_seat_chooses_a_shop_on_the_city_named_as_the_city_names_it(
    size: str, web_server: WebServer, sized: Any, screenshots: Any
) -> None:
    created = post_json(web_server, "/games", {"ruleset": "impression", "players": ["Ann", "Bob"]})
    game_id = created["id"]
    to_act = web_server.get(f"/games/{game_id}")["status"]["to_act"][0]
    token = created["seats"][to_act]["token"]
    legal = seat_get(web_server, f"/games/{game_id}/legal-actions", token)
    assert legal["names"], "the API names no shop"
    page = sized(size)
    page.goto(f"{web_server.url}/#/games/{game_id}?token={token}")
    expect(page.locator("form.play button[type=submit]")).to_be_enabled(timeout=WAIT_MS)
    table_text = page.locator(".table").inner_text()
    # Every option of the form whose value the API names is labelled by that name, and the
    # table shows it.
    options = page.locator("form.play .params select option").all_inner_texts()
    assert options
    for option in options:
        assert option in legal["names"].values(), f"{option!r} is not a name the table shows"
        assert option in table_text
    # A shop tapped on the city fills the form; Play plays it.
    shop = page.locator(".ip-shop.choosable").nth(2)
    shop_id = shop.get_attribute("data-shop")
    shop.click()
    chosen = page.locator("#play-shop option:checked")
    expect(chosen).to_have_text(legal["names"][shop_id])
    page.screenshot(path=str(screenshots / f"table-impression-choose-{size}.png"))
    version = web_server.get(f"/games/{game_id}")["version"]
    page.locator("form.play button[type=submit]").click()
    seen_up_to(page, version + 1)
    entry = web_server.get(f"/games/{game_id}/timeline?after={version}")["events"][0]
    assert entry["actor"] == {"seat": to_act}
    assert legal["names"][shop_id] in entry["summary"]
    assert sideways_overflow(page) == 0
    assert violations(page) == []
    assert page.errors == []
