"""Whole rounds played from a fixed seed with chosen actions."""

from __future__ import annotations

import random

from projections.games.restoration.game import RESTORATION
from tests.unit.restoration.table import act, decision, run_system, show_tiles, table

#: A plain strategy for finishing games: build, then develop, then take managers.
PREFERENCE = [
    "continue_construction",
    "start_construction",
    "place_upgrade",
    "develop",
    "take_manager",
    "completion_choice",
    "adjust_reputation",
    "collect_workers",
    "move",
    "place_worker",
    "play_manager",
    "end_turn",
    "transfer",
    "skip_action",
    "keep_worker",
    "unlock_research",
]


def preferred(state: dict, seat: int) -> dict:
    def rank(action: dict) -> tuple:
        flags = (
            action.get("artisan", False),
            str(action.get("position", "")).startswith("RD"),
            action.get("track") == "reputation",
            action.get("choice") == "rest",
            action.get("direction") == "down",
        )
        return (PREFERENCE.index(action["type"]), *flags)

    return min(RESTORATION.legal_actions(state, seat), key=rank)


def play_out(state: dict) -> int:
    """Finish the game with ``preferred`` choices; returns how many steps it took."""
    steps = 0
    while not state["finished"]:
        steps += 1
        if run_system(state):
            continue
        seat = RESTORATION.status(state)["to_act"][0]
        RESTORATION.apply(state, {**preferred(state, seat), "seat": seat}, random.Random(steps))
    return steps


def test_two_scripted_turns_of_a_two_player_round() -> None:
    state = table(2, event="quiet_season")
    show_tiles(state, "T08", "T02", "T20", "T07")
    orange_reputation = state["seats"][0]["reputation"]
    grey_reputation = state["seats"][1]["reputation"]
    # Orange: an intersection between the Main and the Kiln workshop, three movement turns,
    # each moving both workshops' tokens in the order Orange chooses.
    act(state, 0, "place_worker", position="AB1", artisan=False)
    act(state, 0, "move", workshop="A")  # development
    act(state, 0, "develop", track="technology")
    act(state, 0, "adjust_reputation", direction="up")  # technology level 1: reputation
    act(state, 0, "move", workshop="B")  # manager
    act(state, 0, "take_manager", source="deck")
    act(state, 0, "move", workshop="A")  # red
    act(state, 0, "start_construction", tile="T08")
    act(state, 0, "move", workshop="B")  # white
    act(state, 0, "start_construction", tile="T20")  # Orange's last worker on the board
    act(state, 0, "move", workshop="B")  # blue: no worker left to start T02, T08 goes on
    act(state, 0, "continue_construction", tile="T08", space=0)
    act(state, 0, "move", workshop="A")  # manager
    act(state, 0, "skip_action")
    act(state, 0, "end_turn")
    # Grey: the other intersection of that edge, free while nobody stands there.
    act(state, 1, "place_worker", position="AB2", artisan=False)
    act(state, 1, "move", workshop="A")  # green: no tile starts green, nothing to build
    assert state["pending"] == []
    act(state, 1, "move", workshop="B")  # breakthrough
    act(state, 1, "start_construction", tile="T02")
    act(state, 1, "move", workshop="A")  # transfer
    assert decision(state)["kind"] == "transfer"
    act(state, 1, "skip_action")
    act(state, 1, "move", workshop="B")  # green again
    assert state["pending"] == []
    act(state, 1, "move", workshop="A")  # white
    act(state, 1, "start_construction", tile="T20")
    act(state, 1, "move", workshop="B")  # development
    act(state, 1, "develop", track="reputation")
    act(state, 1, "end_turn")

    orange, grey = state["seats"]
    assert orange["technology"] == 1 and orange["reputation"] == orange_reputation + 1
    assert orange["board_workers"] == 0 and len(orange["hand"]) == 2
    assert grey["board_workers"] == 0 and grey["reputation"] == grey_reputation + 1
    progress = state["construction"]["progress"]
    assert progress["T08"] == [{"seat": 0, "space": 1}]
    assert progress["T20"] == [{"seat": 0, "space": 0}, {"seat": 1, "space": 0}]
    assert progress["T02"] == [{"seat": 1, "space": 0}]
    assert {w: place["token"] for w, place in state["workshops"].items()} == {
        "A": 6,
        "B": 6,
        "C": 0,
        "D": 0,
        "E": 0,
    }
    assert RESTORATION.status(state)["to_act"] == [0]


def test_a_three_player_game_from_a_fixed_seed_plays_to_a_checked_result() -> None:
    state = RESTORATION.setup(["Orange", "Grey", "Jade"], {}, random.Random(2))
    for seat in range(3):
        act(state, seat, "unlock_research", position="RD1")
    steps = play_out(state)
    assert state["round"] == 3 and state["finished"]
    result = RESTORATION.result(state)
    assert result is not None
    totals = [row["total"] for row in result["scores"]]
    assert totals == [sum(row["breakdown"].values()) for row in result["scores"]]
    assert sum(len(player["tiles"]) for player in state["seats"]) >= 1
    # The recorded outcome of this seed and strategy: a change to it is a change of rules.
    # Rules 2 (both workshops of an intersection move) made the game longer and richer.
    # Rules 4: in round 3 Grey, placed at AB2, moves A's token onto a transfer space and
    # swaps with Orange's worker at AB1; the rest of that movement turn now moves A and B
    # (rules 3 moved B alone), and the game goes on differently from there (381 -> 368 steps).
    assert steps == 368
    assert [player["tiles"] for player in state["seats"]] == [
        ["T16", "T20", "T21"],
        ["T08"],
        ["T01", "T13"],
    ]
    # Rules 4 (the Technology track scores only on its scoring spaces): Orange took the
    # first scoring space (10), Grey and Jade end at levels 4, which score nothing.
    assert [player["technology"] for player in state["seats"]] == [8, 4, 4]
    assert [player["technology_scoring_space"] for player in state["seats"]] == [10, None, None]
    assert [row["breakdown"]["technology"] for row in result["scores"]] == [10, 0, 0]
    assert totals == [32, 10, 11] and result["ranking"] == [[0], [2], [1]]
