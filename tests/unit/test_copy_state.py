"""``copy_state``: a deep copy of a state, through orjson where the value is plain JSON and
through pickle where it is not, equal to the original and sharing nothing with it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.fold import copy_state
from tests.json_strategies import json_values

#: What states are made of (the ruleset contract: they round-trip through JSON exactly).
states = json_values(
    st.integers(min_value=-(2**63), max_value=2**64 - 1), max_size=5, max_key_size=6, max_leaves=30
)


def containers(value: Any) -> list[Any]:
    """Every list and dict inside ``value``, itself included."""
    found = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            found.append(item)
            pending.extend(item)
    return found


def same_types(left: Any, right: Any) -> bool:
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same_types(left[key], right[key]) for key in left)
    if isinstance(left, list):
        return all(same_types(a, b) for a, b in zip(left, right, strict=True))
    return True


@settings(max_examples=400, deadline=None)
@given(states)
def test_a_copy_is_equal_in_value_type_and_key_order_and_shares_nothing(state: Any) -> None:
    copy = copy_state(state)
    assert copy == state
    assert same_types(copy, state)
    originals = {id(item) for item in containers(state)}
    assert not originals & {id(item) for item in containers(copy)}


def test_changing_the_copy_leaves_the_state_alone() -> None:
    state = {"players": [{"hand": [1, 2], "score": 3}], "round": 1}
    copy = copy_state(state)
    copy["players"][0]["hand"].append(9)
    copy["round"] = 2
    assert state == {"players": [{"hand": [1, 2], "score": 3}], "round": 1}


class Colour(str):
    """A str subclass (a state holds none; pickle keeps its type)."""


def test_what_is_not_plain_json_is_copied_exactly_by_pickle() -> None:
    for value in (
        {1: "an integer key"},
        {"huge": 2**70},
        {"colour": Colour("red")},
        {"mixed": [{2: [3]}]},
    ):
        copy = copy_state(value)
        assert copy == value
        assert same_types(copy, value), value
