"""Reading an Impendium state: counts of colonies and discs, costs, galaxy facts.

Pure queries shared by the reducer, the legality lists, the views and the scoring.
"""

from __future__ import annotations

from typing import Any

from projections.games.impendium import board as grid
from projections.games.impendium.data import COLOURS, HARBINGERS, RESOURCES, STARS

State = dict[str, Any]

#: Colony discs per player that can go on the map or on projects (Setup: "9 colony discs").
DISCS_PER_PLAYER = 9
#: "Each Faction gives you 3 available colony discs" (Build a Colony, note).
COLONIES_PER_FACTION = 3
MAX_FACTIONS = 3
#: "pay 14 of that resource minus the number of colonies ..." (Recruit a Faction).
RECRUIT_BASE_COST = 14
#: "the most you could possibly take is 5" (Move, attacking).
MAX_SPOILS = 5
END_VP = 25
SEMI_COOPERATIVE_WIN_VP = 20
COOPERATIVE_GALAXIES = 8


def galaxy_size(state: State) -> int:
    """3 connected stars of one colour, or 2 with the faster-game option (Galaxies)."""
    return 2 if state["options"]["fast_galaxies"] else 3


def seat_count(state: State) -> int:
    return len(state["players"])


def star_entries(state: State) -> list[tuple[str, dict[str, Any]]]:
    """(position, entry) of every intact star on the map."""
    return [(pos, entry) for pos, entry in state["board"].items() if entry["kind"] == "star"]


def map_colonies(state: State, seat: int) -> int:
    """Colonies on the map, constructed federation stars included (Federation Project, note)."""
    count = sum(entry["colonies"].count(seat) for _pos, entry in star_entries(state))
    for pending in state["pending"]:
        if pending["kind"] == "place_star":
            count += pending["colonies"].count(seat)
    return count


def project_discs(state: State, seat: int) -> int:
    return sum(project["discs"].count(seat) for project in state["projects"])


def harbinger_discs(state: State, seat: int) -> int:
    return sum(
        entry["discs"].count(seat)
        for entry in state["board"].values()
        if entry["kind"] == "harbinger"
    )


def free_discs(state: State, seat: int) -> int:
    """Discs neither on the map, nor on a project, nor on a harbinger."""
    placed = map_colonies(state, seat) + project_discs(state, seat) + harbinger_discs(state, seat)
    return DISCS_PER_PLAYER - placed


def colony_cap(state: State, seat: int) -> int:
    """How many colonies this player may have on the map: 3 per faction."""
    return COLONIES_PER_FACTION * len(state["seats"][seat]["factions"])


def colonies_producing(state: State, seat: int, resource: str) -> int:
    """Colonies of this player on stars whose top row yields ``resource``."""
    return sum(
        entry["colonies"].count(seat)
        for _pos, entry in star_entries(state)
        if resource in STARS[entry["card"]]["production"]
    )


def recruit_cost(state: State, seat: int, resource: str) -> int:
    """14 of the faction's resource minus the colonies producing it, never below 0."""
    return max(0, RECRUIT_BASE_COST - colonies_producing(state, seat, resource))


def symbol_slots_filled(card_slots: list[dict[str, Any]], discs: list[Any]) -> bool:
    """Whether every slot with resource symbols holds a disc (numeric slots do not count)."""
    return all(
        disc is not None for slot, disc in zip(card_slots, discs, strict=True) if "cost" in slot
    )


def slot_cost(
    state: State, seat: int, slot: dict[str, Any], resource: Any, discount: str
) -> tuple[dict[str, int], list[str]] | None:
    """The resources a slot costs this player and the discount tokens it uses up.

    None when a numeric slot is paid without naming a single resource. A faction's
    discount only applies where the slot "specifically demand[s]" that resource
    (Faction Card Clarification).
    """
    if "cost" in slot:
        if resource is not None:
            return None
        tokens = state["seats"][seat]["discounts"][discount]
        cost: dict[str, int] = {}
        used: list[str] = []
        for res, amount in slot["cost"].items():
            off = tokens.get(res, 0)
            if off:
                used.append(res)
            if amount - off > 0:
                cost[res] = amount - off
        return cost, used
    if resource not in RESOURCES:
        return None
    return {resource: slot["any"]}, []


def substitution_problem(
    state: State, seat: int, cost: dict[str, int], substitute: dict[str, dict[str, int]]
) -> str | None:
    """Why ``substitute`` cannot pay part of ``cost``, or None when it may.

    "SUB 2 (water): Treat 2 water as a wild resource. Substitute up to 2 water to pay the
    cost of 2 of any other resource" (Faction Card Clarification): the ability leaves its
    target a token (``discounts["substitute"]``, resource -> units left this round), and
    the player paying a cost chooses whether to use it (docs/rules/impendium.md, "SUB 2").
    ``substitute`` names, per wild resource, the kinds it stands in for and how many units
    (``{"water": {"hydrogen": 1, "artifacts": 1}}``); its shape is the schema's.
    """
    tokens = state["seats"][seat]["discounts"]["substitute"]
    pool = state["seats"][seat]["resources"]
    covered: dict[str, int] = {}
    for wild, kinds in substitute.items():
        units = sum(kinds.values())
        if tokens.get(wild, 0) <= 0:
            return f"Nobody's SUB faction lets your {_word(wild)} stand in this round."
        if units > tokens[wild]:
            return (
                f"Your SUB token lets {tokens[wild]} {_word(wild)} stand in this round; "
                f"you named {units}."
            )
        for kind, n in kinds.items():
            if kind == wild:
                return f"{_word(wild).capitalize()} cannot stand in for itself."
            if cost.get(kind, 0) <= 0:
                return f"That cost demands no {_word(kind)}."
            covered[kind] = covered.get(kind, 0) + n
        if pool[wild] < units:
            return f"You hold {pool[wild]} {_word(wild)}; substituting takes {units}."
    for kind, n in covered.items():
        if n > cost[kind]:
            return f"That cost demands {cost[kind]} {_word(kind)}; you substituted {n}."
    return None


def paid_with(cost: dict[str, int], substitute: dict[str, dict[str, int]] | None) -> dict[str, int]:
    """What paying ``cost`` takes with ``substitute`` (checked): the kinds it stands in for
    less those units, its wild resources more."""
    taken = {res: n for res, n in cost.items() if n > 0}
    for wild, kinds in (substitute or {}).items():
        for kind, n in kinds.items():
            taken[kind] -= n
            taken[wild] = taken.get(wild, 0) + n
    return {res: n for res, n in taken.items() if n > 0}


def payment(
    state: State,
    seat: int,
    cost: dict[str, int],
    substitute: dict[str, dict[str, int]] | None = None,
) -> dict[str, int] | None:
    """What paying ``cost`` with ``substitute`` (checked by ``substitution_problem``; None:
    in kind) takes from this player's pool, or None when the pool cannot meet it."""
    taken = paid_with(cost, substitute)
    pool = state["seats"][seat]["resources"]
    return taken if all(pool[res] >= n for res, n in taken.items()) else None


def shortfall_covers(
    state: State, seat: int, cost: dict[str, int], most: int
) -> list[dict[str, dict[str, int]]]:
    """The first ``most`` substitutions covering exactly what the pool lacks of ``cost``
    (each unit short paid by a token's resource the pool has to spare), ``[]`` when none
    does or nothing is short."""
    pool = state["seats"][seat]["resources"]
    tokens = state["seats"][seat]["discounts"]["substitute"]
    short = [(res, cost[res] - pool[res]) for res in RESOURCES if cost.get(res, 0) > pool[res]]
    if not short:
        return []
    spare = {
        wild: min(units, pool[wild] - cost.get(wild, 0))
        for wild, units in tokens.items()
        if units > 0 and pool[wild] - cost.get(wild, 0) > 0
    }
    found: list[dict[str, dict[str, int]]] = []

    def cover(index: int, left: dict[str, int], chosen: dict[str, dict[str, int]]) -> None:
        if len(found) >= most:
            return
        if index == len(short):
            found.append({wild: dict(kinds) for wild, kinds in chosen.items()})
            return
        kind, need = short[index]
        wilds = [w for w in RESOURCES if w in left and w != kind and left[w] > 0]
        for split in _splits(need, [left[w] for w in wilds]):
            step = {w: n for w, n in zip(wilds, split, strict=True) if n}
            for wild, n in step.items():
                chosen.setdefault(wild, {})[kind] = n
                left[wild] -= n
            cover(index + 1, left, chosen)
            for wild, n in step.items():
                left[wild] += n
                del chosen[wild][kind]
                if not chosen[wild]:
                    del chosen[wild]

    cover(0, dict(spare), {})
    return found


def ark_cell(state: State, seat: int) -> str | None:
    ark = state["arks"][seat]
    return ark if isinstance(ark, str) else None


def entry_at(state: State, position: str | None) -> dict[str, Any] | None:
    if position is None:
        return None
    entry = state["board"].get(position)
    return entry if isinstance(entry, dict) else None


def galaxy_colours(state: State) -> set[str]:
    return {galaxy["colour"] for galaxy in state["galaxies"]}


def every_colour_has_a_galaxy(state: State) -> bool:
    if len(state["galaxies"]) < len(COLOURS):
        return False
    return galaxy_colours(state) >= set(COLOURS)


def colonies_by_seat(state: State, positions: list[str]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for position in positions:
        for disc in state["board"][position]["colonies"]:
            if disc is not None:
                counts[disc] = counts.get(disc, 0) + 1
    return counts


def majority(counts: dict[int, int]) -> int | None:
    """The one seat with the most, or None when nobody has any or the lead is shared."""
    if not counts:
        return None
    best = max(counts.values())
    leaders = [seat for seat, count in counts.items() if count == best]
    return leaders[0] if best > 0 and len(leaders) == 1 else None


def harbinger_points(entry: dict[str, Any]) -> dict[int, tuple[int, int]]:
    """What each seat with discs on a harbinger scores when it is defeated: its majority
    reward (the card's VP to a single leader, 2 VP to each tied leader, 0 to the others)
    and 1 VP a disc (Battle a Harbinger). Empty slots count for nobody."""
    counts: dict[int, int] = {}
    for disc in entry["discs"]:
        if disc is not None:
            counts[disc] = counts.get(disc, 0) + 1
    if not counts:
        return {}
    best = max(counts.values())
    leaders = [seat for seat, count in counts.items() if count == best]
    reward = HARBINGERS[entry["card"]]["vp"] if len(leaders) == 1 else 2
    return {seat: (reward if seat in leaders else 0, count) for seat, count in counts.items()}


def harbinger_neighbours(state: State, position: str) -> list[str]:
    return [
        adj
        for adj in grid.adjacent_positions(position)
        if (entry_at(state, adj) or {}).get("kind") == "harbinger"
    ]


def total_resources(state: State, seat: int) -> int:
    return sum(state["seats"][seat]["resources"].values())


def _splits(total: int, most: list[int]) -> list[list[int]]:
    """Every way to write ``total`` as parts bounded by ``most``, in order."""
    if not most:
        return [[]] if total == 0 else []
    return [
        [first, *rest]
        for first in range(min(total, most[0]), -1, -1)
        for rest in _splits(total - first, most[1:])
    ]


def _word(resource: str) -> str:
    return resource.replace("_", " ")
