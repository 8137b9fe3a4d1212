"""Pieces every game shares, as functions over plain JSON data.

Decks and bags live in the state as plain dicts so states stay JSON; games call these
functions instead of writing their own shuffles, draws and payments. Randomness comes
only from the ``rng`` argument.

- deck: ``{"draw_pile": [...], "discard_pile": [...]}``, top of the draw pile is index 0.
- bag: ``{"contents": {item: count}}``; it has no order, draws are random at draw time.
- pool: ``{resource: amount}`` with amounts never below zero.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from projections.ruleset import IllegalAction

# -- decks -------------------------------------------------------------------------


def shuffled(items: Iterable[Any], rng: random.Random) -> list[Any]:
    """A new list with ``items`` in an order drawn from ``rng``."""
    result = list(items)
    rng.shuffle(result)
    return result


def new_deck(cards: Iterable[Any], rng: random.Random) -> dict[str, list[Any]]:
    """A shuffled deck with an empty discard pile."""
    return {"draw_pile": shuffled(cards, rng), "discard_pile": []}


def reshuffle_discards(deck: dict[str, list[Any]], rng: random.Random) -> None:
    """Shuffle the discard pile under the remaining draw pile."""
    deck["draw_pile"].extend(shuffled(deck["discard_pile"], rng))
    deck["discard_pile"] = []


def draw(deck: dict[str, list[Any]], count: int, rng: random.Random | None = None) -> list[Any]:
    """Take up to ``count`` cards from the top; with ``rng``, reshuffle discards when empty."""
    taken: list[Any] = []
    while len(taken) < count:
        if not deck["draw_pile"]:
            if rng is None or not deck["discard_pile"]:
                break
            reshuffle_discards(deck, rng)
        taken.append(deck["draw_pile"].pop(0))
    return taken


def discard(deck: dict[str, list[Any]], cards: Iterable[Any]) -> None:
    """Put cards face up on the discard pile."""
    deck["discard_pile"].extend(cards)


def deck_size(deck: Mapping[str, list[Any]]) -> dict[str, int]:
    """What anyone may see of a deck: how many cards are in each pile, never their order."""
    return {"draw_pile": len(deck["draw_pile"]), "discard_pile": len(deck["discard_pile"])}


# -- bags --------------------------------------------------------------------------


def new_bag(contents: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """A bag holding ``contents`` (item -> count)."""
    return {"contents": {item: count for item, count in sorted(contents.items()) if count > 0}}


def bag_count(bag: Mapping[str, Mapping[str, int]]) -> int:
    """How many items are in the bag."""
    return sum(bag["contents"].values())


def bag_draw(bag: dict[str, dict[str, int]], count: int, rng: random.Random) -> list[str]:
    """Draw up to ``count`` items at random (each item equally likely, without replacement)."""
    drawn: list[str] = []
    for _ in range(count):
        total = bag_count(bag)
        if total == 0:
            break
        pick = rng.randrange(total)
        for item in sorted(bag["contents"]):
            pick -= bag["contents"][item]
            if pick < 0:
                drawn.append(item)
                bag["contents"][item] -= 1
                if bag["contents"][item] == 0:
                    del bag["contents"][item]
                break
    return drawn


def bag_return(bag: dict[str, dict[str, int]], items: Iterable[str]) -> None:
    """Put items back into the bag."""
    for item in items:
        bag["contents"][item] = bag["contents"].get(item, 0) + 1


# -- resource pools ----------------------------------------------------------------


def pool_add(pool: dict[str, int], gains: Mapping[str, int]) -> None:
    """Add resources to a pool."""
    for resource, amount in gains.items():
        pool[resource] = pool.get(resource, 0) + amount


def can_pay(pool: Mapping[str, int], cost: Mapping[str, int]) -> bool:
    """Whether the pool holds at least ``cost`` of every resource."""
    return all(pool.get(resource, 0) >= amount for resource, amount in cost.items())


def pool_pay(
    pool: dict[str, int],
    cost: Mapping[str, int],
    code: str = "insufficient_resources",
    what: str = "this",
) -> None:
    """Take ``cost`` from the pool, or raise IllegalAction naming what is short."""
    short = {r: a - pool.get(r, 0) for r, a in cost.items() if pool.get(r, 0) < a}
    if short:
        missing = ", ".join(f"{amount} {resource}" for resource, amount in sorted(short.items()))
        raise IllegalAction(code, f"You are short of {missing} to pay for {what}.")
    for resource, amount in cost.items():
        pool[resource] = pool.get(resource, 0) - amount


# -- tracks ------------------------------------------------------------------------


def track_move(position: int, steps: int, lowest: int = 0, highest: int | None = None) -> int:
    """A marker's new position after ``steps`` (negative to go back), kept on the track."""
    moved = position + steps
    if highest is not None:
        moved = min(moved, highest)
    return max(moved, lowest)


# -- turn order --------------------------------------------------------------------


def next_seat(seat: int, seat_count: int) -> int:
    """The seat to the left (clockwise) of ``seat``."""
    return (seat + 1) % seat_count


def clockwise_from(first: int, seat_count: int) -> list[int]:
    """Every seat once, clockwise, starting with ``first``."""
    return [(first + offset) % seat_count for offset in range(seat_count)]


def snake_order(first: int, seat_count: int, rounds: int = 2) -> list[int]:
    """Draft order in order then in reverse (a snake), ``rounds`` passes long."""
    forward = clockwise_from(first, seat_count)
    order: list[int] = []
    for index in range(rounds):
        order.extend(forward if index % 2 == 0 else list(reversed(forward)))
    return order


def ranking(scores: Mapping[int, Iterable[int]]) -> list[list[int]]:
    """Seats grouped by place: sort by the score tuples (highest first); equal tuples share a place.

    ``scores`` maps seat -> a tuple (score, tie-breaker 1, tie-breaker 2, ...).
    """
    keyed = sorted(((tuple(key), seat) for seat, key in scores.items()), key=lambda kv: kv[0])
    keyed.reverse()
    places: list[list[int]] = []
    last: tuple[int, ...] | None = None
    for key, seat in keyed:
        if key == last:
            places[-1].append(seat)
        else:
            places.append([seat])
            last = key
    for place in places:
        place.sort()
    return places
