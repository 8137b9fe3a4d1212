"""The Turmoil Expansion (rulebook, "Turmoil Expansion"), played with the ``turmoil`` option.

Four markers (raiders, neutron storm, merchants, mercenaries) enter the map by dice once it
holds 8 star cards and move one card each round before the starting player's turn, over an
"endless" map. Every die is rolled in an automatic step; the players' choices (trading with
the merchants, hiring the mercenaries) are seat actions. Where the text is silent or cut
off, the decision and its reason are in docs/rules/impendium.md, "Turmoil Expansion".
"""

from __future__ import annotations

import random
from typing import Any

from projections import components
from projections.games.impendium import board as grid
from projections.games.impendium import effects
from projections.games.impendium import state as query
from projections.games.impendium.data import RESOURCES
from projections.ruleset import IllegalAction

State = dict[str, Any]

MARKERS = ("raiders", "neutron_storm", "merchants", "mercenaries")
#: "Once there are 8 star cards" (Turmoil, Setup): intact stars and space dust on the map.
STAR_CARDS_TO_ENTER = 8
#: One die per marker: 1 north, 2 east, 3 south, 4 west; "5,6 = no change of position".
DIRECTIONS = {1: (0, -1), 2: (1, 0), 3: (0, 1), 4: (-1, 0)}
DIE_SIDES = 6
#: "Neutron storm = -3 life forms for every player on the star".
STORM_LOSS = 3
STORM_RESOURCE = "life_forms"
#: "pay 3 artifacts or hydrogen to hire them".
MERCENARY_FEE = 3
MERCENARY_PAYMENTS = ("artifacts", "hydrogen")
#: "always trade 2:1 = pay 2 of any resource, get 1 of any resource".
MERCHANT_RATE = 2
#: The automatic steps that settle a battle queued by a seat action.
BATTLES = ("raiders_battle", "mercenary_battle")
#: Map entries a marker stands on: the star cards, flipped (dust) or not, and the federation.
STANDABLE = ("federation", "star", "dust")


def in_play(state: State) -> bool:
    return bool(state["options"].get("turmoil", False))


def new_turmoil() -> dict[str, Any]:
    return {
        "entered": False,
        "markers": {marker: None for marker in MARKERS},
        "last_rolls": None,
        "last_battle": None,
    }


def star_cards(state: State) -> int:
    return sum(1 for entry in state["board"].values() if entry["kind"] in ("star", "dust"))


def _cards(state: State) -> list[tuple[int, int]]:
    return [grid.coords(p) for p, e in state["board"].items() if e["kind"] in STANDABLE]


def markers_at(state: State, position: Any) -> list[str]:
    if not in_play(state) or not isinstance(position, str):
        return []
    placed = state["turmoil"]["markers"]
    return [marker for marker in MARKERS if placed[marker] == position]


def _roll(rng: random.Random) -> int:
    return rng.randint(1, DIE_SIDES)


def roll_position(state: State, rng: random.Random) -> tuple[str, list[int]]:
    """A row die then a column die (docs/rules/impendium.md: rows of cards counted from the
    north, cards in the row from the west, both wrapping round like the endless map)."""
    cards = _cards(state)
    rows = sorted({y for _x, y in cards})
    row_die = _roll(rng)
    row = rows[(row_die - 1) % len(rows)]
    line = sorted(x for x, y in cards if y == row)
    column_die = _roll(rng)
    return grid.cell(line[(column_die - 1) % len(line)], row), [row_die, column_die]


def step_position(state: State, position: str, die: int) -> str:
    """One card in the die's direction, entering back on the far side (endless map)."""
    if die not in DIRECTIONS:
        return position
    dx, dy = DIRECTIONS[die]
    x, y = grid.coords(position)
    cards = set(_cards(state)) | {(x, y)}
    if dx:
        line = sorted(cx for cx, cy in cards if cy == y)
        index = line.index(x)
        return grid.cell(line[(index + dx) % len(line)], y)
    line = sorted(cy for cx, cy in cards if cx == x)
    index = line.index(y)
    return grid.cell(x, line[(index + dy) % len(line)])


def move_markers(state: State, rng: random.Random) -> None:
    """Before the starting player's turn: enter (once 8 star cards lie on the map) or move."""
    turmoil = state["turmoil"]
    placed = turmoil["markers"]
    rolls: dict[str, list[int]] = {}
    arrived: list[str] = []
    if not turmoil["entered"] and star_cards(state) < STAR_CARDS_TO_ENTER:
        turmoil["last_rolls"] = None
        return
    entering = not turmoil["entered"]
    turmoil["entered"] = True
    for marker in MARKERS:
        if entering or placed[marker] is None:
            # Entering, or raiders defeated: "they reestablish with a dice roll (row/column)".
            placed[marker], rolls[marker] = roll_position(state, rng)
            arrived.append(marker)
            continue
        die = _roll(rng)
        rolls[marker] = [die]
        target = step_position(state, placed[marker], die)
        if target != placed[marker]:
            placed[marker] = target
            arrived.append(marker)
    turmoil["last_rolls"] = rolls
    turmoil["last_battle"] = None
    for marker in arrived:
        for seat, ark in enumerate(state["arks"]):
            if placed[marker] is not None and ark == placed[marker]:
                _meet(state, seat, marker, rng)


def _meet(state: State, seat: int, marker: str, rng: random.Random) -> None:
    """A marker and an Ark come together (the marker arrives or the Ark does)."""
    if marker == "neutron_storm":
        pool = state["seats"][seat]["resources"]
        pool[STORM_RESOURCE] = max(0, pool[STORM_RESOURCE] - STORM_LOSS)
    elif marker == "raiders":
        raiders_battle_now(state, seat, rng)


def ark_arrives(state: State, seat: int) -> None:
    """An Ark entered a card: the storm strikes at once; a raiders battle is queued for the
    automatic step that rolls its dice."""
    for marker in markers_at(state, state["arks"][seat]):
        if marker == "neutron_storm":
            pool = state["seats"][seat]["resources"]
            pool[STORM_RESOURCE] = max(0, pool[STORM_RESOURCE] - STORM_LOSS)
        elif marker == "raiders":
            state["pending"].append({"kind": "raiders_battle", "seat": seat})


def raiders_battle_now(state: State, seat: int, rng: random.Random) -> None:
    """The player adds their lowest resource, the raiders nothing; a loser loses 1 of each
    resource; beaten raiders leave the map until their next movement."""
    pool = state["seats"][seat]["resources"]
    dice = [_roll(rng), _roll(rng)]
    totals = [dice[0] + min(pool.values()), dice[1]]
    if totals[0] > totals[1]:
        winner = "player"
        state["turmoil"]["markers"]["raiders"] = None
    elif totals[0] < totals[1]:
        winner = "raiders"
        for resource in RESOURCES:
            pool[resource] = max(0, pool[resource] - 1)
    else:
        winner = None
    state["turmoil"]["last_battle"] = {
        "kind": "raiders",
        "seat": seat,
        "dice": dice,
        "totals": totals,
        "winner": winner,
    }


def raiders_battle(state: State, rng: random.Random) -> None:
    pending = state["pending"].pop(0)
    if state["turmoil"]["markers"]["raiders"] == state["arks"][pending["seat"]]:
        raiders_battle_now(state, pending["seat"], rng)


def mercenary_battle(state: State, rng: random.Random) -> None:
    """Dice only ("no resource amount added"). Mercenaries who win take the difference of
    the dice from the target for their hirer, who chooses which (``take_spoils``, as after an
    attack); a target who wins gains nothing (docs/rules/impendium.md, "Held-out rules
    review": the cut-off sentence)."""
    pending = state["pending"].pop(0)
    hirer, target = pending["seat"], pending["target"]
    dice = [_roll(rng), _roll(rng)]
    spoils = 0
    if dice[0] > dice[1]:
        spoils = min(dice[0] - dice[1], query.MAX_SPOILS, query.total_resources(state, target))
    if spoils:
        # "an immediate attack": its spoils are taken before anything else is settled.
        state["pending"].insert(
            0, {"kind": "spoils", "seat": hirer, "from": target, "amount": spoils}
        )
    state["turmoil"]["last_battle"] = {
        "kind": "mercenaries",
        "seat": hirer,
        "target": target,
        "dice": dice,
        "winner": "mercenaries" if dice[0] > dice[1] else "target" if dice[1] > dice[0] else None,
        "spoils": spoils,
    }


# -- the players' choices ------------------------------------------------------------------


def require_turmoil(state: State) -> None:
    if not in_play(state):
        raise IllegalAction(
            "turmoil_not_in_play", "This game is played without the Turmoil Expansion."
        )


def check_merchant_trade(state: State, seat: int, give: Any, get: Any) -> None:
    require_turmoil(state)
    if "merchants" not in markers_at(state, state["arks"][seat]):
        raise IllegalAction(
            "no_merchants_here", "Trade with the merchant ship on the star your Ark occupies."
        )
    if (
        not _amounts(give)
        or not _amounts(get)
        or set(give) & set(get)
        or sum(give.values()) != MERCHANT_RATE * sum(get.values())
    ):
        raise IllegalAction(
            "bad_merchant_trade",
            "The merchants trade 2:1: pay 2 resources for each 1 you get, of other kinds.",
        )
    if not components.can_pay(state["seats"][seat]["resources"], give):
        raise IllegalAction("insufficient_resources", "You do not hold what you offer.")


def check_hire(
    state: State, seat: int, turn: dict[str, Any], action: dict[str, Any]
) -> dict[str, dict[str, int]] | None:
    """Refuse a hire the rules do not allow; the substitution it pays with (None: in kind)."""
    pay, target = action.get("pay"), action.get("target")
    require_turmoil(state)
    if "mercenaries" not in markers_at(state, state["arks"][seat]):
        raise IllegalAction(
            "no_mercenaries_here", "Hire the mercenaries on the star your Ark occupies."
        )
    if turn.get("hired"):
        raise IllegalAction(
            "mercenaries_already_hired", "You already hired the mercenaries this turn."
        )
    if pay not in MERCENARY_PAYMENTS:
        raise IllegalAction(
            "bad_mercenary_payment", "The mercenaries are paid 3 artifacts or 3 hydrogen."
        )
    if (
        not isinstance(target, int)
        or isinstance(target, bool)
        or not 0 <= target < len(state["players"])
        or target == seat
    ):
        raise IllegalAction("bad_target", "Name another player for the mercenaries to attack.")
    have = state["seats"][seat]["resources"][pay]
    fee = {pay: MERCENARY_FEE}
    substitute = effects.check_substitution(state, seat, fee, action.get("substitute"))
    if query.payment(state, seat, fee, substitute) is None:
        raise IllegalAction(
            "insufficient_resources", f"Hiring costs {MERCENARY_FEE} {pay}; you have {have}."
        )
    return substitute


def _amounts(value: Any) -> bool:
    if not isinstance(value, dict) or not value:
        return False
    return all(
        key in RESOURCES and isinstance(n, int) and not isinstance(n, bool) and n > 0
        for key, n in value.items()
    )
