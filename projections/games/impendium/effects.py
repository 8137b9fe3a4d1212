"""What follows from an action: federation stars landing, galaxies, harbingers, rulers,
faction abilities and galactic diplomacy cards.

Each ``check_*`` raises IllegalAction before anything changes; the matching ``apply_*``
then changes the state. Decisions where the rulebook is silent are in
docs/rules/impendium.md.
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.impendium import board as grid
from projections.games.impendium import state as query
from projections.games.impendium.data import (
    DIPLOMACY,
    FACTIONS,
    HARBINGERS,
    RESOURCES,
    STARS,
)
from projections.ruleset import IllegalAction

State = dict[str, Any]


def gain_vp(state: State, seat: int, amount: int, source: str) -> None:
    mine = state["seats"][seat]
    mine["vp"] += amount
    mine["vp_sources"][source] += amount


def lose(state: State, seat: int, resource: str, amount: int) -> None:
    """Lose up to ``amount``; a pool never goes below zero."""
    pool = state["seats"][seat]["resources"]
    pool[resource] = max(0, pool[resource] - amount)


def check_substitution(
    state: State, seat: int, cost: dict[str, int], substitute: Any
) -> dict[str, dict[str, int]] | None:
    """The substitution an action names for ``cost`` (None: paid in kind), or
    ``bad_substitution`` (docs/rules/impendium.md, "SUB 2")."""
    if substitute is None:
        return None
    problem = query.substitution_problem(state, seat, cost, substitute)
    if problem is not None:
        raise IllegalAction("bad_substitution", problem)
    return dict(substitute)


def pay(
    state: State,
    seat: int,
    cost: dict[str, int],
    substitute: dict[str, dict[str, int]] | None = None,
) -> None:
    """Pay ``cost`` (already checked with ``state.payment``), using up the SUB tokens that
    ``substitute`` spends."""
    taken = query.payment(state, seat, cost, substitute)
    assert taken is not None
    components.pool_pay(state["seats"][seat]["resources"], taken)
    tokens = state["seats"][seat]["discounts"]["substitute"]
    for wild, kinds in (substitute or {}).items():
        tokens[wild] -= sum(kinds.values())
        if tokens[wild] <= 0:
            del tokens[wild]


# -- colonies and galaxies ---------------------------------------------------------------


def lift_disc(state: State, source: str) -> None:
    """Take a colony disc off the map, a project or a harbinger ("map:x,y/slot",
    "project:card/slot", "harbinger:x,y/slot")."""
    named = grid.parse_disc(source)
    assert named is not None, "the reducer checked the name (rules.may_relocate)"
    where, place, index = named
    if where == "map":
        state["board"][place]["colonies"][index] = None
    elif where == "harbinger":
        state["board"][place]["discs"][index] = None
    else:
        for project in state["projects"]:
            if project["card"] == place:
                project["discs"][index] = None


def galaxy_of(state: State, position: str) -> dict[str, Any] | None:
    return next((g for g in state["galaxies"] if position in g["stars"]), None)


def shift_galaxy_control(state: State, seat: int, position: str) -> None:
    """ "If placing a colony shifts control of a galaxy into your hands, take a Ruler of the
    Galaxy card of your choosing from the incumbent ruler of the galaxy.\""""
    galaxy = galaxy_of(state, position)
    if galaxy is None or galaxy["ruler"] == seat:
        return
    if query.majority(query.colonies_by_seat(state, galaxy["stars"])) != seat:
        return
    incumbent = galaxy["ruler"]
    if incumbent is None:
        # Nobody ruled it (a tie at its forming): the new ruler draws a card.
        galaxy["ruler"] = seat
        if galaxy["card"] is None:
            drawn = components.draw(state["decks"]["rulers"], 1)
            galaxy["card"] = drawn[0] if drawn else None
        return
    options = sorted(
        g["card"] for g in state["galaxies"] if g["ruler"] == incumbent and g["card"] is not None
    )
    if len(options) > 1:
        state["pending"].append(
            {"kind": "take_ruler", "seat": seat, "galaxy": galaxy["id"], "options": options}
        )
    elif options:
        seize_ruler_card(state, seat, galaxy["id"], options[0])
    else:
        galaxy["ruler"] = seat


def seize_ruler_card(state: State, seat: int, galaxy_id: int, card: str) -> None:
    """The new ruler takes ``card``; the incumbent keeps the galaxy card it gave up in its place."""
    galaxy = next(g for g in state["galaxies"] if g["id"] == galaxy_id)
    holder = next(g for g in state["galaxies"] if g["card"] == card)
    holder["card"], galaxy["card"] = galaxy["card"], card
    galaxy["ruler"] = seat


def _components_by_colour(state: State) -> list[tuple[str, list[str]]]:
    board = state["board"]
    seen: set[str] = set()
    found = []
    for start in sorted(board, key=grid.coords):
        entry = board[start]
        if entry["kind"] != "star" or start in seen:
            continue
        colour = STARS[entry["card"]]["colour"]
        group, frontier = [], [start]
        seen.add(start)
        while frontier:
            here = frontier.pop()
            group.append(here)
            for adj in grid.adjacent_positions(here):
                other = board.get(adj)
                if (
                    adj not in seen
                    and other is not None
                    and other["kind"] == "star"
                    and STARS[other["card"]]["colour"] == colour
                ):
                    seen.add(adj)
                    frontier.append(adj)
        found.append((colour, sorted(group, key=grid.coords)))
    return found


def update_galaxies(state: State) -> None:
    """Galaxies are connected stars of one colour, 3 or more (2 with fast galaxies).

    A galaxy that grows keeps its ruler; two that merge keep the older one; one broken
    below the size by a destroyed star ends and its ruler card goes under the ruler deck.
    A new galaxy's majority holder draws a ruler card (docs/rules/impendium.md, "Galaxies").
    """
    size = query.galaxy_size(state)
    groups = [(c, g) for c, g in _components_by_colour(state) if len(g) >= size]
    claims: dict[int, list[dict[str, Any]]] = {}
    for galaxy in state["galaxies"]:
        overlaps = [len(set(galaxy["stars"]) & set(g)) for _c, g in groups]
        if overlaps and max(overlaps) > 0:
            claims.setdefault(overlaps.index(max(overlaps)), []).append(galaxy)
    kept = []
    for index, (colour, group) in enumerate(groups):
        owners = sorted(claims.get(index, []), key=lambda g: g["id"])
        if owners:
            owners[0]["stars"] = group
            kept.append(owners[0])
            continue
        ruler = query.majority(query.colonies_by_seat(state, group))
        card = None
        if ruler is not None:
            drawn = components.draw(state["decks"]["rulers"], 1)
            card = drawn[0] if drawn else None
        kept.append(
            {
                "id": state["next_galaxy"],
                "colour": colour,
                "stars": group,
                "ruler": ruler,
                "card": card,
            }
        )
        state["next_galaxy"] += 1
    kept_ids = {g["id"] for g in kept}
    for galaxy in state["galaxies"]:
        if galaxy["id"] not in kept_ids and galaxy["card"] is not None:
            state["decks"]["rulers"]["draw_pile"].append(galaxy["card"])
    state["galaxies"] = sorted(kept, key=lambda g: g["id"])


# -- federation stars ---------------------------------------------------------------------


def complete_federation_star(
    state: State, seat: int, project: dict[str, Any], rng: random.Random
) -> None:
    """Every participant gets 1 VP per disc; the completer places it; the project is replaced."""
    for disc in project["discs"]:
        if disc is not None:
            gain_vp(state, disc, 1, "federation_stars")
    state["projects"].remove(project)
    refill = components.draw(state["decks"]["stars"], 1, rng)
    for card in refill:
        state["projects"].append({"card": card, "discs": [None] * len(STARS[card]["slots"])})
    state["pending"].append(
        {"kind": "place_star", "seat": seat, "card": project["card"], "colonies": project["discs"]}
    )


def star_positions(state: State) -> list[str]:
    """Empty places or space dust next to a star card, never next to a harbinger."""
    board = state["board"]
    candidates: set[str] = set()
    for pos, entry in board.items():
        if entry["kind"] in grid.WALKABLE:
            for adj in grid.adjacent_positions(pos):
                other = board.get(adj)
                if other is None or other["kind"] == "dust":
                    candidates.add(adj)
    clear = [p for p in candidates if not query.harbinger_neighbours(state, p)]
    # Should harbingers wall in every spot, the star goes anywhere next to a card
    # (docs/rules/impendium.md, "A star with nowhere to go").
    return sorted(clear or candidates, key=grid.coords)


def land_star(
    state: State, seat: int, pending: dict[str, Any], position: str, rng: random.Random
) -> None:
    board = state["board"]
    covered = board.get(position)
    if covered is not None:
        components.discard(state["decks"]["stars"], [covered["card"]])
    card = pending["card"]
    board[position] = {"kind": "star", "card": card, "colonies": list(pending["colonies"])}
    update_galaxies(state)
    colour = STARS[card]["colour"]
    twins = [
        adj
        for adj in grid.adjacent_positions(position)
        if board.get(adj, {}).get("kind") == "star"
        and STARS[board[adj]["card"]]["colour"] == colour
    ]
    if not twins:
        return
    drawn = components.draw(state["decks"]["harbingers"], 1, rng)
    if not drawn:
        return
    if harbinger_positions(state, position):
        state["pending"].insert(
            0, {"kind": "place_harbinger", "seat": seat, "card": drawn[0], "near": position}
        )
    else:
        # Nowhere to put it: it is discarded (docs/rules/impendium.md).
        components.discard(state["decks"]["harbingers"], drawn)


def harbinger_positions(state: State, near: str) -> list[str]:
    """Next to the star just placed if possible, else next to a star of its colour."""
    board = state["board"]
    beside = [adj for adj in grid.adjacent_positions(near) if adj not in board]
    if beside:
        return sorted(beside, key=grid.coords)
    colour = STARS[board[near]["card"]]["colour"]
    found = {
        adj
        for pos, entry in board.items()
        if entry["kind"] == "star" and STARS[entry["card"]]["colour"] == colour
        for adj in grid.adjacent_positions(pos)
        if adj not in board
    }
    return sorted(found, key=grid.coords)


# -- harbingers of the void ------------------------------------------------------------------


def activate_harbinger(state: State, card: str, position: str) -> None:
    activation = HARBINGERS[card]["activation"]
    kind = activation["kind"]
    if kind == "destroy_star":
        destroy_weakest_neighbour(state, position)
    elif kind == "drain":
        for seat in range(query.seat_count(state)):
            lose(state, seat, activation["resource"], activation["amount"])
    else:
        near = set(grid.adjacent_positions(position)) | set(grid.step_cells(position))
        for seat, ark in enumerate(state["arks"]):
            if ark in near:
                lose(state, seat, activation["resource"], activation["amount"])


def destroy_weakest_neighbour(state: State, position: str) -> None:
    """Destroy the adjacent star with the fewest colonies (ties: the lowest card id)."""
    board = state["board"]
    stars = [
        (sum(disc is not None for disc in board[adj]["colonies"]), board[adj]["card"], adj)
        for adj in grid.adjacent_positions(position)
        if board.get(adj, {}).get("kind") == "star"
    ]
    if not stars:
        return
    _count, card, target = min(stars)
    # "If a star card is destroyed ... flip the card over. This now represents space dust."
    board[target] = {"kind": "dust", "card": card}
    update_galaxies(state)


def defeat_harbinger(state: State, position: str) -> None:
    """Majority gets the card's VP (tied players 2 each); every disc scores 1; discs return."""
    entry = state["board"][position]
    points = sorted(query.harbinger_points(entry).items())
    for seat, (majority, _discs) in points:
        if majority:
            gain_vp(state, seat, majority, "harbinger_majority")
    for seat, (_majority, discs) in points:
        gain_vp(state, seat, discs, "harbinger_discs")
    del state["board"][position]
    components.discard(state["decks"]["harbingers"], [entry["card"]])


# -- faction abilities -------------------------------------------------------------------------


def check_ability(state: State, faction: str, target: int, action: dict[str, Any]) -> None:
    """Every ability takes only its target: the effects need no further choice."""
    extra = set(action) - {"type", "seat", "faction", "target"}
    if extra:
        raise IllegalAction("bad_ability_use", f"Unexpected fields: {', '.join(sorted(extra))}.")


#: The token bucket each lasting ability leaves on its target (until the round ends).
TOKEN_BUCKETS = {
    "project_discount": "project",
    "colony_discount": "colony",
    "substitute": "substitute",
}


def apply_ability(state: State, faction: str, target: int, action: dict[str, Any]) -> None:
    """+N gains at once; a discount or SUB token waits for the target's next payments."""
    ability = FACTIONS[faction]["ability"]
    kind, resource, amount = ability["kind"], ability["resource"], ability["amount"]
    if kind == "gain":
        state["seats"][target]["resources"][resource] += amount
        return
    tokens = state["seats"][target]["discounts"][TOKEN_BUCKETS[kind]]
    tokens[resource] = tokens.get(resource, 0) + amount


# -- galactic diplomacy --------------------------------------------------------------------------

#: The fields each diplomacy effect takes besides type and card.
DIPLOMACY_FIELDS = {
    "supply": ("resource",),
    "tribute": ("target", "resource"),
    "recognition": (),
    "renewal": ("faction",),
    "sabotage": ("target", "resource"),
    "embassy": (),
    "hyperlane": (),
    "trade_pact": ("resource", "gain"),
    "recall": (),
}


def check_diplomacy(state: State, seat: int, card: str, action: dict[str, Any]) -> None:
    effect = DIPLOMACY[card]["effect"]
    wanted = set(DIPLOMACY_FIELDS[effect])
    given = set(action) - {"type", "seat", "card"}
    if given != wanted:
        raise IllegalAction(
            "bad_diplomacy_use",
            f"This card takes: {', '.join(sorted(wanted)) or 'nothing more'}.",
        )
    if "resource" in wanted and action["resource"] not in RESOURCES:
        raise IllegalAction("bad_resource", f"Name one of {', '.join(RESOURCES)}.")
    if "target" in wanted:
        target = action["target"]
        if (
            not isinstance(target, int)
            or isinstance(target, bool)
            or not 0 <= target < query.seat_count(state)
            or target == seat
        ):
            raise IllegalAction("bad_target", "Name another player's seat.")
        if state["seats"][target]["resources"][action["resource"]] <= 0:
            raise IllegalAction("nothing_to_take", "That player holds none of that resource.")
    if effect == "renewal" and action["faction"] not in state["seats"][seat]["turned"]:
        raise IllegalAction("bad_diplomacy_use", "Name one of your factions that is turned.")
    if effect == "trade_pact":
        if action["gain"] not in RESOURCES or action["gain"] == action["resource"]:
            raise IllegalAction("bad_resource", "Gain a resource other than the one you pay.")
        if state["seats"][seat]["resources"][action["resource"]] < 1:
            raise IllegalAction("insufficient_resources", "You hold none of that resource.")
    if effect == "recall" and state["arks"][seat] == grid.FEDERATION:
        raise IllegalAction("bad_diplomacy_use", "Your Ark is already on the federation card.")


def apply_diplomacy(state: State, seat: int, card: str, action: dict[str, Any]) -> None:
    effect = DIPLOMACY[card]["effect"]
    pool = state["seats"][seat]["resources"]
    if effect == "supply":
        pool[action["resource"]] += 2
    elif effect == "tribute":
        lose(state, action["target"], action["resource"], 1)
        pool[action["resource"]] += 1
    elif effect == "recognition":
        gain_vp(state, seat, 1, "diplomacy")
    elif effect == "renewal":
        state["seats"][seat]["turned"].remove(action["faction"])
    elif effect == "sabotage":
        lose(state, action["target"], action["resource"], 2)
    elif effect == "embassy":
        components.pool_add(pool, {resource: 1 for resource in RESOURCES})
    elif effect == "hyperlane":
        pool["hydrogen"] += 3
    elif effect == "trade_pact":
        pool[action["resource"]] -= 1
        pool[action["gain"]] += 2
    else:
        state["arks"][seat] = grid.FEDERATION
