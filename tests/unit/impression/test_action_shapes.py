"""The shape check ``apply`` runs first: the marshmallow schema decides, the quick check
that spares a load never passes a shape the schema refuses."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import fields

from projections.games.impression import actions

VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**65), 2**65)
    | st.floats(allow_nan=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


def near(field: fields.Field[Any]) -> st.SearchStrategy[Any]:
    """Values of the field's type and of the types closest to it (bool for int, ...)."""
    close = st.none() | st.booleans() | st.integers(-2, 2) | st.floats(-2, 2) | st.text(max_size=3)
    if isinstance(field, fields.List):
        return st.lists(near(field.inner), max_size=3) | close | VALUES
    return close | VALUES


@st.composite
def bodies(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(actions.SCHEMAS)))
    named = {name: f for name, f in actions.SCHEMAS[kind]().fields.items() if name != "type"}
    keys = draw(st.lists(st.sampled_from([*named, "extra"]), unique=True))
    if draw(st.booleans()):
        keys = list(named)  # every key: the values alone decide
    return {
        "type": kind,
        **{key: draw(near(named[key]) if key in named else VALUES) for key in keys},
    }


@settings(max_examples=600, derandomize=True, database=None, deadline=None)
@given(bodies(), st.sampled_from([0, 1, None]))
def test_the_quick_check_agrees_with_the_schema(body: dict[str, Any], seat: Any) -> None:
    schema = actions._shape_only(actions.SCHEMAS[body["type"]]())
    expected = schema.validate(body) or None
    assert actions.shape_errors({**body, "seat": seat}) == expected


def test_every_action_type_has_a_quick_check() -> None:
    assert set(actions._QUICK) == set(actions.SCHEMAS)
