"""Impendium: the reducer and its legality (rulebook: ../shared/rules/impendium.txt).

Where each rulebook section lives:

- Setup: ``setup`` deals decks, resources, factions, subverting factions and federation
  projects; the players' choices are ``place_start_star``, ``place_setup_colony`` and
  ``place_ark``.
- Round Structure 1, Generate Resources and Score Victory Points: the automatic
  ``generate_resources``, then each player's ``take_federation_resource``.
- 2, Activate Harbingers of the Void: the automatic ``activate_harbingers``.
- 3, Action Turns: ``move`` (one cardinal step at a time, with ``attack``/``offer_trade``
  when sharing a space), ``build_colony``, the two federation projects
  (``construct_federation_star`` then ``place_star``/``place_harbinger``, and
  ``battle_harbinger``), ``recruit_faction`` (then ``keep_diplomacy``), ``end_turn`` and
  ``pass``; at any time ``use_faction_ability`` and ``play_diplomacy``.
- 4, Pass the Starting Player Marker, Reset Factions: the automatic ``end_of_round``.
- Gameplay (the end): ``_check_end`` starts the final turns; ``final_scoring`` ranks.
- Variants: the ``variant`` option (solo, semi_cooperative, cooperative).
- Turmoil Expansion (option ``turmoil``): the automatic ``move_turmoil`` before the
  starting player's turn, ``raiders_battle`` and ``mercenary_battle``; the choices
  ``trade_with_merchants`` and ``hire_mercenaries`` (rules in ``turmoil.py``).

Decisions where the rulebook is silent are recorded in docs/rules/impendium.md.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, TypeGuard

from projections import components
from projections.games.impendium import board as grid
from projections.games.impendium import effects, turmoil
from projections.games.impendium import state as query
from projections.games.impendium.actions import check_shape
from projections.games.impendium.data import (
    ARK_COLOURS,
    DIPLOMACY,
    FACTIONS,
    HARBINGERS,
    RESOURCES,
    RULERS,
    STARS,
)
from projections.ruleset import Action, IllegalAction, State

VARIANTS = ("competitive", "solo", "semi_cooperative", "cooperative")
#: The four actions of a turn, each at most once (3. Action Turns); the two forms of a
#: federation project share one.
MAIN_ACTIONS = ("move", "build_colony", "federation_project", "recruit_faction")
SYSTEM_TYPES = (
    "generate_resources",
    "activate_harbingers",
    "move_turmoil",
    "raiders_battle",
    "mercenary_battle",
    "end_of_round",
    "final_scoring",
)
VP_SOURCES = ("federation_stars", "harbinger_majority", "harbinger_discs", "rulers", "diplomacy")
STARTING_RESOURCES = 3
DIE_SIDES = 6


# -- setup -------------------------------------------------------------------------------


def check_options(players: list[str], options: dict[str, Any]) -> None:
    """Refuse player counts and options the rulebook does not support."""
    variant = options.get("variant")
    if variant not in VARIANTS:
        raise IllegalAction("bad_options", f"variant must be one of {', '.join(VARIANTS)}.")
    count = len(players)
    if variant == "solo" and count != 1:
        raise IllegalAction("bad_options", "The single-player variant is for exactly 1 player.")
    if variant != "solo" and not 2 <= count <= 6:
        raise IllegalAction(
            "bad_options", "Impendium takes 2 to 6 players; 1 player plays the solo variant."
        )
    limit = options.get("round_limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise IllegalAction("bad_options", "round_limit is off (null) or a whole number from 1.")
    if not isinstance(options.get("fast_galaxies"), bool):
        raise IllegalAction("bad_options", "fast_galaxies is true or false.")
    if not isinstance(options.get("turmoil", False), bool):
        raise IllegalAction("bad_options", "turmoil is true or false.")


def setup(players: list[str], options: dict[str, Any], rng: random.Random) -> State:
    """Setup: everything the rulebook deals before the players' placements."""
    if len(players) == 1 and options.get("variant") == "competitive":
        # One player plays the single-player variant (docs/rules/impendium.md, "Options").
        options = {**options, "variant": "solo"}
    check_options(players, options)
    count = len(players)
    decks = {
        "stars": components.new_deck(sorted(STARS), rng),
        "harbingers": components.new_deck(sorted(HARBINGERS), rng),
        "factions": components.new_deck(sorted(FACTIONS), rng),
        "rulers": components.new_deck(sorted(RULERS), rng),
        "diplomacy": components.new_deck(sorted(DIPLOMACY), rng),
    }
    seats = []
    for _ in players:
        seats.append(
            {
                "resources": {resource: STARTING_RESOURCES for resource in RESOURCES},
                "vp": 0,
                "vp_sources": {source: 0 for source in VP_SOURCES},
                "factions": components.draw(decks["factions"], 1),
                "turned": [],
                "hand": [],
                "discounts": {"project": {}, "colony": {}, "substitute": {}},
            }
        )
    subverting = {res: components.draw(decks["factions"], 1)[0] for res in RESOURCES}
    project_count = 4 if count >= 5 else 3
    projects = [
        {"card": card, "discs": [None] * len(STARS[card]["slots"])}
        for card in components.draw(decks["stars"], project_count)
    ]
    setup_stars = [components.draw(decks["stars"], 1)[0] for _ in players]
    extra: dict[str, Any] = {}
    if options.get("turmoil", False):
        # Only a Turmoil game carries the markers, so games without it fold as before.
        extra["turmoil"] = turmoil.new_turmoil()
    return {
        **extra,
        "players": list(players),
        "options": dict(options),
        "phase": "setup_stars",
        "round": 0,
        "start_player": 0,
        "setup_queue": list(range(count)),
        "setup_stars": setup_stars,
        "board": {grid.FEDERATION: {"kind": "federation"}},
        "arks": [None] * count,
        "seats": seats,
        "decks": decks,
        "subverting": subverting,
        "projects": projects,
        "galaxies": [],
        "next_galaxy": 1,
        "federation_taken": [False] * count,
        "turn": None,
        "passed": [False] * count,
        "pending": [],
        "final_turns": None,
        "end_trigger": None,
        "outcome": None,
        "returned_diplomacy": [[] for _ in players],
        "returned_factions": [],
        "last_attack": None,
        "finished": False,
    }


def start_star_positions(state: State, seat: int) -> list[str]:
    """Where a player may put their starting star (Setup, second bullet)."""
    board = state["board"]
    placed = sum(1 for star in state["setup_stars"] if star is None)
    if placed < 4:
        candidates = [p for p in grid.adjacent_positions(grid.FEDERATION) if p not in board]
    else:
        found = {
            adj
            for pos, entry in board.items()
            if entry["kind"] == "star"
            for adj in grid.adjacent_positions(pos)
            if adj not in board
        }
        candidates = sorted(found, key=grid.coords)
    colour = STARS[state["setup_stars"][seat]]["colour"]
    # "If possible, they cannot place two star cards of the same color next to each other."
    apart = [p for p in candidates if not _touches_colour(state, p, colour)]
    return apart or candidates


def _touches_colour(state: State, position: str, colour: str) -> bool:
    for adj in grid.adjacent_positions(position):
        entry = state["board"].get(adj)
        if (
            entry is not None
            and entry["kind"] == "star"
            and STARS[entry["card"]]["colour"] == colour
        ):
            return True
    return False


def place_start_star(state: State, seat: int, action: Action, rng: random.Random) -> None:
    _require_setup_turn(state, seat, "setup_stars")
    position = named_cell(action, "position")
    allowed = start_star_positions(state, seat)
    if position not in allowed:
        if position is not None and position in state["board"]:
            raise IllegalAction("position_taken", "That place on the map already holds a card.")
        raise IllegalAction(
            "bad_star_position",
            "Place your star next to the federation card (players 5 and 6: next to another "
            "star), away from a star of its colour where possible: "
            f"{', '.join(allowed)}.",
        )
    card = state["setup_stars"][seat]
    state["board"][position] = _new_star_entry(card, [None] * len(STARS[card]["slots"]))
    state["setup_stars"][seat] = None
    state["setup_queue"].pop(0)
    if not state["setup_queue"]:
        state["phase"] = "setup_colonies"
        # "Each player places 3 colonies out 1 at a time rotating in clockwise direction."
        state["setup_queue"] = [s for _ in range(3) for s in range(query.seat_count(state))]


def _new_star_entry(card: str, colonies: list[Any]) -> dict[str, Any]:
    return {"kind": "star", "card": card, "colonies": colonies}


def setup_colony_slots(state: State) -> list[tuple[str, int]]:
    """Free resource-symbol slots on map stars (Setup: not the numbers-only circles)."""
    found = []
    for pos, entry in sorted(query.star_entries(state), key=lambda item: grid.coords(item[0])):
        for index, slot in enumerate(STARS[entry["card"]]["slots"]):
            if "cost" in slot and entry["colonies"][index] is None:
                found.append((pos, index))
    return found


def place_setup_colony(state: State, seat: int, action: Action, rng: random.Random) -> None:
    _require_setup_turn(state, seat, "setup_colonies")
    slot = action.get("slot")
    entry = query.entry_at(state, named_cell(action, "position"))
    if entry is None or entry["kind"] != "star":
        raise IllegalAction("not_a_map_star", "Place setup colonies on a star card on the map.")
    slots = STARS[entry["card"]]["slots"]
    if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < len(slots):
        raise IllegalAction("bad_slot", f"That star has slots 0 to {len(slots) - 1}.")
    if "cost" not in slots[slot]:
        raise IllegalAction(
            "numeric_slot_at_setup",
            "During setup colonies go on slots with resource symbols, not on the number-only "
            "circles.",
        )
    if entry["colonies"][slot] is not None:
        raise IllegalAction("slot_taken", "That slot already holds a colony.")
    entry["colonies"][slot] = seat
    state["setup_queue"].pop(0)
    if not state["setup_queue"]:
        state["phase"] = "setup_arks"
        state["setup_queue"] = list(range(query.seat_count(state)))


def place_ark(state: State, seat: int, action: Action, rng: random.Random) -> None:
    _require_setup_turn(state, seat, "setup_arks")
    position = named_cell(action, "position")
    if position is None or not grid.walkable(state["board"], position):
        raise IllegalAction(
            "bad_ark_position",
            "Place your Ark on a star, the federation card or a space next to a card.",
        )
    state["arks"][seat] = position
    state["setup_queue"].pop(0)
    if not state["setup_queue"]:
        # "Give the starting player marker to the owner of the game."
        state["start_player"] = 0
        state["round"] = 1
        state["phase"] = "generate"


def named_cell(action: Action, field: str) -> str | None:
    """The cell an action's ``field`` names, if it names it as the board does (one name a
    cell: ``board.parse_cell``), else None."""
    value = action.get(field)
    return value if grid.is_cell_name(value) else None


def _require_setup_turn(state: State, seat: int, phase: str) -> None:
    if state["phase"] != phase:
        raise IllegalAction("phase_mismatch", f"That is done in the {phase} phase.")
    if state["setup_queue"][0] != seat:
        raise IllegalAction("not_your_turn", "Another player places now.")


# -- 1. generate resources -----------------------------------------------------------------


def generate_resources(state: State, rng: random.Random) -> None:
    """Each colony yields its star's top row; so does the Ark's star; rulers pay VP and more."""
    for pos, entry in query.star_entries(state):
        production = STARS[entry["card"]]["production"]
        for disc in entry["colonies"]:
            if disc is not None:
                components.pool_add(state["seats"][disc]["resources"], production)
        for seat, ark in enumerate(state["arks"]):
            if ark == pos:
                components.pool_add(state["seats"][seat]["resources"], production)
    for galaxy in state["galaxies"]:
        if galaxy["ruler"] is not None and galaxy["card"] is not None:
            card = RULERS[galaxy["card"]]
            components.pool_add(state["seats"][galaxy["ruler"]]["resources"], card["resources"])
            effects.gain_vp(state, galaxy["ruler"], card["vp"], "rulers")
    state["phase"] = "federation_resource"
    state["federation_taken"] = [False] * query.seat_count(state)


def take_federation_resource(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """The federation card: "every player can ... take 1 free resource" each round."""
    if state["phase"] != "federation_resource":
        raise IllegalAction("phase_mismatch", "The federation's resource is taken at generation.")
    if state["federation_taken"][seat]:
        raise IllegalAction("already_taken", "You already took the federation's resource.")
    resource = action.get("resource")
    if resource not in RESOURCES:
        raise IllegalAction("bad_resource", f"Name one of {', '.join(RESOURCES)}.")
    state["seats"][seat]["resources"][resource] += 1
    state["federation_taken"][seat] = True
    if all(state["federation_taken"]):
        if any(entry["kind"] == "harbinger" for entry in state["board"].values()):
            state["phase"] = "harbingers"
        else:
            _before_action_turns(state)


# -- 2. activate harbingers ------------------------------------------------------------------


def activate_harbingers(state: State, rng: random.Random) -> None:
    """Every harbinger in play does what its card says, in card order."""
    harbingers = sorted(
        (entry["card"], pos)
        for pos, entry in state["board"].items()
        if entry["kind"] == "harbinger"
    )
    for card, pos in harbingers:
        effects.activate_harbinger(state, card, pos)
    _before_action_turns(state)


def _before_action_turns(state: State) -> None:
    # Turmoil: "Move the turmoil markers every time before the starting player begins his
    # turn" (an automatic step, as it rolls dice).
    if turmoil.in_play(state):
        state["phase"] = "turmoil"
    else:
        _start_action_turns(state)


def move_turmoil(state: State, rng: random.Random) -> None:
    turmoil.move_markers(state, rng)
    _start_action_turns(state)


# -- 3. action turns -------------------------------------------------------------------------


def _start_action_turns(state: State) -> None:
    state["phase"] = "actions"
    state["passed"] = [False] * query.seat_count(state)
    if state["final_turns"] is not None:
        _next_final_turn(state)
    else:
        _start_turn(state, state["start_player"])


def _start_turn(state: State, seat: int) -> None:
    state["turn"] = {"seat": seat, "used": [], "moving": False, "met": []}
    if turmoil.in_play(state):
        state["turn"]["hired"] = False
        state["turn"]["merchants"] = False


def acted(turn: dict[str, Any]) -> bool:
    """Whether the turn holds anything done: one of the four actions, an attack or a trade
    (with a player or the merchants) or a mercenary hire (docs/rules/impendium.md)."""
    return bool(turn["used"] or turn["met"] or turn.get("hired") or turn.get("merchants"))


def _next_final_turn(state: State) -> None:
    if state["final_turns"]:
        _start_turn(state, state["final_turns"].pop(0))
    else:
        state["turn"] = None
        state["phase"] = "final_scoring"


def _finish_turn(state: State, passing: bool) -> None:
    seat = state["turn"]["seat"]
    if passing:
        state["passed"][seat] = True
    if state["final_turns"] is not None:
        _next_final_turn(state)
        return
    count = query.seat_count(state)
    for offset in range(1, count + 1):
        candidate = (seat + offset) % count
        if not state["passed"][candidate]:
            _start_turn(state, candidate)
            return
    state["turn"] = None
    state["phase"] = "round_end"


def require_turn(state: State, seat: int) -> dict[str, Any]:
    """The turn record when it is this seat's action turn and no choice is pending."""
    if state["phase"] != "actions":
        raise IllegalAction("phase_mismatch", "Actions are taken in the action turns.")
    if state["pending"]:
        pending = state["pending"][0]
        raise IllegalAction(
            "awaiting_choice",
            f"{state['players'][pending['seat']]} must first settle: "
            f"{pending['kind'].replace('_', ' ')}.",
        )
    turn = state["turn"]
    if turn is None or turn["seat"] != seat:
        raise IllegalAction("not_your_turn", "It is another player's turn.")
    return dict(turn)


def _require_unused(turn: dict[str, Any], action: str) -> None:
    assert action in MAIN_ACTIONS
    if action in turn["used"] and not (action == "move" and turn["moving"]):
        raise IllegalAction(
            "action_already_taken",
            f"You already took the {action.replace('_', ' ')} action this turn; "
            "a player may not repeat the same action in the same turn.",
        )


def _mark_used(state: State, action: str) -> None:
    turn = state["turn"]
    if action not in turn["used"]:
        turn["used"].append(action)
    turn["moving"] = action == "move"


def step_cost(state: State, seat: int, origin: str, target: str) -> int:
    """Hydrogen for one cardinal step (Move): 2 off a star, 1 onto a card, 1 off dust or off a
    star of the Ark's colour. The federation card counts as a star card."""
    entry = state["board"].get(origin)
    if entry is None:
        return 1
    if entry["kind"] == "dust":
        return 1
    if entry["kind"] == "star" and STARS[entry["card"]]["colour"] == ARK_COLOURS[seat]:
        return 1
    return 2


def move_targets(state: State, seat: int) -> list[tuple[str, int]]:
    origin = query.ark_cell(state, seat)
    if origin is None:
        return []
    found = []
    for target in grid.step_cells(origin):
        if grid.walkable(state["board"], target):
            found.append((target, step_cost(state, seat, origin, target)))
    return found


def move(state: State, seat: int, action: Action, rng: random.Random) -> None:
    turn = require_turn(state, seat)
    _require_unused(turn, "move")
    target = named_cell(action, "to")
    origin = query.ark_cell(state, seat)
    # The same test as move_targets, for the one cell named.
    if (
        origin is None
        or target is None
        or target not in grid.step_cells(origin)
        or not grid.walkable(state["board"], target)
    ):
        raise IllegalAction(
            "not_a_step",
            "Move one cardinal step at a time, from a card to a space next to it or from a "
            "space onto a card.",
        )
    cost = {"hydrogen": step_cost(state, seat, origin, target)}
    substitute = effects.check_substitution(state, seat, cost, action.get("substitute"))
    if query.payment(state, seat, cost, substitute) is None:
        have = state["seats"][seat]["resources"]["hydrogen"]
        raise IllegalAction(
            "insufficient_hydrogen",
            f"That step costs {cost['hydrogen']} hydrogen; you have {have}.",
        )
    effects.pay(state, seat, cost, substitute)
    state["arks"][seat] = target
    _mark_used(state, "move")
    turmoil.ark_arrives(state, seat)


def _meeting(state: State, seat: int, target: Any, kind: str) -> None:
    turn = require_turn(state, seat)
    count = query.seat_count(state)
    if not isinstance(target, int) or isinstance(target, bool) or not 0 <= target < count:
        raise IllegalAction("bad_target", "Name another player's seat.")
    if target == seat:
        raise IllegalAction("bad_target", f"You cannot {kind} yourself.")
    if state["arks"][target] != state["arks"][seat]:
        raise IllegalAction(
            "not_on_same_space", f"You can only {kind} a player whose Ark shares your space."
        )
    if target in turn["met"]:
        raise IllegalAction(
            "already_met", "You already attacked or traded with that player this turn."
        )


def attack(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Each rolls a die plus their lowest resource; the winner takes the dice's difference."""
    target = action.get("target")
    _meeting(state, seat, target, "attack")
    dice = [rng.randint(1, DIE_SIDES), rng.randint(1, DIE_SIDES)]
    lowest = [min(state["seats"][who]["resources"].values()) for who in (seat, target)]
    totals = [dice[0] + lowest[0], dice[1] + lowest[1]]
    winner = loser = None
    if totals[0] != totals[1]:
        winner, loser = (seat, target) if totals[0] > totals[1] else (target, seat)
    spoils = 0
    if winner is not None and loser is not None:
        spoils = min(abs(dice[0] - dice[1]), query.MAX_SPOILS, query.total_resources(state, loser))
        if spoils:
            state["pending"].append(
                {"kind": "spoils", "seat": winner, "from": loser, "amount": spoils}
            )
    state["turn"]["met"].append(target)
    state["last_attack"] = {
        "attacker": seat,
        "defender": target,
        "dice": dice,
        "totals": totals,
        "winner": winner,
        "spoils": spoils,
    }


def take_spoils(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "spoils")
    taken = action.get("resources")
    loser = state["seats"][pending["from"]]["resources"]
    amount = spoils_due(state, pending)
    if not _is_amounts(taken, allow_empty=amount == 0) or sum(taken.values()) != amount:
        raise IllegalAction("bad_spoils", f"Take exactly {amount} resources, naming each kind.")
    if not components.can_pay(loser, taken):
        raise IllegalAction("bad_spoils", "The losing player does not hold those resources.")
    components.pool_pay(loser, taken)
    components.pool_add(state["seats"][seat]["resources"], taken)
    state["pending"].pop(0)


def spoils_due(state: State, pending: dict[str, Any]) -> int:
    """The spoils still to take: never more than the loser holds now (a card or an ability
    used while the winner chooses may have taken some away)."""
    return min(pending["amount"], query.total_resources(state, pending["from"]))


def _is_amounts(value: Any, allow_empty: bool = False) -> TypeGuard[dict[str, int]]:
    if not isinstance(value, dict) or (not value and not allow_empty):
        return False
    return all(
        key in RESOURCES and isinstance(n, int) and not isinstance(n, bool) and n > 0
        for key, n in value.items()
    )


def offer_trade(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Trading "has no guideline aside from no trading for zero": both sides give something."""
    target = action.get("target")
    _meeting(state, seat, target, "trade with")
    give, get = action.get("give"), action.get("get")
    if not _is_amounts(give) or not _is_amounts(get):
        raise IllegalAction(
            "nothing_for_nothing", "A trade must exchange resources both ways; no trading for zero."
        )
    if set(give) & set(get):
        raise IllegalAction(
            "same_kind_trade",
            "No trading for zero: a kind of resource goes one way only, never both ways.",
        )
    if not components.can_pay(state["seats"][seat]["resources"], give):
        raise IllegalAction("insufficient_resources", "You do not hold what you offer.")
    if not components.can_pay(state["seats"][target]["resources"], get):
        raise IllegalAction("insufficient_resources", "That player does not hold what you ask.")
    state["turn"]["met"].append(target)
    state["pending"].append(
        {"kind": "trade", "seat": target, "from": seat, "give": dict(give), "get": dict(get)}
    )


def answer_trade(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "trade")
    accept = action.get("accept")
    if not isinstance(accept, bool):
        raise IllegalAction("bad_answer", "Answer a trade with accept true or false.")
    if accept:
        mine, theirs = (
            state["seats"][seat]["resources"],
            state["seats"][pending["from"]]["resources"],
        )
        if not components.can_pay(mine, pending["get"]) or not components.can_pay(
            theirs, pending["give"]
        ):
            raise IllegalAction("insufficient_resources", "One side no longer holds its part.")
        components.pool_pay(mine, pending["get"])
        components.pool_add(theirs, pending["get"])
        components.pool_pay(theirs, pending["give"])
        components.pool_add(mine, pending["give"])
    state["pending"].pop(0)


def _require_pending(state: State, seat: int, kind: str) -> dict[str, Any]:
    if state["phase"] != "actions" or not state["pending"]:
        raise IllegalAction("no_choice_pending", "Nothing is waiting for that choice.")
    pending = state["pending"][0]
    if pending["kind"] != kind:
        raise IllegalAction(
            "no_choice_pending", f"The game waits for: {pending['kind'].replace('_', ' ')}."
        )
    if pending["seat"] != seat:
        raise IllegalAction("not_your_choice", "Another player makes this choice.")
    return pending


def _pay_slot(
    state: State,
    seat: int,
    slot: dict[str, Any],
    action: Action,
    discount: str,
) -> Callable[[], None]:
    """Validate a slot payment (the action's ``resource`` for a number slot, its
    ``substitute``); return the function that takes it."""
    resource = action.get("resource")
    priced = query.slot_cost(state, seat, slot, resource, discount)
    if priced is None:
        if "cost" in slot:
            raise IllegalAction(
                "bad_payment", "That slot shows its resources; do not name a resource."
            )
        raise IllegalAction(
            "bad_payment",
            f"That slot asks for {slot['any']} of one resource of your choosing; name it.",
        )
    cost, used = priced
    substitute = effects.check_substitution(state, seat, cost, action.get("substitute"))
    if query.payment(state, seat, cost, substitute) is None:
        short = ", ".join(f"{n} {r}" for r, n in sorted(cost.items()))
        raise IllegalAction("insufficient_resources", f"That slot costs {short}.")

    def pay() -> None:
        effects.pay(state, seat, cost, substitute)
        tokens = state["seats"][seat]["discounts"][discount]
        for res in used:
            tokens.pop(res, None)

    return pay


def _slot_index(slots: list[dict[str, Any]], slot: Any) -> int:
    if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < len(slots):
        raise IllegalAction("bad_slot", f"That card has slots 0 to {len(slots) - 1}.")
    return slot


def relocation_sources(state: State, seat: int, onto: str | None = None) -> list[str]:
    """Discs this player may lift to place anew: "The colonies you have on the map or on
    federation projects already also count as available colonies and you may remove one to
    place the new one" (Build a Colony). ``onto`` is the federation project the disc goes to
    (``project:S07``, ``harbinger:x,y``), whose own discs are not moved within it; None for
    a colony on the map, which takes a project disc only while under the colony cap."""
    found = []
    for pos, entry in sorted(query.star_entries(state), key=lambda item: grid.coords(item[0])):
        for index, disc in enumerate(entry["colonies"]):
            if disc == seat:
                found.append(grid.disc_name("map", pos, index))
    if onto is None and query.map_colonies(state, seat) >= query.colony_cap(state, seat):
        return found
    for project in state["projects"]:
        if f"project:{project['card']}" != onto:
            for index, disc in enumerate(project["discs"]):
                if disc == seat:
                    found.append(grid.disc_name("project", project["card"], index))
    for pos, entry in sorted(state["board"].items(), key=lambda item: grid.coords(item[0])):
        if entry["kind"] == "harbinger" and f"harbinger:{pos}" != onto:
            for index, disc in enumerate(entry["discs"]):
                if disc == seat:
                    found.append(grid.disc_name("harbinger", pos, index))
    return found


def may_relocate(state: State, seat: int, source: Any, onto: str | None) -> bool:
    """Whether ``source`` is one of ``relocation_sources(state, seat, onto)``, checked
    without listing them all (the reducer's test; the list is for ``legal_actions``)."""
    named = grid.parse_disc(source)
    if named is None:
        return False
    where, place, index = named
    if where == "map":
        entry = state["board"].get(place)
        discs = entry["colonies"] if entry is not None and entry["kind"] == "star" else []
    else:
        if f"{where}:{place}" == onto:
            return False
        if onto is None and query.map_colonies(state, seat) >= query.colony_cap(state, seat):
            return False
        if where == "project":
            project = next((p for p in state["projects"] if p["card"] == place), None)
            discs = project["discs"] if project is not None else []
        else:
            entry = state["board"].get(place)
            discs = entry["discs"] if entry is not None and entry["kind"] == "harbinger" else []
    return index < len(discs) and discs[index] == seat


def _relocation(state: State, seat: int, action: Action, onto: str | None) -> str | None:
    relocate = action.get("relocate")
    if relocate is not None and not may_relocate(state, seat, relocate, onto):
        raise IllegalAction(
            "bad_relocation",
            "Lift one of your own discs on the map, on another federation project or on "
            "another harbinger.",
        )
    return relocate if isinstance(relocate, str) else None


def build_colony(state: State, seat: int, action: Action, rng: random.Random) -> None:
    turn = require_turn(state, seat)
    _require_unused(turn, "build_colony")
    position = query.ark_cell(state, seat)
    entry = query.entry_at(state, position)
    if entry is None or entry["kind"] != "star" or position is None:
        raise IllegalAction(
            "ark_not_on_star", "Build a colony on a star card your Ark of Salvation occupies."
        )
    slots = STARS[entry["card"]]["slots"]
    slot = _slot_index(slots, action.get("slot"))
    if entry["colonies"][slot] is not None:
        raise IllegalAction("slot_taken", "That slot already holds a colony.")
    relocate = _relocation(state, seat, action, None)
    if relocate is None:
        if query.map_colonies(state, seat) >= query.colony_cap(state, seat):
            raise IllegalAction(
                "no_available_colony",
                f"You have your {query.colony_cap(state, seat)} colonies (3 per faction) on the "
                "map; recruit a faction or move one of your colonies here.",
            )
        if query.free_discs(state, seat) <= 0:
            raise IllegalAction(
                "no_available_colony", "All your colony discs are in play; move one of them here."
            )
    pay = _pay_slot(state, seat, slots[slot], action, "colony")
    pay()
    if relocate is not None:
        effects.lift_disc(state, relocate)
    entry["colonies"][slot] = seat
    _mark_used(state, "build_colony")
    effects.shift_galaxy_control(state, seat, position)


def construct_federation_star(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Help construct a federation star: pay a project's slot from the federation card."""
    turn = require_turn(state, seat)
    _require_unused(turn, "federation_project")
    if query.ark_cell(state, seat) != grid.FEDERATION:
        raise IllegalAction(
            "ark_not_on_federation",
            "Your Ark of Salvation must be on the central federation card.",
        )
    project = next((p for p in state["projects"] if p["card"] == action.get("project")), None)
    if project is None:
        raise IllegalAction("no_such_project", "Name one of the federation projects on display.")
    slots = STARS[project["card"]]["slots"]
    slot = _slot_index(slots, action.get("slot"))
    if project["discs"][slot] is not None:
        raise IllegalAction("slot_taken", "That slot already holds a colony disc.")
    relocate = _relocation(state, seat, action, f"project:{project['card']}")
    if relocate is None:
        _require_free_disc(state, seat)
    pay = _pay_slot(state, seat, slots[slot], action, "project")
    pay()
    if relocate is not None:
        effects.lift_disc(state, relocate)
    project["discs"][slot] = seat
    _mark_used(state, "federation_project")
    if query.symbol_slots_filled(slots, project["discs"]):
        effects.complete_federation_star(state, seat, project, rng)


def _require_free_disc(state: State, seat: int) -> None:
    if query.free_discs(state, seat) <= 0:
        raise IllegalAction(
            "no_free_disc",
            "All 9 of your colony discs are in play; move one of them here (relocate).",
        )


def place_star(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "place_star")
    position = named_cell(action, "position")
    if position is None or position not in effects.star_positions(state):
        raise IllegalAction(
            "bad_star_position",
            "Place the star next to another star card, never next to a harbinger of the void.",
        )
    state["pending"].pop(0)
    effects.land_star(state, seat, pending, position, rng)


def place_harbinger(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "place_harbinger")
    position = named_cell(action, "position")
    if position is None or position not in effects.harbinger_positions(state, pending["near"]):
        raise IllegalAction(
            "bad_harbinger_position",
            "Place the harbinger next to the star just placed, or if that cannot be, next to a "
            "star of its colour.",
        )
    state["pending"].pop(0)
    card = pending["card"]
    state["board"][position] = {
        "kind": "harbinger",
        "card": card,
        "discs": [None] * len(HARBINGERS[card]["slots"]),
    }


def battle_harbinger(state: State, seat: int, action: Action, rng: random.Random) -> None:
    turn = require_turn(state, seat)
    _require_unused(turn, "federation_project")
    position = named_cell(action, "position")
    entry = query.entry_at(state, position)
    if entry is None or entry["kind"] != "harbinger" or position is None:
        raise IllegalAction("no_such_harbinger", "No harbinger of the void is at that place.")
    ark = query.ark_cell(state, seat)
    if ark is None or ark not in state["board"] or position not in grid.adjacent_positions(ark):
        raise IllegalAction(
            "not_adjacent_to_harbinger",
            "You must be on a card next to the harbinger of the void to battle it.",
        )
    slots = HARBINGERS[entry["card"]]["slots"]
    slot = _slot_index(slots, action.get("slot"))
    if entry["discs"][slot] is not None:
        raise IllegalAction("slot_taken", "That slot already holds a colony disc.")
    relocate = _relocation(state, seat, action, f"harbinger:{position}")
    if relocate is None:
        _require_free_disc(state, seat)
    pay = _pay_slot(state, seat, slots[slot], action, "project")
    pay()
    if relocate is not None:
        effects.lift_disc(state, relocate)
    entry["discs"][slot] = seat
    _mark_used(state, "federation_project")
    if all(disc is not None for disc in entry["discs"]):
        effects.defeat_harbinger(state, position)


def recruit_faction(state: State, seat: int, action: Action, rng: random.Random) -> None:
    turn = require_turn(state, seat)
    _require_unused(turn, "recruit_faction")
    if query.ark_cell(state, seat) != grid.FEDERATION:
        raise IllegalAction(
            "ark_not_on_federation", "Recruit while your Ark occupies the federation card."
        )
    resource = action.get("resource")
    if resource not in RESOURCES or state["subverting"].get(resource) is None:
        raise IllegalAction(
            "no_such_faction", "Name the resource symbol above one of the subverting factions."
        )
    mine = state["seats"][seat]
    replace = action.get("replace")
    if len(mine["factions"]) >= query.MAX_FACTIONS:
        if replace not in mine["factions"]:
            raise IllegalAction(
                "must_replace_faction",
                "You have 3 factions; name the one that goes to the bottom of the faction deck.",
            )
    elif replace is not None:
        raise IllegalAction(
            "no_replacement_needed", "You have room for this faction; replace none."
        )
    cost = {resource: query.recruit_cost(state, seat, resource)}
    substitute = effects.check_substitution(state, seat, cost, action.get("substitute"))
    if query.payment(state, seat, cost, substitute) is None:
        have = mine["resources"][resource]
        raise IllegalAction(
            "insufficient_resources",
            f"Recruiting under {resource} costs {cost[resource]} {resource} (14 less your "
            f"colonies that produce it); you have {have}.",
        )
    effects.pay(state, seat, cost, substitute)
    if replace is not None:
        mine["factions"].remove(replace)
        if replace in mine["turned"]:
            mine["turned"].remove(replace)
        state["decks"]["factions"]["draw_pile"].append(replace)
        state["returned_factions"].append(replace)
    mine["factions"].append(state["subverting"][resource])
    refill = components.draw(state["decks"]["factions"], 1)
    state["subverting"][resource] = refill[0] if refill else None
    _mark_used(state, "recruit_faction")
    if state["options"]["variant"] != "solo":
        # "draw 3 galactic diplomacy cards and choose two to keep" (not in the solo variant).
        drawn = components.draw(state["decks"]["diplomacy"], 3, rng)
        # A seat knows where a card it returned lies only until someone draws it: whoever
        # draws it may return it again, and where it then lies is that seat's secret.
        for known in state["returned_diplomacy"]:
            known[:] = [card for card in known if card not in drawn]
        if len(drawn) == 3:
            state["pending"].append({"kind": "keep_diplomacy", "seat": seat, "cards": drawn})
        else:
            mine["hand"].extend(drawn)


def keep_diplomacy(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "keep_diplomacy")
    returned = action.get("return")
    if returned not in pending["cards"]:
        raise IllegalAction("bad_card", "Return one of the three cards you drew.")
    state["pending"].pop(0)
    kept = [card for card in pending["cards"] if card != returned]
    state["seats"][seat]["hand"].extend(kept)
    state["decks"]["diplomacy"]["draw_pile"].append(returned)
    state["returned_diplomacy"][seat].append(returned)


def take_ruler(state: State, seat: int, action: Action, rng: random.Random) -> None:
    pending = _require_pending(state, seat, "take_ruler")
    if action.get("card") not in pending["options"]:
        raise IllegalAction("bad_card", "Take one of the incumbent ruler's cards.")
    state["pending"].pop(0)
    effects.seize_ruler_card(state, seat, pending["galaxy"], action["card"])


def end_turn(state: State, seat: int, action: Action, rng: random.Random) -> None:
    turn = require_turn(state, seat)
    if not acted(turn):
        raise IllegalAction(
            "no_action_taken",
            "Do something first (an action, an attack or a trade), or pass to stop for this round.",
        )
    _finish_turn(state, passing=False)


def pass_round(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """ "Once a player passes they cannot perform additional actions that round.\""""
    require_turn(state, seat)
    _finish_turn(state, passing=True)


# -- faction abilities and galactic diplomacy (at any time) ---------------------------------


#: The phases in which players act; the others are automatic steps or setup.
ANY_TIME_PHASES = ("federation_resource", "actions")


def require_any_time(state: State) -> None:
    """ "At any time": in any round's player phases, on anyone's turn, while a choice is
    pending too; not during setup (no round yet) nor while an automatic step is due."""
    if state["phase"] not in ANY_TIME_PHASES:
        raise IllegalAction(
            "phase_mismatch", "This is used once the rounds have begun, between automatic steps."
        )
    if due_system_step(state) is not None:
        raise IllegalAction("awaiting_system", "Wait until the game's automatic step is taken.")


def use_faction_ability(state: State, seat: int, action: Action, rng: random.Random) -> None:
    require_any_time(state)
    mine = state["seats"][seat]
    faction = str(action.get("faction"))
    if faction not in mine["factions"]:
        raise IllegalAction("faction_not_yours", "Use an ability of one of your own factions.")
    if faction in mine["turned"]:
        raise IllegalAction(
            "faction_already_used", "That faction is turned; its ability returns next round."
        )
    target = action.get("target")
    if not isinstance(target, int) or isinstance(target, bool):
        raise IllegalAction("bad_target", "Name the seat that receives the ability.")
    if not 0 <= target < query.seat_count(state):
        raise IllegalAction("bad_target", "Name the seat that receives the ability.")
    effects.check_ability(state, faction, target, action)
    mine["turned"].append(faction)
    effects.apply_ability(state, faction, target, action)


def play_diplomacy(state: State, seat: int, action: Action, rng: random.Random) -> None:
    require_any_time(state)
    card = str(action.get("card"))
    hand = state["seats"][seat]["hand"]
    if card not in hand:
        raise IllegalAction("card_not_in_hand", "Play a galactic diplomacy card from your hand.")
    effects.check_diplomacy(state, seat, card, action)
    hand.remove(card)
    components.discard(state["decks"]["diplomacy"], [card])
    before = state["arks"][seat]
    effects.apply_diplomacy(state, seat, card, action)
    if state["arks"][seat] != before:
        turmoil.ark_arrives(state, seat)


# -- the Turmoil Expansion's choices -----------------------------------------------------------


def trade_with_merchants(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Merchant ship: "Trade any amount of resources you'd like (always trade 2:1)"."""
    require_turn(state, seat)
    give, get = action.get("give"), action.get("get")
    turmoil.check_merchant_trade(state, seat, give, get)
    assert isinstance(give, dict) and isinstance(get, dict)
    pool = state["seats"][seat]["resources"]
    components.pool_pay(pool, give)
    components.pool_add(pool, get)
    state["turn"]["merchants"] = True


def hire_mercenaries(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Mercenaries: pay 3 artifacts or hydrogen for an immediate attack on another player;
    the automatic ``mercenary_battle`` rolls the dice."""
    turn = require_turn(state, seat)
    pay, target = action.get("pay"), action.get("target")
    substitute = turmoil.check_hire(state, seat, turn, action)
    effects.pay(state, seat, {str(pay): turmoil.MERCENARY_FEE}, substitute)
    state["turn"]["hired"] = True
    state["pending"].append({"kind": "mercenary_battle", "seat": seat, "target": target})


# -- 4. end of round and the end of the game --------------------------------------------------


def end_of_round(state: State, rng: random.Random) -> None:
    """Pass the starting player marker clockwise, reset factions, begin a new round."""
    limit = state["options"]["round_limit"]
    for mine in state["seats"]:
        mine["turned"] = []
        mine["discounts"] = {"project": {}, "colony": {}, "substitute": {}}
    state["last_attack"] = None
    if limit is not None and state["round"] >= limit:
        state["end_trigger"] = {"reason": "round_limit", "seat": None}
        state["phase"] = "final_scoring"
        return
    state["start_player"] = components.next_seat(state["start_player"], query.seat_count(state))
    state["round"] += 1
    state["phase"] = "generate"


def _check_end(state: State) -> None:
    """The end triggers and the variants' immediate wins and losses (Gameplay; Variants)."""
    if state["phase"] in ("setup_stars", "setup_colonies", "setup_arks"):
        return
    if state["phase"] in ("final_scoring", "finished"):
        return
    variant = state["options"]["variant"]
    count = query.seat_count(state)
    if variant == "solo":
        if query.map_colonies(state, 0) == 0:
            _end_now(state, "solo_loss")
        elif query.every_colour_has_a_galaxy(state) and state["seats"][0]["vp"] >= query.END_VP:
            _end_now(state, "solo_win")
        return
    if variant == "cooperative":
        on_map = sum(query.map_colonies(state, seat) for seat in range(count))
        if on_map < 3 * count:
            _end_now(state, "cooperative_loss")
        elif (
            query.every_colour_has_a_galaxy(state)
            and len(state["galaxies"]) >= query.COOPERATIVE_GALAXIES
        ):
            _end_now(state, "cooperative_win")
        return
    if state["end_trigger"] is not None:
        return
    reason = None
    seat = None
    if variant == "competitive":
        reached = [s for s in range(count) if state["seats"][s]["vp"] >= query.END_VP]
        if reached:
            reason, seat = "victory_points", reached[0]
    if reason is None and query.every_colour_has_a_galaxy(state):
        reason = "galaxies"
    if reason is None:
        return
    state["end_trigger"] = {"reason": reason, "seat": seat}
    # "each player may take one more turn before the game ends": the player whose turn it
    # is finishes it, then every other player has one turn (docs/rules/impendium.md).
    if state["phase"] == "actions" and state["turn"] is not None:
        current = state["turn"]["seat"]
        state["final_turns"] = components.clockwise_from(current, count)[1:]
    else:
        state["final_turns"] = components.clockwise_from(state["start_player"], count)


def _end_now(state: State, reason: str) -> None:
    state["end_trigger"] = {"reason": reason, "seat": None}
    state["pending"] = []
    state["turn"] = None
    state["phase"] = "final_scoring"


def final_scoring(state: State, rng: random.Random) -> None:
    from projections.games.impendium.scoring import outcome

    state["outcome"] = outcome(state)
    state["phase"] = "finished"
    state["finished"] = True


# -- what a step brings to light -------------------------------------------------------------


def draws_hidden(state: State, action: Action) -> bool:
    """Whether a seat's action rolls dice, draws a card or shows a hidden choice (undo stops)."""
    kind = action.get("type")
    # Placing a starting star shows the placer the next one; answering a trade shows the
    # answerer's terms to the offerer (they were hidden until answered).
    if kind in ("attack", "recruit_faction", "place_start_star", "answer_trade"):
        return True
    if kind == "construct_federation_star":
        project = next((p for p in state["projects"] if p["card"] == action.get("project")), None)
        slot = action.get("slot")
        if project is None or not isinstance(slot, int) or not 0 <= slot < len(project["discs"]):
            return False
        discs = ["new" if i == slot else disc for i, disc in enumerate(project["discs"])]
        return query.symbol_slots_filled(STARS[project["card"]]["slots"], discs)
    if kind == "place_star":
        # A star beside one of its colour draws a harbinger, and may form a galaxy that
        # draws a ruler card; neither can happen without such a neighbour.
        pending = state["pending"][0] if state["pending"] else None
        if pending is None or pending["kind"] != "place_star":
            return False
        colour = STARS[pending["card"]]["colour"]
        position = named_cell(action, "position")
        return position is not None and _touches_colour(state, position, colour)
    if kind == "build_colony":
        # Control of a galaxy nobody ruled draws a ruler card.
        seat = action.get("seat")
        if not isinstance(seat, int) or not 0 <= seat < query.seat_count(state):
            return False
        position = query.ark_cell(state, seat)
        return any(
            position in galaxy["stars"] and galaxy["card"] is None for galaxy in state["galaxies"]
        )
    return False


# -- dispatch ------------------------------------------------------------------------------

Handler = Callable[[State, int, Action, random.Random], None]

SEAT_ACTIONS: dict[str, Handler] = {
    "place_start_star": place_start_star,
    "place_setup_colony": place_setup_colony,
    "place_ark": place_ark,
    "take_federation_resource": take_federation_resource,
    "move": move,
    "attack": attack,
    "take_spoils": take_spoils,
    "offer_trade": offer_trade,
    "answer_trade": answer_trade,
    "build_colony": build_colony,
    "construct_federation_star": construct_federation_star,
    "place_star": place_star,
    "place_harbinger": place_harbinger,
    "battle_harbinger": battle_harbinger,
    "recruit_faction": recruit_faction,
    "keep_diplomacy": keep_diplomacy,
    "take_ruler": take_ruler,
    "end_turn": end_turn,
    "pass": pass_round,
    "use_faction_ability": use_faction_ability,
    "play_diplomacy": play_diplomacy,
    "trade_with_merchants": trade_with_merchants,
    "hire_mercenaries": hire_mercenaries,
}

SYSTEM_STEPS: dict[str, Callable[[State, random.Random], None]] = {
    "generate_resources": generate_resources,
    "activate_harbingers": activate_harbingers,
    "move_turmoil": move_turmoil,
    "raiders_battle": turmoil.raiders_battle,
    "mercenary_battle": turmoil.mercenary_battle,
    "end_of_round": end_of_round,
    "final_scoring": final_scoring,
}

PHASE_STEPS = {
    "generate": "generate_resources",
    "harbingers": "activate_harbingers",
    "turmoil": "move_turmoil",
    "round_end": "end_of_round",
    "final_scoring": "final_scoring",
}


def due_system_step(state: State) -> str | None:
    if state["finished"]:
        return None
    if state["phase"] == "actions" and state["pending"]:
        kind = state["pending"][0]["kind"]
        if kind in turmoil.BATTLES:
            return str(kind)
    return PHASE_STEPS.get(state["phase"])


def apply(state: State, action: Action, rng: random.Random) -> None:
    """Validate, then mutate: the action's shape first (``actions.check_shape``), then every
    handler checks everything before its first change."""
    if not isinstance(action, dict):
        raise IllegalAction("bad_action", "An action is an object with a type.")
    seat = action.get("seat")
    kind = action.get("type")
    if seat is None:
        due = due_system_step(state)
        if due is None or kind != due:
            raise IllegalAction("no_system_step", "No such automatic step is due now.")
        if set(action) - {"type", "seat"}:
            raise IllegalAction("unknown_field", "An automatic step takes only its type.")
        SYSTEM_STEPS[due](state, rng)
        _check_end(state)
        return
    if kind in SYSTEM_TYPES:
        raise IllegalAction("system_action_only", "That step is taken by the game, not a player.")
    if not isinstance(kind, str) or kind not in SEAT_ACTIONS:
        raise IllegalAction("unknown_action", f"Impendium has no action {kind!r}.")
    handler = SEAT_ACTIONS[kind]
    if state["finished"]:
        raise IllegalAction("game_finished", "The game is over.")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(state["players"]):
        raise IllegalAction("bad_seat", "No such seat in this game.")
    check_shape(kind, action)
    handler(state, seat, action, rng)
    _check_end(state)
