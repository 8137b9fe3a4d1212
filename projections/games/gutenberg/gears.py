"""The printing house's gears (rulebook "Improve Printing Houses", "Turn Gears", "Gear
Rewards"): installing, repositioning, turning, and activating a gear's active sector.

A player's ``gears`` is a list of 3 axles (top = index 0), each None or
``{"gear": id, "rotation": r}``; ``rotation`` is the index of the sector that sits on the
lightened (active) area. Turning moves the top gear one sector clockwise (r + 1) and each
meshed gear below turns the other way (docs/rules/gutenberg.md, "Turn Gears").
"""

from __future__ import annotations

import random
from itertools import combinations_with_replacement
from typing import Any

from projections.games.gutenberg import data, effects
from projections.ruleset import Action, IllegalAction, State

AXLES = 3
MAX_GEAR_USES = 3  # 3 used-gear markers per player (rulebook "Setup" 14)


def active_sector(axle: dict[str, Any]) -> dict[str, Any]:
    sectors: list[dict[str, Any]] = data.GEARS[axle["gear"]]["sectors"]
    return sectors[axle["rotation"] % data.SECTORS_PER_GEAR]


def turn_gears(player: dict[str, Any]) -> None:
    """Turn the top gear one sector clockwise; meshed gears follow, alternating direction."""
    for index, axle in enumerate(player["gears"]):
        if axle is not None:
            step = 1 if index % 2 == 0 else -1
            axle["rotation"] = (axle["rotation"] + step) % data.SECTORS_PER_GEAR


def uses_left(player: dict[str, Any], axle_index: int) -> bool:
    """Once per gear per round; Schoyffer may use one gear twice; never more than 3 uses."""
    uses = player["gear_uses"]
    if sum(uses) >= MAX_GEAR_USES:
        return False
    if uses[axle_index] == 0:
        return True
    doubled = any(count >= 2 for count in uses)
    return player["character"] == "schoyffer" and uses[axle_index] == 1 and not doubled


def first_free_axle(player: dict[str, Any]) -> int | None:
    for index, axle in enumerate(player["gears"]):
        if axle is None:
            return index
    return None


# -- installing (rulebook "Improve Printing Houses") ----------------------------------------


def check_install(player: dict[str, Any], rotation: Any, replace_axle: Any) -> int:
    """The axle a new gear goes on: the first free one top-down, or the one replaced."""
    if not isinstance(rotation, int) or not 0 <= rotation < data.SECTORS_PER_GEAR:
        raise IllegalAction("bad_rotation", "Choose which sector (0-3) faces the active area.")
    free = first_free_axle(player)
    if free is not None:
        if replace_axle is not None:
            raise IllegalAction(
                "axle_free",
                "Your printing house has a free axle; install there without discarding a gear.",
            )
        return free
    if not isinstance(replace_axle, int) or not 0 <= replace_axle < AXLES:
        raise IllegalAction(
            "must_discard_gear", "You have 3 gears; name the axle (0-2) whose gear to discard."
        )
    if player["gear_uses"][replace_axle]:
        raise IllegalAction(
            "gear_used_this_round", "A gear used this round cannot be discarded or moved."
        )
    return int(replace_axle)


def check_reposition(player: dict[str, Any], axle_index: Any, rotation: Any) -> None:
    if not isinstance(axle_index, int) or not 0 <= axle_index < AXLES:
        raise IllegalAction("bad_axle", "Name an axle 0 (top) to 2 (bottom).")
    axle = player["gears"][axle_index]
    if axle is None:
        raise IllegalAction("no_gear_there", "There is no gear on that axle to reposition.")
    if player["gear_uses"][axle_index]:
        raise IllegalAction(
            "gear_used_this_round", "A gear used this round cannot be discarded or moved."
        )
    if not isinstance(rotation, int) or not 0 <= rotation < data.SECTORS_PER_GEAR:
        raise IllegalAction("bad_rotation", "Choose which sector (0-3) faces the active area.")
    if rotation == axle["rotation"]:
        raise IllegalAction("same_rotation", "Turn the gear to a different sector.")


# -- activating a sector (rulebook "Gear Rewards") --------------------------------------------


def activation_options(state: State, seat: int) -> list[Action]:
    """Every concrete activation of an active sector the seat may make now."""
    player = state["seats"][seat]
    options: list[Action] = []
    for index, axle in enumerate(player["gears"]):
        if axle is None or not uses_left(player, index):
            continue
        for params in _sector_params(state, player, active_sector(axle)):
            options.append({"type": "activate_gear", "axle": index, **params})
    return options


def _sector_params(
    state: State, player: dict[str, Any], sector: dict[str, Any]
) -> list[dict[str, Any]]:
    symbol = sector["symbol"]
    inks = sorted(player["inks"])
    types = sorted(player["types"])
    bag = state["bag"]["contents"]
    if symbol in data.FULFILMENT_SYMBOLS:
        return []  # they score while orders are fulfilled (rules.fulfill_orders)
    if symbol == "swap_ink":
        return [
            {"give": give, "take": [take]}
            for give in inks
            for take in data.INKS
            if take != give and bag.get(take, 0) > 0
        ]
    if symbol == "swap_type":
        return [
            {"give": give, "take": [take]} for give in types for take in data.TYPES if take != give
        ]
    if symbol == "lowest_specialty":
        return [{"specialty": s} for s in _lowest(player)]
    if symbol == "discard_type":
        return [{"give": give, "choice": c} for give in types for c in ("fame", "guilders")]
    if symbol == "gain_ink":
        return [{}] if bag.get(sector["ink"], 0) > 0 else []
    if symbol == "ink_for_two":
        options = []
        for give in inks:
            after = dict(bag)
            after[give] = after.get(give, 0) + 1
            for pair in combinations_with_replacement(sorted(after), 2):
                if effects.covers(after, effects.merged({pair[0]: 1}, {pair[1]: 1})):
                    options.append({"give": give, "take": list(pair)})
        return options
    if symbol == "buy_type_discount":
        return [{}] if player["guilders"] >= _discounted_cost(player) else []
    return [{}]  # fame_round, take_order, specialty


def _lowest(player: dict[str, Any]) -> list[str]:
    low = min(player["specialties"].values())
    return [s for s in data.SPECIALTIES if player["specialties"][s] == low]


def _discounted_cost(player: dict[str, Any]) -> int:
    return max(0, effects.type_cost(player) - 3)


def activate(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Validate then take an active sector's reward, placing a used-gear marker on it."""
    player = state["seats"][seat]
    index = action.get("axle")
    if not isinstance(index, int) or not 0 <= index < AXLES or player["gears"][index] is None:
        raise IllegalAction("no_gear_there", "Name an axle (0-2) that holds a gear.")
    if not uses_left(player, index):
        raise IllegalAction(
            "gear_already_used",
            "This gear's reward was already taken this round (or your 3 markers are used).",
        )
    sector = active_sector(player["gears"][index])
    params = {k: v for k, v in action.items() if k not in ("type", "axle", "seat")}
    if params not in _sector_params(state, player, sector):
        raise IllegalAction(
            "gear_reward_unavailable",
            f"The active sector ({sector['symbol'].replace('_', ' ')}) cannot be used that way "
            "now; see legal actions for what it allows.",
        )
    player["gear_uses"][index] += 1
    _take_sector_reward(state, seat, sector, params, rng)


def _take_sector_reward(
    state: State, seat: int, sector: dict[str, Any], params: dict[str, Any], rng: random.Random
) -> None:
    player = state["seats"][seat]
    symbol = sector["symbol"]
    if symbol in ("swap_ink", "ink_for_two"):
        effects.pay_inks(state, player, {params["give"]: 1})
        for colour in params["take"]:
            effects.take_from_bag(state, player, colour)
    elif symbol == "swap_type":
        effects.add(player["types"], params["give"], -1)
        effects.add(player["types"], params["take"][0])
    elif symbol == "lowest_specialty":
        effects.open_choices(
            state, effects.advance_specialty(state, seat, params["specialty"], 1, rng)
        )
    elif symbol == "fame_round":
        player["fame"] += state["round"]
    elif symbol == "take_order":
        effects.open_choices(state, effects.open_order_choice(state, seat, rng))
    elif symbol == "discard_type":
        effects.add(player["types"], params["give"], -1)
        if params["choice"] == "fame":
            player["fame"] += 3
        else:
            player["guilders"] += 5
    elif symbol == "gain_ink":
        effects.take_from_bag(state, player, sector["ink"])
    elif symbol == "buy_type_discount":
        player["guilders"] -= _discounted_cost(player)
        effects.add(player["types"], sector["type"])
    elif symbol == "specialty":
        effects.open_choices(
            state, effects.advance_specialty(state, seat, sector["specialty"], 1, rng)
        )


def fulfilment_fame(player: dict[str, Any], fulfilled: list[dict[str, Any]]) -> int:
    """Active fulfilment sectors score 2 fame per order fulfilled with the indicated ink,
    type or specialty (at most 2 per order); each such gear counts as used. ``fulfilled``
    holds ``{"printing", "refinement", "colours", "decorations"}`` per order."""
    fame = 0
    for index, axle in enumerate(player["gears"]):
        if axle is None or not uses_left(player, index):
            continue
        sector = active_sector(axle)
        symbol = sector["symbol"]
        if symbol not in data.FULFILMENT_SYMBOLS:
            continue
        matching = sum(1 for order in fulfilled if _shows(order, symbol, sector))
        if matching:
            player["gear_uses"][index] += 1
            fame += 2 * matching
    return fame


def _shows(order: dict[str, Any], symbol: str, sector: dict[str, Any]) -> bool:
    refinement = data.REFINEMENT[order["refinement"]]
    if symbol == "fame_per_ink":
        return bool(order["colours"]) and sector["ink"] in refinement["colours"]
    if symbol == "fame_per_type":
        return sector["type"] in data.PRINTING[order["printing"]]["types"]
    return bool(order["decorations"]) and sector["specialty"] in refinement["decorations"]
