"""The lines a seat reads for its own candidate actions (an analysis's candidates, a review's
moves): each game's own ``summarize_own`` line, told apart where two candidates read the same.

A game's timeline line says what everyone may know of an action, so several actions may share
one ("installed gear G10" at each rotation). Where they do, each gets the parameters in which
it differs from the others that read the same, in the action's own words ("rotation 1"), so
no two candidates of one decision read alike. No rule is known here: only the actions.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from projections.ruleset import Action, Ruleset, State


def own_line(ruleset: Ruleset, state: State, seat: int, action: Action) -> str:
    """The game's line for ``seat``'s own ``action`` in ``state``, else the action's fields
    (a line is a courtesy: the action says all)."""
    try:
        return str(ruleset.summarize_own(state, {**action, "seat": seat}))
    except Exception:
        return _fields(action, sorted(action))


def candidate_lines(ruleset: Ruleset, state: State, seat: int, actions: list[Action]) -> list[str]:
    """One line for each of ``seat``'s ``actions``, no two alike unless the actions are."""
    lines = [own_line(ruleset, state, seat, action) for action in actions]
    alike: dict[str, list[int]] = defaultdict(list)
    for index, line in enumerate(lines):
        alike[line].append(index)
    for indexes in alike.values():
        if len(indexes) < 2:
            continue
        group = [actions[i] for i in indexes]
        names = sorted({name for action in group for name in action})
        differing = [n for n in names if len({_text(a.get(n)) for a in group}) > 1]
        for index in indexes:
            lines[index] = f"{lines[index]} ({_fields(actions[index], differing)})"
    return lines


def _fields(action: Action, names: list[str]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {_text(action.get(name))}" for name in names)


def _text(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return "[" + ", ".join(_text(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k.replace('_', ' ')} {_text(v)}" for k, v in value.items()) + "}"
    return str(value)
