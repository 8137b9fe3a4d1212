"""How an agent values an unfinished Impendium position (projections/agents): each seat's
victory points, plus a little for its resources (what buys colonies, projects and battles),
plus its income (1. Generate Resources and Score Victory Points: its colonies' and its
Ark's stars, its rulers' resources and points) for the few generations still to come, plus
its progress towards points: discs on federation projects and harbingers, its Ark's way to
where discs are placed, and its factions.

Why income counts, and from when. A round ends only when every seat has passed, and a turn
may end once a trade was offered, even one declined (docs/rules/impendium.md, "Ending a
turn"), so a seat whose rivals have passed may put the round's end off for ever. Valued by
points and resources alone, a position changes at each generation by what one seat gains
over another: a seat that gains less finds any turn it takes instead of passing worth more
than passing, and a bots-only game never ends (docs/analysis.md, The agents); a colony, which costs
resources and pays only at the next generation, is never worth building either. So the income of the
next ``HORIZON`` generations counts, in a window that begins with the round's action turns:
between a round's generation and its action turns (``GENERATED``) one fewer is counted. The
round's end then changes no seat's value (its income was counted already, and the window
does not move until the next action turns begin), so passing and stalling are valued alike,
and a colony is worth the income it adds. An Ark moves, so its star counts for the next
generation only (``ARK_HORIZON``), in the same kind of window.

Why progress counts. Points come from discs placed on federation projects and harbingers
(Federation Project), and only when the card is completed; a seat that valued points alone
never paid the hydrogen to reach the federation card (the move lowered its value) nor a
slot's resources for a point still to come, so bots-only games ran at 0-0 for ever (issue
13). A disc on an unfinished card counts as a share of what it will score, a share that
grows as the card fills (``PLEDGED``); the Ark counts a little for being on, or few steps
from, a card where a disc can be placed (``REACH``); and each faction counts for the
colonies, ability and diplomacy cards it brings (``FACTION``). What is unfinished at the
end scores nothing, so none of this counts from the action turns of a ``round_limit``'s last
round (``progress_counts``: not from its generation, which the round before's last pass
would see).

Why a triggered end changes nothing. A seat that reaches 25 VP (or completes a galaxy of
each colour) triggers one more turn each, then the end. Were income and progress no longer
counted from the trigger, a seat with more of them than its rival would value the trigger
below its own turns and put it off for ever (a greedy seat alone in its round at 24 VP,
whose ruler's point at the next generation would trigger the end, offered declined trades
for thousands of seat actions). So they count until the game is over: the final turns are
few, and every choice of the last one leads to the same end.
"""

from __future__ import annotations

import math

from projections import components
from projections.games.impendium import board as grid
from projections.games.impendium import state as query
from projections.games.impendium.data import RULERS, STARS
from projections.ruleset import State

#: Points a resource on hand (or due at a generation counted) is worth to an agent (not to
#: the rulebook).
RESOURCE = 0.02
#: Generations of income counted from the start of a round's action turns: a colony's yield
#: over the rest of the game is unknowable, a few rounds of it is what an agent counts on.
HORIZON = 4
#: Generations of the Ark's star counted: the Ark moves on (to the federation card, to a
#: harbinger), so only the next generation is counted on.
ARK_HORIZON = 1
#: Phases between a round's generation and its action turns: that round's income is taken;
#: the window of ``HORIZON`` generations moves on when the action turns begin (the last
#: federation resource taken starts them).
GENERATED = ("federation_resource", "harbingers", "turmoil")
#: Share of its points a disc on an unfinished federation project or harbinger counts for
#: when the card is empty but for it; the rest comes as the card's slots fill (a full card
#: scores). Enough that a disc is worth a slot's resources and the hydrogen to get there.
PLEDGED = 0.5
#: Points an Ark counts for standing where it can place a disc: on the federation card, or
#: on a card next to a harbinger (worth more: a harbinger's majority pays 3 to 5 VP, and
#: battling it ends what it does each round). Less for each step (cell) away, none from
#: ``REACH_STEPS``; one step is worth more than a step's hydrogen and the Ark's star given up.
REACH = {"federation": 1.0, "harbinger": 1.5}
REACH_STEPS = 8
#: Points a faction counts for: 3 more colonies on the map, an ability each round and, when
#: recruited, 2 diplomacy cards (Recruit a Faction); more than recruiting costs (at most 14
#: resources), so a seat with the resources recruits.
FACTION = 0.5


def evaluate(state: State) -> list[float]:
    """Each seat's estimated final score."""
    counted = generations_counted(state)
    ark_counted = generations_counted(state, ARK_HORIZON)
    pledges = pledged(state) if progress_counts(state) else None
    values = []
    for seat, (mine, (r, p), ark) in enumerate(
        zip(state["seats"], colony_income(state), ark_income(state), strict=True)
    ):
        value = (
            mine["vp"]
            + RESOURCE * sum(mine["resources"].values())
            + counted * (RESOURCE * r + p)
            + ark_counted * RESOURCE * ark
        )
        if pledges is not None:
            value += pledges[seat] + reach(state, seat) + FACTION * len(mine["factions"])
        values.append(value)
    return values


def income(state: State) -> list[tuple[int, int]]:
    """Each seat's (resources, victory points) at a generation, as the board stands."""
    return [
        (r + ark, p) for (r, p), ark in zip(colony_income(state), ark_income(state), strict=True)
    ]


def colony_income(state: State) -> list[tuple[int, int]]:
    """Each seat's (resources, victory points) at a generation from its colonies and rulers."""
    count = query.seat_count(state)
    pools: list[dict[str, int]] = [{} for _ in range(count)]
    points = [0] * count
    for _position, entry in query.star_entries(state):
        production = STARS[entry["card"]]["production"]
        for disc in entry["colonies"]:
            if disc is not None:
                components.pool_add(pools[disc], production)
    for galaxy in state["galaxies"]:
        if galaxy["ruler"] is not None and galaxy["card"] is not None:
            card = RULERS[galaxy["card"]]
            components.pool_add(pools[galaxy["ruler"]], card["resources"])
            points[galaxy["ruler"]] += card["vp"]
    return [(sum(pool.values()), vp) for pool, vp in zip(pools, points, strict=True)]


def ark_income(state: State) -> list[int]:
    """Resources each seat's Ark yields at a generation: its star's top row."""
    found = []
    for seat in range(query.seat_count(state)):
        entry = query.entry_at(state, query.ark_cell(state, seat))
        if entry is not None and entry["kind"] == "star":
            found.append(sum(STARS[entry["card"]]["production"].values()))
        else:
            found.append(0)
    return found


def pledged(state: State) -> list[float]:
    """Each seat's share of the points its discs on unfinished cards will score: 1 VP a disc
    on a federation project; 1 VP a disc and the majority's reward on a harbinger (the
    card's VP to a single leader, 2 to each tied one), each times ``PLEDGED`` plus the rest
    in proportion to the slots filled (symbol slots only on a project: they complete it)."""
    points = [0.0] * query.seat_count(state)
    for project in state["projects"]:
        symbols = [
            disc
            for slot, disc in zip(STARS[project["card"]]["slots"], project["discs"], strict=True)
            if "cost" in slot
        ]
        share = _share(sum(disc is not None for disc in symbols), len(symbols))
        for disc in project["discs"]:
            if disc is not None:
                points[disc] += share
    for entry in state["board"].values():
        if entry["kind"] != "harbinger":
            continue
        scored = query.harbinger_points(entry)
        share = _share(sum(discs for _majority, discs in scored.values()), len(entry["discs"]))
        for seat, (majority, discs) in scored.items():
            points[seat] += share * (majority + discs)
    return points


def _share(filled: int, slots: int) -> float:
    return PLEDGED + (1 - PLEDGED) * filled / slots if slots else 1.0


def reach(state: State, seat: int) -> float:
    """What the seat's Ark counts for by where it stands: ``REACH`` of the best place to put
    a disc from (the federation card while a project is on display; a card next to a
    harbinger), less a share for each step (cell, as the crow flies) from there."""
    ark = query.ark_cell(state, seat)
    if ark is None:
        return 0.0
    x, y = grid.coords(ark)
    best = 0.0
    if state["projects"]:
        best = REACH["federation"] * _closeness(abs(x) + abs(y))
    board = state["board"]
    for position, entry in board.items():
        if entry["kind"] != "harbinger":
            continue
        for card in grid.adjacent_positions(position):
            beside = board.get(card)
            if beside is not None and beside["kind"] in grid.WALKABLE:
                cx, cy = grid.coords(card)
                best = max(best, REACH["harbinger"] * _closeness(abs(x - cx) + abs(y - cy)))
    return best


def _closeness(steps: int) -> float:
    return max(0.0, 1 - steps / REACH_STEPS)


def generations_counted(state: State, horizon: int = HORIZON) -> int:
    """How many generations of income the evaluation counts: those still to come before the
    game ends, at most ``horizon`` (one fewer in the ``GENERATED`` phases)."""
    window = horizon - 1 if state["phase"] in GENERATED else horizon
    return int(min(window, generations_to_come(state)))


def generations_to_come(state: State) -> float:
    """Generations of resources before the game ends: none once it is over, else up to the
    ``round_limit`` (each round from the next begins with one; this round's too while its
    phase is ``generate``), else no end known. A triggered end (25 VP, a galaxy of each
    colour) changes nothing here: the final turns are finite, and a seat whose value fell
    at the trigger would put it off for ever rather than pass (docs/analysis.md); the value falls to
    the points scored when the game is over, after the last final turn, which every choice
    of that turn reaches."""
    if state["finished"]:
        return 0
    limit = state["options"]["round_limit"]
    if limit is None:
        return math.inf
    return limit - state["round"] + (1 if state["phase"] == "generate" else 0)


def progress_counts(state: State) -> bool:
    """Whether discs on unfinished cards, the Ark's reach and factions count: while a
    generation is to come, and in the ``GENERATED`` phases of the round that took the last
    one, so that they stop counting when the last round's action turns begin (every choice
    of the last federation resource leads there alike), not at the round's end before it."""
    return generations_to_come(state) > 0 or (not state["finished"] and state["phase"] in GENERATED)
