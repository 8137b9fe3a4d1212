"""Final scoring (Scoring) and the contracts' end-game conditions (Contracts)."""

from __future__ import annotations

from typing import Any

from projections import components
from projections.games.impression import data
from projections.games.impression.effects import all_tiles, assistants_on_board, letters_on_board
from projections.ruleset import State

Player = dict[str, Any]

LINES = [
    "victory_points_during_play",
    "signboard_sets",
    "composing_sticks",
    "contracts",
    "orders_in_production",
    "orders_never_started",
    "director",
    "resources_and_cash",
]


def resources_and_cash(p: Player) -> int:
    """ "2 lead + 1 paper + 9 marks = 12, worth 2 victory points" (Scoring)."""
    return (p["paper"] + p["lead"] + p["ink"] + p["marks"]) // 5


def signboard_sets(p: Player) -> int:
    """Every set of 3 different signboards is worth 5 (completed orders' and city tiles')."""
    counts = [sum(b["colour"] == colour for b in p["signboards"]) for colour in data.COLOURS]
    return 5 * min(counts)


def full_rows(p: Player) -> int:
    return sum(all(p["board"][row * 3 + col] for col in range(3)) for row in range(3))


def contract_points(state: State, p: Player, contract_id: str) -> int:
    """What one active contract scores, doubled with a lead letter under it (Contracts)."""
    rule = data.CONTRACTS[contract_id]["scoring"]
    kind = rule["kind"]
    per = int(rule.get("per", 1))
    board = p["board"]
    counts: dict[str, Any] = {
        "per_marks": lambda: p["marks"],
        "technologies_of_level": lambda: sum(
            data.TECHNOLOGIES[t]["level"] == rule.get("level") for t in all_tiles(p, "tech")
        ),
        "assistants": lambda: assistants_on_board(state, p["seat"]),
        "signboards": lambda: sum(b["colour"] == rule.get("colour") for b in p["signboards"]),
        "city_tiles": lambda: len(p["discs"]),
        "completed_orders": lambda: len(p["completed"]),
        "workforce": lambda: p["workforce"],
        "factories": lambda: len(all_tiles(p, "factory")),
        "active_contracts": lambda: sum(slot["contract"] is not None for slot in p["slots"]),
        "unlocked_slots": lambda: sum(slot["active"] for slot in p["slots"]),
        "letter": lambda: letters_on_board(p, str(rule.get("letter"))),
        "full_columns": lambda: sum(all(board[r * 3 + c] for r in range(3)) for c in range(3)),
        "full_diagonals": lambda: (
            int(all(board[i] for i in (0, 4, 8))) + int(all(board[i] for i in (2, 4, 6)))
        ),
    }
    points = counts[kind]() // per * int(rule["points"])
    return int(points) * (2 if p["letters_under"].get(contract_id) else 1)


def breakdown(state: State, p: Player) -> dict[str, int]:
    """The Scoring list line by line."""
    return {
        "victory_points_during_play": p["vp"],
        "signboard_sets": signboard_sets(p),
        "composing_sticks": 5 * full_rows(p),
        "contracts": sum(
            contract_points(state, p, slot["contract"])
            for slot in p["slots"]
            if slot["contract"] is not None
        ),
        "orders_in_production": sum(order is not None for order in p["line"]),
        "orders_never_started": -sum(data.ORDERS[o]["vp"] for o in p["orders_waiting"]),
        "director": data.DIRECTOR[p["director"]]["points"],
        "resources_and_cash": resources_and_cash(p),
    }


def final_scores(state: State) -> list[dict[str, Any]]:
    scores = []
    for seat, p in enumerate(state["seats"]):
        lines = breakdown(state, p)
        scores.append(
            {
                "seat": seat,
                "total": sum(lines.values()),
                "breakdown": lines,
                "completed_orders": len(p["completed"]),
                "cash": p["marks"],
            }
        )
    return scores


def result(state: State) -> dict[str, Any]:
    """Most victory points wins; ties: most completed orders, then most cash, then shared."""
    scores = state["final_scores"]
    keys = {s["seat"]: (s["total"], s["completed_orders"], s["cash"]) for s in scores}
    return {
        "scores": [
            {"seat": s["seat"], "total": s["total"], "breakdown": s["breakdown"]} for s in scores
        ],
        "ranking": components.ranking(keys),
        "tie_breakers": {
            str(s["seat"]): {"completed_orders": s["completed_orders"], "cash": s["cash"]}
            for s in scores
        },
    }
