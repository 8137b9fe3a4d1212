"""Restoration's reducer and legality, section by section of rules/restoration.txt.

- "Setup the Game" / "2 Players Setup": ``board.setup_state``; step 5c (unlock a research
  skill) is each player's first action, ``unlock_research``.
- "Event Phase": the ``reveal_event`` automatic step applies the tile's automatic effect and
  then every player, clockwise from the first player, resolves its choice effect
  (``begin_event_effects``, mandatory when possible).
- "Construction Phase": ``place_worker`` ("Place Worker", its reputation cost), ``move``
  ("Movements & Actions"), the space's action as a *decision* (``start_construction`` /
  ``continue_construction`` for "Construction Action", ``develop``, ``take_manager``,
  ``transfer``, a Breakthrough, see "Special Actions"), ``play_manager`` ("Manager Cards"),
  ``end_turn``. The phase ends when nobody has a worker left to place.
- "Development Board": ``develop`` (technology levels, unlock lines, the highest space).
- "Complete Construction": ``complete_construction`` (A-D) and ``completion_choice``.
- "Upgrade Research Department": ``place_upgrade``.
- "Audit Phase": the ``audit`` automatic step (scoring.py), then ``keep_worker`` /
  ``collect_workers`` and the ``end_of_round`` automatic step collecting the rest.
- "Game End": the ``final_scoring`` automatic step (scoring.py).

Chained effects ("Each action can trigger a chain of effects") are a queue of decisions in
``state["pending"]``: the front one is resolved before anything else, and an effect it
triggers is put in front of the rest, so chains resolve in activation order.
Where the rulebook is silent the choice is recorded in docs/rules/restoration.md.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from projections import components
from projections.games.restoration import board, data, scoring
from projections.ruleset import Action, IllegalAction

State = dict[str, Any]

SYSTEM_TYPES = (
    "reveal_event",
    "refill_manager_supply",
    "reveal_construction_tile",
    "audit",
    "end_of_round",
    "final_scoring",
)
CONSTRUCT_EFFECTS = ("construct", "breakthrough", "antique")
#: The action types that answer each kind of decision.
ANSWERS: dict[str, tuple[str, ...]] = {
    "construct": ("start_construction", "continue_construction"),
    "breakthrough": ("start_construction", "continue_construction"),
    "antique": ("start_construction", "continue_construction"),
    "development": ("develop",),
    "manager": ("take_manager",),
    "transfer": ("transfer",),
    "reputation": ("adjust_reputation",),
    "upgrade": ("place_upgrade",),
    "completion": ("completion_choice",),
}
EFFECT_NAMES = {
    "construct": "a Construction action",
    "breakthrough": "a Breakthrough",
    "antique": "an antique Construction",
    "development": "a Development",
    "manager": "taking a Manager card",
    "transfer": "a Transfer",
    "reputation": "a Reputation adjustment",
    "upgrade": "placing an Upgrade token",
    "completion": "a completed Construction",
}


# -- small readers -------------------------------------------------------------------


def seat_of(state: State, seat: int) -> State:
    seats: list[State] = state["seats"]
    return seats[seat]


def name_of(state: State, seat: int) -> str:
    return str(state["players"][seat])


def current_event(state: State) -> dict[str, Any]:
    return data.EVENTS[state["events"]["rounds"][state["round"] - 1]]


def turn_order(state: State) -> list[int]:
    return components.clockwise_from(state["first_player"], len(state["players"]))


def text_field(action: Action, name: str) -> str:
    value = action.get(name)
    if not isinstance(value, str):
        raise IllegalAction("invalid_action", f"This action needs '{name}' as text.")
    return value


def int_field(action: Action, name: str) -> int:
    value = action.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise IllegalAction("invalid_action", f"This action needs '{name}' as a whole number.")
    return value


def bool_field(action: Action, name: str) -> bool:
    value = action.get(name)
    if not isinstance(value, bool):
        raise IllegalAction("invalid_action", f"This action needs '{name}' as true or false.")
    return value


# -- automatic steps due -------------------------------------------------------------


def refill_due(state: State) -> bool:
    """The face-up supply lacks a type and cards remain ("Manager Cards", last paragraph)."""
    deck = state["managers"]["deck"]
    return len(state["managers"]["supply"]) < 4 and bool(deck["draw_pile"] or deck["discard_pile"])


def tile_reveal_due(state: State) -> bool:
    """A completed tile left the display and the pile can replace it (completion step D),
    once steps B and C are over: "C. The player who completed the project takes the
    Construction tile and an Upgrade token. D. A new Construction board is revealed". Every
    decision of a completion (B's choices, C's claim and Upgrade token) names its ``tile``."""
    construction = state["construction"]
    wanted = len(state["players"]) + 2
    if len(construction["display"]) >= wanted or not construction["pile"]:
        return False
    return not any("tile" in decision for decision in state["pending"])


def system_due(state: State) -> str | None:
    """The automatic step the game waits for, if any: refills and reveals come first."""
    if state["finished"]:
        return None
    if state["phase"] != "setup":
        if refill_due(state):
            return "refill_manager_supply"
        if tile_reveal_due(state):
            return "reveal_construction_tile"
    due: str | None = state["due"]
    return due


# -- effects and decisions -----------------------------------------------------------


def trigger(state: State, seat: int, effect: str | None, optional: bool = True) -> None:
    """Resolve an effect icon for ``seat``: immediate ones now, choices as a decision put in
    front of the queue (so a chain resolves before what triggered it continues)."""
    if effect is None:
        return
    if effect == "gain_reputation_2":
        gain_reputation(state, seat, 2)
        return
    state["pending"].insert(0, {"kind": effect, "seat": seat, "optional": optional})


def gain_reputation(state: State, seat: int, amount: int) -> None:
    player = seat_of(state, seat)
    player["reputation"] = components.track_move(
        player["reputation"], amount, data.REPUTATION["lowest"], data.REPUTATION["highest"]
    )


def decision_options(state: State, decision: State) -> list[Action]:
    """Every concrete answer to ``decision`` (without skipping), each one legal now."""
    seat = decision["seat"]
    return [action for action in _answers(state, decision) if passes(state, seat, action)]


def has_option(state: State, decision: State) -> bool:
    """Whether ``decision``, the front one, has any legal answer now (the first found is
    enough). A construction decision, the most frequent, is answered without building and
    refusing every candidate: the same tests as its checks, in the same order."""
    if decision["kind"] in CONSTRUCT_EFFECTS and state["phase"] in ("event", "construction"):
        return _can_build(state, decision)
    seat = decision["seat"]
    return any(passes(state, seat, action) for action in _answers(state, decision))


def _can_build(state: State, decision: State) -> bool:
    """Whether a construction decision (the front one) may start a displayed tile (a worker
    on the board and the tile's lowest space allowed) or continue one of its owner's (the
    next space allowed): ``check_start_construction`` / ``check_continue_construction``."""
    seat = decision["seat"]
    construction = state["construction"]
    progress = construction["progress"]
    may_start = seat_of(state, seat)["board_workers"] >= 1
    for tile in tiles_under_construction(state):
        spaces = data.TILES[tile]["spaces"]
        if may_start and _colour_allowed(decision, spaces[0]["colour"]):
            return True
        for marker in progress[tile]:
            if marker["seat"] == seat and _colour_allowed(
                decision, spaces[marker["space"] + 1]["colour"]
            ):
                return True
    return False


def _answers(state: State, decision: State) -> Iterator[Action]:
    """The candidate answers to ``decision``, legal or not, in a fixed order."""
    seat = decision["seat"]
    kind = decision["kind"]
    if kind in CONSTRUCT_EFFECTS:
        progress = state["construction"]["progress"]
        for tile in tiles_under_construction(state):
            yield {"type": "start_construction", "tile": tile}
            for space in sorted({m["space"] for m in progress[tile] if m["seat"] == seat}):
                yield {"type": "continue_construction", "tile": tile, "space": space}
    elif kind == "development":
        yield from ({"type": "develop", "track": t} for t in ("technology", "reputation"))
    elif kind == "manager":
        for manager in state["managers"]["supply"]:
            yield {"type": "take_manager", "source": "supply", "manager": manager}
        yield {"type": "take_manager", "source": "deck"}
    elif kind == "transfer":
        yield from _transfer_swaps(state)
    elif kind == "reputation":
        yield from ({"type": "adjust_reputation", "direction": d} for d in ("up", "down"))
    elif kind == "upgrade":
        for target in (*data.RESEARCH, "ap_track", "keep"):
            yield {"type": "place_upgrade", "target": target}
    elif kind == "completion":
        yield from ({"type": "completion_choice", "choice": c} for c in ("rest", "take_back"))


def passes(state: State, seat: int, action: Action) -> bool:
    try:
        HANDLERS[action["type"]][0](state, seat, action)
    except IllegalAction:
        return False
    return True


def front_decision(state: State, seat: int, action_type: str) -> State:
    """The decision ``seat`` must answer now with ``action_type``, or the reason it can't."""
    if state["phase"] not in ("event", "construction"):
        raise IllegalAction("phase_mismatch", "There is no action to resolve in this phase.")
    pending = state["pending"]
    if not pending:
        raise IllegalAction(
            "no_decision_pending", "Nothing asks for this now; move or end your turn."
        )
    decision = pending[0]
    if decision["seat"] != seat:
        raise IllegalAction(
            "not_your_turn", f"{name_of(state, decision['seat'])} has a decision to make first."
        )
    if action_type not in ANSWERS.get(decision["kind"], ()):
        raise IllegalAction("decision_pending", f"First resolve {EFFECT_NAMES[decision['kind']]}.")
    return decision


# -- Setup step 5c -------------------------------------------------------------------


def check_unlock_research(state: State, seat: int, action: Action) -> None:
    if state["phase"] != "setup":
        raise IllegalAction("phase_mismatch", "The starting skill is chosen during setup.")
    research = seat_of(state, seat)["research"]
    if any(slot["unlocked"] for slot in research.values()):
        raise IllegalAction("already_unlocked", "You have already unlocked your starting skill.")
    position = text_field(action, "position")
    if position not in research:
        raise IllegalAction(
            "unknown_research_position", f"Your Research department has {', '.join(research)}."
        )


def do_unlock_research(state: State, seat: int, action: Action, rng: random.Random) -> None:
    seat_of(state, seat)["research"][action["position"]]["unlocked"] = True
    state["upgrade_supply"] -= 1
    if all(any(s["unlocked"] for s in p["research"].values()) for p in state["seats"]):
        state["due"] = "reveal_event"


# -- Construction phase: the turn ------------------------------------------------------


def own_turn(state: State, seat: int, decisions_ok: bool = False) -> State:
    """The turn in progress, when it is ``seat``'s and no decision is waiting (with
    ``decisions_ok``, whoever's decision may be waiting)."""
    if state["phase"] != "construction":
        raise IllegalAction("phase_mismatch", "Turns are taken in the Construction phase.")
    turn = state["turn"]
    if turn is None or turn["seat"] != seat:
        raise IllegalAction("not_your_turn", "It is another player's turn.")
    if state["pending"] and not decisions_ok:
        decision = state["pending"][0]
        raise IllegalAction("decision_pending", f"First resolve {EFFECT_NAMES[decision['kind']]}.")
    return turn


#: Where a seat's unplaced workers of each kind are counted (False: own, True: Artisan).
BOARD_COUNT = {False: "board_workers", True: "board_artisans"}


def placement_cost(state: State, seat: int, position: str) -> int:
    """1 reputation per worker already at an intersection or own research position; singles
    are free ("Place Worker", last paragraph)."""
    if position in data.RESEARCH:
        return len(seat_of(state, seat)["research"][position]["workers"])
    spot = state["positions"][position]
    return len(spot["workers"]) if spot["kind"] == "intersection" else 0


def check_place_worker(state: State, seat: int, action: Action) -> None:
    turn = own_turn(state, seat)
    if turn["placed"]:
        raise IllegalAction("already_placed", "You have placed your worker for this turn.")
    player = seat_of(state, seat)
    if bool_field(action, "artisan"):
        if player["board_artisans"] < 1:
            raise IllegalAction("no_artisan_available", "You control no Artisan to place.")
    elif player["board_workers"] < 1:
        raise IllegalAction(
            "no_worker_available", "You have no worker of your own left on your board."
        )
    position = text_field(action, "position")
    if position in data.RESEARCH:
        if not player["research"][position]["unlocked"]:
            raise IllegalAction(
                "research_locked", f"{position} is locked; unlock it with an Upgrade token."
            )
    elif position not in state["positions"]:
        raise IllegalAction("unknown_position", f"There is no position {position}.")
    elif state["positions"][position]["closed"]:
        raise IllegalAction(
            "intersections_only", "In a 2-player game workers go only on intersections."
        )
    cost = placement_cost(state, seat, position)
    if cost > player["reputation"]:
        raise IllegalAction(
            "insufficient_reputation",
            f"Placing there costs {cost} reputation (1 per worker already there); "
            f"you have {player['reputation']}.",
        )


def do_place_worker(state: State, seat: int, action: Action, rng: random.Random) -> None:
    player = seat_of(state, seat)
    position = action["position"]
    artisan = action["artisan"]
    player["reputation"] -= placement_cost(state, seat, position)
    player[BOARD_COUNT[artisan]] -= 1
    turn = state["turn"]
    turn.update(placed=True, artisan=artisan)
    if position in data.RESEARCH:
        # A research position skips moving and resolves its own effect instead.
        player["research"][position]["workers"].append({"artisan": artisan})
        trigger(state, seat, data.RESEARCH[position]["effect"])
        return
    state["positions"][position]["workers"].append({"seat": seat, "artisan": artisan})
    turn["position"] = position
    turn["moves_left"] = current_event(state)["moves"]


def connected_workshops(state: State, position: str) -> list[str]:
    return list(state["positions"][position]["influence"])


def workshops_to_move(state: State) -> list[str]:
    """The workshops whose Production token the turn's player may move now.

    One movement turn moves the token of every workshop connected to the worker, one after
    the other in the player's order ("they must move the Production token and may perform
    the action in the Workshops connected to that position"; docs/rules/restoration.md,
    "Movements & Actions"): while one is in progress, the connected workshops it has not
    moved yet; otherwise, with a movement turn left, every connected workshop."""
    turn = state["turn"]
    if turn is None or turn["position"] is None:
        return []
    connected = connected_workshops(state, turn["position"])
    if turn["moved"]:
        return [workshop for workshop in connected if workshop not in turn["moved"]]
    return connected if turn["moves_left"] > 0 else []


def _close_movement_turn(state: State) -> None:
    """A movement turn is over once every workshop connected to the worker has moved in it."""
    turn = state["turn"]
    if turn["moved"] and not workshops_to_move(state):
        turn["moved"] = []


def check_move(state: State, seat: int, action: Action) -> None:
    turn = own_turn(state, seat)
    if not turn["placed"]:
        raise IllegalAction("place_first", "Place a worker before moving a Production token.")
    workshop = text_field(action, "workshop")
    allowed = workshops_to_move(state)
    if workshop in allowed:
        return
    if not allowed:
        raise IllegalAction("no_moves_left", "You have no movement left this turn.")
    connected = connected_workshops(state, turn["position"])
    if workshop in connected:
        raise IllegalAction(
            "workshop_already_moved",
            f"This movement turn has moved workshop {workshop}'s token; "
            f"now move {' and '.join(allowed)}.",
        )
    raise IllegalAction(
        "workshop_not_connected",
        f"Your worker at {turn['position']} reaches only workshop {' and '.join(connected)}.",
    )


def do_move(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """One workshop's part of a movement turn: its token moves one step clockwise and offers
    its space's action."""
    turn = state["turn"]
    if not turn["moved"]:
        turn["moves_left"] -= 1  # a new movement turn begins
    turn["moved"].append(action["workshop"])
    _close_movement_turn(state)
    workshop = state["workshops"][action["workshop"]]
    spaces = data.BOARDS[action["workshop"]]["spaces"]
    workshop["token"] = (workshop["token"] + 1) % len(spaces)
    space = spaces[workshop["token"]]
    if space in data.COLOURS:
        state["pending"].insert(
            0, {"kind": "construct", "seat": seat, "optional": True, "colour": space}
        )
    else:
        trigger(state, seat, space)


def check_end_turn(state: State, seat: int, action: Action) -> None:
    turn = own_turn(state, seat)
    # A manager played before placing can use up the last worker (a construction started)
    # or the reputation a placement needs; such a turn may then end without a placement.
    if not turn["placed"] and can_place(state, seat):
        raise IllegalAction("place_first", "Place a worker before ending your turn.")
    moving = workshops_to_move(state)
    if moving:
        left = turn["moves_left"] + (1 if turn["moved"] else 0)
        raise IllegalAction(
            "moves_pending",
            f"You still have {left} movement turn(s) to make; "
            f"next, move workshop {' or '.join(moving)}.",
        )


def do_end_turn(state: State, seat: int, action: Action, rng: random.Random) -> None:
    start_turn(state, components.next_seat(seat, len(state["players"])))


def manager_plays(state: State, seat: int) -> list[Action]:
    """Every legal ``play_manager`` of ``seat`` now."""
    plays = [
        {"type": "play_manager", "manager": card, "effect": effect}
        for card in sorted(set(seat_of(state, seat)["hand"]))
        for effect in ("A", "B")
    ]
    return [action for action in plays if passes(state, seat, action)]


def placements(state: State, seat: int) -> list[Action]:
    """Every legal ``place_worker`` for ``seat`` if it were its turn now."""
    return list(_placements(state, seat))


def can_place(state: State, seat: int) -> bool:
    """Whether ``seat`` has any ``place_worker`` (the first found is enough)."""
    return next(_placements(state, seat), None) is not None


def _placements(state: State, seat: int) -> Iterator[Action]:
    """Each kind of worker ``seat`` holds (own first, then Artisan) on each open Workshop
    position, then each unlocked research position, where ``seat`` can pay for it."""
    player = seat_of(state, seat)
    kinds = [artisan for artisan in (False, True) if player[BOARD_COUNT[artisan]] > 0]
    reputation = player["reputation"]
    for artisan in kinds:
        for position, spot in state["positions"].items():
            if not spot["closed"] and placement_cost(state, seat, position) <= reputation:
                yield {"type": "place_worker", "position": position, "artisan": artisan}
        for rid, slot in player["research"].items():
            if slot["unlocked"] and placement_cost(state, seat, rid) <= reputation:
                yield {"type": "place_worker", "position": rid, "artisan": artisan}


def start_turn(state: State, first: int) -> None:
    """Give the turn to the first seat clockwise from ``first`` that can still place a worker;
    when none can, the Construction phase is over."""
    count = len(state["players"])
    for seat in components.clockwise_from(first, count):
        if can_place(state, seat):
            state["turn"] = {
                "seat": seat,
                "placed": False,
                "artisan": False,
                "position": None,
                "moves_left": 0,
                "moved": [],
                "managers_played": 0,
            }
            return
    state["turn"] = None
    state["phase"] = "audit"
    state["due"] = "audit"


# -- Manager cards ----------------------------------------------------------------------


def check_play_manager(state: State, seat: int, action: Action) -> None:
    # "There is no restriction on when these cards may be used as long as it is on your
    # turn": also while one of your own actions waits for its choice, or another player
    # makes a completion choice; the card's effect is then resolved first.
    turn = own_turn(state, seat, decisions_ok=True)
    manager = text_field(action, "manager")
    effect = text_field(action, "effect")
    if manager not in seat_of(state, seat)["hand"]:
        raise IllegalAction("manager_not_in_hand", "You hold no such Manager card.")
    if effect not in ("A", "B"):
        raise IllegalAction("invalid_action", "Choose effect A or B of the card.")
    limit = current_event(state)["managers"]
    if turn["managers_played"] >= limit:
        raise IllegalAction(
            "manager_limit_reached",
            f"This round's event allows {limit} Manager card(s) per turn.",
        )
    if effect == "B" and turn["position"] is None:
        raise IllegalAction(
            "no_workshop_to_move",
            "Effect B adds a movement: first place a worker in the Workshop area.",
        )


def do_play_manager(state: State, seat: int, action: Action, rng: random.Random) -> None:
    player = seat_of(state, seat)
    player["hand"].remove(action["manager"])
    if action["manager"] in player["hand_public"]:
        player["hand_public"].remove(action["manager"])
    components.discard(state["managers"]["deck"], [action["manager"]])
    state["turn"]["managers_played"] += 1
    if action["effect"] == "B":
        state["turn"]["moves_left"] += 1
    else:
        trigger(state, seat, data.MANAGERS[action["manager"]]["effect_a"])


# -- Construction action, Breakthrough, completion -------------------------------------


def completed_tiles(state: State) -> set[str]:
    """The displayed tiles already completed, waiting for their completer to take them
    (completion step C, the ``claim`` decision): "When a player advances to the highest
    level of a Construction Progress track, that project will be completed". A completed
    project stays in the display while the other players make their choices (B), and Manager
    cards may be played meanwhile, but it is built on no more."""
    return {decision["tile"] for decision in state["pending"] if decision["kind"] == "claim"}


def tiles_under_construction(state: State) -> list[str]:
    """The displayed tiles a construction may start or continue on: all but completed ones."""
    completed = completed_tiles(state)
    return [tile for tile in state["construction"]["display"] if tile not in completed]


def _tile_to_build(state: State, action: Action) -> str:
    tile = text_field(action, "tile")
    if tile not in state["construction"]["display"]:
        raise IllegalAction("tile_not_in_display", f"{tile} is not an open Construction tile.")
    if tile in completed_tiles(state):
        raise IllegalAction(
            "construction_completed",
            f"{tile} is completed and waits for its completer to take it; build on another.",
        )
    return tile


def _colour_allowed(decision: State, colour: str) -> bool:
    if decision["kind"] == "breakthrough":
        return True
    if decision["kind"] == "antique":
        return colour == data.ANTIQUE
    return bool(colour == decision["colour"])


def _colour_mismatch(decision: State, colour: str) -> IllegalAction:
    wanted = decision.get("colour", data.ANTIQUE)
    return IllegalAction(
        "colour_mismatch", f"That progress space is {colour}; this action builds on {wanted}."
    )


def check_start_construction(state: State, seat: int, action: Action) -> None:
    decision = front_decision(state, seat, "start_construction")
    tile = _tile_to_build(state, action)
    if seat_of(state, seat)["board_workers"] < 1:
        raise IllegalAction(
            "no_worker_on_board",
            "Starting a construction takes a worker of your own from your board "
            "(Artisans never build).",
        )
    colour = data.TILES[tile]["spaces"][0]["colour"]
    if not _colour_allowed(decision, colour):
        raise _colour_mismatch(decision, colour)


def do_start_construction(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    seat_of(state, seat)["board_workers"] -= 1
    state["construction"]["progress"][action["tile"]].append({"seat": seat, "space": 0})
    trigger(state, seat, data.TILES[action["tile"]]["spaces"][0]["effect"])


def check_continue_construction(state: State, seat: int, action: Action) -> None:
    decision = front_decision(state, seat, "continue_construction")
    tile = _tile_to_build(state, action)
    space = int_field(action, "space")
    markers = state["construction"]["progress"][tile]
    if not any(m["seat"] == seat and m["space"] == space for m in markers):
        raise IllegalAction("no_progress_there", f"You have no worker on space {space} of {tile}.")
    colour = data.TILES[tile]["spaces"][space + 1]["colour"]
    if not _colour_allowed(decision, colour):
        raise _colour_mismatch(decision, colour)


def do_continue_construction(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    tile = action["tile"]
    markers = state["construction"]["progress"][tile]
    marker = next(m for m in markers if m["seat"] == seat and m["space"] == action["space"])
    marker["space"] += 1
    spaces = data.TILES[tile]["spaces"]
    if marker["space"] == len(spaces) - 1:
        complete_construction(state, seat, tile)
    else:
        trigger(state, seat, spaces[marker["space"]]["effect"])


def complete_construction(state: State, seat: int, tile: str) -> None:
    """ "Complete Construction" A-D: A now; B as a decision for each other worker on the
    tile, in turn order; C (tile and Upgrade token) once they are resolved; D is the
    ``reveal_construction_tile`` automatic step."""
    markers = state["construction"]["progress"][tile]
    mine = [m for m in markers if m["seat"] == seat]
    seat_of(state, seat)["rest"] += len(mine)  # A; every worker of the completer rests
    state["construction"]["progress"][tile] = [m for m in markers if m["seat"] != seat]
    block: list[State] = []
    for other in turn_order(state):
        if other == seat:
            continue
        for marker in sorted(
            (m for m in markers if m["seat"] == other), key=lambda m: -int(m["space"])
        ):
            block.append(
                {"kind": "completion", "seat": other, "tile": tile, "space": marker["space"]}
            )
    block.append({"kind": "claim", "seat": seat, "tile": tile})
    state["pending"][0:0] = block


def check_completion_choice(state: State, seat: int, action: Action) -> None:
    decision = front_decision(state, seat, "completion_choice")
    choice = text_field(action, "choice")
    if choice not in ("rest", "take_back"):
        raise IllegalAction("invalid_action", "Choose 'rest' or 'take_back'.")
    if not worker_on_completed_tile(state, decision):
        raise IllegalAction(
            "no_worker_on_tile",
            f"You have no worker left on space {decision['space']} of {decision['tile']}.",
        )
    if choice == "take_back" and seat_of(state, seat)["reputation"] < 1:
        raise IllegalAction(
            "insufficient_reputation",
            "Taking your worker back costs 1 reputation and you have none; it rests.",
        )


def do_completion_choice(state: State, seat: int, action: Action, rng: random.Random) -> None:
    resolve_completion(state, action["choice"])


def worker_on_completed_tile(state: State, decision: State) -> bool:
    """Whether the worker a completion choice (step B) is about still stands on its tile."""
    markers = state["construction"]["progress"].get(decision["tile"], [])
    return {"seat": decision["seat"], "space": decision["space"]} in markers


def resolve_completion(state: State, choice: str) -> None:
    """Step B for the front decision, whose worker is on its tile (checked before, by
    ``worker_on_completed_tile``): it rests (B1) or goes back to its board for 1 reputation
    (B2). Everything is looked up before anything changes."""
    decision = state["pending"][0]
    seat = decision["seat"]
    markers = state["construction"]["progress"][decision["tile"]]
    worker = markers.index({"seat": seat, "space": decision["space"]})
    state["pending"].pop(0)
    del markers[worker]
    player = seat_of(state, seat)
    if choice == "take_back":  # B2
        player["reputation"] -= 1
        player["board_workers"] += 1
    else:  # B1
        player["rest"] += 1


def claim_tile(state: State, decision: State) -> None:
    """Completion step C: the completer takes the tile and an Upgrade token, which they may
    place now or keep ("Upgrade Research Department")."""
    tile = decision["tile"]
    construction = state["construction"]
    construction["display"].remove(tile)
    for marker in construction["progress"].pop(tile):  # only when a rule left one there
        seat_of(state, marker["seat"])["rest"] += 1
    seat_of(state, decision["seat"])["tiles"].append(tile)
    if state["upgrade_supply"] > 0:
        state["pending"].insert(
            0,
            {
                "kind": "upgrade",
                "seat": decision["seat"],
                "optional": False,
                "may_keep": True,
                "tile": tile,
            },
        )


# -- Special actions -------------------------------------------------------------------


def check_develop(state: State, seat: int, action: Action) -> None:
    front_decision(state, seat, "develop")
    track = text_field(action, "track")
    player = seat_of(state, seat)
    if track == "technology":
        level = player["technology"]
        if level >= data.TOP_LEVEL:
            raise IllegalAction(
                "technology_track_finished",
                "Your worker has reached the top of the Technology track; develop Reputation.",
            )
        if level + 1 < data.TOP_LEVEL:
            taken = sum(1 for p in state["seats"] if p["technology"] == level + 1)
            if taken >= data.TECHNOLOGY[level + 1]["spaces"]:
                raise IllegalAction(
                    "technology_space_full",
                    f"Every small space of technology level {level + 1} is taken.",
                )
    elif track == "reputation":
        if player["reputation"] >= data.REPUTATION["highest"]:
            raise IllegalAction("reputation_at_top", "Your reputation is already at the top.")
    else:
        raise IllegalAction("invalid_action", "Develop 'technology' or 'reputation'.")


def do_develop(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    player = seat_of(state, seat)
    if action["track"] == "reputation":
        gain_reputation(state, seat, 1)
        return
    player["technology"] += 1
    level = player["technology"]
    if level == data.TOP_LEVEL:
        # D: the Development token goes to the highest free scoring space.
        player["technology_scoring_space"] = data.SCORING_SPACES[state["scoring_spaces_taken"]]
        state["scoring_spaces_taken"] += 1
        return
    row = data.TECHNOLOGY[level]
    if row["unlock_line"] and player["recruitment"] > 0:
        # C: crossing a Worker unlock line recruits a worker, placeable this round.
        player["recruitment"] -= 1
        player["board_workers"] += 1
    trigger(state, seat, row["effect"])


def check_take_manager(state: State, seat: int, action: Action) -> None:
    front_decision(state, seat, "take_manager")
    source = text_field(action, "source")
    managers = state["managers"]
    if source == "supply":
        if text_field(action, "manager") not in managers["supply"]:
            raise IllegalAction(
                "manager_not_in_supply", "That Manager card is not in the face-up supply."
            )
    elif source == "deck":
        if "manager" in action:
            raise IllegalAction("invalid_action", "A deck draw names no card.")
        deck = managers["deck"]
        if not deck["draw_pile"] and not deck["discard_pile"]:
            raise IllegalAction(
                "manager_deck_empty", "The Manager deck is empty; take one from the supply."
            )
    else:
        raise IllegalAction("invalid_action", "Take a Manager from 'supply' or 'deck'.")


def do_take_manager(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    hand = seat_of(state, seat)["hand"]
    managers = state["managers"]
    if action["source"] == "deck":
        hand.extend(components.draw(managers["deck"], 1, rng))
        return
    manager = action["manager"]
    managers["supply"][manager] -= 1
    if managers["supply"][manager] == 0:
        del managers["supply"][manager]
    hand.append(manager)
    seat_of(state, seat)["hand_public"].append(manager)


def worker_kinds(spot: State) -> list[str]:
    """The distinct kinds of worker at a position: a seat number, or 'artisan'."""
    kinds = {"artisan" if w["artisan"] else str(w["seat"]) for w in spot["workers"]}
    return sorted(kinds)


def just_placed(state: State) -> tuple[str, str] | None:
    """(position, kind) of the worker placed this turn in the Workshop area, if any."""
    turn = state["turn"]
    if turn is None or turn["position"] is None:
        return None
    return turn["position"], "artisan" if turn["artisan"] else str(turn["seat"])


def swap_changes_something(state: State, first: tuple[str, str], second: tuple[str, str]) -> bool:
    """Two workers at different positions whose swap changes the table: of different kinds,
    or alike with one of them the worker just placed, whose remaining movements follow it
    ("If the swap involves the Worker that was just placed this turn...")."""
    if first[0] == second[0]:
        return False
    return first[1] != second[1] or just_placed(state) in (first, second)


def transfer_candidates(state: State) -> list[Action]:
    """Every swap a Transfer may make now."""
    return list(_transfer_swaps(state))


def _transfer_swaps(state: State) -> Iterator[Action]:
    refs = [
        (position, kind)
        for position, spot in state["positions"].items()
        if spot["workers"]
        for kind in worker_kinds(spot)
    ]
    for index, first in enumerate(refs):
        for second in refs[index + 1 :]:
            if swap_changes_something(state, first, second):
                yield {"type": "transfer", "first": "/".join(first), "second": "/".join(second)}


def _worker_ref(state: State, action: Action, name: str) -> tuple[str, str]:
    ref = text_field(action, name)
    position, _, kind = ref.partition("/")
    if position not in state["positions"] or kind not in worker_kinds(state["positions"][position]):
        raise IllegalAction(
            "worker_not_there", f"There is no such worker at {position or ref} to swap."
        )
    return position, kind


def check_transfer(state: State, seat: int, action: Action) -> None:
    front_decision(state, seat, "transfer")
    first = _worker_ref(state, action, "first")
    second = _worker_ref(state, action, "second")
    if first[0] == second[0]:
        raise IllegalAction("same_position", "Swap two workers standing at different positions.")
    if not swap_changes_something(state, first, second):
        raise IllegalAction(
            "pointless_transfer",
            "Both workers are of the same kind and neither was just placed; "
            "swapping changes nothing.",
        )


def _take_worker(spot: State, kind: str) -> State:
    for worker in spot["workers"]:
        if ("artisan" if worker["artisan"] else str(worker["seat"])) == kind:
            spot["workers"].remove(worker)
            return dict(worker)
    raise AssertionError("checked before")  # pragma: no cover


def do_transfer(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    (pos_a, kind_a), (pos_b, kind_b) = (
        _worker_ref(state, action, "first"),
        _worker_ref(state, action, "second"),
    )
    spots = state["positions"]
    worker_a = _take_worker(spots[pos_a], kind_a)
    worker_b = _take_worker(spots[pos_b], kind_b)
    spots[pos_b]["workers"].append(worker_a)
    spots[pos_a]["workers"].append(worker_b)
    turn = state["turn"]
    placed = just_placed(state)
    if placed not in ((pos_a, kind_a), (pos_b, kind_b)):
        return
    # The just-placed worker carries its remaining movements to its new position ("the
    # player may move the Production token in the Workshops connected to the new position
    # and perform the actions there as usual"); docs/rules/restoration.md says which of two
    # alike workers moves.
    turn["position"] = pos_b if placed == (pos_a, kind_a) else pos_a
    if turn["moved"]:
        # The rest of the movement turn in progress is made at the new position as usual,
        # moving every workshop connected to it, whichever the turn moved before.
        turn["moved"] = []
        turn["moves_left"] += 1


def check_adjust_reputation(state: State, seat: int, action: Action) -> None:
    front_decision(state, seat, "adjust_reputation")
    direction = text_field(action, "direction")
    reputation = seat_of(state, seat)["reputation"]
    if direction == "up":
        if reputation >= data.REPUTATION["highest"]:
            raise IllegalAction("reputation_at_top", "Your reputation is already at the top.")
    elif direction == "down":
        if reputation <= data.REPUTATION["lowest"]:
            raise IllegalAction("reputation_at_bottom", "Your reputation is already at the bottom.")
    else:
        raise IllegalAction("invalid_action", "Adjust reputation 'up' or 'down'.")


def do_adjust_reputation(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    gain_reputation(state, seat, 1 if action["direction"] == "up" else -1)


def check_place_upgrade(state: State, seat: int, action: Action) -> None:
    decision = front_decision(state, seat, "place_upgrade")
    target = text_field(action, "target")
    player = seat_of(state, seat)
    if state["upgrade_supply"] < 1:
        raise IllegalAction("no_upgrade_tokens", "No Upgrade token is left in the supply.")
    if target == "keep":
        if not decision.get("may_keep"):
            raise IllegalAction(
                "must_place_upgrade", "This token must go into your Research department."
            )
    elif target == "ap_track":
        if player["ap_track"] >= len(data.AP_TRACK):
            raise IllegalAction("ap_track_full", "Your research AP track is full.")
    elif target in player["research"]:
        if player["research"][target]["unlocked"]:
            raise IllegalAction("research_already_unlocked", f"{target} is already unlocked.")
    else:
        raise IllegalAction(
            "unknown_research_position",
            f"Place the token on {', '.join(player['research'])}, 'ap_track' or 'keep'.",
        )


def do_place_upgrade(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)
    state["upgrade_supply"] -= 1
    player = seat_of(state, seat)
    target = action["target"]
    if target == "keep":
        player["upgrades_kept"] += 1  # 1 AP at the end; it can never be placed later
    elif target == "ap_track":
        player["ap_track"] += 1  # from the left-most space
    else:
        player["research"][target]["unlocked"] = True


def check_skip_action(state: State, seat: int, action: Action) -> None:
    pending = state["pending"]
    if not pending or pending[0]["seat"] != seat:
        raise IllegalAction("no_decision_pending", "You have no action to skip now.")
    if not pending[0].get("optional"):
        raise IllegalAction(
            "effect_is_mandatory", f"{EFFECT_NAMES[pending[0]['kind']]} must be resolved."
        )


def do_skip_action(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["pending"].pop(0)


# -- Audit: keeping workers in place ---------------------------------------------------


def worker_locations(state: State, seat: int) -> list[str]:
    """Every place outside the board where ``seat`` has a worker that may be kept."""
    found: list[str] = []
    for position, spot in state["positions"].items():
        found += [f"pos:{position}" for w in spot["workers"] if w["seat"] == seat]
    for tile, markers in state["construction"]["progress"].items():
        found += [f"tile:{tile}:{m['space']}" for m in markers if m["seat"] == seat]
    for rid, slot in seat_of(state, seat)["research"].items():
        found += [f"rd:{rid}" for w in slot["workers"] if not w["artisan"]]
    return found


def keepable(state: State, seat: int) -> list[str]:
    """Locations with a worker of ``seat`` not yet kept this audit (each listed once)."""
    left = Counter(worker_locations(state, seat))
    left.subtract(k["location"] for k in state["kept"] if k["seat"] == seat)
    return sorted(location for location, count in left.items() if count > 0)


def _workers_at(state: State, seat: int, location: str) -> int:
    """How many of ``seat``'s workers ``worker_locations`` lists at ``location``."""
    kind, _, where = location.partition(":")
    if kind == "pos":
        spot = state["positions"].get(where)
        return sum(1 for w in spot["workers"] if w["seat"] == seat) if spot else 0
    if kind == "tile":
        tile, _, space = where.rpartition(":")
        markers = state["construction"]["progress"].get(tile, [])
        return sum(1 for m in markers if m["seat"] == seat and str(m["space"]) == space)
    if kind == "rd":
        slot = seat_of(state, seat)["research"].get(where)
        return sum(1 for w in slot["workers"] if not w["artisan"]) if slot else 0
    return 0


def any_keepable(state: State, seat: int) -> bool:
    """Whether ``keepable`` is not empty, without naming every location: each kept worker
    was one of ``seat``'s listed there, and nothing moves while workers are kept."""
    kept = sum(1 for k in state["kept"] if k["seat"] == seat)
    placed = sum(
        1 for spot in state["positions"].values() for w in spot["workers"] if w["seat"] == seat
    )
    placed += sum(
        1
        for markers in state["construction"]["progress"].values()
        for m in markers
        if m["seat"] == seat
    )
    placed += sum(
        1
        for slot in seat_of(state, seat)["research"].values()
        for w in slot["workers"]
        if not w["artisan"]
    )
    return placed > kept


def check_keep_worker(state: State, seat: int, action: Action) -> None:
    _keep_turn(state, seat)
    location = text_field(action, "location")
    kept = sum(1 for k in state["kept"] if k["seat"] == seat and k["location"] == location)
    if _workers_at(state, seat, location) <= kept:
        raise IllegalAction("no_worker_there", f"You have no worker left to keep at {location}.")
    if seat_of(state, seat)["reputation"] < 1:
        raise IllegalAction(
            "insufficient_reputation", "Keeping a worker in place costs 1 reputation."
        )


def do_keep_worker(state: State, seat: int, action: Action, rng: random.Random) -> None:
    seat_of(state, seat)["reputation"] -= 1
    state["kept"].append({"seat": seat, "location": action["location"]})


def _keep_turn(state: State, seat: int) -> None:
    if state["phase"] != "keep":
        raise IllegalAction("phase_mismatch", "Workers are kept in place during the Audit.")
    if state["keep_queue"][0] != seat:
        raise IllegalAction(
            "not_your_turn", f"{name_of(state, state['keep_queue'][0])} decides first."
        )


def check_collect_workers(state: State, seat: int, action: Action) -> None:
    _keep_turn(state, seat)


def do_collect_workers(state: State, seat: int, action: Action, rng: random.Random) -> None:
    state["keep_queue"].pop(0)


Check = Callable[[State, int, Action], None]
Do = Callable[[State, int, Action, random.Random], None]

HANDLERS: dict[str, tuple[Check, Do]] = {
    "unlock_research": (check_unlock_research, do_unlock_research),
    "place_worker": (check_place_worker, do_place_worker),
    "move": (check_move, do_move),
    "end_turn": (check_end_turn, do_end_turn),
    "play_manager": (check_play_manager, do_play_manager),
    "start_construction": (check_start_construction, do_start_construction),
    "continue_construction": (check_continue_construction, do_continue_construction),
    "completion_choice": (check_completion_choice, do_completion_choice),
    "develop": (check_develop, do_develop),
    "take_manager": (check_take_manager, do_take_manager),
    "transfer": (check_transfer, do_transfer),
    "adjust_reputation": (check_adjust_reputation, do_adjust_reputation),
    "place_upgrade": (check_place_upgrade, do_place_upgrade),
    "skip_action": (check_skip_action, do_skip_action),
    "keep_worker": (check_keep_worker, do_keep_worker),
    "collect_workers": (check_collect_workers, do_collect_workers),
}


# -- automatic steps -------------------------------------------------------------------


def reveal_event(state: State) -> None:
    """Event phase: the first player reveals the round's tile; its automatic effect applies
    to everyone, its choice effect is resolved by every player clockwise."""
    events = state["events"]
    events["revealed"] = max(events["revealed"], state["round"])
    state["phase"] = "event"
    state["due"] = None
    effect = current_event(state)["effect"]
    order = turn_order(state)
    if effect["kind"] in ("gain_reputation", "lose_reputation"):
        sign = 1 if effect["kind"] == "gain_reputation" else -1
        for seat in order:
            gain_reputation(state, seat, sign * effect["amount"])
        order = []
    elif effect["kind"] == "none":
        order = []
    state["event_queue"] = order


def begin_construction(state: State) -> None:
    state["phase"] = "construction"
    start_turn(state, state["first_player"])


def end_of_round(state: State) -> None:
    """Audit, last paragraph: every worker not kept in place returns to its owner's board."""
    kept = Counter((k["seat"], k["location"]) for k in state["kept"])
    seats = state["seats"]

    def stays(seat: int, location: str) -> bool:
        if kept[(seat, location)] > 0:
            kept[(seat, location)] -= 1
            return True
        seats[seat]["board_workers"] += 1
        return False

    for position, spot in state["positions"].items():
        spot["workers"] = [w for w in spot["workers"] if stays(w["seat"], f"pos:{position}")]
    for tile, markers in state["construction"]["progress"].items():
        state["construction"]["progress"][tile] = [
            m for m in markers if stays(m["seat"], f"tile:{tile}:{m['space']}")
        ]
    for seat, player in enumerate(seats):
        for rid, slot in player["research"].items():
            slot["workers"] = [w for w in slot["workers"] if stays(seat, f"rd:{rid}")]
        player["board_workers"] += player["rest"]
        player["rest"] = 0
    state["kept"] = []
    state["round"] += 1
    state["phase"] = "event"
    state["due"] = "reveal_event"


def run_system(state: State, kind: str, rng: random.Random) -> None:
    if system_due(state) != kind:
        raise IllegalAction("no_such_step", f"The automatic step {kind} is not due now.")
    if kind == "refill_manager_supply":
        board.refill_manager_supply(state, rng)
    elif kind == "reveal_construction_tile":
        tile = state["construction"]["pile"].pop(0)
        state["construction"]["display"].append(tile)
        state["construction"]["progress"][tile] = []
    elif kind == "reveal_event":
        reveal_event(state)
    elif kind == "audit":
        state["audit_report"] = scoring.audit(state)
        if state["round"] < data.PLAYER_BOARD["rounds"]:
            state["phase"] = "keep"
            state["due"] = None
            state["keep_queue"] = turn_order(state)
            state["kept"] = []
        else:
            state["phase"] = "scoring"
            state["due"] = "final_scoring"
    elif kind == "end_of_round":
        end_of_round(state)
    elif kind == "final_scoring":
        state["final"] = scoring.final_scores(state)
        state["phase"] = "finished"
        state["due"] = None
        state["finished"] = True


# -- settling: what happens on its own between decisions -------------------------------


def settle(state: State) -> None:
    """Resolve what needs nobody's choice: claims, empty decisions, the next event player,
    the start of the Construction phase, keep-in-place turns with nothing to keep."""
    while not state["finished"] and system_due(state) is None:
        pending = state["pending"]
        if pending:
            decision = pending[0]
            if decision["kind"] == "claim":
                pending.pop(0)
                claim_tile(state, decision)
            elif (
                decision["kind"] == "completion"
                and seat_of(state, decision["seat"])["reputation"] < 1
                and worker_on_completed_tile(state, decision)
            ):
                resolve_completion(state, "rest")
            elif not has_option(state, decision):
                pending.pop(0)  # nothing can be done: the effect is lost
            else:
                return
        elif state["phase"] == "event":
            if state["event_queue"]:
                seat = state["event_queue"].pop(0)
                effect = current_event(state)["effect"]
                trigger(state, seat, effect["kind"], optional=bool(effect.get("optional")))
            else:
                begin_construction(state)
        elif state["phase"] == "keep":
            queue = state["keep_queue"]
            if not queue:
                state["due"] = "end_of_round"
            elif seat_of(state, queue[0])["reputation"] < 1 or not any_keepable(state, queue[0]):
                queue.pop(0)
            else:
                return
        else:
            return
