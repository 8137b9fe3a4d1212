"""What each seat may see (Setup and Components: which piles are face down), the
redrawing of what nobody can see, and one-line summaries of actions."""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.impression import data, effects
from projections.ruleset import Action, State

HIDDEN_KEYS = {"trading", "tech", "factories", "orders", "contracts", "letters", "boxed_discs"}


def public_view(state: State, seat: int | None, _legal: Any = None) -> dict[str, Any]:
    """Everything on the table is open information except the order of face-down piles,
    the orders removed at setup and the discs left in the box (Setup 1-7)."""
    result = {key: value for key, value in state.items() if key not in HIDDEN_KEYS}
    result["seat"] = seat
    # The rewards of each seat's assistants not yet in a street (each has its own reward).
    result["seats"] = [
        {**p, "assistants_in_hand": effects.assistants_in_hand(state, index)}
        for index, p in enumerate(state["seats"])
    ]
    trading = state["trading"]
    result["trading"] = {
        "display": trading["display"],
        "discard_pile": trading["discard_pile"],
        "draw_pile": len(trading["draw_pile"]),
    }
    result["tech"] = {
        level: {
            "display": column["display"],
            "draw_pile": len(column["draw_pile"]),
            "known_bottom": column["draw_pile"][column["hidden"] :],
        }
        for level, column in state["tech"].items()
    }
    # factory piles lie face up (Setup 3): their top tile is public
    result["factories"] = {
        level: {
            "top": pile["draw_pile"][0] if pile["draw_pile"] else None,
            "draw_pile": len(pile["draw_pile"]),
            "known_bottom": pile["draw_pile"][max(pile["hidden"], 1) :],
        }
        for level, pile in state["factories"].items()
    }
    orders = state["orders"]
    result["orders"] = {
        "display": orders["display"],
        "discard_pile": orders["discard_pile"],
        "piles": {level: len(pile) for level, pile in orders["piles"].items()},
        "removed": {level: len(pile) for level, pile in orders["removed"].items()},
        "taken": orders["taken"],
    }
    contracts = state["contracts"]
    result["contracts"] = {
        "display": contracts["display"],
        "discard_pile": contracts["discard_pile"],
        "draw_pile": len(contracts["draw_pile"]),
        "taken": contracts["taken"],
    }
    letters = state["letters"]
    pile = letters["draw_pile"]
    result["letters"] = {
        "desk": letters["desk"],
        "discard_pile": letters["discard_pile"],
        "draw_pile": components.deck_size(letters)["draw_pile"],
        # the pile lies grey letter side up: the top tile's letter shows (Setup 7)
        "top_back": data.LEAD_LETTERS[pile[0]]["letter"] if pile else None,
    }
    result["boxed_discs"] = len(state["boxed_discs"])
    return result


def resample(state: State, rng: random.Random) -> State:
    """Redraw, in place, every order nobody at the table knows.

    What it draws depends only on what the table sees and ``rng``: each unseen part is
    taken in sorted order before it is shuffled, so neither the order of a face-down pile
    nor which unseen tile sits where changes the result."""
    trading = state["trading"]
    trading["draw_pile"] = components.shuffled(sorted(trading["draw_pile"]), rng)
    for column in state["tech"].values():
        _shuffle_part(column["draw_pile"], 0, column["hidden"], rng)
    for pile in state["factories"].values():
        _shuffle_part(pile["draw_pile"], 1, pile["hidden"], rng)
    orders = state["orders"]
    for level in data.LEVELS:
        pool = components.shuffled(sorted(orders["piles"][level] + orders["removed"][level]), rng)
        size = len(orders["piles"][level])
        orders["piles"][level], orders["removed"][level] = pool[:size], pool[size:]
    contracts = state["contracts"]
    contracts["draw_pile"] = components.shuffled(sorted(contracts["draw_pile"]), rng)
    letters = state["letters"]["draw_pile"]
    if letters:
        top = data.LEAD_LETTERS[letters[0]]["letter"]
        letters[:] = components.shuffled(sorted(letters), rng)
        same = next(i for i, tile in enumerate(letters) if data.LEAD_LETTERS[tile]["letter"] == top)
        letters[0], letters[same] = letters[same], letters[0]
    state["boxed_discs"] = components.shuffled(sorted(state["boxed_discs"]), rng)
    return state


def _shuffle_part(pile: list[Any], start: int, stop: int, rng: random.Random) -> None:
    if stop - start > 1:
        pile[start:stop] = components.shuffled(sorted(pile[start:stop]), rng)


def summarize(state: State, action: Action) -> str:
    """One line a person reads in a timeline; ``state`` is the state before ``action``."""
    seat = action.get("seat")
    kind = action["type"]
    if seat is None:
        return {
            "pay_wages": "Wages were paid: 1 mark per 2 workforce",
            "preparation": "Preparation: new player order, orders and contracts refilled",
            "final_scoring": "Final scoring",
        }.get(kind, f"Automatic step: {kind}")
    who = state["players"][seat]
    detail = {key: value for key, value in action.items() if key not in ("type", "seat")}
    phrases = {
        "place_tradesman": lambda: f"placed a tradesman in {_shop([detail.get('shop')])}, room II",
        "shop": lambda: (
            f"moved a tradesman to {_shop(detail.get('path'))}, room {detail.get('room')}"
        ),
        "reset": lambda: "reset: " + _reset_text(state, detail),
        "end_turn": lambda: "ended the turn",
        "buy_order": lambda: f"bought order {_slot(state['orders'], detail)}",
        "buy_contract": lambda: f"bought contract {_slot(state['contracts'], detail)}",
        "pass_buying": lambda: "passed buying",
        "advance_order": lambda: f"advanced order {detail.get('order')}",
        "end_production": lambda: "ended production",
        "travel": lambda: (
            f"travelled {detail.get('track_steps')} on the order track and "
            f"to {(detail.get('path') or ['nowhere'])[-1]}"
        ),
        "decline": lambda: "declined the waiting choice",
        "trade_convert": lambda: (
            f"traded 1 {detail.get('give')} for {' and '.join(detail.get('take') or [])}"
        ),
        "trade_tile": lambda: (
            f"used trading tile {detail.get('tile')} {detail.get('times')} time(s)"
            + (" in reverse" if detail.get("reverse") else "")
        ),
        "refresh_trading_tiles": lambda: "paid 1 mark for 3 new trading tiles",
        "typeset_on_stick": lambda: (
            f"typeset a lead letter on composing space {detail.get('cell')}"
        ),
        "typeset_under_contract": lambda: (
            f"typeset a lead letter under contract {detail.get('contract')}"
        ),
        "buy_technology": lambda: (
            f"bought technology {_tech(state, detail)} and built it "
            f"{detail.get('mode')} on {detail.get('space')}"
        ),
        "refresh_technologies": lambda: (
            f"paid 1 mark for new level {detail.get('level')} technologies"
        ),
        "return_technologies": lambda: (
            "put technologies "
            + ", ".join(str(tile) for tile in detail.get("order") or [])
            + " under their pile, in that order"
        ),
        "act_first": lambda: (
            f"took the room II action in {_tradesman_shop(state, seat, detail)} first"
        ),
        "draw_factories": lambda: f"drew 3 level {detail.get('level')} factories",
        "keep_factory": lambda: (
            f"built factory {detail.get('factory')} {detail.get('mode')} on {detail.get('space')}"
        ),
        "place_assistant": lambda: (
            f"placed an assistant ({detail.get('reward')}) in street {detail.get('street')}"
        ),
        "take_city_tile": lambda: f"took the city tile of {detail.get('city')}",
        "activate_contract": lambda: (
            f"activated contract {detail.get('contract')} in slot {detail.get('slot')}"
        ),
        "use_city_disc": lambda: f"used city disc {detail.get('disc')}",
        "signboard_white": lambda: "used a white signboard for 1 workforce",
        "signboard_red": lambda: "used 2 red signboards for a free travel",
        "signboard_blue": lambda: "used 2 blue signboards for a free technology",
    }
    text = phrases.get(kind)
    if text is not None:
        return f"{who} {text()}"
    described = ", ".join(f"{key} {value}" for key, value in detail.items())
    return f"{who}: {kind.replace('_', ' ')}" + (f" ({described})" if described else "")


def _tech(state: State, detail: dict[str, Any]) -> str:
    column = state["tech"].get(detail.get("level"), {}).get("display", [])
    row = detail.get("row")
    if isinstance(row, int) and 0 <= row < len(column) and column[row] is not None:
        return str(column[row])
    return "?"


def _shop(path: Any) -> str:
    if isinstance(path, list) and path and path[-1] in data.SHOPS:
        return str(data.SHOPS[path[-1]]["name"])
    return "another shop"


def _tradesman_shop(state: State, seat: int, detail: dict[str, Any]) -> str:
    men = state["seats"][seat]["tradesmen"]
    index = detail.get("tradesman")
    if isinstance(index, int) and 0 <= index < len(men):
        return _shop([men[index]["shop"]])
    return "another shop"


def _slot(table: dict[str, Any], detail: dict[str, Any]) -> str:
    slot = detail.get("slot")
    if isinstance(slot, int) and 0 <= slot < len(table["display"]):
        return str(table["display"][slot])
    return "?"


def _reset_text(state: State, detail: dict[str, Any]) -> str:
    slot = detail.get("slot")
    desk = state["letters"]["desk"]
    if not isinstance(slot, int) or not 0 <= slot < len(desk) or desk[slot] is None:
        return "took no letter"
    letter = data.LEAD_LETTERS[desk[slot]]["letter"]
    if detail.get("keep") is None:
        return f"discarded lead letter {letter} for its resources"
    return f"kept lead letter {letter} on stack {detail.get('keep')}"
