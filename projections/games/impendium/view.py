"""What each seat may see of an Impendium game, and redrawing what it may not.

Hidden at the table (rulebook, Recruit a Faction; docs/rules/impendium.md, "Hidden
information"): the order of every deck, other players' galactic diplomacy hands, the three
cards a recruiter is choosing from, and a trade offer's terms (only its two players see
them until it is answered).
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.fold import copy_state
from projections.games.impendium import state as query
from projections.games.impendium.data import ARK_COLOURS, RESOURCES

State = dict[str, Any]

PUBLIC_KEYS = (
    "players",
    "options",
    "phase",
    "round",
    "start_player",
    "setup_queue",
    "board",
    "arks",
    "subverting",
    "projects",
    "galaxies",
    "federation_taken",
    "turn",
    "passed",
    "final_turns",
    "end_trigger",
    "outcome",
    "last_attack",
    "finished",
)


def view(state: State, seat: int | None) -> dict[str, Any]:
    seen: dict[str, Any] = {key: state[key] for key in PUBLIC_KEYS}
    # Each player draws their starting star when it is their turn to place it (Setup).
    placer = _starting_star_placer(state)
    seen["setup_star"] = state["setup_stars"][placer] if placer is not None else None
    seen["decks"] = {name: components.deck_size(deck) for name, deck in state["decks"].items()}
    seen["seats"] = [
        {
            "resources": mine["resources"],
            "vp": mine["vp"],
            "vp_sources": mine["vp_sources"],
            "factions": mine["factions"],
            "turned": mine["turned"],
            "discounts": mine["discounts"],
            "hand_size": len(mine["hand"]),
            "hand": mine["hand"] if index == seat else None,
            # Figures a player would otherwise work out from the rulebook at the table.
            "ark_colour": ARK_COLOURS[index],
            "colonies_on_map": query.map_colonies(state, index),
            "colony_cap": query.colony_cap(state, index),
            "free_discs": query.free_discs(state, index),
            "recruit_costs": {r: query.recruit_cost(state, index, r) for r in RESOURCES},
        }
        for index, mine in enumerate(state["seats"])
    ]
    seen["galaxy_size"] = query.galaxy_size(state)
    seen["pending"] = [_pending_seen(pending, seat) for pending in state["pending"]]
    seen["seat"] = seat
    if "turmoil" in state:
        # The markers and every roll are on the table for all to see.
        seen["turmoil"] = state["turmoil"]
    return seen


def _starting_star_placer(state: State) -> int | None:
    if state["phase"] != "setup_stars":
        return None
    return int(state["setup_queue"][0])


def _pending_seen(pending: dict[str, Any], seat: int | None) -> dict[str, Any]:
    if pending["kind"] == "keep_diplomacy" and pending["seat"] != seat:
        return {"kind": pending["kind"], "seat": pending["seat"], "card_count": 3}
    if pending["kind"] == "trade" and seat not in (pending["seat"], pending["from"]):
        return {"kind": pending["kind"], "seat": pending["seat"], "from": pending["from"]}
    return pending


def resample_hidden(state: State, seat: int, rng: random.Random) -> State:
    """Redraw deck orders, other hands, others' drawn diplomacy cards and hidden offers.

    It depends only on ``seat``'s information set and ``rng``: each unseen pool is taken in
    sorted order before it is shuffled, so neither the order of a hidden pile nor which
    hidden card sits where changes what is drawn."""
    fresh: State = copy_state(state)
    decks = fresh["decks"]
    for name in ("harbingers", "rulers"):
        decks[name]["draw_pile"] = components.shuffled(sorted(decks[name]["draw_pile"]), rng)
    _resample_stars(fresh, rng)
    decks["factions"]["draw_pile"] = _shuffle_keeping(
        decks["factions"]["draw_pile"], set(fresh["returned_factions"]), rng
    )
    _resample_diplomacy(fresh, seat, rng)
    for pending in fresh["pending"]:
        if pending["kind"] == "trade" and seat not in (pending["seat"], pending["from"]):
            _redraw_offer(fresh, pending, rng)
    return fresh


def _resample_stars(fresh: State, rng: random.Random) -> None:
    """The star deck and the starting stars not drawn yet are one unseen pile."""
    placer = _starting_star_placer(fresh)
    waiting = [
        seat
        for seat, card in enumerate(fresh["setup_stars"])
        if card is not None and seat != placer
    ]
    pile = fresh["decks"]["stars"]["draw_pile"]
    unseen = pile + [fresh["setup_stars"][seat] for seat in waiting]
    unseen = components.shuffled(sorted(unseen), rng)
    for seat in waiting:
        fresh["setup_stars"][seat] = unseen.pop()
    fresh["decks"]["stars"]["draw_pile"] = unseen


def _redraw_offer(fresh: State, pending: dict[str, Any], rng: random.Random) -> None:
    """Some offer of one held resource for another, as the hidden one was."""
    offerer = fresh["seats"][pending["from"]]["resources"]
    target = fresh["seats"][pending["seat"]]["resources"]
    gives = [r for r in RESOURCES if offerer[r] > 0]
    pairs = [(g, t) for g in gives for t in RESOURCES if t != g and target[t] > 0]
    if pairs:
        give, get = pairs[rng.randrange(len(pairs))]
        pending["give"], pending["get"] = {give: 1}, {get: 1}


def _shuffle_keeping(pile: list[str], known: set[str], rng: random.Random) -> list[str]:
    """Shuffle a pile, leaving the cards everyone saw go under it where they are."""
    loose = components.shuffled(sorted(card for card in pile if card not in known), rng)
    return [card if card in known else loose.pop() for card in pile]


def _resample_diplomacy(fresh: State, seat: int, rng: random.Random) -> None:
    pile = fresh["decks"]["diplomacy"]["draw_pile"]
    known = set(fresh["returned_diplomacy"][seat])
    others = [s for s in range(len(fresh["players"])) if s != seat]
    pending_cards = [
        p for p in fresh["pending"] if p["kind"] == "keep_diplomacy" and p["seat"] != seat
    ]
    unseen = [card for card in pile if card not in known]
    for other in others:
        unseen.extend(fresh["seats"][other]["hand"])
    for pending in pending_cards:
        unseen.extend(pending["cards"])
    unseen = components.shuffled(sorted(unseen), rng)
    fresh["decks"]["diplomacy"]["draw_pile"] = [
        card if card in known else unseen.pop() for card in pile
    ]
    for other in others:
        hand = fresh["seats"][other]["hand"]
        fresh["seats"][other]["hand"] = [unseen.pop() for _ in hand]
        fresh["returned_diplomacy"][other] = []
    for pending in pending_cards:
        pending["cards"] = [unseen.pop() for _ in pending["cards"]]
