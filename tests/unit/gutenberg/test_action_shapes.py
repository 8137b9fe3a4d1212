"""The shape check ``apply`` runs first (only IllegalAction, for any input: docs/architecture.md)
agrees with the action schemas stripped of their value validators, and refuses what a fuzzing
review found crashing or passing for a number."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.fold import copy_state
from projections.games.gutenberg import actions
from projections.games.gutenberg.rules import GUTENBERG
from projections.ruleset import IllegalAction
from tests.sim.apply_contract import collect_positions, mutations
from tests.unit.gutenberg.helpers import act, at_row, in_round, refused

_FIELDS = sorted(
    {name for shape in actions._SHAPES.values() for name in shape.fields}
    | {"slot", "colours", "decorations", "letter"}
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(_FIELDS) | st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=8,
)


def _agree(body):
    kind = body["type"]
    fast = actions._SHAPE_CHECKS[kind](body)
    assert fast == (not actions._SHAPES[kind].validate(body)), body


@settings(max_examples=200, derandomize=True, database=None)
@given(
    st.sampled_from(sorted(actions.SCHEMAS)),
    st.dictionaries(st.sampled_from(_FIELDS), _JSON, max_size=5),
)
def test_the_fast_shape_check_agrees_with_the_schemas_on_any_json(kind, body):
    _agree({**body, "type": kind})


def test_the_fast_shape_check_agrees_with_the_schemas_on_mutated_legal_actions():
    types = sorted(actions.SCHEMAS)
    for position in collect_positions(GUTENBERG, 3, None, 1, 12):
        for legal in position.legal.values():
            for action in {a["type"]: a for a in legal}.values():
                _agree(action)
                for mutant in mutations(action, types):
                    kind = mutant.action.get("type")
                    if isinstance(kind, str) and kind in actions.SCHEMAS:
                        _agree(mutant.action)


@pytest.mark.parametrize(
    "action",
    [
        {"type": "take_inks", "set": True, "count": 1},
        {"type": "take_inks", "set": 0, "count": 1.0},
        {"type": "take_order", "refinement": "R01", "discard_slot": None},
        {"type": "take_order", "printing": "P01", "refinement": "R01", "discard_slot": False},
        {"type": "take_inks", "set": 0, "count": 1, "extra": 1},
    ],
)
def test_an_action_of_the_wrong_shape_is_refused_before_any_rule_is_checked(action):
    """Found by fuzzing: "booleans pass as integers, take_inks{set: True} counts as set 1";
    "take_order without printing" raised KeyError."""
    state = at_row(in_round(), "orders" if action["type"] == "take_order" else "inks")
    assert refused(state, 0, action) == "malformed_action"


@pytest.mark.parametrize(
    ("row", "action"),
    [
        ("patronage", {"type": "patronage_reward", "reward": []}),
        ("patronage", {"type": "patronage_reward"}),
        ("fulfill", {"type": "fulfill_orders", "orders": [{"slot": 0, "colours": 1}]}),
    ],
)
def test_malformed_rewards_and_batches_are_refused(row, action):
    """Found by fuzzing: "patronage_reward with reward: []" raised TypeError."""
    assert refused(at_row(in_round(), row), 0, action) == "malformed_action"


def test_a_malformed_redraw_is_refused_while_the_order_choice_is_open():
    """Found by fuzzing: "redraw_order with cards: []" raised TypeError."""
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "order"}, seed=3)
    assert refused(state, 0, {"type": "redraw_order", "cards": []}) == "malformed_action"


@pytest.mark.parametrize("action", [None, [], "pass", 0, {"seat": 0}])
def test_anything_but_an_action_object_is_refused(action):
    state = in_round()
    before = copy_state(state)
    with pytest.raises(IllegalAction):
        GUTENBERG.apply(state, action, random.Random(0))
    assert state == before
