"""Playing in the browser: a Restoration game for two created in the lobby, played from two
browser contexts (one per seat) while a third watches; each move reaches the others through
the live stream (the pages never poll nor reload), and undo reaches them too."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import WebServer

#: how long a page may take to show what the stream brought (a wait, not a timing verdict)
ARRIVAL_MS = 15_000
MOVES = 6
MAX_MOVES = 16


def seen_up_to(page: Page, version: int) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('#scrubber')?.max) >= v",
        arg=version,
        timeout=ARRIVAL_MS,
    )


def create_restoration_game(page: Page, server: WebServer) -> tuple[str, list[str]]:
    page.goto(server.url + "/")
    page.select_option("#c-ruleset", "restoration")
    page.fill("#c-seat-0", "Ann")
    page.fill("#c-seat-1", "Bob")
    page.click("text=Create the game")
    expect(page.locator(".created h3")).to_contain_text("created")
    links = [page.input_value(f"#link-{seat}") for seat in (0, 1)]
    game_id = page.locator(".created h3").inner_text().split()[1]
    return game_id, links


def test_two_seats_play_restoration_while_a_spectator_watches_each_move_arriving_live(
    web_server: WebServer, browser: Any, screenshots: Any
) -> None:
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    ann, bob, spectator = (context.new_page() for context in contexts)
    try:
        game_id, links = create_restoration_game(ann, web_server)
        tokens = [link.split("token=")[1] for link in links]
        ann.goto(links[0])
        bob.goto(links[1])
        spectator.goto(f"{web_server.url}/#/games/{game_id}")
        pages = {0: ann, 1: bob}
        for page in (ann, bob, spectator):
            expect(page.locator(".live-badge")).to_have_text("live", timeout=ARRIVAL_MS)
            # The token left the address bar for the tab's sessionStorage at once.
            assert "token" not in page.url
        expect(ann.locator(".seats-box .badge-you")).to_have_text("you")
        expect(spectator.locator(".token-form")).to_be_visible()
        ann.locator(".table").screenshot(path=str(screenshots / "play-restoration-start.png"))

        undone = False
        for played in range(1, MAX_MOVES + 1):
            summary = web_server.get(f"/games/{game_id}")
            seat = summary["status"]["to_act"][0]
            before = summary["version"]
            page = pages[seat]
            seen_up_to(page, before)
            play = page.locator("form.play button[type=submit]")
            expect(play).to_be_enabled(timeout=ARRIVAL_MS)
            play.click()
            for other in (ann, bob, spectator):
                seen_up_to(other, before + 1)
                entry = other.locator(f'.event-log li[data-seq="{before + 1}"]')
                expect(entry).to_contain_text("Ann" if seat == 0 else "Bob")
            # Every page follows the live head: its table shows the latest event.
            now = web_server.get(f"/games/{game_id}")["version"]
            for other in (ann, bob, spectator):
                expect(other.locator(".table")).to_have_attribute(
                    "data-at", str(now), timeout=ARRIVAL_MS
                )
            last = web_server.get(f"/games/{game_id}/timeline?after={now - 1}")["events"][-1]
            if not undone and last["seq"] == before + 1 and " placed a" in last["summary"]:
                # Placing a worker reveals nothing, and the turn goes on: the seat may undo it.
                undo = page.locator("#undo")
                expect(undo).to_be_enabled()
                undo.click()
                for other in (ann, bob, spectator):
                    seen_up_to(other, now + 1)
                    expect(other.locator(f'.event-log li[data-seq="{now + 1}"]')).to_contain_text(
                        "Undone"
                    )
                undone = True
            if undone and played >= MOVES:
                break
        assert undone, "no worker was placed in the moves played"

        # Each seat sees its own Manager cards; the other seat and the spectator see them face down.
        for seat, page in pages.items():
            expect(
                page.locator(f'.table [data-seat="{seat}"] .card-manager-card').first
            ).to_be_visible()
            expect(page.locator(f'.table [data-seat="{1 - seat}"] .face-down')).to_be_visible()
        expect(spectator.locator(".table .card-manager-card")).to_have_count(0)
        ann.locator(".table").screenshot(path=str(screenshots / "play-restoration-middle.png"))
    finally:
        for context in contexts:
            context.close()
    log = web_server.log.read_text()
    for token in tokens:
        assert token not in log, "a seat token reached the server's log"
