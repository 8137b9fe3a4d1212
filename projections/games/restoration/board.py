"""Setting up Restoration's table ("Setup the Game", steps 1-7 and "2 Players Setup").

Builds the plain-data state the reducer in ``rules.py`` plays on: the Workshop area from an
arrangement, the Construction display and pile, the Event tiles, the Manager supply and each
player's board and Development-board markers.
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.restoration import data
from projections.ruleset import IllegalAction

State = dict[str, Any]


def build_workshop_area(arrangement_name: str, player_count: int) -> tuple[State, State]:
    """The five workshops (production token on each board's bottom-left space, step 1b) and
    every worker position with the influence it gives each workshop it touches.

    The geometry is this project's proposal (docs/rules/restoration.md, "Workshop area"): the
    main board in the middle, an auxiliary board on each side. In a 2-player game the single
    positions are closed ("2 Players Setup": intersections only).
    """
    if arrangement_name not in data.ARRANGEMENTS:
        known = ", ".join(sorted(data.ARRANGEMENTS))
        raise IllegalAction("unknown_arrangement", f"Choose a Workshop arrangement among: {known}.")
    arrangement = data.ARRANGEMENTS[arrangement_name]
    geometry = data.GEOMETRY
    main = data.MAIN_BOARD
    around = [arrangement[slot] for slot in geometry["slots"]]
    order = [main, *around]
    workshops = {board: {"token": arrangement["start"].get(board, 0)} for board in order}
    crossing = data.INFLUENCE["intersection"]
    single = data.INFLUENCE["single"]
    positions: State = {}
    for aux in around:
        for number in range(1, geometry["main_edge_intersections"] + 1):
            positions[f"{main}{aux}{number}"] = _position(
                "intersection", {main: crossing, aux: crossing}
            )
    for index, aux in enumerate(around):
        neighbour = around[(index + 1) % len(around)]
        for number in range(1, geometry["corner_intersections"] + 1):
            suffix = "" if geometry["corner_intersections"] == 1 else str(number)
            positions[f"{aux}{neighbour}{suffix}"] = _position(
                "intersection", {aux: crossing, neighbour: crossing}
            )
    for board in order:
        for number in range(1, geometry["singles_per_board"] + 1):
            positions[f"{board}{number}"] = _position(
                "single", {board: single}, closed=player_count == 2
            )
    return workshops, positions


def _position(kind: str, influence: dict[str, int], closed: bool = False) -> State:
    return {"kind": kind, "influence": influence, "closed": closed, "workers": []}


def manager_cards(player_count: int) -> list[str]:
    """Every Manager card in play; a 2-player game removes the 6 with the grey icon."""
    return [
        kind["id"]
        for kind in data.MANAGERS.values()
        for _ in range(data.MANAGER_COPIES)
        if not (player_count == 2 and kind["two_player_icon"])
    ]


def removed_managers(player_count: int) -> list[str]:
    """The Manager cards set aside at setup (only in a 2-player game)."""
    if player_count != 2:
        return []
    return [
        kind["id"]
        for kind in data.MANAGERS.values()
        for _ in range(data.MANAGER_COPIES)
        if kind["two_player_icon"]
    ]


def refill_manager_supply(state: State, rng: random.Random) -> int:
    """Reveal Manager cards one by one until the supply shows 4 different types; duplicates
    stack on their type ("Manager Cards"; setup step 4). Returns how many were revealed."""
    supply = state["managers"]["supply"]
    deck = state["managers"]["deck"]
    revealed = 0
    while len(supply) < 4:
        drawn = components.draw(deck, 1, rng)
        if not drawn:
            break
        supply[drawn[0]] = supply.get(drawn[0], 0) + 1
        revealed += 1
    return revealed


def new_seat(reputation: int) -> State:
    """One player's board and markers after setup steps 5 and 7."""
    board = data.PLAYER_BOARD
    return {
        "board_workers": board["workers_on_board_at_start"],
        "board_artisans": board["artisans_per_player_at_start"],
        "recruitment": board["workers_per_colour"] - board["workers_on_board_at_start"] - 2,
        "rest": 0,
        "technology": 0,
        "technology_scoring_space": None,
        "reputation": reputation,
        "hand": [],
        # Cards everyone saw go into this hand (taken face up from the supply) and that it
        # still must hold: what resample_hidden may not redraw.
        "hand_public": [],
        "research": {rid: {"unlocked": False, "workers": []} for rid in data.RESEARCH},
        "ap_track": 0,
        "upgrades_kept": 0,
        "tiles": [],
    }


def setup_state(players: list[str], options: dict[str, Any], rng: random.Random) -> State:
    """The table after "Setup the Game"; each player still chooses the research skill that
    their first Upgrade token unlocks (step 5c), as their first action."""
    count = len(players)
    workshops, positions = build_workshop_area(str(options["arrangement"]), count)
    tiles = components.shuffled(sorted(data.TILES), rng)
    events = components.shuffled(sorted(data.EVENTS), rng)
    rounds = data.PLAYER_BOARD["rounds"]
    state: State = {
        "players": list(players),
        "options": dict(options),
        "round": 1,
        "phase": "setup",
        "due": None,
        "finished": False,
        "workshops": workshops,
        "positions": positions,
        "construction": {"display": tiles[: count + 2], "pile": tiles[count + 2 :], "progress": {}},
        "events": {"rounds": events[:rounds], "unused": events[rounds:], "revealed": 1},
        "managers": {
            "deck": components.new_deck(manager_cards(count), rng),
            "supply": {},
            "removed": removed_managers(count),
        },
        "artisan_supply": data.PLAYER_BOARD["artisans"],
        "upgrade_supply": data.PLAYER_BOARD["upgrade_tokens"],
        "scoring_spaces_taken": 0,
        "first_player": 0,
        "seats": [],
        "turn": None,
        "pending": [],
        "event_queue": [],
        "keep_queue": [],
        "kept": [],
        "audit_report": None,
        "final": None,
    }
    for tile in state["construction"]["display"]:
        state["construction"]["progress"][tile] = []
    refill_manager_supply(state, rng)
    first = rng.randrange(count)
    state["first_player"] = first
    order = components.clockwise_from(first, count)
    starts = data.REPUTATION["start_by_turn_order"]
    seats: list[State] = [{} for _ in players]
    for place, seat in enumerate(order):
        seats[seat] = new_seat(starts[place])
    state["seats"] = seats
    state["artisan_supply"] -= count * data.PLAYER_BOARD["artisans_per_player_at_start"]
    # Step 6: in clockwise order from the first player, each draws 1 Manager card.
    for seat in order:
        seats[seat]["hand"].extend(components.draw(state["managers"]["deck"], 1, rng))
    return state
