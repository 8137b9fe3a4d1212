"""Scoring, the contracts' end-game conditions and the tie-breakers."""

from __future__ import annotations

from typing import Any

import pytest

from projections.games.impression import data, scoring
from tests.unit.impression.support import RULES, act, new_game


def scored_game() -> tuple[dict[str, Any], dict[str, Any]]:
    state = new_game(2)
    return state, state["seats"][0]


def contract_with(kind: str, **rule: Any) -> str:
    return next(
        c
        for c, tile in data.CONTRACTS.items()
        if tile["scoring"]["kind"] == kind
        and all(tile["scoring"].get(k) == v for k, v in rule.items())
    )


def test_each_set_of_three_different_signboards_is_worth_five() -> None:
    _, p = scored_game()
    p["signboards"] = [
        {"colour": colour, "source": "x", "used": used, "usable": True}
        for colour, used in [
            ("white", True),
            ("red", False),
            ("blue", False),
            ("white", False),
            ("red", True),
        ]
    ]
    assert scoring.signboard_sets(p) == 5


def test_full_composing_sticks_are_worth_five_each() -> None:
    state, p = scored_game()
    for cell in (0, 1, 2, 3, 4):
        p["board"][cell] = {"letter": "LA1", "paired": None, "bonus_taken": False}
    assert scoring.breakdown(state, p)["composing_sticks"] == 5


def test_orders_in_production_score_one_and_unstarted_orders_cost_their_points() -> None:
    state, p = scored_game()
    p["line"] = ["OI1", None, "OI2", None]
    p["orders_waiting"] = ["OIV1"]
    lines = scoring.breakdown(state, p)
    assert lines["orders_in_production"] == 2
    assert lines["orders_never_started"] == -data.ORDERS["OIV1"]["vp"]


def test_the_director_scores_the_figure_above_its_position() -> None:
    state, p = scored_game()
    p["director"] = 4
    assert scoring.breakdown(state, p)["director"] == data.DIRECTOR[4]["points"]


@pytest.mark.parametrize(
    ("kind", "rule", "setup", "points"),
    [
        ("per_marks", {}, {"marks": 11}, 2),
        ("workforce", {}, {"workforce": 5}, 2),
        ("completed_orders", {}, {"completed": ["OI1", "OI2", "OI3"]}, 1),
        ("city_tiles", {}, {"discs": [{"id": "D1", "used": True}, {"id": "D2", "used": False}]}, 1),
        (
            "signboards",
            {"colour": "red"},
            {"signboards": [{"colour": "red", "source": "D3", "used": True, "usable": True}]},
            1,
        ),
        (
            "letter",
            {"letter": "B"},
            {"board": [{"letter": "LB1", "paired": "D2", "bonus_taken": True}] + [None] * 8},
            2,
        ),
    ],
)
def test_a_contract_scores_its_printed_rule(
    kind: str, rule: dict[str, Any], setup: dict[str, Any], points: int
) -> None:
    state, p = scored_game()
    p.update(setup)
    assert scoring.contract_points(state, p, contract_with(kind, **rule)) == points


def test_technology_factory_and_assistant_contracts_count_the_workshop_and_streets() -> None:
    state, p = scored_game()
    p["workshop"]["W1"]["up"] = {"kind": "tech", "id": "GI1"}
    p["workshop"]["W4"]["down"] = {"kind": "tech", "id": "GI2"}
    p["workshop"]["W2"]["up"] = {"kind": "factory", "id": "FI1"}
    state["streets"]["S1-S2"] = {"owner": 0, "reward": "ink"}
    assert (
        scoring.contract_points(state, p, contract_with("technologies_of_level", level="I", per=1))
        == 2
    )
    assert (
        scoring.contract_points(state, p, contract_with("technologies_of_level", level="I", per=2))
        == 1
    )
    assert scoring.contract_points(state, p, contract_with("factories")) == 1
    assert scoring.contract_points(state, p, contract_with("assistants")) == 1


def test_slot_column_and_diagonal_contracts() -> None:
    state, p = scored_game()
    for cell in (0, 3, 4, 6, 8):
        p["board"][cell] = {"letter": "LA1", "paired": None, "bonus_taken": False}
    p["slots"][0].update(active=True, contract="K1")
    p["slots"][1]["active"] = True
    assert scoring.contract_points(state, p, contract_with("full_columns")) == 2
    assert scoring.contract_points(state, p, contract_with("full_diagonals")) == 3
    assert scoring.contract_points(state, p, contract_with("active_contracts")) == 1
    assert scoring.contract_points(state, p, contract_with("unlocked_slots")) == 2


def test_a_letter_under_a_contract_doubles_it() -> None:
    state, p = scored_game()
    contract = contract_with("workforce")
    p["workforce"] = 4
    p["letters_under"][contract] = "LA1"
    assert scoring.contract_points(state, p, contract) == 4


def finish(state: dict[str, Any]) -> dict[str, Any]:
    state["phase"] = "final_scoring"
    act(state, None, type="final_scoring")
    result = RULES.result(state)
    assert result is not None
    return result


def test_the_result_lists_each_line_of_the_breakdown() -> None:
    state, p = scored_game()
    p["vp"] = 9
    result = finish(state)
    ann = result["scores"][0]
    assert list(ann["breakdown"]) == scoring.LINES
    assert ann["total"] == sum(ann["breakdown"].values()) == 9 + 1  # 6 goods: 1 point


def test_ties_go_to_most_completed_orders_then_most_cash_then_are_shared() -> None:
    state = new_game(4)
    for p in state["seats"]:
        p.update(paper=0, lead=0, ink=0, marks=0, vp=10)
    state["seats"][1]["completed"] = ["OI1"]
    state["seats"][1]["vp"] = 10 - data.ORDERS["OI1"]["vp"] + data.ORDERS["OI1"]["vp"]
    state["seats"][2]["marks"] = 4
    assert finish(state)["ranking"] == [[1], [2], [0, 3]]
