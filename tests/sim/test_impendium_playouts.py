"""Random playouts of Impendium through the shared conformance check, every player count
and every variant, with the game's own invariants."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from projections.games.impendium import IMPENDIUM
from projections.games.impendium import state as query
from projections.games.impendium.data import DIPLOMACY, FACTIONS, HARBINGERS, RULERS, STARS
from tests.sim.conformance import check_random_game, games_per_count


def _deck_cards(state: dict[str, Any], name: str) -> list[str]:
    deck = state["decks"][name]
    return [*deck["draw_pile"], *deck["discard_pile"]]


def _exactly_once(found: list[str], every: dict[str, Any], what: str) -> None:
    counts = Counter(found)
    assert set(counts) == set(every), f"some {what} are missing or unknown"
    assert all(n == 1 for n in counts.values()), f"a {what} card is in two places"


def impendium_invariants(state: dict[str, Any]) -> None:
    """No negative resources; every card somewhere exactly once; discs within the box."""
    for mine in state["seats"]:
        assert all(amount >= 0 for amount in mine["resources"].values())
        assert len(mine["factions"]) <= query.MAX_FACTIONS
    board = state["board"].values()
    pending = state["pending"]
    stars = _deck_cards(state, "stars") + [p["card"] for p in state["projects"]]
    stars += [e["card"] for e in board if e["kind"] in ("star", "dust")]
    stars += [card for card in state["setup_stars"] if card is not None]
    stars += [p["card"] for p in pending if p["kind"] == "place_star"]
    _exactly_once(stars, STARS, "star")
    harbingers = _deck_cards(state, "harbingers") + [
        e["card"] for e in board if e["kind"] == "harbinger"
    ]
    harbingers += [p["card"] for p in pending if p["kind"] == "place_harbinger"]
    _exactly_once(harbingers, HARBINGERS, "harbinger")
    factions = _deck_cards(state, "factions") + [f for f in state["subverting"].values() if f]
    factions += [f for mine in state["seats"] for f in mine["factions"]]
    _exactly_once(factions, FACTIONS, "faction")
    rulers = _deck_cards(state, "rulers") + [g["card"] for g in state["galaxies"] if g["card"]]
    _exactly_once(rulers, RULERS, "ruler")
    diplomacy = _deck_cards(state, "diplomacy") + [c for m in state["seats"] for c in m["hand"]]
    diplomacy += [c for p in pending if p["kind"] == "keep_diplomacy" for c in p["cards"]]
    _exactly_once(diplomacy, DIPLOMACY, "diplomacy")
    for seat in range(len(state["players"])):
        assert 0 <= query.free_discs(state, seat) <= query.DISCS_PER_PLAYER


VARIANTS = ["competitive", "semi_cooperative", "cooperative"]


@pytest.mark.parametrize("player_count", [2, 3, 4, 5, 6])
def test_random_impendium_games_pass_the_conformance_check(player_count: int) -> None:
    for index in range(games_per_count()):
        options = {
            "variant": VARIANTS[index % 3],
            "fast_galaxies": index % 2 == 0,
            # Mostly short games; every fifth plays long enough for battles and galaxies.
            "round_limit": 20 if index % 5 == 0 else 2 + index % 3,
            "turmoil": index % 4 >= 2,
        }
        check_random_game(
            IMPENDIUM,
            player_count,
            seed=f"impendium-{player_count}-{index}",
            options=options,
            invariants=impendium_invariants,
        )


@pytest.mark.parametrize("player_count", [2, 3, 4, 5, 6])
def test_random_competitive_games_with_default_options_end_by_themselves(player_count: int) -> None:
    # Every competitive game ends (docs/rules/impendium.md): no round_limit, every option at its
    # default. These games run to 25 VP (thousands of steps at 6 players), so CI plays one per count
    # and `make soak` forty.
    for index in range(max(1, games_per_count() // 50)):
        game = check_random_game(
            IMPENDIUM,
            player_count,
            seed=f"impendium-open-{player_count}-{index}",
            options={},
            invariants=impendium_invariants,
            check_views_every=25,
        )
        assert game.state["options"]["round_limit"] is None
        assert game.state["end_trigger"]["reason"] in ("victory_points", "galaxies")


def test_random_solo_impendium_games_pass_the_conformance_check() -> None:
    for index in range(games_per_count()):
        options = {
            "variant": "solo",
            "fast_galaxies": index % 2 == 0,
            "round_limit": 20 if index % 5 == 0 else 3 + index % 3,
        }
        check_random_game(
            IMPENDIUM,
            1,
            seed=f"impendium-solo-{index}",
            options=options,
            invariants=impendium_invariants,
        )


def test_long_random_turmoil_games_bring_the_markers_in_and_pass_the_conformance_check() -> None:
    # The markers enter once 8 star cards lie on the map, which random play reaches mostly
    # with 5 or 6 players in long games (docs/rules/impendium.md, "Turmoil Expansion").
    entered = []
    for index in range(games_per_count(6)):
        game = check_random_game(
            IMPENDIUM,
            5 + index % 2,
            seed=f"impendium-turmoil-{index}",
            options={
                "variant": VARIANTS[index % 3],
                "fast_galaxies": index % 2 == 0,
                "round_limit": 30,
                "turmoil": True,
            },
            invariants=impendium_invariants,
        )
        entered.append(game.state["turmoil"]["entered"])
    assert any(entered), "no game brought the turmoil markers onto the map"
