"""The Impression and Impendium tables drawn in a real browser (docs/web.md), and a Restoration
seat's hand.

Chromium (Debian's, launched by its path; Playwright never downloads a browser) opens a
small test page that imports the game's renderer from service/http/web/static/games/, fetches
the game's components from the real API (GET /rulesets/{id}/components, answered by the
app's test client) as the web app's shell does, and draws views of random games played
in-process with the rulesets: at the start, the middle and the end, for a seat and for a
spectator. The tests check what a player would look for (a panel per seat with that seat's
score, the shops and cards by name, a seat's secrets only in its own view) and write
screenshots of each table to var/screenshots/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Page, Route, expect

from projections.fold import Game
from projections.ruleset import get_ruleset
from projections.simulate import play_random
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import load_config

ROOT = Path(__file__).resolve().parents[2]
GAMES = ROOT / "service" / "http" / "web" / "static" / "games"
SCREENSHOTS = ROOT / "var" / "screenshots"
ORIGIN = "http://meeple.test"

#: The rules of the shell's stylesheet (service/http/web/static/app.css on the web app's branch)
#: that renderers rely on (seat colours, badges, seat areas, tracks), so the screenshots
#: look as the table does in the app.
SHELL_CSS = """
:root { --ink: #1d1b16; --muted: #57534a; --line: #d8d2c4; --accent: #6b3e00;
  --accent-soft: #f3e6cf; --seat-0: #b3261e; --seat-1: #1a5fb4; --seat-2: #26734d;
  --seat-3: #7b2d8e; --seat-4: #8a5300; }
body { font: 14px/1.35 system-ui, sans-serif; margin: 12px; background: #fbf8f1;
  color: var(--ink); }
.muted { color: var(--muted); }
.badge { font-size: 0.75rem; border: 1px solid var(--muted); border-radius: 3px;
  padding: 0 0.3rem; }
.badge-you { border-color: #0b4f8a; color: #0b4f8a; }
.badge-to-act { border-color: var(--accent); background: var(--accent-soft); color: var(--accent); }
.seat-dot { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 50%;
  background: currentColor; }
.seat-0 { color: var(--seat-0); border-color: var(--seat-0); }
.seat-1 { color: var(--seat-1); border-color: var(--seat-1); }
.seat-2 { color: var(--seat-2); border-color: var(--seat-2); }
.seat-3 { color: var(--seat-3); border-color: var(--seat-3); }
.seat-4 { color: var(--seat-4); border-color: var(--seat-4); }
.part { margin: 0.4rem 0 0.8rem; }
.part > h3 { border-bottom: 1px solid var(--line); padding-bottom: 0.1rem; }
.seat-area { border: 2px solid; border-radius: 6px; padding: 0.4rem 0.6rem; margin: 0.4rem 0;
  background: #fff; }
.seat-area h3 { display: flex; align-items: center; gap: 0.4rem; margin-top: 0; color: var(--ink); }
.seat-area > *:not(h3) { color: var(--ink); }
.seat-area.to-act { box-shadow: 0 0 0 3px var(--accent-soft); }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 0.8rem;
  margin: 0.2rem 0; }
dl.kv dt { color: var(--muted); } dl.kv dd { margin: 0; }
.track-svg { width: 100%; max-width: 40rem; height: auto; }
.track-line { stroke: #8c8577; stroke-width: 2; } .track-tick { stroke: #8c8577; }
.track-num { font-size: 10px; fill: var(--muted); }
.track-marker { fill: currentColor; stroke: #fff; stroke-width: 1.5; }
table.score-table { border-collapse: collapse; margin: 0.4rem 0; }
table.score-table th, table.score-table td { border: 1px solid var(--line);
  padding: 0.2rem 0.4rem; }
"""

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{ruleset} table</title>
<link rel="stylesheet" href="/shell.css">
{stylesheet}
</head><body><main><div id="root" class="table table-{ruleset}"></div></main>
<script type="module">
import * as renderer from "/static/games/{ruleset}.js";
const components = renderer.components
  ? await (await fetch("/rulesets/{ruleset}/components")).json()
  : null;
window.draw = (view, ctx, bare) => {{
  const root = document.getElementById("root");
  root.replaceChildren();
  const tables = bare ? null : components;
  renderer.render(root, view, {{ ...ctx, components: tables, ruleset: "{ruleset}" }});
}};
window.ready = true;
</script></body></html>
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    folder = tmp_path_factory.mktemp("api")
    config = load_config({}, store_url=f"sqlite:///{folder}/meeple.db", rate_limits=False)
    services: Services = bootstrap(config)
    yield create_app(services=services).test_client()
    services.close()


def _serve(api: FlaskClient, ruleset: str) -> Any:
    def handle(route: Route) -> None:
        path = urlsplit(route.request.url).path
        if path == "/table.html":
            # A game's own stylesheet, where it has one (as the shell links it).
            own = GAMES / f"{ruleset}.css"
            stylesheet = f'<link rel="stylesheet" href="/static/games/{own.name}">'
            page = PAGE.format(ruleset=ruleset, stylesheet=stylesheet if own.is_file() else "")
            route.fulfill(body=page, content_type="text/html")
        elif path == "/shell.css":
            route.fulfill(body=SHELL_CSS, content_type="text/css")
        elif path.startswith("/static/games/"):
            file = GAMES / path.removeprefix("/static/games/")
            if file.is_file() and file.parent == GAMES:
                kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                if file.suffix == ".js":
                    kind = "text/javascript"
                route.fulfill(body=file.read_bytes(), content_type=kind)
            else:
                route.fulfill(status=404, body="no such file")
        else:
            answer = api.get(path)
            route.fulfill(status=answer.status_code, body=answer.data, content_type=answer.mimetype)

    return handle


@pytest.fixture
def table(browser: Browser, api: FlaskClient, request: pytest.FixtureRequest) -> Iterator[Page]:
    ruleset = request.param
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.route(f"{ORIGIN}/**", _serve(api, ruleset))
    page.goto(f"{ORIGIN}/table.html")
    page.wait_for_function("window.ready === true")
    yield page
    page.close()
    assert errors == [], errors


# -- games to draw ----------------------------------------------------------------------


def _moments(
    ruleset_id: str, players: int, seed: str, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The start, the middle and the end of a random game, as states."""
    ruleset = get_ruleset(ruleset_id)
    states: list[Any] = []
    play_random(
        ruleset,
        [f"{name}" for name in ["Ada", "Ben", "Cleo", "Dev", "Eve", "Finn"][:players]],
        seed,
        options,
        on_step=lambda game, _envelope: states.append(json.loads(json.dumps(game.state))),
    )
    return {"start": states[0], "middle": states[len(states) // 2], "end": states[-1]}


def _state_answer(ruleset_id: str, state: Any, seat: int | None) -> dict[str, Any]:
    """What GET /games/{id}/state answers for this seat (or a spectator) at this state."""
    ruleset = get_ruleset(ruleset_id)
    status = ruleset.status(state)
    return {
        "id": "test",
        "version": 1,
        "seat": seat,
        "status": status,
        "state": json.loads(json.dumps(ruleset.view(state, seat))),
    }


def _draw(page: Page, answer: dict[str, Any], players: list[str], bare: bool = False) -> None:
    """Draw the table as the shell does; ``bare``: without the component tables."""
    ctx = {"seat": answer["seat"], "players": players, "status": answer["status"]}
    page.evaluate("([view, ctx, bare]) => window.draw(view, ctx, bare)", [answer, ctx, bare])


def _show(page: Page, ruleset: str, state: Any, seat: int | None) -> tuple[dict[str, Any], str]:
    """Draw ``state`` as ``seat`` sees it; the view drawn and the table's text."""
    answer = _state_answer(ruleset, state, seat)
    _draw(page, answer, state["players"])
    return answer["state"], page.locator("#root").inner_text()


def _seat_scores(page: Page) -> list[str]:
    return page.locator("[data-seat] [data-score]").evaluate_all(
        "nodes => nodes.map(n => n.dataset.score)"
    )


def _shot(page: Page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


# -- Impression ---------------------------------------------------------------------------

#: a random game in which the workshops, composing sticks and contract slots fill up
IMPRESSION_SEED = "table-15"


@pytest.mark.parametrize("table", ["impression"], indirect=True)
def test_impression_table_at_start_middle_and_end(table: Page) -> None:
    moments = _moments("impression", 3, IMPRESSION_SEED)
    from projections.games.impression import data

    for label, state in moments.items():
        view, text = _show(table, "impression", state, 0)
        assert table.locator("[data-seat]").count() == 3
        # Setup 9: the 2+ and 3+ tiles, a travel room among them (docs/rules/impression.md)
        assert table.locator("[data-shop]").count() == len(view["shops"]) == 12
        assert "Travel" in table.locator(".ip-room-action").all_inner_texts()
        if view["final_scores"]:
            expected = [str(score["total"]) for score in view["final_scores"]]
            assert "Final scoring" in text
        else:
            expected = [str(mine["vp"]) for mine in view["seats"]]
        assert _seat_scores(table) == expected
        for shop in view["shops"]:
            assert data.SHOPS[shop]["name"] in text
        for column in view["tech"].values():
            for tile in column["display"]:
                if tile is not None:
                    assert f"Technology {tile}" in text
        for order in view["orders"]["display"]:
            if order is not None:
                assert f"Order {order}" in text
        for city, disc in view["map_discs"].items():
            assert table.locator(f'[data-city="{city}"]').count() == 1
            assert f"{data.DISCS[disc]['letter']}:" in text
        for seat, mine in enumerate(view["seats"]):
            panel = table.locator(f'[data-seat="{seat}"]')
            for piece in mine["workshop"].values():
                for face in ("down", "up"):
                    if piece[face] is not None:
                        name = "Factory" if piece[face]["kind"] == "factory" else "Technology"
                        assert f"{name} {piece[face]['id']}" in panel.inner_text()
        _shot(table, f"impression-{label}")


@pytest.mark.parametrize("table", ["impression"], indirect=True)
def test_impression_a_seat_shows_the_rewards_of_the_assistants_in_its_hand(table: Page) -> None:
    state = _moments("impression", 2, IMPRESSION_SEED)["start"]
    streets = state["street_names"]
    state["streets"] = {
        streets[0]: {"owner": 0, "reward": "mark"},
        streets[1]: {"owner": 1, "reward": "ink"},
    }
    state["seats"][0]["assistants"] = state["seats"][1]["assistants"] = 4
    _show(table, "impression", state, 0)
    ada = table.locator('[data-seat="0"]').inner_text()
    ben = table.locator('[data-seat="1"]').inner_text()
    # Each has placed one: the same rewards are never both in a hand and in a street.
    assert "Assistants in hand: 1 paper, 1 lead, 1 ink, 1 capacity" in ada
    assert "Assistants in hand: 1 paper, 1 lead, 1 mark, 1 capacity" in ben
    _shot(table, "impression-assistants-in-hand")


@pytest.mark.parametrize("table", ["impression"], indirect=True)
def test_impression_spectator_sees_the_public_table_of_four(table: Page) -> None:
    from projections.games.impression import data

    state = _moments("impression", 4, IMPRESSION_SEED)["middle"]
    answer = _state_answer("impression", state, None)
    _draw(table, answer, answer["state"]["players"])
    assert table.locator("[data-seat]").count() == 4
    assert table.locator(".badge-you").count() == 0
    text = table.locator("#root").inner_text()
    # four players use all 16 shops (Setup 9)
    assert table.locator("[data-shop]").count() == 16
    assert data.SHOPS["S16"]["name"] in text
    assert "Typesetting table" in text


# -- Impendium ----------------------------------------------------------------------------

#: a random game with harbingers of the void on the map and a galaxy by its end
IMPENDIUM_SEED = "table-11"


def _impendium_hand_moment(players: int) -> Any:
    """A state in which seat 0 holds galactic diplomacy cards, from a random game."""
    ruleset = get_ruleset("impendium")
    found: list[Any] = []

    def keep(game: Game, _envelope: Any) -> None:
        if not found and game.state["seats"][0]["hand"]:
            found.append(json.loads(json.dumps(game.state)))

    for attempt in range(5):
        play_random(
            ruleset, ["Ada", "Ben", "Cleo", "Dev"][:players], f"hand-{attempt}", on_step=keep
        )
        if found:
            return found[0]
    raise AssertionError("no random game gave seat 0 a diplomacy card")


@pytest.mark.parametrize("table", ["impendium"], indirect=True)
def test_impendium_table_at_start_middle_and_end(table: Page) -> None:
    from projections.games.impendium import data

    moments = _moments("impendium", 4, IMPENDIUM_SEED)
    for label, state in moments.items():
        view, text = _show(table, "impendium", state, 0)
        assert table.locator("[data-seat]").count() == 4
        assert _seat_scores(table) == [str(mine["vp"]) for mine in view["seats"]]
        for position, entry in view["board"].items():
            assert table.locator(f'[data-cell="{position}"]').count() == 1
            if entry["kind"] == "star":
                assert data.STARS[entry["card"]]["name"] in text
            if entry["kind"] == "harbinger":
                assert data.HARBINGERS[entry["card"]]["name"] in text
        for galaxy in view["galaxies"]:
            assert f"Galaxy {galaxy['id']}: {len(galaxy['stars'])} {galaxy['colour']} stars" in text
        for project in view["projects"]:
            assert data.STARS[project["card"]]["name"] in text
        for faction in view["subverting"].values():
            assert data.FACTIONS[faction]["name"] in text
        for seat, mine in enumerate(view["seats"]):
            panel = table.locator(f'[data-seat="{seat}"]').inner_text()
            for faction in mine["factions"]:
                assert data.FACTIONS[faction]["name"] in panel
        for seat, cell in enumerate(view["arks"]):
            if cell is not None:
                assert table.locator(f'[data-ark="{seat}"]').count() == 1
        if view["finished"]:
            assert "Game over" in text
        _shot(table, f"impendium-{label}")


@pytest.mark.parametrize("table", ["impendium"], indirect=True)
def test_impendium_turmoil_markers_are_named_where_they_stand(table: Page) -> None:
    state = _moments("impendium", 3, "turmoil", {"turmoil": True})["middle"]
    answer = _state_answer("impendium", state, 2)
    _draw(table, answer, state["players"])
    text = table.locator('[data-part="map"]').inner_text()
    assert "Turmoil" in text
    for marker in answer["state"]["turmoil"]["markers"]:
        assert f"{marker.replace('_', ' ').capitalize()}:" in text


@pytest.mark.parametrize("table", ["impendium"], indirect=True)
def test_impendium_seat_sees_its_diplomacy_hand_and_a_spectator_does_not(table: Page) -> None:
    from projections.games.impendium import data

    state = _impendium_hand_moment(3)
    hand = state["seats"][0]["hand"]
    texts = [data.DIPLOMACY[card]["text"] for card in hand]

    _draw(table, _state_answer("impendium", state, 0), state["players"])
    mine = table.locator('[data-seat="0"]').inner_text()
    for text in texts:
        assert text in mine
    _shot(table, "impendium-seat-hand")

    _draw(table, _state_answer("impendium", state, None), state["players"])
    public = table.locator("#root").inner_text()
    for text in texts:
        assert text not in public
    assert f"{len(hand)} galactic diplomacy card" in table.locator('[data-seat="0"]').inner_text()


@pytest.mark.parametrize("table", ["impression", "impendium"], indirect=True)
def test_without_the_component_tables_a_table_still_draws_with_ids(table: Page) -> None:
    # A shell that has not fetched the components yet gets a table named by ids, not an error
    # (the fixture fails the test on any page error).
    ruleset = table.title().split()[0]
    state = _moments(ruleset, 2, "bare")["middle"]
    answer = _state_answer(ruleset, state, 1)
    _draw(table, answer, state["players"], bare=True)
    assert table.locator("[data-seat]").count() == 2
    assert table.locator(".badge-you").count() == 1


# -- Restoration ------------------------------------------------------------------------


@pytest.mark.parametrize("table", ["restoration"], indirect=True)
def test_restoration_an_empty_hand_is_none_whoever_looks(table: Page) -> None:
    """A seat's Manager cards are face down to the others, and an empty hand reads "none" to
    everyone: not a face-down card numbered 0 to the others."""
    state = _moments("restoration", 2, "table-restoration")["middle"]
    seats = state["seats"] if isinstance(state["seats"], list) else None
    assert seats is not None and seats[0]["hand"] and seats[1]["hand"]
    seats[1]["hand"] = []  # Bob has played his last Manager card
    for viewer in (0, 1, None):
        _show(table, "restoration", state, viewer)
        full = table.locator('[data-seat="0"]')
        empty = table.locator('[data-seat="1"]')
        if viewer == 0:
            expect(full.locator(".card-manager-card").first).to_be_visible()
        else:
            expect(full.locator(".face-down")).to_have_count(1)
            expect(full.locator(".face-down")).to_contain_text(str(len(seats[0]["hand"])))
        expect(empty.locator(".face-down")).to_have_count(0)
        expect(empty.locator(".card-manager-card")).to_have_count(0)
        heading_then_none = re.compile(r"Manager cards in hand\s+none")
        expect(empty).to_contain_text(heading_then_none, use_inner_text=True)
    _shot(table, "restoration-empty-hand")
