"""Impendium component data, loaded from ``data/*.json`` and checked at import.

The rulebook gives component counts but not the cards' contents (50 star cards, 14
harbingers, 18 factions, 10 rulers of the galaxy, 36 galactic diplomacy cards); the files
hold a complete stand-in set built as docs/rules/impendium.md ("Component data") records,
so a publisher's exact card list can replace them without touching the engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_HERE = Path(__file__).parent / "data"

#: Seat i's Ark of Salvation colour; a sixth seat's Ark matches no star colour
#: (six Ark meeples, five star colours: docs/rules/impendium.md, "Arks").
ARK_COLOURS = ["red", "yellow", "blue", "green", "white", "black"]

ABILITY_KINDS = ("gain", "substitute", "project_discount", "colony_discount")
HARBINGER_KINDS = ("destroy_star", "drain", "ark_drain")
DIPLOMACY_EFFECTS = (
    "supply",
    "tribute",
    "recognition",
    "renewal",
    "sabotage",
    "embassy",
    "hyperlane",
    "trade_pact",
    "recall",
)

#: Counts printed in the rulebook's component list.
COUNTS = {"stars": 50, "harbingers": 14, "factions": 18, "rulers": 10, "diplomacy": 36}


def _load(name: str) -> Any:
    with (_HERE / name).open(encoding="utf-8") as handle:
        return json.load(handle)


def _by_id(cards: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for card in cards:
        if card["id"] in table:
            raise ValueError(f"impendium data: duplicate {kind} id {card['id']}")
        table[card["id"]] = card
    if len(table) != COUNTS[kind]:
        raise ValueError(f"impendium data: {len(table)} {kind}, the rulebook lists {COUNTS[kind]}")
    return table


def _check_amounts(amounts: dict[str, int], where: str) -> None:
    for resource, amount in amounts.items():
        if resource not in RESOURCES or not isinstance(amount, int) or amount <= 0:
            raise ValueError(f"impendium data: bad amount {resource}={amount} in {where}")


def _check_slots(slots: list[dict[str, Any]], where: str, numeric_allowed: bool) -> None:
    if not slots:
        raise ValueError(f"impendium data: {where} has no slots")
    for slot in slots:
        if "cost" in slot:
            _check_amounts(slot["cost"], where)
        elif numeric_allowed and isinstance(slot.get("any"), int) and slot["any"] > 0:
            continue
        else:
            raise ValueError(f"impendium data: bad slot {slot} in {where}")


_stars_file = _load("stars.json")
RESOURCES: list[str] = list(_stars_file["resources"])
COLOURS: list[str] = list(_stars_file["colours"])
STARS = _by_id(_stars_file["stars"], "stars")
HARBINGERS = _by_id(_load("harbingers.json")["harbingers"], "harbingers")
FACTIONS = _by_id(_load("factions.json")["factions"], "factions")
RULERS = _by_id(_load("rulers.json")["rulers"], "rulers")
DIPLOMACY = _by_id(_load("diplomacy.json")["diplomacy"], "diplomacy")


def _check_all() -> None:
    if len(RESOURCES) != 4 or len(COLOURS) != 5:
        raise ValueError("impendium data: the rulebook names 4 resources and 5 star colours")
    for star in STARS.values():
        if star["colour"] not in COLOURS:
            raise ValueError(f"impendium data: star {star['id']} has unknown colour")
        _check_amounts(star["production"], star["id"])
        _check_slots(star["slots"], star["id"], numeric_allowed=True)
        if not any("cost" in slot for slot in star["slots"]):
            raise ValueError(f"impendium data: star {star['id']} has no resource-symbol slot")
    for harbinger in HARBINGERS.values():
        _check_slots(harbinger["slots"], harbinger["id"], numeric_allowed=False)
        activation = harbinger["activation"]
        if activation["kind"] not in HARBINGER_KINDS:
            raise ValueError(f"impendium data: harbinger {harbinger['id']} has unknown activation")
        if activation["kind"] != "destroy_star" and activation["resource"] not in RESOURCES:
            raise ValueError(f"impendium data: harbinger {harbinger['id']} drains no resource")
        if not isinstance(harbinger["vp"], int) or harbinger["vp"] < 0:
            raise ValueError(f"impendium data: harbinger {harbinger['id']} has bad VP")
    for faction in FACTIONS.values():
        ability = faction["ability"]
        if ability["kind"] not in ABILITY_KINDS or ability["resource"] not in RESOURCES:
            raise ValueError(f"impendium data: faction {faction['id']} has a bad ability")
    for ruler in RULERS.values():
        _check_amounts(ruler["resources"], ruler["id"])
    for card in DIPLOMACY.values():
        if card["effect"] not in DIPLOMACY_EFFECTS:
            raise ValueError(f"impendium data: diplomacy {card['id']} has unknown effect")
    if len(ARK_COLOURS) != 6:
        raise ValueError("impendium data: the box holds six Arks of Salvation")


_check_all()
