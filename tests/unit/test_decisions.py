"""Describing a decision (projections/decisions.py): descriptions derived from a list are
exact, the builders count what they allow, and the sampler draws only what is described."""

from __future__ import annotations

import json
import random
from itertools import product
from typing import Any

from projections import decisions
from projections.games.gutenberg.rules import MAX_PER_ROW, ROWS, _plans


def _key(action: dict[str, Any]) -> str:
    return json.dumps(action, sort_keys=True)


def _everything_allowed(description: dict[str, Any], rng: random.Random) -> set[str]:
    """What the sampler draws in many tries (small descriptions: all it allows)."""
    return {_key(decisions.sample(description, rng)) for _ in range(2000)}


def test_independent_parameters_are_plain_enums() -> None:
    listed = [{"type": "go", "a": a, "b": b} for a in (1, 2, 5) for b in ("x", "y")]
    described = decisions.describe_list(listed)["go"]
    assert described == {
        "type": "go",
        "count": 6,
        "exact": True,
        "params": [
            {"name": "a", "kind": "enum", "values": [1, 2, 5]},
            {"name": "b", "kind": "enum", "values": ["x", "y"]},
        ],
    }


def test_three_or_more_consecutive_integers_are_a_range() -> None:
    listed = [{"type": "take", "set": s, "count": c} for s in (0, 1) for c in range(1, 2 + 2 * s)]
    described = decisions.describe_list(listed)["take"]
    assert described["params"][0] == {"name": "set", "kind": "enum", "values": [0, 1]}
    assert described["params"][1]["cases"] == [
        {"when": {"set": 0}, "values": [1]},
        {"when": {"set": 1}, "kind": "range", "min": 1, "max": 3},
    ]
    assert not decisions.satisfies(described, {"type": "take", "set": 1, "count": True})
    assert _everything_allowed(described, random.Random(2)) == {_key(a) for a in listed}


def test_a_parameter_whose_values_follow_another_lists_them_per_case() -> None:
    rows = ["orders", "inks", "gears"]
    listed = [{"type": "move", "from": a, "to": b} for a in rows for b in rows if a != b]
    to = decisions.describe_list(listed)["move"]["params"][1]
    assert to["depends_on"] == ["from"]
    assert {"when": {"from": "inks"}, "values": ["orders", "gears"]} in to["cases"]


def test_a_parameter_decided_by_two_others_depends_on_both() -> None:
    listed = [
        {"type": "odd", "a": a, "b": b, "c": (a + b) % 2} for a, b in product(range(3), range(3))
    ]
    described = decisions.describe_list(listed)["odd"]
    assert described["params"][2]["depends_on"] == ["a", "b"]
    assert _everything_allowed(described, random.Random(1)) == {_key(a) for a in listed}


def test_a_description_from_a_list_allows_exactly_the_list() -> None:
    rng = random.Random(7)
    for _ in range(40):
        listed = [
            {"type": "t", "a": rng.randrange(3), "b": rng.choice("xyz"), "c": rng.randrange(2)}
            for _ in range(rng.randrange(1, 12))
        ]
        described = decisions.describe_list(listed)["t"]
        assert described["count"] == len({_key(a) for a in listed})
        assert all(decisions.satisfies(described, action) for action in listed)
        assert _everything_allowed(described, rng) == {_key(a) for a in listed}


def test_a_key_some_actions_leave_out_is_described_as_one_to_omit() -> None:
    listed = [{"type": "gear", "axle": 0}, {"type": "gear", "axle": 1, "give": "red"}]
    described = decisions.describe_list(listed)["gear"]
    assert decisions.satisfies(described, {"type": "gear", "axle": 0})
    assert not decisions.satisfies(described, {"type": "gear", "axle": 0, "give": "red"})
    assert not decisions.satisfies(described, {"type": "gear", "axle": 1})
    assert _everything_allowed(described, random.Random(3)) == {_key(a) for a in listed}


def test_an_action_outside_the_description_does_not_satisfy_it() -> None:
    described = decisions.describe_list([{"type": "pick", "n": 1}, {"type": "pick", "n": 2}])
    pick = described["pick"]
    assert not decisions.satisfies(pick, {"type": "pick", "n": 3})
    assert not decisions.satisfies(pick, {"type": "pick", "n": True})
    assert not decisions.satisfies(pick, {"type": "pick", "n": 1, "extra": 0})
    assert not decisions.satisfies(pick, {"type": "other", "n": 1})


def test_a_split_counts_and_draws_the_plans_gutenberg_lists() -> None:
    for markers in (7, 8, 10):
        param = decisions.split("rows", ROWS, (0, MAX_PER_ROW), (0, markers))
        plans = {tuple(plan) for plan in _plans(markers)}
        count = decisions.split_count(param)
        assert count == len(plans)
        described = decisions.described("submit_plan", [param], count)
        rng = random.Random(markers)
        for _ in range(300):
            drawn = decisions.sample(described, rng)
            assert tuple(drawn["rows"]) in plans
        assert all(
            decisions.satisfies(described, {"type": "submit_plan", "rows": list(p)}) for p in plans
        )
        too_many = [MAX_PER_ROW, MAX_PER_ROW, 0, 0, 0]
        assert not decisions.satisfies(described, {"type": "submit_plan", "rows": too_many})


def test_choose_counts_what_it_allows() -> None:
    gears = ["G1", "G2", "G3", "G4"]
    for distinct, ordered in product((True, False), repeat=2):
        param = decisions.choose("gears", gears, 2, distinct=distinct, ordered=ordered)
        described = decisions.described("keep", [param], 0)
        drawn = {_key(decisions.sample(described, random.Random(seed))) for seed in range(600)}
        assert len(drawn) == decisions.choose_count(4, 2, distinct=distinct, ordered=ordered)
    keep = decisions.described("keep", [decisions.choose("g", gears, 2, True, True)], 12)
    assert not decisions.satisfies(keep, {"type": "keep", "g": ["G1", "G1"]})
    assert not decisions.satisfies(keep, {"type": "keep", "g": ["G1", "G9"]})
    assert not decisions.satisfies(keep, {"type": "keep", "g": ["G1"]})
    assert decisions.satisfies(keep, {"type": "keep", "g": ["G2", "G1"]})


def test_free_action_types_are_split_from_the_decision() -> None:
    described = decisions.describe_list(
        [{"type": "plan", "n": 1}, {"type": "buy", "letter": "a"}, {"type": "pass"}]
    )
    decision, free = decisions.split_decision(described, {"buy"})
    assert [d["type"] for d in decision] == ["plan", "pass"]
    assert [d["type"] for d in free] == ["buy"]


def test_a_split_with_a_cap_per_part_as_an_object_leaves_out_the_parts_at_zero() -> None:
    stock = {"ore": 1, "gas": 3, "food": 0}
    param = decisions.split(
        "taken", list(stock), (0, 2), (2, 2), most=list(stock.values()), as_object=True
    )
    described = decisions.described("take", [param], decisions.split_count(param))
    expected = [{"ore": 1, "gas": 1}, {"gas": 2}]
    assert described["count"] == len(expected)
    assert _everything_allowed(described, random.Random(5)) == {
        _key({"type": "take", "taken": taken}) for taken in expected
    }
    for refused in ({"ore": 2}, {"gas": 2, "food": 0}, {"food": 2}, {"gas": 1}, [1, 1, 0]):
        assert not decisions.satisfies(described, {"type": "take", "taken": refused}), refused
