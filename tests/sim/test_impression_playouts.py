"""Random playouts of Impression at 2, 3 and 4 players through the conformance check."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from projections.fold import copy_state, decide_action, decide_system, fold
from projections.games.impression import IMPRESSION, data, effects
from projections.simulate import new_game, play_random, step
from tests.sim.conformance import check_random_game, games_per_count

COUNTED = ["marks", "paper", "lead", "ink", "capacity", "workforce", "assistants", "city_markers"]


def _workshop_tiles(seat: dict[str, Any], kind: str) -> list[str]:
    return [
        cell[face]["id"]
        for cell in seat["workshop"].values()
        for face in ("down", "up")
        if cell[face] is not None and cell[face]["kind"] == kind
    ]


def _drawn_factories(state: dict[str, Any]) -> list[str]:
    return [f for queue in state["pending"] for effect in queue for f in effect.get("drawn", [])]


def _technologies_to_return(state: dict[str, Any]) -> list[str]:
    """Technologies discarded by a refresh, waiting for their player to order them."""
    return [t for queue in state["pending"] for effect in queue for t in effect.get("tiles", [])]


def where_everything_is(state: dict[str, Any]) -> dict[str, list[str]]:
    """Every component's id, wherever it lies, by kind."""
    seats = state["seats"]
    orders = state["orders"]
    letters = state["letters"]
    return {
        "trading tiles": [
            *state["trading"]["draw_pile"],
            *state["trading"]["discard_pile"],
            *(t for t in state["trading"]["display"] if t is not None),
        ],
        "technologies": [
            *(t for column in state["tech"].values() for t in column["draw_pile"]),
            *(t for column in state["tech"].values() for t in column["display"] if t is not None),
            *(t for seat in seats for t in _workshop_tiles(seat, "tech")),
            *_technologies_to_return(state),
        ],
        "factories": [
            *(f for pile in state["factories"].values() for f in pile["draw_pile"]),
            *(f for seat in seats for f in _workshop_tiles(seat, "factory")),
            *_drawn_factories(state),
        ],
        "orders": [
            *(o for pile in orders["piles"].values() for o in pile),
            *(o for pile in orders["removed"].values() for o in pile),
            *(o for o in orders["display"] if o is not None),
            *orders["discard_pile"],
            *(o for seat in seats for o in seat["orders_waiting"]),
            *(o for seat in seats for o in seat["line"] if o is not None),
            *(o for seat in seats for o in seat["completed"]),
        ],
        "contracts": [
            *state["contracts"]["draw_pile"],
            *state["contracts"]["discard_pile"],
            *(c for c in state["contracts"]["display"] if c is not None),
            *(c for seat in seats for c in seat["contracts"]),
        ],
        "lead letters": [
            *letters["draw_pile"],
            *letters["discard_pile"],
            *(letter for letter in letters["desk"] if letter is not None),
            *(letter for seat in seats for stack in seat["stacks"] for letter in stack),
            *(cell["letter"] for seat in seats for cell in seat["board"] if cell is not None),
            *(letter for seat in seats for letter in seat["letters_under"].values()),
        ],
        "city discs": [
            *(d for d in state["map_discs"].values() if d is not None),
            *state["boxed_discs"],
            *(disc["id"] for seat in seats for disc in seat["discs"]),
        ],
    }


EXPECTED = {
    "trading tiles": set(data.TRADING_TILES),
    "technologies": set(data.TECHNOLOGIES),
    "factories": set(data.FACTORIES),
    "orders": set(data.ORDERS),
    "contracts": set(data.CONTRACTS),
    "lead letters": set(data.LEAD_LETTERS),
    "city discs": set(data.DISCS),
}


def impression_invariants(state: dict[str, Any]) -> None:
    """No negative resources; two tradesmen in two shops once placed; every tile, card and
    letter somewhere exactly once."""
    for seat in state["seats"]:
        for key in COUNTED:
            assert seat[key] >= 0, f"seat {seat['seat']} has {seat[key]} {key}"
        assert seat["capacity"] <= data.CAPACITY_MAX
        assert seat["workforce"] <= data.WORKFORCE_MAX
        assert len(seat["orders_waiting"]) <= 2
        shops = [man["shop"] for man in seat["tradesmen"]]
        assert len(set(shops)) == len(shops) <= 2, f"seat {seat['seat']} tradesmen in {shops}"
        assert len(shops) == 2 or state["phase"] == "placement"
    placed = sum(1 for street in state["streets"].values())
    assert placed + sum(seat["assistants"] for seat in state["seats"]) == 5 * len(state["seats"])
    for kind, ids in where_everything_is(state).items():
        duplicates = [item for item, count in Counter(ids).items() if count > 1]
        assert not duplicates, f"{kind} in two places: {duplicates}"
        assert set(ids) == EXPECTED[kind], f"{kind} missing: {EXPECTED[kind] - set(ids)}"


@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_random_impression_games_pass_the_conformance_check(player_count: int) -> None:
    for index in range(games_per_count()):
        check_random_game(
            IMPRESSION,
            player_count,
            seed=f"impression-{player_count}-{index}",
            invariants=impression_invariants,
        )


#: action types a uniform random player rarely reaches; the eager player favours them
EAGER = {
    "travel": 20,
    "stop_action": 20,
    "draw_factories": 20,
    "keep_factory": 20,
    "buy_technology": 10,
    "typeset_on_stick": 10,
    "typeset_under_contract": 20,
    "activate_contract": 10,
    "signboard_white": 20,
    "signboard_red": 20,
    "signboard_blue": 20,
    "use_city_disc": 20,
    "pair_city_tile": 20,
    "advance_order": 10,
    "buy_order": 5,
    "decline": 0,
    "refresh_technologies": 0,
    "refresh_trading_tiles": 0,
}


def play_eagerly(player_count: int, seed: str) -> None:
    """Play a game choosing rare actions often; check invariants and the replay."""
    game, log = new_game(IMPRESSION, [f"P{i + 1}" for i in range(player_count)], seed)
    chooser = random.Random(seed)
    while not IMPRESSION.status(game.state)["finished"]:
        status = IMPRESSION.status(game.state)
        decided = decide_system(game) if status["awaiting_system"] else None
        if decided is None:
            seat = status["to_act"][0]
            legal = IMPRESSION.legal_actions(game.state, seat)
            weights = [EAGER.get(action["type"], 1) or 0.01 for action in legal]
            action = chooser.choices(legal, weights)[0]
            decided = decide_action(game, seat, action)
        step(game, log, decided[0])
        impression_invariants(game.state)
    assert fold(log.envelopes).state == game.state


@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_eager_games_reach_factories_cities_signboards_and_contracts(player_count: int) -> None:
    for index in range(10):
        play_eagerly(player_count, f"eager-{player_count}-{index}")


@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_the_quick_checks_of_a_choice_agree_with_its_options(player_count: int) -> None:
    """A waiting choice fizzles when it has nothing to choose; the queue asks a quick
    ``possible`` where a handler has one: it must say what ``options`` would, also on
    tables pushed to the edges (no marks, no resources, the agent at the track's end)."""
    checked = Counter[str]()
    probe = random.Random(player_count)

    def check(game: Any, _envelope: Any) -> None:
        state = copy_state(game.state)
        for seat, p in enumerate(state["seats"]):
            p["marks"] = probe.choice([0, 0, 1, p["marks"]])
            for resource in data.RESOURCES:
                p[resource] = probe.choice([0, 0, p[resource]])
            if probe.random() < 0.5:
                state["track"][seat]["section"] = data.TRACK_SECTIONS
            for icon in ("travel", "steps", "trade", "technology"):
                effect: dict[str, Any] = {"icon": icon, "count": probe.randint(0, 3)}
                effect["free"] = probe.random() < 0.3
                if icon == "technology":
                    effect.update(no_resources=probe.random() < 0.3, no_money=effect["free"])
                rule = effects.HANDLERS[icon]
                assert rule.possible is not None and rule.options is not None
                expected = bool(rule.options(state, seat, effect))
                assert rule.possible(state, seat, effect) is expected, (icon, seat, effect)
                checked[f"{icon} {expected}"] += 1

    players = [f"P{i + 1}" for i in range(player_count)]
    for index in range(3):
        play_random(IMPRESSION, players, f"quick-{index}", None, on_step=check)
    assert all(
        checked[f"{icon} {answer}"]
        for icon in effects.HANDLERS
        if icon in ("travel", "steps", "trade", "technology")
        for answer in (True, False)
    ), checked


def travel_actions(player_count: int, seed: str) -> int:
    """The Travel actions a random game takes: answers to a waiting travel icon, not to the
    steps icon, which "is not a real travel action"."""
    waiting: list[str | None] = [None] * player_count
    taken = 0

    def count(game: Any, envelope: Any) -> None:
        nonlocal taken
        seat = envelope["actor"].get("seat")
        if seat is not None and envelope["data"]["action"]["type"] == "travel":
            taken += waiting[seat] == "travel"
        for index, effects_waiting in enumerate(game.state["pending"]):
            waiting[index] = effects_waiting[0]["icon"] if effects_waiting else None

    play_random(IMPRESSION, [f"P{i + 1}" for i in range(player_count)], seed, on_step=count)
    return taken


@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_most_random_games_take_a_travel_action_at_every_player_count(player_count: int) -> None:
    """Travel is a Shop action at every player count (docs/rules/impression.md, "Travel at
    every player count"): in most of ten seeded random games somebody travels."""
    games = [travel_actions(player_count, f"travel-{player_count}-{index}") for index in range(10)]
    travelled = sum(1 for taken in games if taken)
    assert travelled > len(games) // 2, f"Travel in {travelled} of {len(games)} games: {games}"
