"""Random playouts of Restoration at 2, 3 and 4 players through the shared conformance check,
with the game's own invariants: no negative counts, and every meeple, card, tile and token
somewhere exactly once."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from tests.sim.conformance import check_random_game, games_per_count

State = dict[str, Any]
BOARD = data.PLAYER_BOARD


def _no_negative_counts(state: State) -> None:
    for player in state["seats"]:
        for key in ("board_workers", "board_artisans", "recruitment", "rest", "upgrades_kept"):
            assert player[key] >= 0, key
        low, high = data.REPUTATION["lowest"], data.REPUTATION["highest"]
        assert low <= player["reputation"] <= high
        assert 0 <= player["technology"] <= data.TOP_LEVEL
    assert state["artisan_supply"] >= 0 and state["upgrade_supply"] >= 0
    assert all(count > 0 for count in state["managers"]["supply"].values())


def _every_worker_somewhere_once(state: State) -> None:
    placed = Counter[int]()
    artisans = state["artisan_supply"]
    for spot in state["positions"].values():
        for worker in spot["workers"]:
            if worker["artisan"]:
                artisans += 1
            else:
                placed[worker["seat"]] += 1
    for markers in state["construction"]["progress"].values():
        placed.update(marker["seat"] for marker in markers)
    for seat, player in enumerate(state["seats"]):
        artisans += player["board_artisans"]
        for slot in player["research"].values():
            artisans += sum(1 for w in slot["workers"] if w["artisan"])
            placed[seat] += sum(1 for w in slot["workers"] if not w["artisan"])
        on_tracks = 2
        total = player["board_workers"] + player["recruitment"] + player["rest"] + on_tracks
        assert total + placed[seat] == BOARD["workers_per_colour"], f"seat {seat} workers"
    assert artisans == BOARD["artisans"], "artisans"


def _every_card_tile_and_token_once(state: State) -> None:
    managers = state["managers"]
    cards = Counter(managers["deck"]["draw_pile"] + managers["deck"]["discard_pile"])
    cards.update(managers["removed"])
    for kind, count in managers["supply"].items():
        cards[kind] += count
    for player in state["seats"]:
        cards.update(player["hand"])
        assert not Counter(player["hand_public"]) - Counter(player["hand"]), "known cards held"
    assert cards == Counter({kind: data.MANAGER_COPIES for kind in data.MANAGERS}), "managers"
    construction = state["construction"]
    tiles = construction["display"] + construction["pile"]
    tiles += [tile for player in state["seats"] for tile in player["tiles"]]
    assert sorted(tiles) == sorted(data.TILES), "construction tiles"
    assert set(construction["progress"]) == set(construction["display"])
    events = state["events"]
    assert sorted(events["rounds"] + events["unused"]) == sorted(data.EVENTS), "event tiles"
    tokens = state["upgrade_supply"]
    for player in state["seats"]:
        tokens += player["ap_track"] + player["upgrades_kept"]
        tokens += sum(1 for slot in player["research"].values() if slot["unlocked"])
    assert tokens == BOARD["upgrade_tokens"], "upgrade tokens"


def _no_construction_on_a_completed_tile(state: State) -> None:
    """ "When a player advances to the highest level of a Construction Progress track, that
    project will be completed": until its completer takes it, it is completed once and
    nobody is offered to build on it."""
    claims = [d["tile"] for d in state["pending"] if d["kind"] == "claim"]
    if not claims:
        return
    assert len(claims) == len(set(claims)), "a tile completed twice"
    building = ("start_construction", "continue_construction")
    for seat in range(len(state["players"])):
        for action in RESTORATION.legal_actions(state, seat):
            assert action["type"] not in building or action["tile"] not in claims, action


def restoration_invariants(state: State) -> None:
    _no_negative_counts(state)
    _every_worker_somewhere_once(state)
    _every_card_tile_and_token_once(state)
    _no_construction_on_a_completed_tile(state)


#: Games per test: ``make soak`` runs thousands per player count, and one test holding them
#: all would overrun pytest's per-test timeout; batches keep every test short.
BATCH = 25


@pytest.mark.parametrize("batch", range(-(-games_per_count() // BATCH)))
@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_random_restoration_games_pass_the_conformance_check(player_count: int, batch: int) -> None:
    first = batch * BATCH
    for index in range(first, min(first + BATCH, games_per_count())):
        check_random_game(
            RESTORATION,
            player_count,
            seed=f"restoration-{player_count}-{index}",
            invariants=restoration_invariants,
        )


@pytest.mark.parametrize("arrangement", sorted(data.ARRANGEMENTS))
def test_every_workshop_arrangement_plays_to_the_end(arrangement: str) -> None:
    check_random_game(
        RESTORATION,
        3,
        seed=f"restoration-arrangement-{arrangement}",
        options={"arrangement": arrangement},
        invariants=restoration_invariants,
    )
