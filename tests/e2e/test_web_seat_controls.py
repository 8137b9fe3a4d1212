"""A seat's controls and cancelling an analysis, in the browser, against the real API.

- Leave: a seat leaves before the start; the seat is open again (the lobby lists it under
  "waiting for players") and the old token is refused.
- Give to a bot: another seat gives the open seat to a bot from the game's page; the game
  starts and the bot's moves reach the page's event log.
- New token: the old token is refused 401 at once, the page plays on with the new one, and
  a second tab still holding the old one is told so in words and watches as a spectator.
- Cancel: a long analysis is cancelled from the panel, which says so; the API agrees.

The games are created with named seats only (POST /games, outside the lobby-games limit),
and the one analysis is asked with a seat's token (counted per token). axe-core finds no
serious or critical violation on the new controls. Screenshots in var/screenshots/:
``seat-controls.png``, ``seat-bot-form.png``, ``seat-token-rotated.png``,
``analysis-running.png``, ``analysis-cancelled.png``."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from playwright.sync_api import Page, expect

from tests.e2e.conftest import WebServer
from tests.e2e.test_web_accessibility import violations

WAIT_MS = 20_000
#: moves the test plays at most while waiting for the bot to move twice
MAX_MOVES = 40
#: an analysis far longer than the test needs to cancel it (the API's MEEPLE_ANALYSIS_MAX_PLAYOUTS)
LONG_ANALYSIS = 5000


def call(
    server: WebServer, path: str, body: Any = None, token: str | None = None, method: str = ""
) -> tuple[int, Any]:
    """The API's status and JSON answer (a refusal's problem+json too)."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        server.url + path,
        data=None if body is None else json.dumps(body).encode(),
        headers=headers,
        method=method or ("GET" if body is None else "POST"),
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def new_game(server: WebServer) -> dict[str, Any]:
    status, created = call(server, "/games", {"ruleset": "restoration", "players": ["Ann", "Bob"]})
    assert status == 201, created
    return dict(created)


def open_as(page: Page, server: WebServer, game_id: str, token: str) -> None:
    page.goto(f"{server.url}/#/games/{game_id}?token={token}")
    expect(page.locator(".seats-box .badge-you")).to_have_text("you", timeout=WAIT_MS)
    expect(page.locator(".live-badge")).to_have_text("live", timeout=WAIT_MS)
    assert token not in page.url


def stored_token(page: Page, game_id: str) -> str:
    entry = page.evaluate("id => JSON.parse(sessionStorage.getItem('meeple.seat.' + id))", game_id)
    return str(entry["token"])


def play_in_page(page: Page, server: WebServer, game_id: str) -> None:
    """Play the page's first offered move (ending the turn when it may) and see it arrive."""
    play = page.locator("form.play button[type=submit]")
    expect(play).to_be_enabled(timeout=WAIT_MS)
    if page.locator('#play-type option[value="end_turn"]').count():
        page.select_option("#play-type", "end_turn")
    before = server.get(f"/games/{game_id}")["version"]
    play.click()
    page.wait_for_function(
        "v => Number(document.querySelector('#scrubber')?.max) > v", arg=before, timeout=WAIT_MS
    )


def bot_actions(server: WebServer, game_id: str) -> list[dict[str, Any]]:
    events = server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
    return [e for e in events if e["type"] == "action" and "bot" in (e["actor"] or {})]


def test_a_seat_left_before_the_start_is_open_again_and_is_given_to_a_bot_that_plays(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    created = new_game(web_server)
    game_id = created["id"]
    ann_token, bob_token = (seat["token"] for seat in created["seats"])
    ann, bob = contexts(), contexts()
    open_as(ann, web_server, game_id, ann_token)
    open_as(bob, web_server, game_id, bob_token)

    # Bob leaves before anyone has moved.
    leave = bob.locator("#leave-seat")
    expect(leave).to_have_text("Leave seat 2")
    expect(bob.locator("#rotate-token")).to_be_visible()
    found = violations(bob)
    assert found == [], json.dumps(found, indent=1)
    bob.locator(".viewer-box").screenshot(path=str(screenshots / "seat-controls.png"))
    leave.click()
    expect(bob.locator("#notice")).to_contain_text("You left seat 2", timeout=WAIT_MS)
    # Bob's tab watches as a spectator now, and may join the open seat again.
    expect(bob.locator("#seat-token")).to_be_visible()
    expect(bob.locator(".join-box form.join button")).to_have_text("Join seat 2")
    expect(bob.locator(".status-line")).to_contain_text("seat 2 open")
    assert bob.evaluate("id => sessionStorage.getItem('meeple.seat.' + id)", game_id) is None
    assert web_server.get(f"/games/{game_id}")["seats"][1]["kind"] == "open"
    status, refused = call(web_server, f"/games/{game_id}/legal-actions", token=bob_token)
    assert status == 401, refused

    # The lobby lists the game among those waiting for players, seat 2 open.
    bob.goto(web_server.url + "/#/?open=true")
    row = bob.locator(f'table.games tr[data-game="{game_id}"]')
    expect(row).to_contain_text("seat 2 open", timeout=WAIT_MS)

    # Ann's page heard of it through the stream: she gives the open seat to a bot.
    expect(ann.locator(".status-line")).to_contain_text("seat 2 open", timeout=WAIT_MS)
    form = ann.locator('form.bot-seat[data-seat="1"]')
    expect(form).to_be_visible()
    expect(ann.locator("#leave-seat")).to_have_text("Leave seat 1")
    # The agents the API accepts; MCTS asks for its playouts a move.
    options = form.locator("#bot-agent-1 option")
    assert [options.nth(i).get_attribute("value") for i in range(options.count())] == [
        "random",
        "greedy",
        "mcts",
    ]
    expect(form.locator("#bot-playouts-1")).to_be_hidden()
    ann.select_option("#bot-agent-1", "mcts")
    expect(form.locator("#bot-playouts-1")).to_be_visible()
    found = violations(ann)
    assert found == [], json.dumps(found, indent=1)
    ann.locator(".viewer-box").screenshot(path=str(screenshots / "seat-bot-form.png"))
    ann.select_option("#bot-agent-1", "random")
    expect(form.locator("#bot-playouts-1")).to_be_hidden()
    form.locator("button[type=submit]").click()
    expect(ann.locator("#notice")).to_contain_text("a bot", timeout=WAIT_MS)
    seat = web_server.get(f"/games/{game_id}")["seats"][1]
    assert seat["kind"] == "bot" and seat["bot"]["agent"] == "random"
    expect(ann.locator(".status-line")).not_to_contain_text("waiting for players")
    expect(ann.locator("form.bot-seat")).to_have_count(0)

    # The bot plays: Ann moves until the bot has moved twice; its moves reach her log.
    played = 0
    deadline = time.monotonic() + 3 * WAIT_MS / 1000
    while len(bot_actions(web_server, game_id)) < 2 and played < MAX_MOVES:
        if 0 not in web_server.get(f"/games/{game_id}")["status"]["to_act"]:
            assert time.monotonic() < deadline, "the game stopped moving"
            time.sleep(0.2)
            continue
        played += 1
        play_in_page(ann, web_server, game_id)
    moved = bot_actions(web_server, game_id)
    assert len(moved) >= 2
    for entry in moved:
        expect(ann.locator(f'.event-log li[data-seq="{entry["seq"]}"]')).to_contain_text(
            "Random bot", timeout=WAIT_MS
        )
    # Once the game has started, a seat can no longer be left.
    expect(ann.locator("#leave-seat")).to_have_count(0)
    assert ann.errors == [] and bob.errors == []  # type: ignore[attr-defined]


def test_a_new_token_refuses_the_old_one_and_the_page_plays_on_with_the_new_one(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    created = new_game(web_server)
    game_id = created["id"]
    ann_token, bob_token = (seat["token"] for seat in created["seats"])
    ann, stale = contexts(), contexts()
    open_as(ann, web_server, game_id, ann_token)
    open_as(stale, web_server, game_id, ann_token)

    ann.click("#rotate-token")
    expect(ann.locator(".rotated")).to_contain_text("no longer works", timeout=WAIT_MS)
    new_token = stored_token(ann, game_id)
    assert new_token != ann_token
    assert new_token in (ann.locator("#rotated-link").input_value() or "")
    status, refused = call(web_server, f"/games/{game_id}/legal-actions", token=ann_token)
    assert status == 401, refused
    status, legal = call(web_server, f"/games/{game_id}/legal-actions", token=new_token)
    assert status == 200 and legal["seat"] == 0
    found = violations(ann)
    assert found == [], json.dumps(found, indent=1)
    ann.locator(".viewer-box").screenshot(path=str(screenshots / "seat-token-rotated.png"))

    # The page plays on with the new token (Bob moves through the API when it is his turn).
    while 0 not in web_server.get(f"/games/{game_id}")["status"]["to_act"]:
        status, legal = call(web_server, f"/games/{game_id}/legal-actions", token=bob_token)
        assert status == 200, legal
        ends = [a for a in legal["actions"] if a["type"] == "end_turn"]
        action = (ends or legal["actions"])[0]
        status, moved = call(web_server, f"/games/{game_id}/actions", action, token=bob_token)
        assert status == 201, moved
    before = len(
        [
            e
            for e in web_server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
            if (e["actor"] or {}).get("seat") == 0
        ]
    )
    play_in_page(ann, web_server, game_id)
    after = [
        e
        for e in web_server.get(f"/games/{game_id}/timeline?limit=1000")["events"]
        if (e["actor"] or {}).get("seat") == 0
    ]
    assert len(after) > before

    # A tab still holding the old token hears of the change through the stream, is told in
    # words that its token no longer counts, and watches as a spectator.
    refused = stale.locator(".viewer-box .token-refused")
    expect(refused).to_contain_text("no longer accepted", timeout=WAIT_MS)
    expect(refused).to_contain_text("(")  # the API's code in brackets
    expect(stale.locator("#seat-token")).to_be_visible()
    expect(stale.locator(".seats-box .badge-you")).to_have_count(0)
    assert stale.evaluate("id => sessionStorage.getItem('meeple.seat.' + id)", game_id) is None
    assert stored_token(ann, game_id) == new_token
    # No token, old or new, reached the server's log.
    log = web_server.log.read_text()
    assert ann_token not in log and new_token not in log
    assert ann.errors == [] and stale.errors == []  # type: ignore[attr-defined]


def test_a_running_analysis_is_cancelled_from_the_panel(
    web_server: WebServer, contexts: Any, screenshots: Any
) -> None:
    created = new_game(web_server)
    game_id = created["id"]
    summary = web_server.get(f"/games/{game_id}")
    seat = summary["status"]["to_act"][0]
    token = created["seats"][seat]["token"]
    page = contexts()
    open_as(page, web_server, game_id, token)
    expect(page.locator("#analysis-seat")).to_have_value(str(seat))
    expect(page.locator("#cancel-analysis")).to_be_hidden()
    page.fill("#analysis-playouts", str(LONG_ANALYSIS))
    with page.expect_response(
        lambda r: r.request.method == "POST" and r.url.endswith("/analyses")
    ) as asked:
        page.click("#analyse-here")
    analysis_id = asked.value.json()["id"]
    cancel = page.locator("#cancel-analysis")
    expect(cancel).to_be_visible(timeout=WAIT_MS)
    expect(page.locator(".analysis-note")).to_contain_text("playouts")
    page.locator("section.analysis").screenshot(path=str(screenshots / "analysis-running.png"))
    cancel.click()
    note = page.locator(".analysis-note")
    expect(note).to_have_attribute("data-status", "cancelled", timeout=WAIT_MS)
    expect(note).to_contain_text("Cancelled after")
    expect(cancel).to_be_hidden()
    expect(page.locator("#analyse-here")).to_be_enabled()
    status, answer = call(web_server, f"/games/{game_id}/analyses/{analysis_id}", token=token)
    assert status == 200 and answer["status"] == "cancelled", answer
    assert answer["progress"]["done"] < LONG_ANALYSIS
    found_then = answer["result"]
    if found_then is not None and found_then["candidates"]:
        # What the search had weighed when it stopped is drawn, marked as stopped early.
        assert found_then["complete"] is False
        rows = page.locator(".analysis-table tbody tr")
        expect(rows).to_have_count(len(found_then["candidates"]))
        expect(note).to_contain_text("what it had found by then")
    found = violations(page)
    assert found == [], json.dumps(found, indent=1)
    page.locator("section.analysis").screenshot(path=str(screenshots / "analysis-cancelled.png"))
    assert page.errors == []  # type: ignore[attr-defined]
