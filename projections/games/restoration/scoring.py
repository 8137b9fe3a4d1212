"""Restoration's two scoring steps: the Audit at the end of every round ("Audit Phase") and
the final count ("Game End"). Both return a breakdown a player can check line by line."""

from __future__ import annotations

from typing import Any

from projections import components
from projections.games.restoration import data

State = dict[str, Any]


def influence(state: State, workshop: str) -> list[int]:
    """Each seat's Influence in ``workshop``: the IP of every position touching it, once per
    worker of that seat standing there (artisans have left before this is counted)."""
    totals = [0] * len(state["players"])
    for spot in state["positions"].values():
        points = spot["influence"].get(workshop, 0)
        for worker in spot["workers"]:
            if not worker["artisan"]:
                totals[worker["seat"]] += points
    return totals


def unique_highest(values: list[int]) -> int | None:
    """The seat with strictly the most (and more than nothing), or None on a tie."""
    best = max(values)
    if best <= 0 or values.count(best) > 1:
        return None
    return values.index(best)


def unique_lowest(values: list[int]) -> int | None:
    """The seat with strictly the least, or None on a tie."""
    least = min(values)
    return values.index(least) if values.count(least) == 1 else None


def give_artisan(state: State, seat: int) -> bool:
    """One Artisan from the supply, if any is left (the supply holds 6 in all)."""
    if state["artisan_supply"] < 1:
        return False
    state["artisan_supply"] -= 1
    state["seats"][seat]["board_artisans"] += 1
    return True


def return_artisans(state: State) -> int:
    """Audit, first step: artisans in the Workshops and Research departments go back."""
    returned = 0
    for spot in state["positions"].values():
        kept = [w for w in spot["workers"] if not w["artisan"]]
        returned += len(spot["workers"]) - len(kept)
        spot["workers"] = kept
    for player in state["seats"]:
        for slot in player["research"].values():
            kept = [w for w in slot["workers"] if not w["artisan"]]
            returned += len(slot["workers"]) - len(kept)
            slot["workers"] = kept
    state["artisan_supply"] += returned
    return returned


def audit(state: State) -> State:
    """The Audit phase up to the artisan gains; returns its report.

    Workshops are checked main first, then the auxiliary boards clockwise from north: the
    order matters only when the Artisan supply runs out (docs/rules/restoration.md).
    """
    report: State = {"round": state["round"], "artisans_returned": return_artisans(state)}
    rows = []
    for workshop in state["workshops"]:
        totals = influence(state, workshop)
        winner = unique_highest(totals)
        gained = winner is not None and give_artisan(state, winner)
        main = workshop == data.MAIN_BOARD
        if main and winner is not None:
            state["first_player"] = winner  # the First Player token, for the next round
        rows.append(
            {
                "workshop": workshop,
                "main": main,
                "influence": totals,
                "winner": winner,
                "artisan": gained,
            }
        )
    report["workshops"] = rows
    levels = [player["reputation"] for player in state["seats"]]
    lowest = unique_lowest(levels)
    report["reputation"] = {
        "levels": levels,
        "lowest": lowest,
        "artisan": lowest is not None and give_artisan(state, lowest),
    }
    report["first_player"] = state["first_player"]
    return report


def technology_points(player: State) -> int:
    """The Technology track scores only on its scoring spaces ("D: Highest space ... the
    highest available scoring space"); the rulebook gives its levels no Achievement Points
    (docs/rules/restoration.md, "Development Board")."""
    space = player["technology_scoring_space"]
    return int(space) if space is not None else 0


def breakdown(player: State) -> dict[str, int]:
    """Game End: every source of Achievement Points, line by line. The research AP track is
    counted although the Game End list leaves it out (docs/rules/restoration.md)."""
    board = data.PLAYER_BOARD
    return {
        "construction_tiles": sum(data.TILES[tile]["ap"] for tile in player["tiles"]),
        "technology": technology_points(player),
        "reputation": player["reputation"],
        "manager_cards": sum(data.MANAGERS[card]["ap"] for card in player["hand"]),
        "artisans": board["artisan_ap"] * player["board_artisans"],
        "unused_upgrade_tokens": board["unused_upgrade_ap"] * player["upgrades_kept"],
        "research_ap_track": data.AP_TRACK[player["ap_track"] - 1] if player["ap_track"] else 0,
    }


def final_scores(state: State) -> State:
    """The result: totals with breakdowns, and the ranking after the tie-breakers (more
    completed constructions, then more Development-board AP, then more artisans)."""
    scores = []
    keys: dict[int, tuple[int, ...]] = {}
    for seat, player in enumerate(state["seats"]):
        lines = breakdown(player)
        total = sum(lines.values())
        development = lines["technology"] + lines["reputation"]
        keys[seat] = (total, len(player["tiles"]), development, player["board_artisans"])
        scores.append(
            {
                "seat": seat,
                "player": state["players"][seat],
                "total": total,
                "breakdown": lines,
                "tie_breakers": {
                    "completed_constructions": len(player["tiles"]),
                    "development_board_ap": development,
                    "artisans": player["board_artisans"],
                },
            }
        )
    return {"scores": scores, "ranking": components.ranking(keys)}


#: The Game End lines that lie face up on the table during play; the Manager cards in a
#: hand are the one line that does not (others' hands are secret until the game ends).
TABLE_LINES = (
    "construction_tiles",
    "technology",
    "reputation",
    "artisans",
    "unused_upgrade_tokens",
    "research_ap_track",
)


def table_points(player: State) -> int:
    """The Achievement Points a seat's table shows now: every Game End line but the Manager
    cards in its hand (completed Construction tiles, the Technology and Reputation tracks,
    artisans on its board, kept Upgrade tokens, the research AP track)."""
    lines = breakdown(player)
    return sum(lines[line] for line in TABLE_LINES)


def public_scores(state: State) -> list[int]:
    """Each seat's score as everyone may see it: the final totals once the game is over,
    before that the Achievement Points on the table (``table_points``)."""
    final = state["final"]
    if final is not None:
        totals = {entry["seat"]: int(entry["total"]) for entry in final["scores"]}
        return [totals[seat] for seat in range(len(state["seats"]))]
    return [table_points(player) for player in state["seats"]]
