"""The growing map of Impendium as a lattice of cells (docs/rules/impendium.md, "The map").

Card positions sit at even coordinates ("x,y" with x and y even); the federation card is
at "0,0". The space between two orthogonally adjacent card positions ("leaving space
between the cards", Setup) is the cell half-way between them (one odd coordinate). An Ark
of Salvation stands on a star, space dust or the federation card, or on a space next to
one of them; one cardinal step goes from a card to a space or from a space to a card.
"""

from __future__ import annotations

from typing import Any

FEDERATION = "0,0"
CARD_STEPS = ((2, 0), (0, 2), (-2, 0), (0, -2))
UNIT_STEPS = ((1, 0), (0, 1), (-1, 0), (0, -1))
#: Map entries an Ark can stand on and move through.
WALKABLE = ("federation", "star", "dust")


def cell(x: int, y: int) -> str:
    return f"{x},{y}"


def coords(name: str) -> tuple[int, int]:
    x, y = name.split(",")
    return int(x), int(y)


def parse_cell(value: Any) -> tuple[int, int] | None:
    """The coordinates of a cell name a client sent, or None when it is not one."""
    if not isinstance(value, str) or value.count(",") != 1:
        return None
    try:
        return coords(value)
    except ValueError:
        return None


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
