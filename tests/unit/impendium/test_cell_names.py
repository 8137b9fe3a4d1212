"""A cell, a card position and a placed disc are named only as the board names them
(docs/rules/impendium.md, "Held-out rules review").

The board is one map: "Each player places your Ark of salvation anywhere on the map", and
"when you occupy the same space as another player you may immediately Attack or Trade with
that player" (Move). A space has one name, ``"x,y"`` in ASCII digits with no leading zero
and no signed zero; another spelling of the same numbers ('01,0', '1,-0', an Arabic-Indic
digit one) would put two Arks on one space that the rules then treat as two.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.games.impendium import IMPENDIUM
from projections.games.impendium import board as grid
from projections.games.impendium.data import HARBINGERS, STARS
from tests.unit.impendium.helpers import act, auto, fresh, put_star, refused, table

State = dict[str, Any]

#: The farthest a cell can lie from the federation: every star card and harbinger in one
#: line (two cells a card), and the space beyond the last.
REACH = 2 * (len(STARS) + len(HARBINGERS)) + 1

#: Names of the space 1,0 (between the federation and 2,0) the board does not know.
NOT_THE_BOARDS_NAMES_OF_1_0 = [
    "\u0661,0",  # an Arabic-Indic digit one
    "1,\u0660",  # an Arabic-Indic digit zero
    "\uff11,0",  # a fullwidth digit one
    "01,0",
    "1,00",
    "1,-0",
    "+1,0",
    " 1,0",
    "1,0 ",
    "1,0\n",
    "1_0,0",
]


def _at_ark_placement() -> State:
    """Two players, their stars and setup colonies placed: seat 0 places its Ark first."""
    state = fresh(2)
    act(state, 0, "place_start_star", position="2,0")
    act(state, 1, "place_start_star", position="-2,0")
    while state["phase"] == "setup_colonies":
        seat = IMPENDIUM.status(state)["to_act"][0]
        IMPENDIUM.apply(
            state, {**IMPENDIUM.legal_actions(state, seat)[0], "seat": seat}, random.Random(1)
        )
    assert state["phase"] == "setup_arks"
    return state


@pytest.mark.parametrize("name", NOT_THE_BOARDS_NAMES_OF_1_0)
def test_an_ark_is_placed_only_on_a_space_named_as_the_board_names_it(name: str) -> None:
    """ "Each player places your Ark of salvation anywhere on the map" (Setup): on a space
    of the map, which has one name."""
    state = _at_ark_placement()
    refused(state, 0, {"type": "place_ark", "position": name}, "bad_ark_position")
    act(state, 0, "place_ark", position="1,0")
    refused(state, 1, {"type": "place_ark", "position": name}, "bad_ark_position")


def test_two_arks_placed_on_one_space_share_it_and_may_attack() -> None:
    """ "On your turn, at any point when you occupy the same space as another player you may
    immediately Attack or Trade with that player" (Move)."""
    state = _at_ark_placement()
    act(state, 0, "place_ark", position="1,0")
    refused(state, 1, {"type": "place_ark", "position": "01,0"}, "bad_ark_position")
    act(state, 1, "place_ark", position="1,0")
    assert state["arks"] == ["1,0", "1,0"]
    auto(state)
    for seat in (0, 1):
        act(state, seat, "take_federation_resource", resource="water")
    while IMPENDIUM.status(state)["awaiting_system"]:
        auto(state)
    seat = state["turn"]["seat"]
    assert {"type": "attack", "target": 1 - seat} in IMPENDIUM.legal_actions(state, seat)


def _with_the_pall_next_to(state: State, position: str) -> None:
    pall = next(card for card, h in HARBINGERS.items() if h["name"] == "The Pall")
    state["board"][position] = {
        "kind": "harbinger",
        "card": pall,
        "discs": [None] * len(HARBINGERS[pall]["slots"]),
    }


@pytest.mark.parametrize("name", NOT_THE_BOARDS_NAMES_OF_1_0)
def test_a_move_names_its_step_as_the_board_does(name: str) -> None:
    """ "Move your Ark of Salvation in cardinal directions": a step onto the space 1,0."""
    state = table()
    put_star(state, "2,0", "S05")
    refused(state, 0, {"type": "move", "to": name}, "not_a_step")
    act(state, 0, "move", to="1,0")
    assert state["arks"][0] == "1,0"


@pytest.mark.parametrize("name", ["02,0", "2,00", "\u0662,0", "2,-0", "2,0\n"])
def test_a_star_and_a_harbinger_are_placed_only_on_positions_named_as_the_board_does(
    name: str,
) -> None:
    """ "The player who completes the star card chooses its placement on the map adjacent
    to another star card" (Federation Project): on a card position the board names."""
    state = table()
    state["pending"] = [{"kind": "place_star", "seat": 0, "card": "S05", "colonies": [None] * 5}]
    assert {"type": "place_star", "position": "2,0"} in IMPENDIUM.legal_actions(state, 0)
    refused(state, 0, {"type": "place_star", "position": name}, "bad_star_position")
    state["pending"] = [{"kind": "place_harbinger", "seat": 0, "card": "H01", "near": "0,0"}]
    refused(state, 0, {"type": "place_harbinger", "position": name}, "bad_harbinger_position")


@pytest.mark.parametrize("name", ["00,2", "0,02", "-0,2", "\u0660,2", "0,2\n"])
def test_a_harbinger_is_battled_only_at_a_position_named_as_the_board_does(name: str) -> None:
    """ "You must be on a card adjacent to a harbinger of the void to battle it" (Battle a
    Harbinger of the Void)."""
    state = table()
    _with_the_pall_next_to(state, "0,2")
    refused(
        state, 0, {"type": "battle_harbinger", "position": name, "slot": 0}, "no_such_harbinger"
    )


@pytest.mark.parametrize(
    "name",
    [
        "map:2,0/\u0660",  # an Arabic-Indic digit zero as the slot
        "map:2,0/\uff10",  # a fullwidth digit zero
        "map:2,0/00",
        "map:2,0/-0",
        "map:02,0/0",
        "map:2,-0/0",
        "map:\u0662,0/0",
        "map:2,0/0\n",
        "harbinger:0,2/\u0660",
        "harbinger:0,02/0",
        "harbinger:-0,2/0",
    ],
)
def test_a_disc_moved_to_a_new_place_is_named_as_the_board_names_it(name: str) -> None:
    """ "The colonies you have on the map or on federation projects already also count as
    available colonies and you may remove one to place the new one" (Build a Colony): the
    disc is named by its place and slot, one name each."""
    state = table()
    for resource in state["seats"][0]["resources"]:
        state["seats"][0]["resources"][resource] = 9
    put_star(state, "2,0", "S06", [0] * 5)
    put_star(state, "-2,0", "S03", [0] * 3)
    _with_the_pall_next_to(state, "0,2")
    state["board"]["0,2"]["discs"][0] = 0
    card = state["projects"][0]["card"]
    action = {"type": "construct_federation_star", "project": card, "slot": 0, "relocate": name}
    refused(state, 0, action, "bad_relocation")
    assert {**action, "relocate": "map:2,0/0"} in IMPENDIUM.legal_actions(state, 0)
    assert {**action, "relocate": "harbinger:0,2/0"} in IMPENDIUM.legal_actions(state, 0)


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("place_ark", "position", "\u0661,0"),
        ("move", "to", "1,\u0660"),
        ("place_star", "position", "\uff12,0"),
        ("battle_harbinger", "position", "0,\u0662"),
        ("build_colony", "relocate", "map:2,0/\u0660"),
        ("construct_federation_star", "relocate", "project:S0\u0667/0"),
        ("battle_harbinger", "relocate", "harbinger:0,2/\u0661"),
    ],
)
def test_the_action_schemas_take_only_ascii_digits_in_a_name(
    kind: str, field: str, value: str
) -> None:
    """The schemas the API publishes name a cell with [0-9], not any Unicode digit."""
    schema = IMPENDIUM.action_schemas()[kind]()
    assert field in schema.validate({"type": kind, field: value})


@pytest.mark.parametrize("name", ["0,0", "1,0", "-1,0", "0,-2", "10,-7", f"{REACH},-{REACH}"])
def test_the_board_reads_its_own_names(name: str) -> None:
    x, y = (int(part) for part in name.split(","))
    assert grid.parse_cell(name) == (x, y)


@pytest.mark.parametrize(
    "name",
    [
        *NOT_THE_BOARDS_NAMES_OF_1_0,
        "-0,0",
        "0,-0",
        "00,0",
        "1,0,0",
        "1",
        "",
        "a,b",
        "1.0,0",
        f"{REACH + 1},0",
        f"0,-{REACH + 1}",
        "1" * 5000 + ",0",
    ],
)
def test_the_board_knows_no_other_name_of_a_cell(name: str) -> None:
    """Only ASCII digits, no leading zero, no '-0', and only cells a map can reach."""
    assert grid.parse_cell(name) is None
