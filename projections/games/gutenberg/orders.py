"""Fulfilling orders (rulebook "Fulfill Orders": Orders, Printing, Refinements).

A seat fulfils a batch of its orders at once: the printing part is mandatory, each
refinement part (colours, decorations) optional; types are assigned to one order each and
kept, inks are spent to the bag, specialties are only required. Rewards are granted after
every requirement of the batch is checked, so one order's reward cannot feed another.
"""

from __future__ import annotations

import random
from itertools import combinations, product
from typing import Any

from projections import components
from projections.games.gutenberg import data, effects, gears
from projections.ruleset import Action, IllegalAction, State


def _types_needed(orders: list[dict[str, Any]], batch: list[dict[str, Any]]) -> dict[str, int]:
    return effects.merged(
        *(data.PRINTING[orders[part["slot"]]["printing"]]["types"] for part in batch)
    )


def _inks_needed(orders: list[dict[str, Any]], batch: list[dict[str, Any]]) -> dict[str, int]:
    return effects.merged(
        *(
            data.REFINEMENT[orders[p["slot"]]["refinement"]]["colours"]
            for p in batch
            if p["colours"]
        )
    )


def _printing_types(orders: list[dict[str, Any]], slot: int) -> dict[str, int]:
    types: dict[str, int] = data.PRINTING[orders[slot]["printing"]]["types"]
    return types


def _decorations_met(player: dict[str, Any], refinement: dict[str, Any]) -> bool:
    levels = player["specialties"]
    return all(levels[s] >= level for s, level in refinement["decorations"].items())


def _without(counts: dict[str, int], letter: str) -> dict[str, int]:
    reduced = dict(counts)
    effects.add(reduced, letter, -1)
    return reduced


def batch_options(player: dict[str, Any]) -> list[Action]:
    """Every batch the player can fulfil now (the rulebook's choices, enumerated)."""
    orders = player["orders"]
    part_options = []
    for order in orders:
        refinement = data.REFINEMENT[order["refinement"]]
        colours = [False, True] if refinement["colours"] else [False]
        decorations = [False]
        if refinement["decorations"] and _decorations_met(player, refinement):
            decorations.append(True)
        part_options.append([(c, d) for c in colours for d in decorations])
    manutius = player["character"] == "manutius"
    options: list[Action] = []
    for size in range(1, len(orders) + 1):
        for slots in combinations(range(len(orders)), size):
            types = _types_needed(orders, [{"slot": s} for s in slots])
            types_ok = effects.covers(player["types"], types)
            ignores: list[dict[str, Any] | None] = [None]
            if not types_ok:
                if not (manutius and size >= 2):
                    continue
                ignores = [
                    {"slot": s, "letter": letter}
                    for s in slots
                    for letter in sorted(data.PRINTING[orders[s]["printing"]]["types"])
                    if effects.covers(player["types"], _without(types, letter))
                ]
            for parts in product(*(part_options[s] for s in slots)):
                batch = [
                    {"slot": s, "colours": c, "decorations": d}
                    for s, (c, d) in zip(slots, parts, strict=True)
                ]
                if effects.ink_payment(player, _inks_needed(orders, batch)) is None:
                    continue
                for ignore in ignores:
                    options.append({"type": "fulfill_orders", "orders": batch, "ignore": ignore})
    return options


def check_batch(
    player: dict[str, Any], action: Action
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Validate a batch; returns its parts and the ink payment."""
    orders = player["orders"]
    batch = action.get("orders")
    if not isinstance(batch, list) or not batch:
        raise IllegalAction("no_orders_named", "Name at least one of your orders to fulfil.")
    slots = [part.get("slot") if isinstance(part, dict) else None for part in batch]
    if any(not isinstance(s, int) or not 0 <= s < len(orders) for s in slots):
        raise IllegalAction("no_such_order", "Name orders by their slot among your orders.")
    if len(set(slots)) != len(slots):
        raise IllegalAction("order_named_twice", "Name each order only once.")
    parts = [
        {
            "slot": p["slot"],
            "colours": p.get("colours") is True,
            "decorations": p.get("decorations") is True,
        }
        for p in batch
    ]
    types = _types_needed(orders, parts)
    ignore = action.get("ignore")
    if ignore is not None:
        if player["character"] != "manutius" or len(parts) < 2:
            raise IllegalAction(
                "cannot_ignore_type",
                "Only Aldus Manutius, fulfilling 2 or more orders, may ignore a required type.",
            )
        slot = ignore.get("slot") if isinstance(ignore, dict) else None
        if not isinstance(slot, int) or slot not in slots:
            slot = None
        if slot is None or ignore.get("letter") not in _printing_types(orders, slot):
            raise IllegalAction(
                "cannot_ignore_type", "Ignore a type the named order's printing card requires."
            )
        if effects.covers(player["types"], types):
            raise IllegalAction(
                "ignore_not_needed", "You own every type these orders need; ignore none."
            )
        types = _without(types, ignore["letter"])
    if not effects.covers(player["types"], types):
        raise IllegalAction(
            "types_missing",
            "You do not own enough types for these printing cards (each type serves one "
            "order); buy types or fulfil fewer orders.",
        )
    for part in parts:
        refinement = data.REFINEMENT[orders[part["slot"]]["refinement"]]
        if part["colours"] and not refinement["colours"]:
            raise IllegalAction("no_colour_part", "That refinement card has no colour part.")
        if part["decorations"] and not (
            refinement["decorations"] and _decorations_met(player, refinement)
        ):
            raise IllegalAction(
                "specialty_too_low",
                "Your specialties are below the decoration's levels; leave that part out.",
            )
    payment = effects.ink_payment(player, _inks_needed(orders, parts))
    if payment is None:
        raise IllegalAction(
            "inks_missing", "You lack the inks for these colour parts; leave some out."
        )
    return parts, payment


def fulfill(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Validate, then fulfil the batch: pay inks, take every reward, discard the orders."""
    player = state["seats"][seat]
    parts, payment = check_batch(player, action)
    orders = player["orders"]
    effects.pay_inks(state, player, payment)
    fulfilled = []
    opened: list[dict[str, Any]] = []
    for part in parts:
        order = orders[part["slot"]]
        refinement = data.REFINEMENT[order["refinement"]]
        player["guilders"] += data.PRINTING[order["printing"]]["guilders"]
        if part["colours"]:
            player["fame"] += refinement["colour_fame"]
        if part["decorations"]:
            player["fame"] += refinement["decoration_fame"]
        both = part["colours"] and part["decorations"]
        fiol = player["character"] == "fiol" and (part["colours"] or part["decorations"])
        fulfilled.append({**order, "colours": part["colours"], "decorations": part["decorations"]})
        if both or fiol:
            opened.extend(effects.grant(state, seat, refinement["bonus"], rng))
    # Fulfilment sectors score on their own (docs/rules/gutenberg.md, "Fulfill Orders").
    player["fame"] += gears.fulfilment_fame(player, fulfilled)
    for slot in sorted((part["slot"] for part in parts), reverse=True):
        order = orders.pop(slot)
        components.discard(state["decks"]["printing"], [order["printing"]])
        components.discard(state["decks"]["refinement"], [order["refinement"]])
    effects.open_choices(state, opened)
