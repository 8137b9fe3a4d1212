"""Marshmallow schemas of every action a seat may post (one per action type)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, validate

from projections.action_fields import StrictBoolean
from projections.games.impression import data


def _int(low: int, high: int, none: bool = False) -> fields.Integer:
    return fields.Integer(
        required=True, strict=True, allow_none=none, validate=validate.Range(low, high)
    )


def _one_of(choices: list[str], none: bool = False) -> fields.String:
    return fields.String(required=True, allow_none=none, validate=validate.OneOf(choices))


def _text() -> fields.String:
    return fields.String(required=True)


_LEVEL = list(data.LEVELS)
_SPACES = list(data.WORKSHOP)
_PLACEMENT = {
    "space": lambda: _one_of(_SPACES),
    "mode": lambda: _one_of(["up", "down", "replace"]),
    "relocate": lambda: _one_of(_SPACES, none=True),
}

FIELDS: dict[str, dict[str, Any]] = {
    # before the first round: where the tradesmen start
    "place_tradesman": {"shop": lambda: _one_of(list(data.SHOPS))},
    # Action Phase
    "shop": {
        "tradesman": lambda: _int(0, 1),
        "path": lambda: fields.List(fields.String(), required=True),
        "room": lambda: _one_of(["I", "II"]),
    },
    "reset": {
        "slot": lambda: _int(0, 3, none=True),
        "keep": lambda: _int(0, 1, none=True),
        "lay_down": lambda: _int(0, 1),
    },
    "end_turn": {},
    # Optional Actions
    "signboard_white": {},
    "signboard_red": {},
    "signboard_blue": {},
    "activate_contract": {"contract": _text, "slot": lambda: _int(0, 3)},
    "use_city_disc": {"disc": _text},
    # the pair icon: at any time
    "pair_city_tile": {"disc": _text, "cell": lambda: _int(0, 8)},
    # Order and Contract Phase (and the buy icon)
    "buy_order": {"slot": lambda: _int(0, 4)},
    "buy_contract": {"slot": lambda: _int(0, 4)},
    "pass_buying": {},
    # Production Phase (and the advance-order icon)
    "advance_order": {"order": _text},
    "end_production": {},
    # answers to an icon's choice
    "decline": {},
    "choose_resource": {"resource": lambda: _one_of(data.RESOURCES)},
    "use_letter": {"stack": lambda: _int(0, 1)},
    "refresh_trading_tiles": {},
    "trade_convert": {
        "give": lambda: _one_of(data.RESOURCES),
        "take": lambda: fields.List(
            fields.String(validate=validate.OneOf(data.RESOURCES)),
            required=True,
            validate=validate.Length(equal=2),
        ),
    },
    "trade_tile": {
        "tile": _text,
        "reverse": lambda: StrictBoolean(required=True),
        "times": lambda: _int(1, 9),
    },
    "typeset_on_stick": {"stack": lambda: _int(0, 1), "cell": lambda: _int(0, 8)},
    "typeset_under_contract": {"stack": lambda: _int(0, 1), "contract": _text},
    "reposition_letter": {"stack": lambda: _int(0, 1), "cell": lambda: _int(0, 8)},
    "place_assistant": {
        "street": _text,
        "reward": lambda: _one_of(["paper", "lead", "ink", "mark", "capacity"]),
    },
    "choose_signboard_action": {"action": lambda: _one_of(["workforce", "travel", "technology"])},
    "take_city_tile": {"city": lambda: _one_of(data.CITIES)},
    "move_down": {"tradesman": lambda: _int(0, 1)},
    "act_first": {"tradesman": lambda: _int(0, 1)},
    "discard_desk_letter": {"slot": lambda: _int(0, 3)},
    "gain_letter": {"slot": lambda: _int(0, 3), "stack": lambda: _int(0, 1)},
    "travel": {
        "track_steps": lambda: _int(0, data.TRACK_SECTIONS),
        "path": lambda: fields.List(fields.String(), required=True),
    },
    "refresh_technologies": {"level": lambda: _one_of(_LEVEL)},
    "return_technologies": {
        "order": lambda: fields.List(
            fields.String(), required=True, validate=validate.Length(min=1, max=3)
        )
    },
    "buy_technology": {"level": lambda: _one_of(_LEVEL), "row": lambda: _int(0, 2), **_PLACEMENT},
    "draw_factories": {"level": lambda: _one_of(_LEVEL)},
    "keep_factory": {"factory": _text, **_PLACEMENT},
    "stop_action": {"action": lambda: _one_of(["trade", "build_factory"])},
}

ACTION_TYPES = frozenset(FIELDS)
OPTIONAL_TYPES = frozenset(
    [
        "signboard_white",
        "signboard_red",
        "signboard_blue",
        "activate_contract",
        "use_city_disc",
    ]
)
#: answers that resolve only automatic effects afterwards, so they never draw a tile
NEVER_DRAW = frozenset(
    [
        "end_turn",
        "pass_buying",
        "end_production",
        "decline",
        "choose_resource",
        "use_letter",
        "place_assistant",
        "pair_city_tile",
        "choose_signboard_action",
        "place_tradesman",
        "return_technologies",
        "act_first",
    ]
)


def _schema(kind: str, spec: dict[str, Any]) -> type[Schema]:
    built: dict[str, fields.Field[Any]] = {
        "type": fields.String(required=True, validate=validate.Equal(kind))
    }
    built.update({name: make() for name, make in spec.items()})
    name = "".join(part.title() for part in kind.split("_")) + "Schema"
    return Schema.from_dict(built, name=name)


SCHEMAS: dict[str, type[Schema]] = {kind: _schema(kind, spec) for kind, spec in FIELDS.items()}


def shape_errors(action: dict[str, Any]) -> dict[str, Any] | None:
    """What is wrong with the shape of a seat's action of a known type (``seat`` aside),
    or None: every key of its schema and no other, each value of its field's JSON type
    (strictly: a boolean is never a number, a number never a boolean). Values (ranges,
    names, list lengths) are left to rules.py, which refuses them with their own codes.

    The schema decides; a quick check derived from its fields first passes the common
    well-formed action without a marshmallow load (every action of a replay goes through
    here: docs/rules/impression.md, Tests and benchmark)."""
    kind = action["type"]
    quick = _QUICK.get(kind)
    if quick is not None:
        names, checks = quick
        if action.keys() - _ENVELOPE == names and all(ok(action[key]) for key, ok in checks):
            return None
    body = {key: value for key, value in action.items() if key != "seat"}
    errors: dict[str, Any] = _SHAPES[kind].validate(body)
    return errors or None


Check = Callable[[Any], bool]
_ENVELOPE = frozenset(["type", "seat"])


def _quick_check(field: fields.Field[Any]) -> Check | None:
    """A test that a value surely has ``field``'s shape (never passing one the field
    refuses), or None when the field is of a kind this does not know."""
    ok: Check
    if isinstance(field, fields.Boolean):
        ok = _is_bool
    elif isinstance(field, fields.Integer):
        ok = _is_int
    elif isinstance(field, fields.String):
        ok = _is_str
    elif isinstance(field, fields.List):
        inner = _quick_check(field.inner)
        if inner is None:
            return None
        ok = _list_of(inner)
    else:
        return None
    return _or_none(ok) if field.allow_none else ok


def _is_bool(value: Any) -> bool:
    return value is True or value is False


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_str(value: Any) -> bool:
    return type(value) is str


def _list_of(inner: Check) -> Check:
    return lambda value: type(value) is list and all(map(inner, value))


def _or_none(ok: Check) -> Check:
    return lambda value: value is None or ok(value)


def _quick(schema: Schema) -> tuple[frozenset[str], list[tuple[str, Check]]] | None:
    """The schema's keys (``type`` aside) and each one's quick check, or None if a field
    has none or may be left out (the schema alone decides those actions)."""
    checks: list[tuple[str, Check]] = []
    for name, field in schema.fields.items():
        check = _quick_check(field)
        if name != "type" and (check is None or not field.required):
            return None
        if name != "type" and check is not None:
            checks.append((name, check))
    return frozenset(name for name, _ in checks), checks


def _shape_only(schema: Schema) -> Schema:
    """``schema`` (a fresh instance, so the class is untouched) without value validators."""
    for field in schema.fields.values():
        field.validators = []
        if isinstance(field, fields.List):
            field.inner.validators = []
    return schema


#: the shape of each action, built once (building a marshmallow Schema is slow)
_SHAPES: dict[str, Schema] = {kind: _shape_only(schema()) for kind, schema in SCHEMAS.items()}
_QUICK = {kind: quick for kind, shape in _SHAPES.items() if (quick := _quick(shape)) is not None}
