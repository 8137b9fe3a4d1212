"""Gutenberg's component data, loaded from ``data/*.json`` and checked at import.

The rulebook transcription gives no card lists; the files hold the proposal recorded in
docs/rules/gutenberg.md ("Component data"). A publisher's exact lists can replace the
files without touching the engine, as long as they pass ``check`` below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_HERE = Path(__file__).parent / "data"

GEAR_SYMBOLS = {
    # symbol -> the field naming what it indicates (None: nothing indicated)
    "swap_ink": None,
    "swap_type": None,
    "lowest_specialty": None,
    "fame_round": None,
    "take_order": None,
    "discard_type": None,
    "fame_per_ink": "ink",
    "gain_ink": "ink",
    "ink_for_two": None,
    "fame_per_type": "type",
    "buy_type_discount": "type",
    "fame_per_specialty": "specialty",
    "specialty": "specialty",
}
#: gear symbols that score while orders are being fulfilled (not activated by hand).
FULFILMENT_SYMBOLS = ("fame_per_ink", "fame_per_type", "fame_per_specialty")
REWARD_KINDS = ("inks", "guilders", "fame", "specialty", "order")
SECTORS_PER_GEAR = 4


def _load(name: str) -> Any:
    return json.loads((_HERE / name).read_text())


GAME: dict[str, Any] = _load("game.json")
TYPES: list[str] = GAME["types"]
SPECIALTIES: list[str] = GAME["specialties"]
INKS: list[str] = sorted(GAME["inks"])
CHARACTERS: dict[str, dict[str, Any]] = {c["id"]: c for c in GAME["characters"]}
REWARD_TRACK: dict[int, dict[str, Any]] = {e["level"]: e["reward"] for e in GAME["reward_track"]}
BOARD: dict[str, dict[str, Any]] = GAME["board"]
PRINTING: dict[str, dict[str, Any]] = {c["id"]: c for c in _load("printing.json")}
REFINEMENT: dict[str, dict[str, Any]] = {c["id"]: c for c in _load("refinement.json")}
SPECIALTY_CARDS: dict[str, dict[str, Any]] = {c["id"]: c for c in _load("specialty_cards.json")}
GEARS: dict[str, dict[str, Any]] = {c["id"]: c for c in _load("gears.json")}
PATRONAGE: dict[str, dict[str, Any]] = {c["id"]: c for c in _load("patronage.json")}

#: the ten characters the rules know how to play (rulebook, "Characters").
KNOWN_CHARACTERS = {
    "gutenberg", "manutius", "schoyffer", "plantinus", "fiol",
    "guillard", "ungler", "torinus", "caxton", "vietor",
}  # fmt: skip
MAX_LEVEL = 6


def _require(condition: bool, problem: str) -> None:
    if not condition:
        raise ValueError(f"gutenberg component data: {problem}")


def _check_reward(reward: dict[str, Any], where: str) -> None:
    _require(reward.get("kind") in REWARD_KINDS, f"{where} has an unknown reward {reward}")
    if reward["kind"] in ("inks", "guilders", "fame"):
        _require(int(reward.get("amount", 0)) > 0, f"{where} needs a positive amount")


def _check_counts(counts: dict[str, int], allowed: list[str], where: str) -> None:
    for key, amount in counts.items():
        _require(key in allowed, f"{where} names unknown {key!r}")
        _require(isinstance(amount, int) and amount > 0, f"{where} needs positive counts")


def check() -> None:
    """Counts, unique ids and every reference resolving; raises ValueError otherwise."""
    for name, table, raw in (
        ("printing", PRINTING, "printing.json"),
        ("refinement", REFINEMENT, "refinement.json"),
        ("specialty", SPECIALTY_CARDS, "specialty_cards.json"),
        ("gears", GEARS, "gears.json"),
        ("patronage", PATRONAGE, "patronage.json"),
    ):
        _require(len(table) == len(_load(raw)), f"{name} ids are not unique")
    ids = [*PRINTING, *REFINEMENT, *SPECIALTY_CARDS, *GEARS, *PATRONAGE, *CHARACTERS]
    _require(len(ids) == len(set(ids)), "ids must be unique across all components")
    _require(set(CHARACTERS) == KNOWN_CHARACTERS, "the ten characters of the rulebook")
    _require(len(TYPES) == len(set(TYPES)) and len(SPECIALTIES) == 4, "types / 4 specialties")
    _require(sorted(REWARD_TRACK) == sorted(set(REWARD_TRACK)), "reward track levels")
    _require(all(1 <= level <= MAX_LEVEL for level in REWARD_TRACK), "reward levels I-VI")
    _require(2 in REWARD_TRACK, "Helena Ungler moves the reward disc to level II")
    for level, reward in REWARD_TRACK.items():
        _check_reward(reward, f"reward track level {level}")
    for card in PRINTING.values():
        _check_counts(card["types"], TYPES, card["id"])
        _require(card["guilders"] > 0, f"{card['id']} pays guilders")
    for card in REFINEMENT.values():
        _check_counts(card["colours"], INKS, card["id"])
        _check_counts(card["decorations"], SPECIALTIES, card["id"])
        _require(all(v <= MAX_LEVEL for v in card["decorations"].values()), card["id"])
        _require(card["colour_fame"] >= 0 and card["decoration_fame"] >= 0, card["id"])
        _check_reward(card["bonus"], card["id"])
    for card in SPECIALTY_CARDS.values():
        _require(len(card["symbols"]) == 2, f"{card['id']} shows two symbols")
        _require(all(s in SPECIALTIES for s in card["symbols"]), f"{card['id']} symbols")
    for gear in GEARS.values():
        _require(gear["lines"] in ("grey", "white"), f"{gear['id']} line colour")
        _require(len(gear["sectors"]) == SECTORS_PER_GEAR, f"{gear['id']} has 4 sectors")
        for sector in gear["sectors"]:
            symbol = sector.get("symbol")
            _require(symbol in GEAR_SYMBOLS, f"{gear['id']} has unknown symbol {symbol}")
            field = GEAR_SYMBOLS[str(symbol)]
            allowed = {"ink": INKS, "type": TYPES, "specialty": SPECIALTIES}
            if field is not None:
                _require(sector.get(field) in allowed[field], f"{gear['id']} {symbol} {field}")
    for card in PATRONAGE.values():
        _check_counts(card["specialties"], SPECIALTIES, card["id"])
        _check_counts(card["types"], TYPES, card["id"])
        _check_counts(card["inks"], INKS, card["id"])
    _require(len(CHARACTERS) >= 8, "two characters per seat at four players")
    grey = sum(1 for gear in GEARS.values() if gear["lines"] == "grey")
    for count, board in BOARD.items():
        n = int(count)
        _require(board["draft_cards"] == 2 * n + 2, f"{n} players draft 2 orders each, 4 left")
        _require(len(board["patronage_unlock"]) <= len(PATRONAGE), f"{n}p patronage spaces")
        _require(all(1 <= r <= 6 for r in board["patronage_unlock"]), "unlock rounds 1-6")
        need = board["draft_cards"] + board["printing_spaces"]
        _require(len(PRINTING) >= need and len(REFINEMENT) >= need, f"{n}p order cards")
        gears_in_play = grey if n == 2 else len(GEARS)
        _require(gears_in_play >= board["gear_spaces"] + 4, f"{n}p gears incl. Guillard's 4")
        _require(len(SPECIALTY_CARDS) >= board["specialty_spaces"], f"{n}p specialty cards")
        _require(sum(GAME["inks"].values()) >= 3 * board["ink_sets"], f"{n}p inks")


check()
