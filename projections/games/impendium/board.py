"""The growing map of Impendium as a lattice of cells (docs/rules/impendium.md, "The map").

Card positions sit at even coordinates ("x,y" with x and y even); the federation card is
at "0,0". The space between two orthogonally adjacent card positions ("leaving space
between the cards", Setup) is the cell half-way between them (one odd coordinate). An Ark
of Salvation stands on a star, space dust or the federation card, or on a space next to
one of them; one cardinal step goes from a card to a space or from a space to a card.

A cell has one name, the one ``cell`` writes: ASCII digits, no leading zero, no "-0". A
client's name is read with ``parse_cell`` (a placed disc's with ``parse_disc``), which
knows no other spelling of the same numbers: two names for one space would put two Arks on
it that the rules then treat as apart (docs/rules/impendium.md, "Held-out rules review").
"""

from __future__ import annotations

import re
from typing import Any

from projections.games.impendium.data import HARBINGERS, STARS

FEDERATION = "0,0"
CARD_STEPS = ((2, 0), (0, 2), (-2, 0), (0, -2))
UNIT_STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))
#: Map entries an Ark can stand on and move through.
WALKABLE = ("federation", "star", "dust")


#: The farthest a cell can lie from the federation on either axis: every star card and
#: harbinger in one line (two cells a card), and the space beyond the last.
REACH = 2 * (len(STARS) + len(HARBINGERS)) + 1
#: One coordinate as ``cell`` writes it: 0, or a signed whole number without a leading
#: zero ([0-9], never a Unicode digit), of at most as many digits as REACH has.
COORDINATE = f"(?:0|-?[1-9][0-9]{{0,{len(str(REACH)) - 1}}})"
#: A cell's name, for the board and for the action schemas' patterns.
CELL = f"{COORDINATE},{COORDINATE}"
#: A slot of a card (its index in the card's bottom row) as a placed disc's name writes it.
SLOT = "(?:0|[1-9][0-9]?)"
#: A placed disc: ``map:x,y/slot``, ``project:card/slot`` or ``harbinger:x,y/slot``.
DISC = f"(?:map:{CELL}|project:[A-Za-z0-9]+|harbinger:{CELL})/{SLOT}"
_CELL = re.compile(CELL, re.ASCII)
_DISC = re.compile(f"(map|project|harbinger):([^/]+)/({SLOT})", re.ASCII)


def cell(x: int, y: int) -> str:
    return f"{x},{y}"


def coords(name: str) -> tuple[int, int]:
    """The coordinates of a cell the board named (use ``parse_cell`` for a client's)."""
    x, y = name.split(",")
    return int(x), int(y)


def parse_cell(value: Any) -> tuple[int, int] | None:
    """The coordinates of the cell a client named, or None unless ``value`` is the board's
    own name of a cell a map can hold (within REACH of the federation)."""
    if not isinstance(value, str) or _CELL.fullmatch(value) is None:
        return None
    x, y = coords(value)
    if abs(x) > REACH or abs(y) > REACH:
        return None
    return x, y


def is_cell_name(value: Any) -> bool:
    return parse_cell(value) is not None


def parse_disc(value: Any) -> tuple[str, str, int] | None:
    """(``map``, ``project`` or ``harbinger``; the cell or card; the slot) of a placed disc a
    client named, or None unless it is named as ``disc_name`` writes it."""
    if not isinstance(value, str):
        return None
    found = _DISC.fullmatch(value)
    if found is None:
        return None
    where, place, slot = found.groups()
    if where == "project" and place not in STARS:
        return None
    if where != "project" and not is_cell_name(place):
        return None
    return where, place, int(slot)


def disc_name(where: str, place: str, slot: int) -> str:
    return f"{where}:{place}/{slot}"


def is_card_position(name: str) -> bool:
    x, y = coords(name)
    return x % 2 == 0 and y % 2 == 0


def adjacent_positions(position: str) -> list[str]:
    """The four card positions orthogonally next to a card position."""
    x, y = coords(position)
    return [cell(x + dx, y + dy) for dx, dy in CARD_STEPS]


def step_cells(name: str) -> list[str]:
    """The four cells one cardinal step away."""
    x, y = coords(name)
    return [cell(x + dx, y + dy) for dx, dy in UNIT_STEPS]


def gap_sides(gap: str) -> list[str]:
    """The two card positions a space lies between."""
    x, y = coords(gap)
    if x % 2:
        return [cell(x - 1, y), cell(x + 1, y)]
    return [cell(x, y - 1), cell(x, y + 1)]


def is_gap(name: str) -> bool:
    x, y = coords(name)
    return (x % 2) != (y % 2)


def walkable(board: dict[str, Any], name: str) -> bool:
    """Whether an Ark may stand on this cell."""
    entry = board.get(name)
    if entry is not None:
        return bool(entry["kind"] in WALKABLE)
    if not is_gap(name):
        return False
    return any(
        board.get(side) is not None and board[side]["kind"] in WALKABLE for side in gap_sides(name)
    )


def walkable_cells(board: dict[str, Any]) -> list[str]:
    """Every cell an Ark may stand on, in a stable order."""
    found: set[str] = set()
    for position, entry in board.items():
        if entry["kind"] in WALKABLE:
            found.add(position)
            found.update(step_cells(position))
    return sorted(found, key=coords)
