"""Effects shared by several Gutenberg actions: specialty steps and the reward track,
rewards (order cards, inks, guilders, fame), buying types, ink payment, and the choices
a reward leaves a player to make ("pending" choices).

A pending choice is a dict ``{"seat": n, "kind": ..., ...}`` on ``state["pending"]``;
while any is open the game waits for its seat alone (docs/rules/gutenberg.md, "Chained
choices"). Every function here mutates; callers validate first.
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.gutenberg import data
from projections.ruleset import IllegalAction, State

Pending = dict[str, Any]


# -- counting helpers ----------------------------------------------------------------


def total(counts: dict[str, int]) -> int:
    """How many pieces a multiset ``{item: count}`` holds."""
    return sum(counts.values())


def add(counts: dict[str, int], item: str, amount: int = 1) -> None:
    """Add ``amount`` of ``item``; drop the key when it reaches zero (state stays canonical)."""
    value = counts.get(item, 0) + amount
    if value < 0:
        raise ValueError(f"{item} would go below zero")
    if value:
        counts[item] = value
    else:
        counts.pop(item, None)


def covers(have: dict[str, int], need: dict[str, int]) -> bool:
    """Whether ``have`` holds at least ``need`` of every item."""
    return all(have.get(item, 0) >= amount for item, amount in need.items())


def merged(*parts: dict[str, int]) -> dict[str, int]:
    """The sum of several multisets."""
    result: dict[str, int] = {}
    for part in parts:
        for item, amount in part.items():
            result[item] = result.get(item, 0) + amount
    return result


# -- types (rulebook "Printing": cost table) --------------------------------------------


def type_cost(player: dict[str, Any]) -> int:
    """The next type costs one guilder more than the number of types owned (3 owned -> 4)."""
    return total(player["types"]) + 1


# -- inks ----------------------------------------------------------------------------


def ink_payment(player: dict[str, Any], need: dict[str, int]) -> dict[str, int] | None:
    """The inks that pay ``need``, or None when the player cannot.

    Exact colours are used first; Caxton's wild colour for the round covers the rest
    (docs/rules/gutenberg.md, "Characters").
    """
    inks = player["inks"]
    wild = player.get("wild_ink")
    payment: dict[str, int] = {}
    short = 0
    for colour, amount in need.items():
        exact = min(amount, inks.get(colour, 0))
        if exact:
            payment[colour] = exact
        short += amount - exact
    if short:
        if wild is None:
            return None
        spare = inks.get(wild, 0) - payment.get(wild, 0)
        if spare < short:
            return None
        payment[wild] = payment.get(wild, 0) + short
    return payment


def pay_inks(state: State, player: dict[str, Any], payment: dict[str, int]) -> None:
    """Spent inks go back into the bag (rulebook "Refinements", "Patronage")."""
    for colour, amount in payment.items():
        add(player["inks"], colour, -amount)
        components.bag_return(state["bag"], [colour] * amount)


def take_from_bag(state: State, player: dict[str, Any], colour: str) -> None:
    """Move one ink of ``colour`` from the bag to the player (caller checked it is there)."""
    state["bag"]["contents"][colour] -= 1
    if not state["bag"]["contents"][colour]:
        del state["bag"]["contents"][colour]
    add(player["inks"], colour)


def bag_has(state: State, colour: str) -> bool:
    return int(state["bag"]["contents"].get(colour, 0)) > 0


def draw_from_bag(
    state: State, player: dict[str, Any], count: int, rng: random.Random
) -> list[str]:
    """Draw ``count`` inks at random from the bag for the player, as many as it still holds
    (rulebook "Refinements": "Take the number of ink shown from the bag"; docs/rules/
    gutenberg.md, "Inks from the bag"). The draw is made now, from the game's seeded
    randomness, so no order of the bag is kept anywhere to hide."""
    drawn = components.bag_draw(state["bag"], count, rng)
    for colour in drawn:
        add(player["inks"], colour)
    end_ink_choices_if_bag_empty(state)
    return drawn


# -- specialties and the reward track ----------------------------------------------------


def advance_specialty(
    state: State, seat: int, specialty: str, steps: int, rng: random.Random
) -> list[Pending]:
    """Move a specialty marker up ``steps`` levels (rulebook "Develop Specialties").

    A step from level VI pays 3 guilders instead. The first time any track reaches a
    level marked ">" the reward disc moves on and its reward is taken; reaching that
    level again on another track gives nothing more.
    """
    player = state["seats"][seat]
    opened: list[Pending] = []
    for _ in range(steps):
        level = player["specialties"][specialty]
        if level >= data.MAX_LEVEL:
            player["guilders"] += 3
            continue
        level += 1
        player["specialties"][specialty] = level
        while player["reward_level"] < level:
            player["reward_level"] += 1
            reward = data.REWARD_TRACK.get(player["reward_level"])
            if reward is not None:
                opened.extend(grant(state, seat, reward, rng))
    return opened


def grant(state: State, seat: int, reward: dict[str, Any], rng: random.Random) -> list[Pending]:
    """Give one reward icon (rulebook "Refinements": the reward table); returns the choices
    it leaves open. Inks are drawn from the bag, not chosen."""
    player = state["seats"][seat]
    kind = reward["kind"]
    if kind == "guilders":
        player["guilders"] += reward["amount"]
        return []
    if kind == "fame":
        player["fame"] += reward["amount"]
        return []
    if kind == "inks":
        draw_from_bag(state, player, reward["amount"], rng)
        return []
    if kind == "specialty":
        return [{"seat": seat, "kind": "specialty"}]
    return open_order_choice(state, seat, rng)


def open_ink_choice(state: State, seat: int, count: int) -> list[Pending]:
    """Patronage's "Take any 2 inks from the bag" ("2 beliebige Tintentropfen"): the player
    chooses them, as many as the bag still holds (docs/rules/gutenberg.md, "Inks from the
    bag")."""
    count = min(count, components.bag_count(state["bag"]))
    return [{"seat": seat, "kind": "inks", "count": count}] if count else []


def open_order_choice(state: State, seat: int, rng: random.Random) -> list[Pending]:
    """An order as a reward: draw 2 printing and 2 refinement cards, keep one of each
    (rulebook "Take Orders"). Nothing happens when a deck and its discards are empty."""
    printing = components.draw(state["decks"]["printing"], 2, rng)
    refinement = components.draw(state["decks"]["refinement"], 2, rng)
    if not printing or not refinement:
        components.discard(state["decks"]["printing"], printing)
        components.discard(state["decks"]["refinement"], refinement)
        return []
    return [{"seat": seat, "kind": "order", "printing": printing, "refinement": refinement}]


def end_ink_choices_if_bag_empty(state: State) -> None:
    """An empty bag ends every open ink choice (docs/rules/gutenberg.md, "Empty bag")."""
    if not components.bag_count(state["bag"]):
        state["pending"] = [p for p in state["pending"] if p["kind"] != "inks"]


def open_choices(state: State, choices: list[Pending], front: bool = False) -> None:
    """Queue new pending choices: at the front when they follow from resolving one (so a
    chain resolves before the next choice), else at the end."""
    if front:
        state["pending"][0:0] = choices
    else:
        state["pending"].extend(choices)


# -- orders --------------------------------------------------------------------------


def discard_order(state: State, player: dict[str, Any], slot: int) -> None:
    order = player["orders"].pop(slot)
    components.discard(state["decks"]["printing"], [order["printing"]])
    components.discard(state["decks"]["refinement"], [order["refinement"]])


def check_slot_for_new_order(player: dict[str, Any], discard_slot: Any) -> None:
    """At most 4 orders: with 4, one must go first; with fewer, none may be named."""
    if len(player["orders"]) >= 4:
        if not isinstance(discard_slot, int) or not 0 <= discard_slot < len(player["orders"]):
            raise IllegalAction(
                "must_discard_order",
                "You hold 4 orders; name the order (discard_slot 0-3) to discard for this one.",
            )
    elif discard_slot is not None:
        raise IllegalAction(
            "discard_not_needed", "You have a free order slot; do not discard an order."
        )


def ink_cost(ink_set: list[str | None], count: int) -> int:
    """1st ink free, 2nd 1 guilder, 3rd 2 guilders, by position, also in a partly taken set."""
    return sum(leftmost_inks(ink_set, count))


def leftmost_inks(ink_set: list[str | None], count: int) -> list[int]:
    """The positions of the ``count`` leftmost inks still in a set ("left to right")."""
    return [i for i, ink in enumerate(ink_set) if ink is not None][:count]
