"""Restoration's component data, loaded from the JSON files beside this module and checked.

The rulebook counts the components but prints almost none of their faces; every value in
these files is this project's proposal, recorded in docs/rules/restoration.md, so that a
publisher's exact lists can replace the files without touching the engine. ``check`` runs
at import: a broken file stops the service at start-up instead of in the middle of a game.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent

#: Effects a space, card or research position may grant (docs/rules/restoration.md, "Effects").
EFFECTS = frozenset(
    {
        "development",
        "manager",
        "transfer",
        "breakthrough",
        "reputation",
        "upgrade",
        "antique",
        "gain_reputation_2",
    }
)
EVENT_KINDS = frozenset(
    {"manager", "development", "breakthrough", "lose_reputation", "gain_reputation", "none"}
)
ANTIQUE = "antique"


class DataError(ValueError):
    """A component file breaks one of the checks below."""


def _load(name: str) -> Any:
    with (HERE / name).open(encoding="utf-8") as handle:
        return json.load(handle)


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise DataError(message)


def _unique(ids: list[str], what: str) -> None:
    repeated = [key for key, count in Counter(ids).items() if count > 1]
    _require(not repeated, f"{what}: repeated ids {repeated}")


WORKSHOPS = _load("workshops.json")
TILES_FILE = _load("construction_tiles.json")
EVENTS_FILE = _load("events.json")
MANAGERS_FILE = _load("managers.json")
DEVELOPMENT = _load("development.json")
PLAYER_BOARD = _load("player_board.json")

COLOURS: list[str] = WORKSHOPS["colours"]
SPECIALS: list[str] = WORKSHOPS["specials"]
BOARDS: dict[str, dict[str, Any]] = {board["id"]: board for board in WORKSHOPS["boards"]}
MAIN_BOARD: str = next(board["id"] for board in WORKSHOPS["boards"] if board["main"])
ARRANGEMENTS: dict[str, dict[str, Any]] = WORKSHOPS["arrangements"]
INFLUENCE: dict[str, int] = WORKSHOPS["influence"]
GEOMETRY: dict[str, Any] = WORKSHOPS["geometry"]

TILES: dict[str, dict[str, Any]] = {tile["id"]: tile for tile in TILES_FILE["tiles"]}
EVENTS: dict[str, dict[str, Any]] = {event["id"]: event for event in EVENTS_FILE["events"]}
MANAGERS: dict[str, dict[str, Any]] = {kind["id"]: kind for kind in MANAGERS_FILE["types"]}
MANAGER_COPIES: int = MANAGERS_FILE["copies"]

TECHNOLOGY: dict[int, dict[str, Any]] = {row["level"]: row for row in DEVELOPMENT["technology"]}
TOP_LEVEL: int = DEVELOPMENT["top_level"]
SCORING_SPACES: list[int] = DEVELOPMENT["scoring_spaces"]
REPUTATION: dict[str, Any] = DEVELOPMENT["reputation"]

RESEARCH: dict[str, dict[str, Any]] = {row["id"]: row for row in PLAYER_BOARD["research_positions"]}
AP_TRACK: list[int] = PLAYER_BOARD["ap_track"]


def check() -> None:
    """Counts, unique ids and references of every component file (raises DataError)."""
    _check_workshops()
    _check_tiles()
    _check_events()
    _check_managers()
    _check_development()
    _check_player_board()


def _check_workshops() -> None:
    boards = WORKSHOPS["boards"]
    _unique([board["id"] for board in boards], "workshop boards")
    _require(len(boards) == 5, "the Workshop area has 1 main and 4 auxiliary boards")
    _require(sum(1 for board in boards if board["main"]) == 1, "exactly one main workshop")
    kinds = set(COLOURS) | set(SPECIALS)
    _require(len(COLOURS) == 4, "Restoration has 4 ceramic colours")
    _require(ANTIQUE not in kinds, "antique ceramics are gained only by effects")
    _require(set(SPECIALS) <= EFFECTS, "every special space is a known effect")
    for board in boards:
        _require(set(board["spaces"]) <= kinds, f"board {board['id']}: unknown space kind")
    auxiliary = sorted(board["id"] for board in boards if not board["main"])
    for name, arrangement in ARRANGEMENTS.items():
        placed = sorted(arrangement[slot] for slot in GEOMETRY["slots"])
        _require(placed == auxiliary, f"arrangement {name} must place each auxiliary board once")
        for board_id, start in arrangement["start"].items():
            _require(board_id in BOARDS, f"arrangement {name}: unknown board {board_id}")
            _require(0 <= start < len(BOARDS[board_id]["spaces"]), f"{name}: start off board")
    _require("first_game" in ARRANGEMENTS, "the recommended first-game arrangement is needed")


def _check_tiles() -> None:
    tiles = TILES_FILE["tiles"]
    _unique([tile["id"] for tile in tiles], "construction tiles")
    _require(len(tiles) == 24, "the game has 24 Construction tiles")
    for tile in tiles:
        spaces = tile["spaces"]
        _require(len(spaces) >= 2, f"tile {tile['id']} needs at least 2 progress spaces")
        _require(spaces[0]["colour"] in COLOURS, f"tile {tile['id']} must start on a colour")
        for space in spaces:
            _require(space["colour"] in [*COLOURS, ANTIQUE], f"tile {tile['id']}: unknown colour")
            effect = space["effect"]
            _require(effect is None or effect in EFFECTS, f"tile {tile['id']}: unknown effect")
        _require(spaces[-1]["effect"] is None, f"tile {tile['id']}: the highest space is bare")
        _require(isinstance(tile["ap"], int) and tile["ap"] > 0, f"tile {tile['id']}: AP")


def _check_events() -> None:
    events = EVENTS_FILE["events"]
    _unique([event["id"] for event in events], "event tiles")
    _require(len(events) == 6, "the game has 6 Event tiles")
    for event in events:
        _require(event["effect"]["kind"] in EVENT_KINDS, f"event {event['id']}: unknown effect")
        _require(event["moves"] >= 1 and event["managers"] >= 0, f"event {event['id']}: limits")


def _check_managers() -> None:
    types = MANAGERS_FILE["types"]
    _unique([kind["id"] for kind in types], "manager types")
    _require(len(types) * MANAGER_COPIES == 30, "the game has 30 Manager cards")
    marked = sum(MANAGER_COPIES for kind in types if kind["two_player_icon"])
    _require(marked == 6, "6 Manager cards carry the 2-player icon")
    _require(len(types) - marked // MANAGER_COPIES >= 4, "the supply needs 4 distinct types")
    for kind in types:
        _require(kind["effect_a"] in EFFECTS, f"manager {kind['id']}: unknown effect")


def _check_development() -> None:
    levels = sorted(TECHNOLOGY)
    _require(levels == list(range(1, TOP_LEVEL)), "technology levels run 1 .. top-1")
    for row in TECHNOLOGY.values():
        _require(row["effect"] is None or row["effect"] in EFFECTS, "technology: unknown effect")
        _require(row["spaces"] >= 1, "every technology level has a small space")
    _require(len(SCORING_SPACES) >= 4, "a scoring space for each of 4 players")
    # "the highest available scoring space": the spaces are taken from the first on.
    _require(sorted(SCORING_SPACES, reverse=True) == SCORING_SPACES, "scoring spaces descend")
    _require(len(REPUTATION["start_by_turn_order"]) >= 4, "a start space I-IV for 4 players")


def _check_player_board() -> None:
    _unique(list(RESEARCH), "research positions")
    for row in RESEARCH.values():
        _require(row["effect"] in EFFECTS, f"research {row['id']}: unknown effect")
    unlock_lines = sum(1 for row in TECHNOLOGY.values() if row["unlock_line"])
    board = PLAYER_BOARD
    on_tracks = 2  # one worker on the Technology track, one on the Reputation track (7a, 7b)
    _require(
        board["workers_on_board_at_start"] + on_tracks + unlock_lines
        == board["workers_per_colour"],
        "every worker of a colour starts somewhere: board, tracks, one per unlock line",
    )
    _require(board["artisans"] == 6, "the game has 6 Artisans")
    _require(board["upgrade_tokens"] == 28, "the game has 28 Upgrade tokens")
    _require(sorted(AP_TRACK) == AP_TRACK, "the research AP track grows to the right")


check()
