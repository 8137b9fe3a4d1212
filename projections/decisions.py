"""Describing a decision: each action type's parameters as they stand now (docs/api.md,
"Decisions").

A seat's legal actions can be thousands long (Gutenberg's plans). A client building a form,
and a bot sampling a move, need the *shape* of the choice instead: for each action type the
allowed values of each parameter. A **type description** is plain JSON::

    {"type": "move_marker", "count": 12, "exact": true,
     "params": [{"name": "from_row", "kind": "enum", "values": ["orders", "inks"]},
                {"name": "to_row", "kind": "enum", "depends_on": ["from_row"],
                 "cases": [{"when": {"from_row": "orders"}, "values": ["inks"]}, ...]}]}

``params`` are in order: a parameter depends only on parameters before it, so a form fills
them top-down and a sampler draws them in turn. Kinds of parameter:

- ``enum``: one of ``values``;
- ``range``: an integer from ``min`` to ``max`` (inclusive);
- ``choose``: a list of ``count`` items out of ``from``; ``distinct`` (no item twice) and
  ``ordered`` (another order is another action; unordered lists are accepted in any order);
- ``split``: a list of integers, one per label of ``parts`` (in that order), each from
  ``min_each`` to ``max_each`` (and at most its ``max_per_part`` entry, when given), adding
  up to between ``total_min`` and ``total_max``; with ``"object": true`` an object of
  ``part: integer`` instead, leaving out the parts at 0.

An ``enum`` (or a ``case`` of one) with ``"omit": true`` allows leaving the key out. A
dependent parameter lists ``cases``: ``when`` gives the values of the ``depends_on``
parameters (a name missing from ``when`` means that key is left out); each case is an
``enum``, ``range``, ``choose`` or ``split`` of its own (``kind`` defaults to ``enum``).

``count`` is the number of concrete actions of the type; ``exact`` says that every action the
description allows is legal now (false: it may allow more, and the list decides).

``describe_list`` derives exact descriptions from a concrete list, for any game; a game
describes a huge choice itself (``Ruleset.describe_actions``) with the builders here.
``satisfies`` and ``sample`` read descriptions (tests, bots).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any, Protocol

Action = dict[str, Any]
Description = dict[str, Any]
Param = dict[str, Any]


class Rules(Protocol):
    """What ``answer`` asks of a ruleset (``projections.ruleset.Ruleset`` has it all)."""

    @property
    def free_action_types(self) -> frozenset[str]: ...

    def status(self, state: dict[str, Any]) -> dict[str, Any]: ...

    def legal_actions(self, state: dict[str, Any], seat: int) -> list[Action]: ...

    def describe_actions(self, state: dict[str, Any], seat: int) -> dict[str, Description]: ...


#: A dependent parameter depends on at most this many earlier ones before it depends on all
#: of them (which is always exact: the description is then the list as a tree).
_MAX_DEPENDS = 2
#: Consecutive integers are described as a ``range`` from this many on.
_RANGE_FROM = 3
_ABSENT = "\x00absent"  # the key of an omitted value (no JSON text starts with a NUL)


# -- descriptions from a concrete list --------------------------------------------------------


def describe_list(actions: Iterable[Action]) -> dict[str, Description]:
    """action type -> its exact description, from the concrete legal actions (any game).

    Per type, each parameter's allowed values are the values seen; a parameter whose values
    change with earlier ones lists them per case of the fewest earlier parameters that make
    the description exact (allow nothing the list does not hold)."""
    by_type: dict[str, list[Action]] = {}
    for action in actions:
        by_type.setdefault(str(action["type"]), []).append(action)
    return {kind: describe_type(kind, listed) for kind, listed in by_type.items()}


def describe_type(kind: str, actions: Sequence[Action]) -> Description:
    """The exact description of the concrete actions of one type (see ``describe_list``)."""
    names: list[str] = []
    for action in actions:
        names.extend(key for key in action if key != "type" and key not in names)
    values: dict[str, Any] = {}  # encoded value -> the value
    rows: list[tuple[str, ...]] = []
    seen: set[tuple[str, ...]] = set()
    for action in actions:
        row = tuple(_encode(action, name, values) for name in names)
        if row not in seen:
            seen.add(row)
            rows.append(row)
    params = [_describe_param(names, index, rows, values) for index in range(len(names))]
    return {"type": kind, "count": len(rows), "exact": True, "params": params}


def _encode(action: Action, name: str, values: dict[str, Any]) -> str:
    if name not in action:
        return _ABSENT
    key = json.dumps(action[name], sort_keys=True, separators=(",", ":"))
    values.setdefault(key, action[name])
    return key


def _describe_param(
    names: list[str], index: int, rows: list[tuple[str, ...]], values: dict[str, Any]
) -> Param:
    """Parameter ``index``: free, or dependent on the fewest earlier parameters that keep the
    description of parameters 0..index exactly the list's."""
    prefixes = {row[:index] for row in rows}
    extended = len({row[: index + 1] for row in rows})
    for depends in _candidate_dependencies(index):
        groups: dict[tuple[str, ...], dict[str, None]] = {}  # an ordered set per case
        for row in rows:
            groups.setdefault(tuple(row[j] for j in depends), {})[row[index]] = None
        allowed = sum(len(groups[tuple(prefix[j] for j in depends)]) for prefix in prefixes)
        if allowed == extended:
            break
    name = names[index]
    if not depends:
        return {"name": name, "kind": "enum", **_values_rule(groups[()], values)}
    cases = [
        {
            "when": {
                names[j]: values[key]
                for j, key in zip(depends, when, strict=True)
                if key != _ABSENT
            },
            **_values_rule(found, values),
        }
        for when, found in groups.items()
    ]
    return {"name": name, "kind": "enum", "depends_on": [names[j] for j in depends], "cases": cases}


def _candidate_dependencies(index: int) -> list[tuple[int, ...]]:
    earlier = range(index)
    found: list[tuple[int, ...]] = []
    for size in range(min(_MAX_DEPENDS, index) + 1):
        found.extend(combinations(earlier, size))
    if index > _MAX_DEPENDS:
        found.append(tuple(earlier))
    return found


def _values_rule(keys: Iterable[str], values: dict[str, Any]) -> dict[str, Any]:
    """The rule allowing the encoded values ``keys`` (and ``omit`` for an absent key): a
    ``range`` when they are 3 or more consecutive integers, else their ``values``."""
    listed = list(keys)
    allowed = [values[key] for key in listed if key != _ABSENT]
    described: dict[str, Any] = {"values": allowed}
    if len(allowed) >= _RANGE_FROM and all(_is_int(value) for value in allowed):
        low, high = min(allowed), max(allowed)
        if high - low + 1 == len(allowed):
            described = {"kind": "range", "min": low, "max": high}
    if _ABSENT in listed:
        described["omit"] = True
    return described


# -- builders a game uses for a choice it describes itself ------------------------------------


def enum(name: str, values: Sequence[Any]) -> Param:
    """One of ``values``."""
    return {"name": name, "kind": "enum", "values": list(values)}


def integer_range(name: str, low: int, high: int) -> Param:
    """An integer from ``low`` to ``high`` inclusive."""
    return {"name": name, "kind": "range", "min": low, "max": high}


def choose(name: str, items: Sequence[Any], count: int, distinct: bool, ordered: bool) -> Param:
    """A list of ``count`` of ``items`` ("choose 2 of these 4")."""
    return {
        "name": name,
        "kind": "choose",
        "from": list(items),
        "count": count,
        "distinct": distinct,
        "ordered": ordered,
    }


def split(
    name: str,
    parts: Sequence[str],
    each: tuple[int, int],
    total: tuple[int, int],
    most: Sequence[int] | None = None,
    as_object: bool = False,
) -> Param:
    """One integer per label of ``parts``, each within ``each`` (and at most its entry of
    ``most``), adding up within ``total`` ("split up to 7 markers among these 5 rows"); as
    an object of the parts not at 0 with ``as_object``."""
    param: Param = {
        "name": name,
        "kind": "split",
        "parts": list(parts),
        "min_each": each[0],
        "max_each": each[1],
        "total_min": total[0],
        "total_max": total[1],
    }
    if most is not None:
        param["max_per_part"] = list(most)
    if as_object:
        param["object"] = True
    return param


def described(kind: str, params: list[Param], count: int, exact: bool = True) -> Description:
    """A type description a game builds itself."""
    return {"type": kind, "count": count, "exact": exact, "params": params}


def choose_count(items: int, count: int, distinct: bool, ordered: bool) -> int:
    """How many lists ``choose`` allows."""
    if distinct:
        return math.perm(items, count) if ordered else math.comb(items, count)
    return items**count if ordered else math.comb(items + count - 1, count)


def split_count(param: Param) -> int:
    """How many values a ``split`` allows (counted by the sums reachable part by part)."""
    ways = {0: 1}
    for low, high in _part_bounds(param):
        following: dict[int, int] = {}
        for reached, number in ways.items():
            for value in range(low, high + 1):
                following[reached + value] = following.get(reached + value, 0) + number
        ways = following
    return sum(
        number
        for reached, number in ways.items()
        if param["total_min"] <= reached <= param["total_max"]
    )


def _part_bounds(rule: dict[str, Any]) -> list[tuple[int, int]]:
    """Each part's least and greatest integer in a ``split``."""
    most = rule.get("max_per_part") or [rule["max_each"]] * len(rule["parts"])
    return [(rule["min_each"], min(rule["max_each"], high)) for high in most]


# -- reading descriptions -------------------------------------------------------------------


def satisfies(description: Description, action: Action) -> bool:
    """Whether ``action`` (without ``seat``) is one the type description allows."""
    if action.get("type") != description["type"]:
        return False
    names = {param["name"] for param in description["params"]}
    if any(key not in names for key in action if key != "type"):
        return False
    return all(_param_allows(param, action) for param in description["params"])


def _param_allows(param: Param, action: Action) -> bool:
    rule = _rule_for(param, action)
    if rule is None:
        return False
    name = param["name"]
    if name not in action:
        return bool(rule.get("omit"))
    return _value_allowed(rule, action[name])


def _rule_for(param: Param, action: Action) -> dict[str, Any] | None:
    """The rule of ``param`` given the action's earlier values: the param itself, or its case."""
    if "cases" not in param:
        return param
    for case in param["cases"]:
        if all(
            (name in case["when"]) == (name in action)
            and (name not in action or _same(case["when"][name], action[name]))
            for name in param["depends_on"]
        ):
            return dict(case)
    return None


def _same(first: Any, second: Any) -> bool:
    """Equal as JSON values (a boolean is not a number)."""
    if type(first) is not type(second):
        return False
    if isinstance(first, list | dict):
        return json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    return bool(first == second)


def _value_allowed(rule: dict[str, Any], value: Any) -> bool:
    kind = rule.get("kind", "enum")
    if kind == "enum":
        return any(_same(value, allowed) for allowed in rule["values"])
    if kind == "range":
        return _is_int(value) and rule["min"] <= value <= rule["max"]
    if kind == "choose":
        return _chosen(rule, value)
    if kind == "split":
        amounts = _split_amounts(rule, value)
        return (
            amounts is not None
            and all(
                _is_int(n) and low <= n <= high
                for n, (low, high) in zip(amounts, _part_bounds(rule), strict=True)
            )
            and rule["total_min"] <= sum(amounts) <= rule["total_max"]
        )
    return False


def _split_amounts(rule: dict[str, Any], value: Any) -> list[Any] | None:
    """A split's value as one amount per part, or None when it has not that shape."""
    parts = rule["parts"]
    if not rule.get("object"):
        return value if isinstance(value, list) and len(value) == len(parts) else None
    if not isinstance(value, dict) or any(part not in parts for part in value):
        return None
    if any(not _is_int(n) or n == 0 for n in value.values()):  # parts at 0 are left out
        return None
    return [value.get(part, 0) for part in parts]


def _chosen(rule: dict[str, Any], value: Any) -> bool:
    if not isinstance(value, list) or len(value) != rule["count"]:
        return False
    pool = [json.dumps(item, sort_keys=True) for item in rule["from"]]
    picked = [json.dumps(item, sort_keys=True) for item in value]
    if any(item not in pool for item in picked):
        return False
    return not rule["distinct"] or len(set(picked)) == len(picked)


def _is_int(value: Any) -> bool:
    return type(value) is int


def sample(description: Description, rng: random.Random) -> Action:
    """A random action the type description allows (uniform per parameter, in order); for an
    exact description it is a legal action."""
    action: Action = {"type": description["type"]}
    for param in description["params"]:
        rule = _rule_for(param, action)
        if rule is None:  # pragma: no cover - a description built here always has a case
            raise ValueError(f"no case of {param['name']} fits {action}")
        choices = _choices_count(rule)
        if rule.get("omit") and rng.randrange(choices + 1) == choices:
            continue
        action[param["name"]] = _draw(rule, rng)
    return action


def _choices_count(rule: dict[str, Any]) -> int:
    kind = rule.get("kind", "enum")
    return len(rule["values"]) if kind == "enum" else 1


def _draw(rule: dict[str, Any], rng: random.Random) -> Any:
    kind = rule.get("kind", "enum")
    if kind == "enum":
        return rng.choice(rule["values"])
    if kind == "range":
        return rng.randint(rule["min"], rule["max"])
    if kind == "choose":
        items = list(rule["from"])
        if rule["distinct"]:
            picked = rng.sample(items, rule["count"])
        else:
            picked = [rng.choice(items) for _ in range(rule["count"])]
        return picked if rule["ordered"] else sorted(picked, key=items.index)
    return _draw_split(rule, rng)


def _draw_split(rule: dict[str, Any], rng: random.Random) -> Any:
    """A split drawn part by part, each value among those that still reach the total."""
    bounds = _part_bounds(rule)
    drawn: list[int] = []
    for index, (low, high) in enumerate(bounds):
        rest = bounds[index + 1 :]
        least = sum(drawn) + sum(lo for lo, _ in rest)
        most = sum(drawn) + sum(hi for _, hi in rest)
        fitting = [
            value
            for value in range(low, high + 1)
            if least + value <= rule["total_max"] and most + value >= rule["total_min"]
        ]
        drawn.append(rng.choice(fitting))
    if rule.get("object"):
        return {part: n for part, n in zip(rule["parts"], drawn, strict=True) if n}
    return drawn


# -- the legal-actions answer ---------------------------------------------------------------


def split_decision(
    descriptions: dict[str, Description], free_types: Iterable[str]
) -> tuple[list[Description], list[Description]]:
    """The descriptions of the decision awaited and those of the free actions, apart."""
    free = set(free_types)
    decision = [d for kind, d in descriptions.items() if kind not in free]
    extra = [d for kind, d in descriptions.items() if kind in free]
    return decision, extra


def answer(
    ruleset: Rules, state: dict[str, Any], seat: int | None, start: int, limit: int, listed: bool
) -> dict[str, Any]:
    """The legal-actions answer of ``seat`` (None: a spectator, nothing to do): the decision
    awaited and the free actions described apart, and a page of the complete list from
    ``start`` (``next_start`` None on the last page; no page when not ``listed``)."""
    status = ruleset.status(state)
    actions: list[Action] = []
    descriptions: dict[str, Description] = {}
    if seat is not None and not status.get("awaiting_system") and not status.get("finished"):
        actions = ruleset.legal_actions(state, seat)
        descriptions = ruleset.describe_actions(state, seat)
    decision, free = split_decision(descriptions, ruleset.free_action_types)
    end = start + limit
    return {
        "decision": {"types": decision},
        "free_actions": {"types": free},
        "actions": actions[start:end] if listed else [],
        "total": len(actions),
        "next_start": end if listed and end < len(actions) else None,
    }
