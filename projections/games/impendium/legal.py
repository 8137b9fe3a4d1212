"""Every concrete legal action of a seat (the ruleset's ``legal_actions``).

Each list is built from the same checks the reducer makes; the random playouts apply
every listed action they sample, so a mismatch shows up there.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from projections import components, decisions
from projections.games.impendium import board as grid
from projections.games.impendium import effects, rules, turmoil
from projections.games.impendium import state as query
from projections.games.impendium.data import DIPLOMACY, HARBINGERS, RESOURCES, STARS

State = dict[str, Any]
Action = dict[str, Any]

#: The most substitutions listed for one cost; any valid one posted is accepted
#: (docs/rules/impendium.md, "SUB 2").
MAX_SUBSTITUTIONS = 6


def legal_actions(state: State, seat: int) -> list[Action]:
    phase = state["phase"]
    if state["finished"]:
        return []
    if phase in ("setup_stars", "setup_colonies", "setup_arks"):
        return _setup_actions(state, seat) if state["setup_queue"][0] == seat else []
    if phase not in rules.ANY_TIME_PHASES or rules.due_system_step(state) is not None:
        return []  # setup is over; an automatic step (a battle's dice among them) is due
    actions: list[Action] = []
    if phase == "federation_resource":
        if not state["federation_taken"][seat]:
            actions.extend({"type": "take_federation_resource", "resource": r} for r in RESOURCES)
    elif state["pending"]:
        pending = state["pending"][0]
        if pending["seat"] == seat:
            actions.extend(_choices(state, pending))
    elif state["turn"] is not None and state["turn"]["seat"] == seat:
        actions.extend(_turn_actions(state, seat))
    # Faction abilities and diplomacy cards: "at any time", on anyone's turn.
    actions.extend(_ability_uses(state, seat))
    actions.extend(_diplomacy_plays(state, seat))
    return actions


def _setup_actions(state: State, seat: int) -> list[Action]:
    phase = state["phase"]
    if phase == "setup_stars":
        return [
            {"type": "place_start_star", "position": p}
            for p in rules.start_star_positions(state, seat)
        ]
    if phase == "setup_colonies":
        return [
            {"type": "place_setup_colony", "position": p, "slot": s}
            for p, s in rules.setup_colony_slots(state)
        ]
    return [{"type": "place_ark", "position": p} for p in grid.walkable_cells(state["board"])]


def _choices(state: State, pending: dict[str, Any]) -> list[Action]:
    kind = pending["kind"]
    if kind == "spoils":
        loser = state["seats"][pending["from"]]["resources"]
        return [
            {"type": "take_spoils", "resources": taken}
            for taken in _bounded_splits(rules.spoils_due(state, pending), loser)
        ]
    if kind == "trade":
        answers = [{"type": "answer_trade", "accept": False}]
        mine = state["seats"][pending["seat"]]["resources"]
        theirs = state["seats"][pending["from"]]["resources"]
        if components.can_pay(mine, pending["get"]) and components.can_pay(theirs, pending["give"]):
            answers.insert(0, {"type": "answer_trade", "accept": True})
        return answers
    if kind == "place_star":
        return [{"type": "place_star", "position": p} for p in effects.star_positions(state)]
    if kind == "place_harbinger":
        return [
            {"type": "place_harbinger", "position": p}
            for p in effects.harbinger_positions(state, pending["near"])
        ]
    if kind == "take_ruler":
        return [{"type": "take_ruler", "card": card} for card in pending["options"]]
    return [{"type": "keep_diplomacy", "return": card} for card in pending["cards"]]


def describe_spoils(state: State, seat: int) -> dict[str, Any]:
    """``take_spoils`` as a split ("take 3 of the loser's resources"), not its list."""
    pending = state["pending"][0]
    total = rules.spoils_due(state, pending)
    stock = state["seats"][pending["from"]]["resources"]
    taken = decisions.split(
        "resources",
        RESOURCES,
        (0, total),
        (total, total),
        most=[stock[r] for r in RESOURCES],
        as_object=True,
    )
    return decisions.described("take_spoils", [taken], decisions.split_count(taken))


def _bounded_splits(total: int, stock: dict[str, int]) -> list[dict[str, int]]:
    """Every way to take ``total`` resources from ``stock``."""
    found = []
    ranges = [range(min(total, stock[r]) + 1) for r in RESOURCES]
    for amounts in product(*ranges):
        if sum(amounts) == total:
            found.append({r: n for r, n in zip(RESOURCES, amounts, strict=True) if n})
    return found


def _turn_actions(state: State, seat: int) -> list[Action]:
    turn = state["turn"]
    used = turn["used"]
    actions: list[Action] = []
    if "move" not in used or turn["moving"]:
        for target, cost in rules.move_targets(state, seat):
            for way in _ways_to_pay(state, seat, {"hydrogen": cost}):
                actions.append(_paid({"type": "move", "to": target}, way))
    actions.extend(_meetings(state, seat))
    if "build_colony" not in used:
        actions.extend(_colony_builds(state, seat))
    if "federation_project" not in used:
        actions.extend(_constructions(state, seat))
        actions.extend(_battles(state, seat))
    if "recruit_faction" not in used:
        actions.extend(_recruits(state, seat))
    actions.extend(_turmoil_choices(state, seat))
    if rules.acted(turn):
        actions.append({"type": "end_turn"})
    actions.append({"type": "pass"})
    return actions


def _turmoil_choices(state: State, seat: int) -> list[Action]:
    """Merchant trades (listed as 2 of one kind for 1 of another) and mercenary hires."""
    here = turmoil.markers_at(state, state["arks"][seat])
    pool = state["seats"][seat]["resources"]
    actions: list[Action] = []
    if "merchants" in here:
        for give, get in product(RESOURCES, RESOURCES):
            if give != get and pool[give] >= turmoil.MERCHANT_RATE:
                actions.append(
                    {
                        "type": "trade_with_merchants",
                        "give": {give: turmoil.MERCHANT_RATE},
                        "get": {get: 1},
                    }
                )
    if "mercenaries" in here and not state["turn"].get("hired"):
        for pay in turmoil.MERCENARY_PAYMENTS:
            ways = _ways_to_pay(state, seat, {pay: turmoil.MERCENARY_FEE})
            for other in range(query.seat_count(state)):
                if other != seat:
                    actions.extend(
                        _paid({"type": "hire_mercenaries", "pay": pay, "target": other}, way)
                        for way in ways
                    )
    return actions


def _meetings(state: State, seat: int) -> list[Action]:
    actions: list[Action] = []
    here = state["arks"][seat]
    mine = state["seats"][seat]["resources"]
    for other in range(query.seat_count(state)):
        if other == seat or state["arks"][other] != here or other in state["turn"]["met"]:
            continue
        actions.append({"type": "attack", "target": other})
        theirs = state["seats"][other]["resources"]
        # Offers listed are one kind for another, 1 or 2 each way; any mix is accepted.
        for give, get in product(RESOURCES, RESOURCES):
            if give == get:
                continue
            for a, b in product((1, 2), (1, 2)):
                if mine[give] >= a and theirs[get] >= b:
                    actions.append(
                        {"type": "offer_trade", "target": other, "give": {give: a}, "get": {get: b}}
                    )
    return actions


def _payments(state: State, seat: int, slot: dict[str, Any], discount: str) -> list[dict[str, Any]]:
    """The extra fields of each listed way to pay a slot: the resource named for a number
    slot ({"resource": r}) and a substitution (see ``_ways_to_pay``)."""
    options = [None] if "cost" in slot else list(RESOURCES)
    found: list[dict[str, Any]] = []
    for resource in options:
        priced = query.slot_cost(state, seat, slot, resource, discount)
        if priced is None:
            continue
        named = {} if resource is None else {"resource": resource}
        found.extend({**named, **way} for way in _ways_to_pay(state, seat, priced[0]))
    return found


def _ways_to_pay(state: State, seat: int, cost: dict[str, int]) -> list[dict[str, Any]]:
    """The extra fields of the listed ways to pay ``cost``: in kind ({}) when the pool can;
    when it cannot, each substitution covering exactly what it lacks; and each SUB token
    spent as far as it goes on one kind the cost demands, which a player who can pay in
    kind may still choose (docs/rules/impendium.md, "SUB 2"). At most MAX_SUBSTITUTIONS
    substitutions, each valid and affordable."""
    ways: list[dict[str, Any]] = []
    if query.payment(state, seat, cost) is not None:
        ways.append({})
    tokens = state["seats"][seat]["discounts"]["substitute"]
    if not tokens:
        return ways
    candidates = [] if ways else query.shortfall_covers(state, seat, cost, MAX_SUBSTITUTIONS)
    for wild, kind in product(RESOURCES, RESOURCES):
        if tokens.get(wild, 0) > 0 and kind != wild and cost.get(kind, 0) > 0:
            candidates.append({wild: {kind: min(tokens[wild], cost[kind])}})
    listed: list[dict[str, dict[str, int]]] = []
    for substitute in candidates:
        if len(listed) == MAX_SUBSTITUTIONS:
            break
        if (
            substitute not in listed
            and query.substitution_problem(state, seat, cost, substitute) is None
            and query.payment(state, seat, cost, substitute) is not None
        ):
            listed.append(substitute)
    ways.extend({"substitute": substitute} for substitute in listed)
    return ways


def _paid(action: Action, *parts: dict[str, Any]) -> Action:
    """``action`` with the fields of ``parts`` (a way to pay it, a disc); each action holds
    its own substitution, so changing one listed action changes no other."""
    paid = dict(action)
    for part in parts:
        paid.update(part)
    if "substitute" in paid:
        paid["substitute"] = {wild: dict(kinds) for wild, kinds in paid["substitute"].items()}
    return paid


def _colony_builds(state: State, seat: int) -> list[Action]:
    position = query.ark_cell(state, seat)
    entry = query.entry_at(state, position)
    if entry is None or entry["kind"] != "star":
        return []
    relocations: list[str | None] = list(rules.relocation_sources(state, seat))
    fresh = query.map_colonies(state, seat) < query.colony_cap(state, seat) and (
        query.free_discs(state, seat) > 0
    )
    if fresh:
        relocations.insert(0, None)
    actions: list[Action] = []
    for index, slot in enumerate(STARS[entry["card"]]["slots"]):
        if entry["colonies"][index] is not None:
            continue
        for payment in _payments(state, seat, slot, "colony"):
            for source in relocations:
                action = _paid({"type": "build_colony", "slot": index}, payment)
                if source is not None:
                    action["relocate"] = source
                actions.append(action)
    return actions


def _discs_for(state: State, seat: int, onto: str) -> list[dict[str, Any]]:
    """A free disc ({}) if there is one, and every placed disc that may be lifted."""
    found: list[dict[str, Any]] = [{}] if query.free_discs(state, seat) > 0 else []
    found.extend({"relocate": source} for source in rules.relocation_sources(state, seat, onto))
    return found


def _constructions(state: State, seat: int) -> list[Action]:
    if query.ark_cell(state, seat) != grid.FEDERATION:
        return []
    actions: list[Action] = []
    for project in state["projects"]:
        discs = _discs_for(state, seat, f"project:{project['card']}")
        for index, slot in enumerate(STARS[project["card"]]["slots"]):
            if project["discs"][index] is not None:
                continue
            for payment in _payments(state, seat, slot, "project"):
                for disc in discs:
                    action = {"type": "construct_federation_star", "project": project["card"]}
                    actions.append(_paid({**action, "slot": index}, payment, disc))
    return actions


def _battles(state: State, seat: int) -> list[Action]:
    ark = query.ark_cell(state, seat)
    if ark is None or ark not in state["board"]:
        return []
    actions: list[Action] = []
    for position in query.harbinger_neighbours(state, ark):
        entry = state["board"][position]
        discs = _discs_for(state, seat, f"harbinger:{position}")
        for index, slot in enumerate(HARBINGERS[entry["card"]]["slots"]):
            if entry["discs"][index] is not None:
                continue
            for payment in _payments(state, seat, slot, "project"):
                actions.extend(
                    _paid(
                        {"type": "battle_harbinger", "position": position, "slot": index},
                        disc,
                        payment,
                    )
                    for disc in discs
                )
    return actions


def _recruits(state: State, seat: int) -> list[Action]:
    if query.ark_cell(state, seat) != grid.FEDERATION:
        return []
    mine = state["seats"][seat]
    actions: list[Action] = []
    for resource in RESOURCES:
        if state["subverting"].get(resource) is None:
            continue
        cost = {resource: query.recruit_cost(state, seat, resource)}
        choices: list[Action] = [{"type": "recruit_faction", "resource": resource}]
        if len(mine["factions"]) >= query.MAX_FACTIONS:
            choices = [{**choices[0], "replace": old} for old in mine["factions"]]
        for way in _ways_to_pay(state, seat, cost):
            actions.extend(_paid(choice, way) for choice in choices)
    return actions


def _ability_uses(state: State, seat: int) -> list[Action]:
    mine = state["seats"][seat]
    actions: list[Action] = []
    for faction in mine["factions"]:
        if faction in mine["turned"]:
            continue
        for target in range(query.seat_count(state)):
            actions.append({"type": "use_faction_ability", "faction": faction, "target": target})
    return actions


def _diplomacy_plays(state: State, seat: int) -> list[Action]:
    mine = state["seats"][seat]
    actions: list[Action] = []
    others = [s for s in range(query.seat_count(state)) if s != seat]
    for card in sorted(set(mine["hand"])):
        effect = DIPLOMACY[card]["effect"]
        base = {"type": "play_diplomacy", "card": card}
        if effect == "supply":
            actions.extend({**base, "resource": r} for r in RESOURCES)
        elif effect in ("tribute", "sabotage"):
            for target in others:
                for r in RESOURCES:
                    if state["seats"][target]["resources"][r] > 0:
                        actions.append({**base, "target": target, "resource": r})
        elif effect == "renewal":
            actions.extend({**base, "faction": f} for f in mine["turned"])
        elif effect == "trade_pact":
            for paid, gained in product(RESOURCES, RESOURCES):
                if paid != gained and mine["resources"][paid] >= 1:
                    actions.append({**base, "resource": paid, "gain": gained})
        elif effect == "recall":
            if state["arks"][seat] != grid.FEDERATION:
                actions.append(base)
        else:
            actions.append(base)
    return actions
