"""The lobby's seat kinds and the what-if analysis in the browser.

A Restoration game is created in the lobby with a named seat, an open seat and a bot's; a
second browser context finds it among the games waiting for players, joins the open seat and
plays as that seat; both pages see the game start and the bot's moves arrive. A finished
game's position is analysed from the replay view: one bar per candidate move, the pick
marked. axe-core finds no serious or critical violation on either panel. Screenshots:
``lobby-seat-kinds.png``, ``lobby-join.png``, ``analysis-bars.png`` in var/screenshots/."""

from __future__ import annotations

import json
import time
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import WebServer
from tests.e2e.test_web_accessibility import violations
from tests.e2e.test_web_replay import open_game, scrub

WAIT_MS = 20_000
#: how many human moves the test plays at most while waiting for the bot's second move
MAX_MOVES = 40
PLAYOUTS = 40
#: positions tried (from the middle of the game on) for one with more than one candidate;
#: few, as POST .analyses is rate-limited per address (MEEPLE_RATE_LIMIT_ANALYSES: 10 a minute)
MAX_TRIES = 6


def bot_actions(server: WebServer, game_id: str) -> list[dict[str, Any]]:
    events = server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
    return [e for e in events if e["type"] == "action" and "bot" in (e["actor"] or {})]


def test_a_game_with_a_named_an_open_and_a_bot_seat_is_joined_and_played_from_two_browsers(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    ann, bob = contexts(), contexts()
    ann.goto(web_server.url + "/")
    ann.select_option("#c-ruleset", "restoration")
    ann.select_option("#c-count", "3")
    ann.fill("#c-seat-0", "Ann")
    ann.select_option("#c-kind-1", "open")
    ann.select_option("#c-kind-2", "bot")
    ann.select_option("#c-agent-2", "random")
    # The open seat asks for no name; the bot's name is optional; a bot's playouts are MCTS's.
    expect(ann.locator("#c-seat-1")).to_be_hidden()
    expect(ann.locator("#c-agent-2")).to_be_visible()
    expect(ann.locator("#c-playouts-2")).to_be_hidden()
    ann.select_option("#c-agent-2", "mcts")
    expect(ann.locator("#c-playouts-2")).to_be_visible()
    ann.select_option("#c-agent-2", "random")
    assert violations(ann) == []
    ann.locator("section.panel:has(#create-title)").screenshot(
        path=str(screenshots / "lobby-seat-kinds.png")
    )
    ann.click("text=Create the game")
    expect(ann.locator(".created h3")).to_contain_text("created")
    game_id = ann.locator(".created h3").inner_text().split()[1]
    summary = web_server.get(f"/games/{game_id}")
    assert [s["kind"] for s in summary["seats"]] == ["player", "open", "bot"]
    assert summary["seats"][2]["bot"]["agent"] == "random"
    assert summary["status"]["waiting_for_players"] is True
    # Only the named seat has a link; the others say what they are.
    expect(ann.locator(".seat-links a.button")).to_have_count(1)
    expect(ann.locator('.seat-links li[data-kind="open"]')).to_contain_text("open")
    expect(ann.locator('.seat-links li[data-kind="bot"]')).to_contain_text("bot (random)")
    ann.click(".seat-links a.button")
    expect(ann.locator(".status-line")).to_contain_text("waiting for players", timeout=WAIT_MS)
    expect(ann.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)

    # Bob finds the game among those waiting for players, and joins its open seat.
    bob.goto(web_server.url + "/#/?open=true")
    expect(bob.locator("#f-open")).to_be_checked()
    row = bob.locator(f'table.games tr[data-game="{game_id}"]')
    expect(row).to_contain_text("seat 2 open", timeout=WAIT_MS)
    expect(row).to_contain_text("Random bot (bot)")
    assert violations(bob) == []
    bob.locator("table.games").screenshot(path=str(screenshots / "lobby-join.png"))
    row.locator("form.join input").fill("Bob")
    row.locator("form.join button").click()
    expect(bob.locator(".seats-box .badge-you")).to_have_text("you", timeout=WAIT_MS)
    assert "token" not in bob.url
    expect(bob.locator(".viewer-box")).to_contain_text("Bob")
    # The game no longer waits for players: gone from the list of open games.
    assert game_id not in [g["id"] for g in web_server.get("/games?open=true")["games"]]

    # Both see the game start (the join reached Ann's page through the stream).
    for page in (ann, bob):
        expect(page.locator(".status-line")).not_to_contain_text(
            "waiting for players", timeout=WAIT_MS
        )
        expect(page.locator(".seats-box")).to_contain_text("Bob")

    # Play (the first legal action, or ending the turn) until the bot has moved twice: its
    # moves reach both pages' event logs.
    pages = {0: ann, 1: bob}
    played = 0
    deadline = time.monotonic() + 3 * WAIT_MS / 1000
    while len(bot_actions(web_server, game_id)) < 2 and played < MAX_MOVES:
        status = web_server.get(f"/games/{game_id}")["status"]
        humans = [seat for seat in status["to_act"] if seat in pages]
        if not humans:
            # The bot's turn (or an automatic step): its job runs in the background.
            assert time.monotonic() < deadline, "the game stopped moving"
            time.sleep(0.2)
            continue
        played += 1
        page = pages[humans[0]]
        play = page.locator("form.play button[type=submit]")
        expect(play).to_be_enabled(timeout=WAIT_MS)
        # Ending the turn when the seat may (Restoration's free actions would go on), so
        # the turn passes to the bot.
        if page.locator('#play-type option[value="end_turn"]').count():
            page.select_option("#play-type", "end_turn")
        before = web_server.get(f"/games/{game_id}")["version"]
        play.click()
        page.wait_for_function(
            "v => Number(document.querySelector('#scrubber')?.max) > v", arg=before, timeout=WAIT_MS
        )
    moved = bot_actions(web_server, game_id)
    assert len(moved) >= 2, " | ".join(
        e["summary"] for e in web_server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
    )
    for page in (ann, bob):
        for entry in moved:
            expect(page.locator(f'.event-log li[data-seq="{entry["seq"]}"]')).to_contain_text(
                "Random bot", timeout=WAIT_MS
            )
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_analysing_a_finished_games_position_draws_a_bar_per_candidate_with_the_pick_marked(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    page: Page = contexts()
    game_id = web_server.finished["restoration"]
    version = open_game(page, web_server, game_id)
    at, seat = a_choice(web_server, game_id, version // 2)
    scrub(page, at)
    button = page.locator("#analyse-here")
    expect(button).to_have_text(f"Analyse event {at}")
    # Once a game is over any seat may be analysed.
    expect(page.locator("#analysis-seat option")).to_have_count(2)
    page.select_option("#analysis-seat", str(seat))
    page.fill("#analysis-playouts", str(PLAYOUTS))
    button.click()
    rows = page.locator(".analysis-table tbody tr")
    expect(rows.first).to_be_visible(timeout=WAIT_MS * 3)

    # The same request answers with the same analysis (its id is a hash of the request).
    answer = json.loads(
        _post(
            web_server, f"/games/{game_id}/analyses", {"at": at, "seat": seat, "playouts": PLAYOUTS}
        )
    )
    assert answer["status"] == "done"
    candidates = answer["result"]["candidates"]
    expect(rows).to_have_count(len(candidates))
    expect(page.locator(".analysis-table svg.analysis-bar")).to_have_count(len(candidates))
    assert len(candidates) > 1
    expect(page.locator(".analysis-table tr.pick")).to_have_count(1)
    picked = next(c for c in candidates if c["action"] == answer["result"]["pick"])
    expect(page.locator(".analysis-table tr.pick th")).to_contain_text(picked["summary"])
    expect(page.locator(".analysis-table tr.pick .badge-pick")).to_have_text("pick")
    for index, candidate in enumerate(candidates):
        row = rows.nth(index)
        expect(row.locator("th")).to_contain_text(candidate["summary"])
        expect(row.locator("td").nth(2)).to_have_text(str(candidate["playouts"]))
        low, high = candidate["win_interval"]
        bar = row.locator("svg.analysis-bar")
        label = bar.get_attribute("aria-label") or ""
        assert f"win rate {round(candidate['win_rate'] * 100)}%" in label
        assert f"{round(low * 100)}% to {round(high * 100)}%" in label
    expect(page.locator(".analysis-note")).to_contain_text(f"{PLAYOUTS} playouts")
    found = violations(page)
    assert found == [], json.dumps(found, indent=1)
    page.locator("section.analysis").screenshot(path=str(screenshots / "analysis-bars.png"))
    assert page.errors == []  # type: ignore[attr-defined]


def test_a_spectator_of_a_game_under_way_is_told_only_a_seat_may_analyse(
    web_server: WebServer, contexts: Any
) -> None:
    page: Page = contexts()
    created = json.loads(
        _post(web_server, "/games", {"ruleset": "restoration", "players": ["Ann", "Bob"]})
    )
    page.goto(f"{web_server.url}/#/games/{created['id']}")
    expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
    expect(page.locator("#analyse-here")).to_be_disabled()
    expect(page.locator(".analysis-note")).to_contain_text("only a seat may analyse")
    # A seat may analyse its own position only: the select offers that seat alone.
    page.fill("#seat-token", created["seats"][1]["token"])
    page.click("text=Take my seat")
    expect(page.locator(".seats-box .badge-you")).to_have_text("you", timeout=WAIT_MS)
    expect(page.locator("#analysis-seat option")).to_have_count(1)
    expect(page.locator("#analysis-seat")).to_have_value("1")
    expect(page.locator("#analyse-here")).to_be_enabled()


def test_a_spectator_of_a_waiting_game_joins_its_open_seat_from_the_games_page(
    web_server: WebServer, contexts: Any
) -> None:
    page: Page = contexts()
    created = json.loads(
        _post(web_server, "/games", {"ruleset": "restoration", "players": ["Ann", {"open": True}]})
    )
    page.goto(f"{web_server.url}/#/games/{created['id']}")
    expect(page.locator(".status-line")).to_contain_text("seat 2 open", timeout=WAIT_MS)
    expect(page.locator(".play-box")).to_contain_text("Spectators watch")
    page.fill(".join-box form.join input", "Cleo")
    page.click(".join-box form.join button")
    expect(page.locator(".seats-box .badge-you")).to_have_text("you", timeout=WAIT_MS)
    expect(page.locator(".viewer-box")).to_contain_text("Cleo")
    expect(page.locator(".status-line")).not_to_contain_text("waiting for players")
    assert web_server.get(f"/games/{created['id']}")["seats"][1]["name"] == "Cleo"
    expect(page.locator("form.play button[type=submit]")).to_be_enabled(timeout=WAIT_MS)
    assert page.errors == []  # type: ignore[attr-defined]


def a_choice(server: WebServer, game_id: str, near: int) -> tuple[int, int]:
    """An event after which a seat chooses among several moves, and that seat: found with a
    smaller budget than the test's, so the browser's request is a new analysis it follows."""
    events = server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
    tried = 0
    for entry, following in zip(events[near:], events[near + 1 :], strict=False):
        if following["type"] != "action" or tried >= MAX_TRIES:
            continue
        tried += 1
        at, seat = int(entry["seq"]), int(following["actor"]["seat"])
        body = {"at": at, "seat": seat, "playouts": PLAYOUTS - 1}
        answer = json.loads(_post(server, f"/games/{game_id}/analyses", body))
        deadline = time.monotonic() + WAIT_MS / 1000
        while answer["status"] not in ("done", "cancelled", "failed"):
            assert time.monotonic() < deadline, "an analysis never finished"
            time.sleep(0.2)
            answer = server.get(f"/games/{game_id}/analyses/{answer['id']}")
        if answer["status"] == "done" and len(answer["result"]["candidates"]) > 1:
            return at, seat
    raise AssertionError("no position with more than one candidate move")


def _post(server: WebServer, path: str, body: dict[str, Any]) -> str:
    import urllib.request

    request = urllib.request.Request(
        server.url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return str(response.read().decode())
