"""The rulebook's worked examples, quoted, as tests."""

from __future__ import annotations

from projections.games.restoration import scoring
from projections.games.restoration.game import RESTORATION
from tests.unit.restoration.table import act, decision, place_at, run_system, show_tiles, table

ORANGE, GREY, JADE = 0, 1, 2


def majority_table() -> dict:
    state = table(3)
    for seat in (ORANGE, GREY, JADE):
        state["seats"][seat]["board_workers"] += 4  # room for the example's workers
        state["seats"][seat]["reputation"] = 3
    state["first_player"] = GREY
    for position, seat in [
        ("A1", ORANGE), ("AB1", ORANGE), ("AC1", ORANGE), ("D1", ORANGE),
        ("A2", GREY), ("EB", GREY), ("CD", GREY),
        ("AD1", JADE), ("AE1", JADE),
    ]:  # fmt: skip
        place_at(state, position, seat)
    return state


def test_workshop_majority_example() -> None:
    """ "Workshop A: Orange has 4 Influence; Jade and Grey each have 2. Orange wins, gains 1
    Artisan, and takes the First Player token for the next round. Workshop E: Grey and Jade
    each have 1 Influence. They are tied, so no Artisan is gained. Workshop D: Orange has 2
    Influence; Grey and Jade each have 1. Orange wins and gains 1 Artisan.\""""
    state = majority_table()
    assert scoring.influence(state, "A") == [4, 2, 2]
    assert scoring.influence(state, "E") == [0, 1, 1]
    assert scoring.influence(state, "D") == [2, 1, 1]
    report = scoring.audit(state)
    rows = {row["workshop"]: row for row in report["workshops"]}
    assert rows["A"]["winner"] == ORANGE and rows["A"]["artisan"]
    assert rows["E"]["winner"] is None and not rows["E"]["artisan"]
    assert rows["D"]["winner"] == ORANGE and rows["D"]["artisan"]
    assert state["first_player"] == ORANGE
    assert state["seats"][ORANGE]["board_artisans"] == 1 + 2
    assert [p["board_artisans"] for p in state["seats"][1:]] == [1, 1]


def test_tied_lowest_capital_gives_nobody_an_artisan() -> None:
    """ "Jade and Orange both have the lowest Capital level. Since they are tied, neither
    player gains an Artisan.\""""
    state = table(3)
    for seat, level in [(ORANGE, 2), (GREY, 5), (JADE, 2)]:
        state["seats"][seat]["reputation"] = level
    report = scoring.audit(state)
    assert report["reputation"] == {"levels": [2, 5, 2], "lowest": None, "artisan": False}
    assert [p["board_artisans"] for p in state["seats"]] == [1, 1, 1]


def test_the_unique_lowest_reputation_gains_an_artisan() -> None:
    state = table(3)
    for seat, level in [(ORANGE, 4), (GREY, 5), (JADE, 2)]:
        state["seats"][seat]["reputation"] = level
    assert scoring.audit(state)["reputation"]["lowest"] == JADE
    assert state["seats"][JADE]["board_artisans"] == 2


def test_completion_example() -> None:
    """ "A: Orange must move her Worker from the board to the Rest area. B1: Grey chooses to
    move his Worker from the Construction board to the Rest area. B2: Jade chooses to reduce
    his Capital level by 1 and return his Worker to his Player board. C: Orange takes the
    completed Construction tile, 1 Upgrade token, and then reveals a new tile.\""""
    state = table(3)
    show_tiles(state, "T08")  # red, blue, red
    progress = state["construction"]["progress"]["T08"]
    for seat, space in [(ORANGE, 1), (GREY, 0), (JADE, 1)]:
        state["seats"][seat]["board_workers"] -= 1
        progress.append({"seat": seat, "space": space})
    jade_reputation = state["seats"][JADE]["reputation"]
    act(state, ORANGE, "place_worker", position="A1", artisan=False)
    act(state, ORANGE, "move", workshop="A")  # development
    act(state, ORANGE, "skip_action")
    act(state, ORANGE, "move", workshop="A")  # red
    assert decision(state) == {"kind": "construct", "seat": 0, "optional": True, "colour": "red"}
    act(state, ORANGE, "continue_construction", tile="T08", space=1)
    assert state["seats"][ORANGE]["rest"] == 1  # A
    assert RESTORATION.status(state)["to_act"] == [GREY]
    act(state, GREY, "completion_choice", choice="rest")  # B1
    assert state["seats"][GREY]["rest"] == 1
    act(state, JADE, "completion_choice", choice="take_back")  # B2
    assert state["seats"][JADE]["reputation"] == jade_reputation - 1
    assert state["seats"][JADE]["board_workers"] == 3
    assert state["seats"][ORANGE]["tiles"] == ["T08"]  # C
    assert decision(state) == {
        "kind": "upgrade",
        "seat": 0,
        "optional": False,
        "may_keep": True,
        "tile": "T08",
    }
    assert "T08" not in state["construction"]["display"]
    assert RESTORATION.status(state)["awaiting_system"] is None  # C before D
    act(state, ORANGE, "place_upgrade", target="keep")
    assert state["seats"][ORANGE]["upgrades_kept"] == 1
    assert RESTORATION.status(state)["awaiting_system"] == "reveal_construction_tile"
    assert run_system(state) == ["reveal_construction_tile"]  # D
    assert len(state["construction"]["display"]) == 5


def test_an_occupied_intersection_costs_one_reputation_per_worker_already_there() -> None:
    """ "When placing a Worker at an occupied Intersection ... the player must reduce 1 Capital
    level for each Worker already placed there.\""""
    state = table(3)
    place_at(state, "AB1", GREY)
    place_at(state, "AB1", JADE)
    state["seats"][ORANGE]["reputation"] = 5
    act(state, ORANGE, "place_worker", position="AB1", artisan=False)
    assert state["seats"][ORANGE]["reputation"] == 3


def test_single_positions_are_free_however_occupied() -> None:
    """ "Single positions are free to place, regardless of whether they are occupied or not.\""""
    state = table(3)
    place_at(state, "B1", GREY)
    place_at(state, "B1", JADE)
    state["seats"][ORANGE]["reputation"] = 0
    act(state, ORANGE, "place_worker", position="B1", artisan=False)
    assert state["seats"][ORANGE]["reputation"] == 0


def test_each_artisan_is_worth_three_ap_and_each_unused_upgrade_token_one() -> None:
    """ "Points from Artisans (3 APs each) and unused Upgrade tokens (1 AP each)\""""
    state = table(3)
    player = state["seats"][ORANGE]
    player.update(board_artisans=2, upgrades_kept=3)
    lines = scoring.breakdown(player)
    assert lines["artisans"] == 6
    assert lines["unused_upgrade_tokens"] == 3
