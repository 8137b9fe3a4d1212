"""Impression's component data, loaded from data/*.json and checked once at import.

The rulebook prints counts but not the contents of its tiles; every table here is the
project's own, chosen and explained in docs/rules/impression.md, so a publisher's exact
list can replace a JSON file without touching the engine.
"""

from __future__ import annotations

import functools
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_HERE = Path(__file__).parent / "data"

LEVELS = ["I", "II", "III", "IV"]
RESOURCES = ["paper", "lead", "ink"]
GOODS = ["paper", "lead", "ink", "mark"]
COLOURS = ["white", "red", "blue"]
LETTERS = ["A", "B", "C", "D", "E", "F"]

#: every icon of the rulebook's iconography that an effect may name (see effects.py)
ICONS = {
    "gain",
    "gain_choice",
    "use_letter",
    "capacity",
    "capacity_down",
    "workforce",
    "workforce_down",
    "capacity_gain",
    "trade",
    "typeset",
    "travel",
    "steps",
    "technology",
    "free_technology",
    "factory",
    "assistant",
    "signboard_action",
    "city_tile",
    "move_down",
    "discard_letter",
    "advance_order",
    "buy",
    "gain_letter",
    "reposition_letter",
    "pair",
}
#: the rulebook's "Shop Actions (Action Phase)", by icon, listed without a player count:
#: every table of shops in play offers each (docs/rules/impression.md, Setup 9)
SHOP_ACTIONS = [
    "gain",
    "use_letter",
    "capacity",
    "workforce",
    "trade",
    "typeset",
    "travel",
    "technology",
]
TRIGGERS = {
    "stage_completed",
    "reset",
    "letter_taken",
    "workforce_gained",
    "travel",
    "trade",
    "technology",
    "buy_order",
    "buy_contract",
    "reset_discard",
    "city_disc_gained",
    "order_completed",
    "typeset",
}


def _load(name: str) -> Any:
    with (_HERE / name).open(encoding="utf-8") as handle:
        return json.load(handle)


def by_id(items: list[dict[str, Any]], what: str) -> dict[str, dict[str, Any]]:
    table = {item["id"]: item for item in items}
    if len(table) != len(items):
        raise ValueError(f"impression data: duplicate {what} ids")
    return table


def check_effects(effects: list[dict[str, Any]], where: str) -> None:
    for effect in effects:
        if effect.get("icon") not in ICONS:
            raise ValueError(f"impression data: unknown icon {effect.get('icon')!r} in {where}")
        for good in effect.get("gain", {}):
            if good not in (*GOODS, "vp"):
                raise ValueError(f"impression data: unknown good {good!r} in {where}")
        if "level" in effect and effect["level"] not in LEVELS:
            raise ValueError(f"impression data: unknown level {effect['level']!r} in {where}")
        for key in ("count", "times"):
            if key in effect and not (isinstance(effect[key], int) and effect[key] > 0):
                raise ValueError(f"impression data: {key} must be a positive number in {where}")


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(f"impression data: {message}")


SHOP_DATA = _load("shops.json")
SHOPS = by_id(SHOP_DATA["shops"], "shop")
MOVEMENT_POINTS: list[int] = SHOP_DATA["movement_points"]
MAP = _load("map.json")
CITIES = [city["id"] for city in MAP["cities"]]
GREY_CITIES = [city["id"] for city in MAP["cities"] if city["grey"]]
START_CITY: str = MAP["start_city"]
TRACK_SECTIONS: int = MAP["order_track_sections"]
BOARD = _load("player_board.json")
WORKSHOP = by_id(BOARD["workshop"], "workshop space")
STICKS: list[list[dict[str, Any]]] = BOARD["composing_sticks"]
SLOTS: list[dict[str, Any]] = BOARD["contract_slots"]
DIRECTOR: list[dict[str, Any]] = BOARD["director"]
CAPACITY_TRACK: list[list[dict[str, Any]]] = BOARD["capacity_track"]
CAPACITY_MAX = len(CAPACITY_TRACK) - 1
WORKFORCE_MAX: int = BOARD["workforce_max"]
START: dict[str, int] = BOARD["start"]
LEAD_LETTER_DATA = _load("lead_letters.json")
LEAD_LETTERS = by_id(LEAD_LETTER_DATA["lead_letters"], "lead letter")
TRADING_DATA = _load("trading_tiles.json")
TRADING_TILES = by_id(TRADING_DATA["trading_tiles"], "trading tile")
ORDER_DATA = _load("orders.json")
ORDERS = by_id(ORDER_DATA["orders"], "order")
CONTRACT_DATA = _load("contracts.json")
CONTRACTS = by_id(CONTRACT_DATA["contracts"], "contract")
TECH_DATA = _load("technologies.json")
TECHNOLOGIES = by_id(TECH_DATA["technologies"], "technology")
FACTORIES = by_id(_load("factories.json")["factories"], "factory")
DISCS = by_id(_load("city_discs.json")["city_discs"], "city disc")


def _roads() -> tuple[dict[str, list[str]], dict[str, tuple[str, str]]]:
    """The travel map as a graph of city and coin spaces; each coin knows its road's ends."""
    neighbours: dict[str, list[str]] = {city: [] for city in CITIES}
    road_of: dict[str, tuple[str, str]] = {}
    for index, road in enumerate(MAP["roads"]):
        _expect(road["a"] in neighbours and road["b"] in neighbours, "a road's city is unknown")
        chain = [road["a"]]
        for coin in range(road["coins"]):
            node = f"coin{index + 1}.{coin + 1}"
            neighbours[node] = []
            road_of[node] = (road["a"], road["b"])
            chain.append(node)
        chain.append(road["b"])
        for left, right in itertools.pairwise(chain):
            neighbours[left].append(right)
            neighbours[right].append(left)
    return neighbours, road_of


MAP_NEIGHBOURS, COIN_ROAD = _roads()


def check() -> None:
    """Counts of the Components list; every id unique; every reference resolving."""
    _expect(len(SHOPS) == 16, "16 shops")
    _expect(len(LEAD_LETTERS) == 54, "54 lead letters")
    _expect(len(TECHNOLOGIES) == 48, "48 technologies")
    _expect(len(FACTORIES) == 36, "36 factories")
    _expect(len(TRADING_TILES) == 36, "36 trading tiles")
    _expect(len(ORDERS) == 36, "36 orders")
    _expect(len(CONTRACTS) == 24, "24 contracts")
    _expect(len(DISCS) == 24, "24 city discs")
    _expect(len(GREY_CITIES) <= len(DISCS), "a disc for every grey city")
    _expect(START_CITY in CITIES and START_CITY not in GREY_CITIES, "the start city is white")
    _expect(len(MOVEMENT_POINTS) == 4, "movement points for four order markers")
    orders_of = {level: sum(o["level"] == level for o in ORDERS.values()) for level in LEVELS}
    for count, removed in ORDER_DATA["removed_per_level"].items():
        # Setup 5: "remove 5 of each type ... then draw 5 tiles from the type I deck"
        _expect(
            orders_of[LEVELS[0]] - removed >= ORDER_DATA["display_size"],
            f"{ORDER_DATA['display_size']} type I orders left to display at {count} players",
        )
        _expect(min(orders_of.values()) >= removed, f"{removed} orders of each type to remove")
    for level in LEVELS:
        _expect(sum(t["level"] == level for t in TECHNOLOGIES.values()) == 12, "12 techs a level")
        _expect(sum(f["level"] == level for f in FACTORIES.values()) == 9, "9 factories a level")
    for shop in SHOPS.values():
        check_effects(shop["room_I"] + shop["room_II"], f"shop {shop['id']}")
    for count in ORDER_DATA["removed_per_level"]:
        offered = {
            effect["icon"]
            for shop in shops_in_play(int(count))
            for effect in SHOPS[shop]["room_I"] + SHOPS[shop]["room_II"]
        }
        for icon in SHOP_ACTIONS:
            _expect(icon in offered, f"a room offering {icon} at {count} players")
    for space in WORKSHOP.values():
        _expect(space["level"] in LEVELS, f"level of {space['id']}")
        parent = space["parent"]
        _expect(parent is None or parent in WORKSHOP, f"parent of {space['id']}")
        if parent is not None:
            _expect(
                LEVELS.index(WORKSHOP[parent]["level"]) + 1 == LEVELS.index(space["level"]),
                f"{space['id']} follows a space one level lower",
            )
        check_effects(space["action"], f"workshop space {space['id']}")
    _expect(len(STICKS) == 3 and all(len(stick) == 3 for stick in STICKS), "3 sticks of 3")
    for stick in STICKS:
        for cell in stick:
            _expect(cell["letter"] in LETTERS, "stick letters are A-F")
            check_effects(cell["bonus"], "a composing stick")
    _expect(len(SLOTS) == 4, "4 contract slots")
    for slot in SLOTS:
        check_effects(slot["bonus"], "a contract slot")
    for step in DIRECTOR:
        check_effects(step["reward"], "the director track")
    for rewards in CAPACITY_TRACK:
        check_effects(rewards, "the capacity track")
    for letter in LEAD_LETTERS.values():
        _expect(letter["letter"] in LETTERS, f"letter of {letter['id']}")
    for tile in TRADING_TILES.values():
        _expect(set(tile["give"]) | set(tile["take"]) <= set(GOODS), f"goods of {tile['id']}")
    for order in ORDERS.values():
        _expect(len(order["stage_costs"]) == 4, f"4 stage costs on {order['id']}")
        _expect(order["signboard"] in (*COLOURS, None), f"signboard of {order['id']}")
    for tech in TECHNOLOGIES.values():
        _expect(tech["colour"] in ("blue", "green"), f"colour of {tech['id']}")
        if tech["colour"] == "blue":
            check_effects(tech["action"], f"technology {tech['id']}")
    for factory in FACTORIES.values():
        _expect(factory["trigger"]["on"] in TRIGGERS, f"trigger of {factory['id']}")
        check_effects(factory["bonus"], f"factory {factory['id']}")
    for disc in DISCS.values():
        _expect(disc["letter"] in LETTERS, f"letter of {disc['id']}")
        _expect(("signboard" in disc) != ("reward" in disc), f"{disc['id']} is one kind")
        check_effects(disc.get("reward", []), f"city disc {disc['id']}")
    _expect(len(TECH_DATA["row_costs"]) == TECH_DATA["display_rows"], "a cost per row")


def shops_in_play(player_count: int) -> list[str]:
    """Setup 9: the shop tiles tagged for this player count (2+, 3+, 4+)."""
    return [shop["id"] for shop in SHOPS.values() if shop["min_players"] <= player_count]


def shop_neighbours(shop_ids: Sequence[str]) -> dict[str, list[str]]:
    """Orthogonally adjacent shops among those in play (shared: read only)."""
    return _shop_neighbours(tuple(shop_ids))


@functools.lru_cache(maxsize=8)
def _shop_neighbours(shop_ids: tuple[str, ...]) -> dict[str, list[str]]:
    at = {(SHOPS[s]["row"], SHOPS[s]["col"]): s for s in shop_ids}
    result: dict[str, list[str]] = {}
    for shop in shop_ids:
        row, col = SHOPS[shop]["row"], SHOPS[shop]["col"]
        result[shop] = [
            at[(row + dr, col + dc)]
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1))
            if (row + dr, col + dc) in at
        ]
    return result


@functools.lru_cache(maxsize=256)
def street(a: str, b: str) -> str:
    """The street (gap) between two adjacent shops, named by both in a stable order."""
    first, second = sorted((a, b), key=lambda s: int(s[1:]))
    return f"{first}-{second}"


FACTORY_DRAW: int = _load("factories.json")["draw"]


check()
