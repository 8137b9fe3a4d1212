"""The end of Impendium: outcome, scores with their breakdown, ranking.

The rulebook names no winner rule for the competitive game; the decision (most VP, then
most colonies on the map, then most resources) is in docs/rules/impendium.md, "Winner".
"""

from __future__ import annotations

from typing import Any

from projections import components
from projections.games.impendium import state as query

State = dict[str, Any]


def outcome(state: State) -> dict[str, Any]:
    """Who won, and why, under the game's variant."""
    variant = state["options"]["variant"]
    count = query.seat_count(state)
    everyone = list(range(count))
    reason = (state["end_trigger"] or {}).get("reason")
    if variant == "solo":
        won = reason == "solo_win"
        return {"variant": variant, "won": won, "winners": [0] if won else [], "reason": reason}
    if variant == "cooperative":
        won = reason == "cooperative_win"
        return {
            "variant": variant,
            "won": won,
            "winners": everyone if won else [],
            "reason": reason,
        }
    if variant == "semi_cooperative":
        # "Must build at least one galaxy of each color for any player to win. Once
        # accomplished, all players with 20+ victory points win."
        winners = []
        if query.every_colour_has_a_galaxy(state):
            winners = [
                s for s in everyone if state["seats"][s]["vp"] >= query.SEMI_COOPERATIVE_WIN_VP
            ]
        return {"variant": variant, "won": bool(winners), "winners": winners, "reason": reason}
    places = ranking(state)
    return {"variant": variant, "won": True, "winners": places[0], "reason": reason}


def tie_breakers(state: State, seat: int) -> tuple[int, int, int]:
    return (
        state["seats"][seat]["vp"],
        query.map_colonies(state, seat),
        query.total_resources(state, seat),
    )


def ranking(state: State) -> list[list[int]]:
    """Places by VP, then colonies on the map, then resources left; equal players share."""
    variant = state["options"]["variant"]
    count = query.seat_count(state)
    if variant in ("solo", "cooperative"):
        return [list(range(count))]
    if variant == "semi_cooperative":
        winners = (state.get("outcome") or outcome(state))["winners"]
        losers = [s for s in range(count) if s not in winners]
        return [place for place in (winners, losers) if place]
    return components.ranking({seat: tie_breakers(state, seat) for seat in range(count)})


def result(state: State) -> dict[str, Any] | None:
    if not state["finished"]:
        return None
    scores = []
    for seat, mine in enumerate(state["seats"]):
        breakdown = dict(mine["vp_sources"])
        scores.append(
            {
                "seat": seat,
                "total": mine["vp"],
                "breakdown": breakdown,
                "colonies_on_map": query.map_colonies(state, seat),
                "resources_left": query.total_resources(state, seat),
            }
        )
    return {
        "scores": scores,
        "ranking": ranking(state),
        "outcome": state["outcome"],
        "end_trigger": state["end_trigger"],
        "tie_breakers": ["victory points", "colonies on the map", "resources left"],
    }
