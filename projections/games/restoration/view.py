"""What a Restoration seat (or a spectator) may see, and redrawing what it may not.

Hidden at the table: other players' Manager hands (their size is public), the order of the
Manager deck and of the Construction pile (their sizes are public), and the Event tiles of
later rounds and the 3 unused ones (face down). Everything else is on the table.
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.restoration import data

State = dict[str, Any]


def view(state: State, seat: int | None) -> State:
    """The table as ``seat`` sees it (None: a spectator)."""
    events = state["events"]
    managers = state["managers"]
    construction = state["construction"]
    return {
        "players": state["players"],
        "round": state["round"],
        "phase": state["phase"],
        "finished": state["finished"],
        "first_player": state["first_player"],
        "workshops": {
            workshop: {
                "name": data.BOARDS[workshop]["name"],
                "main": workshop == data.MAIN_BOARD,
                "spaces": data.BOARDS[workshop]["spaces"],
                "token": place["token"],
            }
            for workshop, place in state["workshops"].items()
        },
        "positions": state["positions"],
        "construction": {
            "display": [
                {"tile": tile, **data.TILES[tile], "workers": construction["progress"][tile]}
                for tile in construction["display"]
            ],
            "pile": len(construction["pile"]),
        },
        "events": {
            "revealed": [data.EVENTS[e] for e in events["rounds"][: events["revealed"]]],
            "face_down": len(events["rounds"]) - events["revealed"],
        },
        "managers": {
            "supply": managers["supply"],
            "deck": components.deck_size(managers["deck"]),
            "discard_pile": managers["deck"]["discard_pile"],
            "removed": managers["removed"],
        },
        "artisan_supply": state["artisan_supply"],
        "upgrade_supply": state["upgrade_supply"],
        "scoring_spaces_taken": state["scoring_spaces_taken"],
        "seats": [_seat_view(player, other == seat) for other, player in enumerate(state["seats"])],
        "turn": state["turn"],
        "pending": state["pending"],
        "event_queue": state["event_queue"],
        "keep_queue": state["keep_queue"],
        "kept": state["kept"],
        "audit_report": state["audit_report"],
        "final": state["final"],
    }


def _seat_view(player: State, own: bool) -> State:
    shown = {key: value for key, value in player.items() if key != "hand"}
    shown["hand_size"] = len(player["hand"])
    shown["hand"] = list(player["hand"]) if own else None
    return shown


def _unknown_part(player: State) -> list[str]:
    """The cards of a hand nobody else has seen go into it."""
    rest = list(player["hand"])
    for card in player["hand_public"]:
        rest.remove(card)
    return rest


def resample_hidden(state: State, seat: int, rng: random.Random) -> State:
    """A copy of ``state`` with everything ``seat`` cannot see redrawn: the Manager deck
    and the unseen part of the other hands dealt again from the same cards (a card taken
    face up from the supply stays where everyone saw it go), the Construction pile reshuffled,
    and the face-down Event tiles drawn again from those not yet revealed.

    It depends only on ``seat``'s information set and ``rng``: each unseen pool is taken in
    sorted order before it is shuffled, so neither the order of a hidden pile nor which
    hidden card sits where changes what is drawn."""
    from projections.fold import copy_state

    fresh: State = copy_state(state)
    deck = fresh["managers"]["deck"]
    others = [other for other in range(len(fresh["seats"])) if other != seat]
    unseen = list(deck["draw_pile"])
    for other in others:
        unseen.extend(_unknown_part(fresh["seats"][other]))
    unseen = components.shuffled(sorted(unseen), rng)
    for other in others:
        player = fresh["seats"][other]
        redrawn = len(player["hand"]) - len(player["hand_public"])
        player["hand"] = list(player["hand_public"]) + [unseen.pop() for _ in range(redrawn)]
    deck["draw_pile"] = unseen
    construction = fresh["construction"]
    construction["pile"] = components.shuffled(sorted(construction["pile"]), rng)
    events = fresh["events"]
    shown = events["revealed"]
    hidden = components.shuffled(sorted(events["rounds"][shown:] + events["unused"]), rng)
    face_down = len(events["rounds"]) - shown
    events["rounds"] = events["rounds"][:shown] + hidden[:face_down]
    events["unused"] = hidden[face_down:]
    return fresh
