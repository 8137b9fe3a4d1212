"""What each seat may see of a Gutenberg game, resampling what it cannot, and timeline lines.

Hidden at the table (docs/rules/gutenberg.md, "Hidden information"): deck order, the
patronage and character tiles left in the box, other seats' plans until the reveal, other
seats' character tiles until all have chosen, and the cards or gears another seat drew
for a reward until it keeps them. Everything else (guilders, inks, types, orders, gears,
specialties, the bag's contents, discard piles) lies open. The bag keeps no order: a draw
from it is made when it happens, from the action's ``rng``, so there is no order to hide
or to resample (docs/rules/gutenberg.md, "Inks from the bag").
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from projections import components
from projections.fold import copy_state
from projections.games.gutenberg import data, effects, gears
from projections.ruleset import Action, State

DRAWN_KEYS = {"order": ("printing", "refinement"), "guillard": ("gears",)}


def view(state: State, seat: int | None, status: dict[str, Any]) -> dict[str, Any]:
    """The state as ``seat`` (None: a spectator) sees it."""
    decks = {
        name: {**components.deck_size(deck), "discards": list(deck["discard_pile"])}
        for name, deck in state["decks"].items()
    }
    return copy_state(
        {
            "players": state["players"],
            "options": state["options"],
            "side": state["side"],
            "status": status,
            "round": state["round"],
            "phase": state["phase"],
            "first_player": state["first_player"],
            "board": state["board"],
            "draft": state["draft"],
            "decks": decks,
            "bag": state["bag"]["contents"],
            "patronage_box": len(state["patronage_box"]),
            "character_box": len(state["character_box"]),
            "seats": [_seat_view(state, other, seat) for other in range(len(state["seats"]))],
            "queue": state["queue"],
            "turn": state["turn"],
            "pending": [_pending_view(p, seat) for p in state["pending"]],
            "finished": state["finished"],
            "result": state["final"],
            "catalogue": _catalogue(state, seat),
            "reward_track": {str(level): r for level, r in sorted(data.REWARD_TRACK.items())},
        }
    )


def _catalogue(state: State, seat: int | None) -> dict[str, dict[str, Any]]:
    """What every card, gear and tile in sight shows, so a client needs no rulebook."""
    board, draft = state["board"], state["draft"]
    seen: dict[str, set[str]] = {kind: set() for kind in _TABLES}
    seen["printing"].update(board["printing"], draft["printing"])
    seen["refinement"].update(board["refinement"], draft["refinement"])
    seen["specialty"].update(board["specialty"])
    seen["gears"].update(board["gears"])
    seen["patronage"].update(space["card"] for space in board["patronage"])
    for other, player in enumerate(state["seats"]):
        for order in player["orders"]:
            seen["printing"].add(order["printing"])
            seen["refinement"].add(order["refinement"])
        seen["gears"].update(axle["gear"] for axle in player["gears"] if axle)
        seen["patronage"].update(player["patronage"])
        seen["characters"].add(player["character"])
        if other == seat:
            seen["characters"].update(player["character_offer"])
    for pending in state["pending"]:
        if pending["seat"] == seat:
            seen["printing"].update(pending.get("printing", ()))
            seen["refinement"].update(pending.get("refinement", ()))
            seen["gears"].update(pending.get("gears", ()))
    return {
        kind: {card: _TABLES[kind][card] for card in sorted(c for c in ids if c)}
        for kind, ids in seen.items()
    }


_TABLES: dict[str, dict[str, dict[str, Any]]] = {
    "printing": data.PRINTING,
    "refinement": data.REFINEMENT,
    "specialty": data.SPECIALTY_CARDS,
    "gears": data.GEARS,
    "patronage": data.PATRONAGE,
    "characters": data.CHARACTERS,
}


def _seat_view(state: State, other: int, seat: int | None) -> dict[str, Any]:
    player = state["seats"][other]
    shown = {
        k: v for k, v in player.items() if k not in ("plan", "character_offer", "character_choice")
    }
    own = other == seat
    shown["plan_submitted"] = player["plan"] is not None
    shown["plan"] = player["plan"] if own or state["plans_revealed"] else None
    shown["character_offer"] = player["character_offer"] if own else len(player["character_offer"])
    shown["character_chosen"] = player["character_choice"] is not None
    shown["character_choice"] = player["character_choice"] if own else None
    # Conveniences a client would otherwise compute from the rules.
    shown["gears"] = [
        None if axle is None else {**axle, "active_sector": gears.active_sector(axle)}
        for axle in player["gears"]
    ]
    shown["next_type_cost"] = effects.type_cost(player)
    return shown


def _pending_view(pending: dict[str, Any], seat: int | None) -> dict[str, Any]:
    if pending["seat"] == seat:
        return pending
    shown = dict(pending)
    for key in DRAWN_KEYS.get(pending["kind"], ()):
        shown[key] = len(pending[key])
    return shown


def resample_hidden(
    state: State,
    seat: int,
    rng: random.Random,
    plans: Callable[[int], tuple[tuple[int, ...], ...]],
) -> State:
    """A copy with everything ``seat`` cannot see redrawn consistently with what it saw.

    It depends only on ``seat``'s information set and ``rng``: each unseen pool is taken in
    sorted order before it is shuffled, so neither the order of a hidden pile nor which
    hidden card sits where changes what is drawn."""
    fresh: State = copy_state(state)
    others = [p for p in fresh["pending"] if p["seat"] != seat]
    for deck_name, key in (
        ("printing", "printing"),
        ("refinement", "refinement"),
        ("gears", "gears"),
    ):
        holders = [p for p in others if key in DRAWN_KEYS.get(p["kind"], ())]
        deck = fresh["decks"][deck_name]
        unseen = deck["draw_pile"] + [card for p in holders for card in p[key]]
        unseen = components.shuffled(sorted(unseen), rng)
        for pending in holders:
            count = len(pending[key])
            pending[key], unseen = unseen[:count], unseen[count:]
        deck["draw_pile"] = unseen
    specialty = fresh["decks"]["specialty"]
    specialty["draw_pile"] = components.shuffled(sorted(specialty["draw_pile"]), rng)
    if fresh["phase"] == "choose_character":
        _resample_characters(fresh, seat, rng)
    if not fresh["plans_revealed"]:
        for other, player in enumerate(fresh["seats"]):
            if other != seat and player["plan"] is not None:
                player["plan"] = list(rng.choice(plans(player["markers"])))
    return fresh


def _resample_characters(fresh: State, seat: int, rng: random.Random) -> None:
    players = fresh["seats"]
    unseen = fresh["character_box"] + [
        c for other, p in enumerate(players) if other != seat for c in p["character_offer"]
    ]
    unseen = components.shuffled(sorted(unseen), rng)
    for other, player in enumerate(players):
        if other == seat:
            continue
        count = len(player["character_offer"])
        player["character_offer"], unseen = unseen[:count], unseen[count:]
        if player["character_choice"] is not None:
            player["character_choice"] = rng.choice(player["character_offer"])
    fresh["character_box"] = sorted(unseen)


# -- timeline lines ----------------------------------------------------------------------


def summarize(state: State, action: Action) -> str:
    """One line for the timeline; ``state`` is the state before ``action``."""
    seat = action.get("seat")
    kind = str(action.get("type"))
    if seat is None:
        return _system_line(state, action)
    who = state["players"][seat]
    line = _LINES.get(kind)
    return f"{who} {line(state, seat, action) if line else kind.replace('_', ' ')}"


def summarize_own(state: State, action: Action, rows: tuple[str, ...]) -> str:
    """The line for the acting seat itself: its secret plan's markers row by row, and the
    character it chose, which the public line hides until the reveal."""
    seat = action.get("seat")
    if seat is not None and action.get("type") == "submit_plan":
        markers = ", ".join(
            f"{count} on {row}" for row, count in zip(rows, action["rows"], strict=True)
        )
        return f"{state['players'][seat]} planned {markers}"
    if seat is not None and action.get("type") == "choose_character":
        return f"{state['players'][seat]} chose {character_name(action['character'])}"
    return summarize(state, action)


def _system_line(state: State, action: Action) -> str:
    kind = action["type"]
    if kind == "finish_action":
        return f"The {action['action']} action ends; what is left on the board is discarded"
    return {
        "reveal_characters": "The characters are revealed",
        "turn_gears": f"Round {state['round']}: every printing house turns its gears",
        "reveal_plans": "All plans are revealed",
        "end_of_round": f"Round {state['round']} ends: the board is refilled",
        "final_scoring": "Final scoring",
    }.get(kind, kind.replace("_", " "))


def _inks_cost(state: State, seat: int, action: Action) -> str:
    cost = effects.ink_cost(state["board"]["inks"][action["set"]], action["count"])
    return f"took {action['count']} inks from set {action['set'] + 1} for {cost} guilders"


def _fulfil(state: State, seat: int, action: Action) -> str:
    orders = state["seats"][seat]["orders"]
    names = [
        f"{orders[p['slot']]['printing']}+{orders[p['slot']]['refinement']}"
        for p in action["orders"]
    ]
    return f"fulfilled {len(names)} order(s): {', '.join(names)}"


def _gear_line(state: State, seat: int, action: Action) -> str:
    axle = state["seats"][seat]["gears"][action["axle"]]
    symbol = gears.active_sector(axle)["symbol"].replace("_", " ") if axle else "nothing"
    details = [
        f"{key} {' and '.join(value) if isinstance(value, list) else value}"
        for key, value in action.items()
        if key not in _PLAIN
    ]
    extra = f": {', '.join(details)}" if details else ""
    return f"used the gear on axle {action['axle'] + 1} ({symbol}{extra})"


_PLAIN = ("type", "axle", "seat")

_LINES: dict[str, Callable[[State, int, Action], str]] = {
    "choose_character": lambda s, n, a: "chose a character",
    "draft_order": lambda s, n, a: f"drafted the order {a['printing']}+{a['refinement']}",
    "choose_types": lambda s, n, a: f"chose the types {', '.join(a['letters'])}",
    "choose_wild_ink": lambda s, n, a: f"made {a['ink']} ink wild this round",
    "submit_plan": lambda s, n, a: "submitted a secret plan",
    "move_marker": lambda s, n, a: f"moved a marker from {a['from_row']} to {a['to_row']}",
    "pass": lambda s, n, a: (
        "is done with the round" if s["phase"] == "round_end" else f"passed ({s['phase']})"
    ),
    "take_order": lambda s, n, a: f"took the order {a['printing']}+{a['refinement']}",
    "take_inks": _inks_cost,
    "develop_specialty": lambda s, n, a: (
        f"used specialty card {a['card']} for "
        + ("its symbols" if a["mode"] == "symbols" else f"+1 {a['specialty']}")
    ),
    "install_gear": lambda s, n, a: f"installed gear {a['gear']}",
    "reposition_gear": lambda s, n, a: f"repositioned the gear on axle {a['axle'] + 1}",
    "patronage_reward": lambda s, n, a: f"took the patronage reward: {a['reward']}",
    "take_patronage": lambda s, n, a: f"took the patronage card {a['card']}",
    "fulfill_orders": _fulfil,
    "buy_type": lambda s, n, a: f"bought the type {a['letter']}",
    "activate_gear": lambda s, n, a: _gear_line(s, n, a),
    "swap_specialties": lambda s, n, a: f"swapped {a['first']} and {a['second']}",
    "keep_order": lambda s, n, a: f"kept the order {a['printing']}+{a['refinement']}",
    "redraw_order": lambda s, n, a: f"paid 2 guilders to draw 2 more {a['cards']} cards",
    "advance_specialty": lambda s, n, a: f"advanced {a['specialty']}",
    "take_ink": lambda s, n, a: f"took a {a['ink']} ink from the bag",
    "choose_ungler_specialties": lambda s, n, a: (
        f"set {a['level_one']} to I and {a['level_two']} to II"
    ),
    "keep_gears": lambda s, n, a: f"kept and installed the gears {', '.join(a['gears'])}",
}


def character_name(character: str | None) -> str:
    return "" if character is None else str(data.CHARACTERS[character]["name"])
