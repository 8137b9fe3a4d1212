"""Hypothesis strategies for JSON-shaped values: what states, views and answers are made of."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def json_values(
    integers: st.SearchStrategy[int] | None = None,
    *,
    floats: bool = True,
    max_size: int | None = None,
    max_key_size: int | None = None,
    max_leaves: int = 20,
) -> st.SearchStrategy[Any]:
    """Nested lists and string-keyed dicts of null, booleans, ``integers`` (default: any),
    finite floats (unless ``floats`` is False) and strings."""
    leaves = st.none() | st.booleans() | (integers if integers is not None else st.integers())
    if floats:
        leaves |= st.floats(allow_nan=False, allow_infinity=False)
    leaves |= st.text()
    return st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=max_size)
            | st.dictionaries(st.text(max_size=max_key_size), children, max_size=max_size)
        ),
        max_leaves=max_leaves,
    )
