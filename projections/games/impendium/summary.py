"""One readable line per Impendium step, for timelines."""

from __future__ import annotations

from typing import Any

from projections.games.impendium import board as grid
from projections.games.impendium import state as query
from projections.games.impendium.data import DIPLOMACY, FACTIONS, STARS
from projections.games.impendium.rules import step_cost

State = dict[str, Any]


def _amounts(amounts: dict[str, int]) -> str:
    listed = ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in sorted(amounts.items()))
    return listed or "nothing"


def _substituted(a: dict[str, Any]) -> str:
    """ ", 2 water standing in for 1 artifacts and 1 hydrogen" when SUB tokens paid a part."""
    parts = [
        f"{sum(kinds.values())} {wild.replace('_', ' ')} standing in for {_amounts(kinds)}"
        for wild, kinds in sorted(a.get("substitute", {}).items())
    ]
    return "".join(f", {part}" for part in parts)


def _where(state: State, position: str) -> str:
    entry = state["board"].get(position)
    if entry is None:
        return f"the space at {position}" if grid.is_gap(position) else position
    if entry["kind"] == "federation":
        return "the federation card"
    if entry["kind"] == "star":
        star = STARS[entry["card"]]
        return f"{star['name']} ({star['colour']}) at {position}"
    return f"space dust at {position}"


def summarize(state: State, action: dict[str, Any]) -> str:
    seat = action.get("seat")
    kind = action.get("type")
    if seat is None:
        return _system_line(state, str(kind))
    who = state["players"][seat]
    name = state["players"]
    line = _LINES.get(str(kind))
    if line is not None:
        return line(state, who, name, action)
    return f"{who}: {str(kind).replace('_', ' ')}"


def _system_line(state: State, kind: str) -> str:
    if kind == "generate_resources":
        return f"Round {state['round']}: colonies, Arks and rulers generate resources"
    if kind == "activate_harbingers":
        return "The harbingers of the void activate"
    if kind == "move_turmoil":
        return "The turmoil markers move"
    if kind == "raiders_battle":
        return "The raiders battle the Ark that entered their star"
    if kind == "mercenary_battle":
        return "The hired mercenaries attack"
    if kind == "end_of_round":
        return f"Round {state['round']} ends; the starting player marker passes, factions reset"
    return "The game ends: final scoring"


def _place_start_star(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    star = STARS[state["setup_stars"][a["seat"]]]
    return f"{who} placed {star['name']} ({star['colour']}) at {a['position']}"


def _move(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    origin = state["arks"][a["seat"]]
    cost = step_cost(state, a["seat"], origin, a["to"])
    where = _where(state, a["to"])
    return f"{who} moved their Ark to {where} for {cost} hydrogen{_substituted(a)}"


def _build(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    pos = state["arks"][a["seat"]]
    moved = " (moving a colony)" if a.get("relocate") else ""
    return (
        f"{who} built a colony on slot {a['slot']} of {_where(state, pos)}{moved}{_substituted(a)}"
    )


def _construct(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    star = STARS[a["project"]]
    moved = " (moving a disc)" if a.get("relocate") else ""
    return (
        f"{who} helped construct the federation star {star['name']} (slot {a['slot']}){moved}"
        + _substituted(a)
    )


def _recruit(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    faction = FACTIONS[state["subverting"][a["resource"]]]["name"]
    cost = query.recruit_cost(state, a["seat"], a["resource"])
    swap = f", sending {FACTIONS[a['replace']]['name']} away" if a.get("replace") else ""
    paid = f"{cost} {a['resource'].replace('_', ' ')}{_substituted(a)}"
    return f"{who} recruited the {faction} for {paid}{swap}"


def _ability(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    faction = FACTIONS[a["faction"]]
    target = names[a["target"]]
    return f"{who} used the {faction['name']} ({faction['ability']['kind']}) on {target}"


def _diplomacy(state: State, who: str, names: list[str], a: dict[str, Any]) -> str:
    text = DIPLOMACY[a["card"]]["text"].split(":")[0]
    target = f" on {names[a['target']]}" if "target" in a else ""
    return f"{who} played the diplomacy card {text}{target}"


_LINES = {
    "place_start_star": _place_start_star,
    "place_setup_colony": lambda s, who, n, a: (
        f"{who} placed a setup colony on slot {a['slot']} of {_where(s, a['position'])}"
    ),
    "place_ark": lambda s, who, n, a: f"{who} placed their Ark on {_where(s, a['position'])}",
    "take_federation_resource": lambda s, who, n, a: (
        f"{who} took 1 {a['resource'].replace('_', ' ')} from the federation"
    ),
    "move": _move,
    "attack": lambda s, who, n, a: f"{who} attacked {n[a['target']]}",
    "take_spoils": lambda s, who, n, a: (
        f"{who} took {_amounts(a['resources'])} from {n[s['pending'][0]['from']]}"
    ),
    "offer_trade": lambda s, who, n, a: f"{who} offered {n[a['target']]} a trade",
    "answer_trade": lambda s, who, n, a: (
        f"{who} {'accepted' if a['accept'] else 'rejected'} the trade"
    ),
    "build_colony": _build,
    "construct_federation_star": _construct,
    "place_star": lambda s, who, n, a: f"{who} placed the new federation star at {a['position']}",
    "place_harbinger": lambda s, who, n, a: (
        f"{who} placed a harbinger of the void at {a['position']}"
    ),
    "battle_harbinger": lambda s, who, n, a: (
        f"{who} battled the harbinger at {a['position']} (slot {a['slot']})"
        + (" (moving a disc)" if a.get("relocate") else "")
        + _substituted(a)
    ),
    "recruit_faction": _recruit,
    "keep_diplomacy": lambda s, who, n, a: f"{who} kept two galactic diplomacy cards",
    "take_ruler": lambda s, who, n, a: f"{who} took the ruler card {a['card']}",
    "end_turn": lambda s, who, n, a: f"{who} ended their turn",
    "pass": lambda s, who, n, a: f"{who} passed for the round",
    "use_faction_ability": _ability,
    "play_diplomacy": _diplomacy,
    "trade_with_merchants": lambda s, who, n, a: (
        f"{who} traded {_amounts(a['give'])} to the merchants for {_amounts(a['get'])}"
    ),
    "hire_mercenaries": lambda s, who, n, a: (
        f"{who} paid 3 {a['pay']}{_substituted(a)} to hire the mercenaries against {n[a['target']]}"
    ),
}
