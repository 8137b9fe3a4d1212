"""Random playouts of Gutenberg through the shared conformance check, with its invariants:
no negative resources, and every card, gear, tile, ink and marker somewhere exactly once."""

from collections import Counter

import pytest

from projections.games.gutenberg import data
from projections.games.gutenberg.rules import GUTENBERG
from projections.ruleset import State
from tests.sim.conformance import check_random_game, games_per_count


def _everything_once(found: list[str], expected: list[str], what: str) -> None:
    assert Counter(found) == Counter(expected), f"every {what} somewhere exactly once"


def gutenberg_invariants(state: State) -> None:
    seats = state["seats"]
    for player in seats:
        assert player["guilders"] >= 0 and player["fame"] >= 0 and player["markers"] >= 0
        assert all(v > 0 for v in player["types"].values())
        assert all(v > 0 for v in player["inks"].values())
        assert all(0 <= v <= data.MAX_LEVEL for v in player["specialties"].values())
        assert len(player["orders"]) <= 4 and sum(player["gear_uses"]) <= 3
    assert sum(p["markers"] for p in seats) == sum(7 + s for s in range(len(seats)))
    decks, board, pending = state["decks"], state["board"], state["pending"]
    for kind, table in (("printing", data.PRINTING), ("refinement", data.REFINEMENT)):
        found = decks[kind]["draw_pile"] + decks[kind]["discard_pile"] + state["draft"][kind]
        found += [c for c in board[kind] if c] + [o[kind] for p in seats for o in p["orders"]]
        found += [c for p in pending if p["kind"] == "order" for c in p[kind]]
        _everything_once(found, list(table), f"{kind} card")
    found = decks["specialty"]["draw_pile"] + decks["specialty"]["discard_pile"]
    _everything_once(
        found + [c for c in board["specialty"] if c], list(data.SPECIALTY_CARDS), "specialty card"
    )
    in_play = [g for g, gear in data.GEARS.items() if len(seats) > 2 or gear["lines"] == "grey"]
    found = decks["gears"]["draw_pile"] + decks["gears"]["discard_pile"]
    found += [g for g in board["gears"] if g] + [a["gear"] for p in seats for a in p["gears"] if a]
    found += [g for p in pending if p["kind"] == "guillard" for g in p["gears"]]
    _everything_once(found, in_play, "gear")
    found = state["patronage_box"] + [s["card"] for s in board["patronage"] if s["card"]]
    _everything_once(
        found + [c for p in seats for c in p["patronage"]], list(data.PATRONAGE), "patronage card"
    )
    if state["options"]["characters"]:
        found = state["character_box"] + [c for p in seats for c in p["character_offer"]]
        found += [p["character"] for p in seats if p["character"]]
        _everything_once(found, list(data.CHARACTERS), "character tile")
    inks = Counter(state["bag"]["contents"])
    for ink_set in board["inks"]:
        inks.update(ink for ink in ink_set if ink)
    for player in seats:
        inks.update(player["inks"])
    assert inks == Counter(data.GAME["inks"]), "every ink somewhere exactly once"


@pytest.mark.parametrize("index", range(games_per_count()))
@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_random_gutenberg_games_pass_the_conformance_check(player_count: int, index: int) -> None:
    # One test per game keeps each well under the per-test timeout in `make soak`;
    # characters are on in every other game.
    characters = index % 2 == 0
    check_random_game(
        GUTENBERG,
        player_count,
        seed=f"gutenberg-{player_count}-{characters}-{index}",
        options={"characters": characters},
        invariants=gutenberg_invariants,
    )
