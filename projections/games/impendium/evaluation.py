"""How an agent values an unfinished Impendium position (projections/agents): each seat's
victory points, plus a little for its resources (what buys colonies, projects and battles),
plus its income (1. Generate Resources and Score Victory Points: its colonies' and its
Ark's stars, its rulers' resources and points) for the few generations still to come.

Why income counts, and from when. A round ends only when every seat has passed, and a turn
may end once a trade was offered, even one declined (docs/rules/impendium.md, "Ending a
turn"), so a seat whose rivals have passed may put the round's end off for ever. Valued by
points and resources alone, a position changes at each generation by what one seat gains
over another: a seat that gains less finds any turn it takes instead of passing worth more
than passing, and a bots-only game never ends (issue 13); a colony, which costs resources
and pays only at the next generation, is never worth building either. So the income of the
next ``HORIZON`` generations counts, in a window that begins with the round's action turns:
between a round's generation and its action turns (``GENERATED``) one fewer is counted. The
round's end then changes no seat's value (its income was counted already, and the window
does not move until the next action turns begin), so passing and stalling are valued alike,
and a colony is worth the income it adds.
"""

from __future__ import annotations

import math

from projections import components
from projections.games.impendium import state as query
from projections.games.impendium.data import RULERS, STARS
from projections.ruleset import State

#: Points a resource on hand (or due at a generation counted) is worth to an agent (not to
#: the rulebook).
RESOURCE = 0.02
#: Generations of income counted from the start of a round's action turns: a colony's yield
#: over the rest of the game is unknowable, a few rounds of it is what an agent counts on.
HORIZON = 4
#: Phases between a round's generation and its action turns: that round's income is taken;
#: the window of ``HORIZON`` generations moves on when the action turns begin (the last
#: federation resource taken starts them).
GENERATED = ("federation_resource", "harbingers", "turmoil")


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    counted = generations_counted(state)
    return [
        seat["vp"] + RESOURCE * sum(seat["resources"].values()) + counted * (RESOURCE * r + p)
        for seat, (r, p) in zip(state["seats"], income(state), strict=True)
    ]


def income(state: State) -> list[tuple[int, int]]:
    """Each seat's (resources, victory points) at a generation, as the board stands."""
    count = query.seat_count(state)
    pools: list[dict[str, int]] = [{} for _ in range(count)]
    points = [0] * count
    for position, entry in query.star_entries(state):
        production = STARS[entry["card"]]["production"]
        for disc in entry["colonies"]:
            if disc is not None:
                components.pool_add(pools[disc], production)
        for seat, ark in enumerate(state["arks"]):
            if ark == position:
                components.pool_add(pools[seat], production)
    for galaxy in state["galaxies"]:
        if galaxy["ruler"] is not None and galaxy["card"] is not None:
            card = RULERS[galaxy["card"]]
            components.pool_add(pools[galaxy["ruler"]], card["resources"])
            points[galaxy["ruler"]] += card["vp"]
    return [(sum(pool.values()), vp) for pool, vp in zip(pools, points, strict=True)]


def generations_counted(state: State) -> int:
    """How many generations of income the evaluation counts: those still to come before the
    game ends, at most ``HORIZON`` (one fewer in the ``GENERATED`` phases)."""
    window = HORIZON - 1 if state["phase"] in GENERATED else HORIZON
    return int(min(window, generations_to_come(state)))


def generations_to_come(state: State) -> float:
    """Generations of resources before the game ends: none once the end is triggered (the
    final turns lead to scoring), else up to the ``round_limit`` (each round from the next
    begins with one; this round's too while its phase is ``generate``), else no end known."""
    if state["finished"] or state["end_trigger"] is not None:
        return 0
    limit = state["options"]["round_limit"]
    if limit is None:
        return math.inf
    return limit - state["round"] + (1 if state["phase"] == "generate" else 0)
