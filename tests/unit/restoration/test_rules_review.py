"""The rules review's Restoration defects (docs/rules/restoration.md), each from the rulebook's
words."""

from __future__ import annotations

import copy

import pytest

from projections.games.restoration import data, scoring
from projections.games.restoration.game import RESTORATION
from projections.ruleset import IllegalAction
from tests.unit.restoration.table import (
    act,
    decision,
    place_at,
    refused,
    run_system,
    show_tiles,
    table,
)

ORANGE, GREY = 0, 1


def moves(state: dict, seat: int = ORANGE) -> list[str]:
    return [a["workshop"] for a in RESTORATION.legal_actions(state, seat) if a["type"] == "move"]


def let_go(state: dict, seat: int = ORANGE) -> None:
    """Decline the action of the space the token stopped on, if it offers one."""
    if state["pending"]:
        act(state, seat, "skip_action")


def tokens(state: dict, *workshops: str) -> list[int]:
    return [state["workshops"][workshop]["token"] for workshop in workshops]


# -- 6: Transfer ------------------------------------------------------------------------


def test_a_transfer_may_swap_the_just_placed_worker_with_an_own_worker_elsewhere() -> None:
    """ "Transfer: A player may swap the positions of any two Workers (including Artisans)
    within the Workshops area. If the swap involves the Worker that was just placed this
    turn, and that Worker still has remaining movements and actions, the player may move the
    Production token in the Workshops connected to the new position and perform the actions
    there as usual.\""""
    state = table(3, event="tax_assessment")  # 3 movement turns
    place_at(state, "E1", ORANGE)  # Orange's worker from an earlier turn
    place_at(state, "B1", GREY)
    act(state, ORANGE, "place_worker", position="C1", artisan=False)
    act(state, ORANGE, "move", workshop="C")  # transfer
    assert decision(state)["kind"] == "transfer"
    act(state, ORANGE, "transfer", first="C1/0", second="E1/0")
    assert state["turn"]["position"] == "E1"
    assert moves(state) == ["E"]
    act(state, ORANGE, "move", workshop="E")
    assert tokens(state, "C", "E") == [1, 1]


def test_the_transfer_stays_open_when_its_only_swap_moves_the_just_placed_worker() -> None:
    """ "If the swap involves the Worker that was just placed this turn, and that Worker
    still has remaining movements and actions, the player may move the Production token in
    the Workshops connected to the new position\": a swap of two alike workers is a real
    choice when one of them is the one just placed."""
    state = table(3, event="tax_assessment")
    place_at(state, "E1", ORANGE)
    act(state, ORANGE, "place_worker", position="C1", artisan=False)
    act(state, ORANGE, "move", workshop="C")  # transfer: the only other worker is Orange's
    assert [d["kind"] for d in state["pending"]] == ["transfer"]
    assert [a for a in RESTORATION.legal_actions(state, ORANGE) if a["type"] == "transfer"] == [
        {"type": "transfer", "first": "C1/0", "second": "E1/0"}
    ]


def test_swapping_two_alike_workers_neither_just_placed_is_still_pointless() -> None:
    """ "If the swap involves the Worker that was just placed this turn...\": other alike
    workers exchanged change nothing at all, so that swap is refused."""
    state = table(3, event="tax_assessment")
    place_at(state, "E1", GREY)
    place_at(state, "B1", GREY)
    act(state, ORANGE, "place_worker", position="C1", artisan=False)
    act(state, ORANGE, "move", workshop="C")
    assert refused(state, ORANGE, "transfer", first="B1/1", second="E1/1") == ("pointless_transfer")


# -- 7: intersections move both workshops -----------------------------------------------


def test_a_worker_at_an_intersection_moves_the_production_token_of_both_workshops() -> None:
    """ "Workshop intersection positions: These are the positions located between two
    Workshops. When a player places a Worker at an Intersection, they must move the
    Production token and may perform the action in the Workshops connected to that
    position.\" Every movement turn moves both tokens, in the player's order."""
    state = table(2, event="quiet_season")  # 3 movement turns; 2 players: intersections only
    act(state, ORANGE, "place_worker", position="AB1", artisan=False)
    for turn in range(3):
        assert moves(state) == ["A", "B"]
        first, second = ("A", "B") if turn % 2 == 0 else ("B", "A")
        act(state, ORANGE, "move", workshop=first)
        let_go(state)
        assert moves(state) == [second]
        assert refused(state, ORANGE, "move", workshop=first) == "workshop_already_moved"
        assert refused(state, ORANGE, "end_turn") == "moves_pending"
        act(state, ORANGE, "move", workshop=second)
        let_go(state)
    assert tokens(state, "A", "B") == [3, 3]
    assert refused(state, ORANGE, "move", workshop="A") == "no_moves_left"
    act(state, ORANGE, "end_turn")


def test_a_manager_cards_extra_movement_at_an_intersection_moves_both_tokens() -> None:
    """ "If the player chooses Effect B, they carry out one extra movement and activate the
    corresponding action exactly as normal\": at an intersection a movement moves the tokens
    of both connected workshops."""
    state = table(3, event="masters_visit")  # 2 movement turns, 2 Manager cards per turn
    state["seats"][ORANGE]["hand"] = ["steward"]
    act(state, ORANGE, "place_worker", position="AC1", artisan=False)
    act(state, ORANGE, "play_manager", manager="steward", effect="B")
    for _ in range(3):
        for workshop in ("A", "C"):
            act(state, ORANGE, "move", workshop=workshop)
            let_go(state)
    assert tokens(state, "A", "C") == [3, 3]
    assert moves(state) == []


def transfer_in_the_middle_of_a_movement_turn(destination: str) -> dict:
    """Orange at AB1 (3 movement turns) moves A's token onto its transfer space first, and
    swaps herself with Grey's worker at ``destination`` while B's token has yet to move."""
    state = table(3, event="quiet_season")  # 3 movement turns
    state["workshops"]["A"]["token"] = 4  # the next step lands on A's transfer space
    place_at(state, destination, GREY)
    act(state, ORANGE, "place_worker", position="AB1", artisan=False)
    act(state, ORANGE, "move", workshop="A")
    act(state, ORANGE, "transfer", first="AB1/0", second=f"{destination}/1")
    assert state["turn"]["position"] == destination
    return state


def make_every_movement(state: dict) -> list[list[str]]:
    """Make the turn's remaining movement turns in the offered order; returns the workshops
    offered at the start of each."""
    offered = []
    while moves(state):
        offered.append(moves(state))
        for workshop in offered[-1]:
            act(state, ORANGE, "move", workshop=workshop)
            let_go(state)
    act(state, ORANGE, "end_turn")
    return offered


def test_a_transfer_in_the_middle_of_an_intersections_movement_moves_both_new_workshops() -> None:
    """ "If the swap involves the Worker that was just placed this turn, and that Worker
    still has remaining movements and actions, the player may move the Production token in
    the Workshops connected to the new position and perform the actions there as usual.\"
    The movement turn in progress, B's token still to move, is a remaining movement: it is
    made at the new intersection as usual, both of its workshops' tokens. So that turn moves
    three tokens (A at AB1, then C and D at CD) and B's token never moves."""
    state = transfer_in_the_middle_of_a_movement_turn("CD")
    assert make_every_movement(state) == [["C", "D"]] * 3
    assert tokens(state, "A", "B", "C", "D") == [5, 0, 3, 3]


def test_a_transfer_in_the_middle_of_a_movement_turn_moves_a_shared_workshop_again() -> None:
    """ "the player may move the Production token in the Workshops connected to the new
    position and perform the actions there as usual\": AC1 shares A with AB1, and the rest
    of the turn moves both A and C, A's token a second time in that turn."""
    state = transfer_in_the_middle_of_a_movement_turn("AC1")
    assert make_every_movement(state) == [["A", "C"]] * 3
    assert tokens(state, "A", "B", "C") == [(4 + 1 + 3) % 8, 0, 3]


def test_a_transfer_in_the_middle_of_a_movement_turn_to_a_single_keeps_that_movement() -> None:
    """ "that Worker still has remaining movements and actions, the player may move the
    Production token in the Workshops connected to the new position\": at a single of A the
    rest of the turn moves A's token (it is not lost because A moved before the Transfer),
    then the two movement turns not begun do."""
    state = transfer_in_the_middle_of_a_movement_turn("A1")
    assert make_every_movement(state) == [["A"]] * 3
    assert tokens(state, "A", "B") == [(4 + 1 + 3) % 8, 0]


def test_a_transfer_mid_movement_turn_makes_its_rest_at_the_new_position() -> None:
    """ "the player may move the Production token in the Workshops connected to the new
    position\": after the Transfer to E1, every movement left is E's."""
    state = table(3, event="quiet_season")  # 3 movement turns
    state["workshops"]["A"]["token"] = 4  # the next step lands on A's transfer space
    place_at(state, "E1", GREY)
    act(state, ORANGE, "place_worker", position="AB1", artisan=False)
    act(state, ORANGE, "move", workshop="A")
    act(state, ORANGE, "transfer", first="AB1/0", second="E1/1")
    assert moves(state) == ["E"]  # B is no longer connected
    act(state, ORANGE, "move", workshop="E")
    let_go(state)
    for _ in range(2):
        act(state, ORANGE, "move", workshop="E")
        let_go(state)
    assert tokens(state, "A", "B", "E") == [5, 0, 3]
    act(state, ORANGE, "end_turn")


def test_a_transfer_of_other_workers_leaves_the_movement_turn_in_progress_as_it_was() -> None:
    """Only "the Worker that was just placed" takes its movements elsewhere: swapping two
    other workers mid-turn leaves B's token still to move."""
    state = table(3, event="quiet_season")
    state["workshops"]["A"]["token"] = 4
    place_at(state, "CD", GREY)
    place_at(state, "E1", 2)
    act(state, ORANGE, "place_worker", position="AB1", artisan=False)
    act(state, ORANGE, "move", workshop="A")
    act(state, ORANGE, "transfer", first="CD/1", second="E1/2")
    assert state["turn"]["position"] == "AB1" and moves(state) == ["B"]


# -- 8: Manager cards while another player decides --------------------------------------


def completing_turn(others_on_tile: bool, hand: tuple[str, ...] = ()) -> dict:
    """Orange's turn reaching the top of T08 (red, blue, red) from its space 1, at A1 with
    the token landing on red on the second movement; Grey on space 0 when asked."""
    state = table(3, event="masters_visit")  # 2 movement turns, 2 Manager cards per turn
    state["seats"][ORANGE]["hand"] = list(hand)
    show_tiles(state, "T08")
    progress = state["construction"]["progress"]["T08"]
    climbers = [(ORANGE, 1), (GREY, 0)] if others_on_tile else [(ORANGE, 1)]
    for seat, space in climbers:
        state["seats"][seat]["board_workers"] -= 1
        progress.append({"seat": seat, "space": space})
    act(state, ORANGE, "place_worker", position="A1", artisan=False)
    act(state, ORANGE, "move", workshop="A")  # development
    act(state, ORANGE, "skip_action")
    act(state, ORANGE, "move", workshop="A")  # red
    act(state, ORANGE, "continue_construction", tile="T08", space=1)
    return state


def test_manager_cards_may_be_played_on_your_turn_while_another_player_chooses() -> None:
    """ "There is no restriction on when these cards may be used as long as it is on your
    turn.\" Grey's completion choice falls in Orange's turn; Orange may still play one."""
    state = completing_turn(others_on_tile=True, hand=("foreman",))
    assert decision(state)["kind"] == "completion" and decision(state)["seat"] == GREY
    assert RESTORATION.status(state)["to_act"] == [GREY]
    play = {"type": "play_manager", "manager": "foreman", "effect": "A"}
    assert play in RESTORATION.legal_actions(state, ORANGE)
    act(state, ORANGE, "play_manager", manager="foreman", effect="A")
    assert decision(state)["kind"] == "development" and decision(state)["seat"] == ORANGE
    act(state, ORANGE, "develop", track="reputation")
    assert decision(state)["kind"] == "completion" and decision(state)["seat"] == GREY
    act(state, GREY, "completion_choice", choice="rest")


# -- 9: step C before step D --------------------------------------------------------------


def test_the_completer_takes_the_tile_and_upgrade_token_before_a_new_tile_is_revealed() -> None:
    """ "C. The player who completed the project takes the Construction tile and an Upgrade
    token. D. A new Construction board is revealed and placed in play.\" (and "You may
    immediately place it in the Research department")."""
    state = completing_turn(others_on_tile=False)
    assert state["seats"][ORANGE]["tiles"] == ["T08"]
    assert decision(state)["kind"] == "upgrade"
    assert RESTORATION.system_action(state) is None
    assert RESTORATION.status(state)["to_act"] == [ORANGE]
    assert len(state["construction"]["display"]) == 4
    act(state, ORANGE, "place_upgrade", target="ap_track")
    assert run_system(state) == ["reveal_construction_tile"]
    assert len(state["construction"]["display"]) == 5


# -- a completed project is built on no more ---------------------------------------------


def builds_on(state: dict, tile: str) -> list[dict]:
    """Every action any seat is offered now that starts or continues a construction on
    ``tile``."""
    kinds = ("start_construction", "continue_construction")
    return [
        action
        for seat in range(len(state["players"]))
        for action in RESTORATION.legal_actions(state, seat)
        if action["type"] in kinds and action["tile"] == tile
    ]


def test_a_project_being_completed_is_not_built_on_again_and_the_game_goes_on() -> None:
    """ "When a player advances to the highest level of a Construction Progress track, that
    project will be completed. The Construction board is then resolved in the following
    order: ... B. In turn order from top to bottom, each other player chooses either: B1.
    Move their Worker to the Rest area, or B2. Reduce their reputation level by 1 and return
    their Worker to their board. C. The player who completed the project takes the
    Construction tile\". The completed tile waits in the display for step C while Grey
    chooses, and Orange may play Manager cards meanwhile ("There is no restriction on when
    these cards may be used as long as it is on your turn"); two Master Masons in a Kiln
    Festival round would otherwise rebuild T07 to its top and complete it a second time,
    asking Grey twice about one worker."""
    state = table(3, event="kiln_festival")  # 1 movement turn, 2 Manager cards per turn
    state["seats"][ORANGE]["hand"] = ["master_mason", "master_mason"]  # Breakthrough
    state["seats"][ORANGE]["technology"] = 2  # level 3's Breakthrough is one step away
    show_tiles(state, "T07")  # red (development), white, red
    for seat, space in ((ORANGE, 1), (GREY, 0)):
        state["seats"][seat]["board_workers"] -= 1
        state["construction"]["progress"]["T07"].append({"seat": seat, "space": space})
    state["workshops"]["A"]["token"] = 1  # the next step lands on A's red space
    act(state, ORANGE, "place_worker", position="A1", artisan=False)
    act(state, ORANGE, "move", workshop="A")
    act(state, ORANGE, "continue_construction", tile="T07", space=1)
    assert decision(state) == {"kind": "completion", "seat": GREY, "tile": "T07", "space": 0}
    assert "T07" in state["construction"]["display"]  # until step C
    for _ in range(2):
        act(state, ORANGE, "play_manager", manager="master_mason", effect="A")
        assert decision(state)["kind"] == "breakthrough"
        assert builds_on(state, "T07") == []
        assert refused(state, ORANGE, "start_construction", tile="T07") == (
            "construction_completed"
        )
        act(state, ORANGE, "skip_action")
    assert [d["kind"] for d in state["pending"]] == ["completion", "claim"]
    for choice in RESTORATION.legal_actions(state, GREY):  # each of Grey's answers works
        act(copy.deepcopy(state), GREY, choice["type"], **{"choice": choice["choice"]})
    act(state, GREY, "completion_choice", choice="rest")
    assert state["seats"][ORANGE]["tiles"] == ["T07"]
    act(state, ORANGE, "place_upgrade", target="ap_track")
    assert run_system(state) == ["reveal_construction_tile"]
    assert "T07" not in state["construction"]["display"]
    act(state, ORANGE, "end_turn")
    assert RESTORATION.status(state)["to_act"] == [GREY]


def test_starting_a_project_gains_its_first_spaces_effect_once() -> None:
    """ "Starting a Construction: ... The player places one of their Workers on that space,
    marking the start of construction on that Construction tile, and immediately gains the
    effect shown on that space, if any.\" and "When a player advances to the highest level
    of a Construction Progress track, that project will be completed\": once T01 is
    completed nobody starts it again while Grey chooses, so its space 0 (take a Manager
    card) is gained once."""
    state = table(3, event="masters_visit")  # 2 movement turns, 2 Manager cards per turn
    state["seats"][ORANGE]["hand"] = ["master_mason", "master_mason"]
    show_tiles(state, "T01")  # blue (take a Manager card), green, blue
    state["seats"][GREY]["board_workers"] -= 1
    state["construction"]["progress"]["T01"].append({"seat": GREY, "space": 0})
    gained = 0

    def take_the_manager_card() -> None:
        nonlocal gained
        assert decision(state)["kind"] == "manager"
        act(state, ORANGE, "take_manager", source="deck")
        gained += 1

    act(state, ORANGE, "play_manager", manager="master_mason", effect="A")
    act(state, ORANGE, "start_construction", tile="T01")
    take_the_manager_card()
    state["workshops"]["A"]["token"] = 3  # the next steps land on A's green space ...
    state["workshops"]["E"]["token"] = 7  # ... and on E's blue space
    act(state, ORANGE, "place_worker", position="AE1", artisan=False)
    act(state, ORANGE, "move", workshop="A")
    act(state, ORANGE, "continue_construction", tile="T01", space=0)
    act(state, ORANGE, "move", workshop="E")
    act(state, ORANGE, "continue_construction", tile="T01", space=1)
    assert decision(state)["kind"] == "completion" and decision(state)["seat"] == GREY
    act(state, ORANGE, "play_manager", manager="master_mason", effect="A")
    assert builds_on(state, "T01") == []
    assert refused(state, ORANGE, "start_construction", tile="T01") == "construction_completed"
    act(state, ORANGE, "skip_action")
    act(state, GREY, "completion_choice", choice="rest")
    assert state["seats"][ORANGE]["tiles"] == ["T01"]
    assert gained == 1


def test_a_completion_choice_without_its_worker_is_refused_leaving_the_state_unchanged() -> None:
    """ "B. In turn order from top to bottom, each other player chooses either: B1. Move their
    Worker to the Rest area, or B2. Reduce their reputation level by 1 and return their
    Worker to their board.\" A choice about a worker no longer on the Construction board
    (here the tile already claimed, as a second completion of one tile used to leave it)
    is refused before anything changes: apply validates, then mutates."""
    state = completing_turn(others_on_tile=True)
    act(state, GREY, "completion_choice", choice="rest")
    act(state, ORANGE, "place_upgrade", target="ap_track")
    run_system(state)
    assert "T08" not in state["construction"]["progress"]
    state["pending"].insert(0, {"kind": "completion", "seat": GREY, "tile": "T08", "space": 0})
    for choice in ("rest", "take_back"):
        before = copy.deepcopy(state)
        with pytest.raises(IllegalAction) as caught:
            act(state, GREY, "completion_choice", choice=choice)
        assert caught.value.code == "no_worker_on_tile"
        assert state == before
    assert RESTORATION.legal_actions(state, GREY) == []


# -- the Technology track scores on its scoring spaces ----------------------------------


def reach_the_next_technology_space(state: dict, seat: int) -> None:
    """``seat`` resolves a Development icon by advancing on the Technology track."""
    state["pending"].insert(0, {"kind": "development", "seat": seat, "optional": True})
    act(state, seat, "develop", track="technology")
    state["pending"] = [d for d in state["pending"] if d["seat"] != seat]  # the new space's effect


def test_the_technology_track_scores_only_on_its_scoring_spaces() -> None:
    """ "D: Highest space: Upon reaching the highest space of the Technology board, the
    player places their Development token on the highest available scoring space.\" The
    rulebook gives the Technology track's Achievement Points on its scoring spaces alone (the
    Reputation track is the one that "represents Achievement Points\" level by level), so a
    worker below the highest space scores nothing from it."""
    state = table(3)
    player = state["seats"][ORANGE]
    for level in range(data.TOP_LEVEL):
        player["technology"] = level
        assert scoring.breakdown(player)["technology"] == 0
    reach_the_next_technology_space(state, ORANGE)
    assert player["technology"] == data.TOP_LEVEL
    assert scoring.breakdown(player)["technology"] == data.SCORING_SPACES[0]


def test_the_fourth_player_to_reach_the_highest_space_gains_the_last_scoring_space() -> None:
    """ "the player places their Development token on the highest available scoring space\":
    the players reaching the highest space take the scoring spaces in order of arrival, and
    each of them, the fourth too, gains that space's points by moving up."""
    state = table(4)
    seats = state["seats"]
    last_level = data.TOP_LEVEL - 1
    seats[0]["technology"] = seats[1]["technology"] = last_level  # a small space each
    seats[2]["technology"] = seats[3]["technology"] = last_level - 1
    gains = []
    for seat in range(4):
        while seats[seat]["technology"] < last_level:
            reach_the_next_technology_space(state, seat)
        before = scoring.breakdown(seats[seat])["technology"]
        reach_the_next_technology_space(state, seat)
        gains.append(scoring.breakdown(seats[seat])["technology"] - before)
    assert [player["technology_scoring_space"] for player in seats] == data.SCORING_SPACES[:4]
    assert gains == data.SCORING_SPACES[:4] == [10, 8, 6, 4]
