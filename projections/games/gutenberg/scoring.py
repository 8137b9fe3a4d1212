"""Final scoring ("End of Game"): fame, specialties 6/3/1 at VI/V/IV, 8 per patronage card,
1 per 3 guilders (doubled for Hieronymus Vietor); ties go to fewest types, then fewest inks,
then are shared."""

from __future__ import annotations

from typing import Any

from projections import components
from projections.games.gutenberg import effects
from projections.ruleset import State

SPECIALTY_POINTS = {6: 6, 5: 3, 4: 1}
PATRONAGE_POINTS = 8
GUILDERS_PER_POINT = 3


def breakdown(player: dict[str, Any]) -> dict[str, int]:
    """Each scoring line for one player, as the rulebook lists them."""
    guilder_points = player["guilders"] // GUILDERS_PER_POINT
    return {
        "fame": player["fame"],
        "specialties": sum(SPECIALTY_POINTS.get(v, 0) for v in player["specialties"].values()),
        "patronage": PATRONAGE_POINTS * len(player["patronage"]),
        "guilders": guilder_points,
        "vietor": guilder_points if player["character"] == "vietor" else 0,
    }


def final_result(state: State) -> dict[str, Any]:
    """Scores with their breakdown and the ranking after the tie-breakers."""
    scores = []
    keys: dict[int, tuple[int, ...]] = {}
    for seat, player in enumerate(state["seats"]):
        lines = breakdown(player)
        total = sum(lines.values())
        types, inks = effects.total(player["types"]), effects.total(player["inks"])
        scores.append(
            {"seat": seat, "total": total, "breakdown": lines, "types": types, "inks": inks}
        )
        keys[seat] = (total, -types, -inks)
    return {"scores": scores, "ranking": components.ranking(keys)}
