"""Marshmallow schemas of every Impendium seat action (each loads the whole action object).

``check_shape`` holds a seat's action to its schema before the reducer reads it (the hard
contract: any malformed input is an IllegalAction and changes nothing), with the refusal
code the reducer gives for a bad value of the same field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate

from projections.action_fields import StrictBoolean
from projections.games.impendium import board
from projections.games.impendium.data import DIPLOMACY, FACTIONS, RESOURCES, STARS
from projections.ruleset import IllegalAction


class WholeMatch(validate.Regexp):
    """A pattern the whole string must match: Python's ``$`` also matches before a final
    newline, so "1,0\n" would pass as "1,0". The pattern itself (``^...$``, ASCII classes
    only) reads the same in a JSON Schema."""

    def __init__(self, regex: str, error: str) -> None:
        super().__init__(regex, error=error)
        self.whole = re.compile(regex)

    def __call__(self, value: Any) -> Any:
        if not isinstance(value, str) or self.whole.fullmatch(value) is None:
            raise ValidationError(self._format_error(value))
        return value


class NotEmpty(validate.Validator):
    """An object holding at least one key. The field's spec says so with ``minProperties``
    in its metadata: apispec would write a ``Length`` as a string's ``minLength``."""

    def __init__(self, error: str) -> None:
        self.message = error

    def __call__(self, value: Any) -> Any:
        if not value:
            raise ValidationError(self.message)
        return value


#: A cell as the board names it (board.CELL): "x,y" in [0-9], no leading zero, no "-0".
CELL = WholeMatch(f"^{board.CELL}$", error="A map cell is written 'x,y', as the map names it.")
SEAT = validate.Range(min=0, max=5)


def _resource(required: bool = True) -> fields.Field:
    return fields.String(required=required, validate=validate.OneOf(RESOURCES))


def _amounts() -> fields.Field:
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(RESOURCES)),
        values=fields.Integer(strict=True, validate=validate.Range(min=1)),
        required=True,
    )


def _slot() -> fields.Field:
    return fields.Integer(required=True, strict=True, validate=validate.Range(min=0))


def _relocate() -> fields.Field:
    """A placed disc lifted to be placed anew: ``map:x,y/slot``, ``project:card/slot`` or
    ``harbinger:x,y/slot``."""
    return fields.String(
        validate=WholeMatch(
            f"^{board.DISC}$",
            error="Name a placed disc: map:x,y/slot, project:card/slot or harbinger:x,y/slot.",
        ),
    )


#: What a client reads of the optional ``substitute`` field of every action that pays a cost.
SUBSTITUTE_DESCRIPTION = (
    'SUB faction ("Substitute up to 2 water to pay the cost of 2 of any other resource"): '
    "which of your SUB tokens pay part of this action's cost, by the token's resource, then "
    'the kinds it stands in for and how many units, e.g. {"water": {"hydrogen": 1, '
    '"artifacts": 1}}. Leave it out to pay in kind. At most the units the token has left '
    "this round, only for kinds the cost demands (never its own), never more than the cost "
    "of a kind, and the token's resource must be in your pool to pay; anything else is "
    "refused with bad_substitution."
)


def _substitute() -> fields.Field:
    """Optional on every action that pays a cost (docs/rules/impendium.md, "SUB 2")."""
    units = fields.Integer(strict=True, validate=validate.Range(min=1))
    kinds = fields.Dict(
        keys=fields.String(validate=validate.OneOf(RESOURCES)),
        values=units,
        validate=NotEmpty("Name a kind the token stands in for."),
        metadata={"minProperties": 1},
    )
    return fields.Dict(
        keys=fields.String(validate=validate.OneOf(RESOURCES)),
        values=kinds,
        validate=NotEmpty("Leave substitute out to pay in kind."),
        metadata={"description": SUBSTITUTE_DESCRIPTION, "minProperties": 1},
    )


def _schema(action_type: str, **extra: fields.Field) -> type[Schema]:
    declared: dict[str, Any] = {
        "type": fields.String(required=True, validate=validate.Equal(action_type))
    }
    declared.update(extra)
    name = "".join(part.title() for part in action_type.split("_")) + "Schema"
    return Schema.from_dict(declared, name=name)


SCHEMAS: dict[str, type[Schema]] = {
    "place_start_star": _schema(
        "place_start_star", position=fields.String(required=True, validate=CELL)
    ),
    "place_setup_colony": _schema(
        "place_setup_colony", position=fields.String(required=True, validate=CELL), slot=_slot()
    ),
    "place_ark": _schema("place_ark", position=fields.String(required=True, validate=CELL)),
    "take_federation_resource": _schema("take_federation_resource", resource=_resource()),
    "move": _schema(
        "move", to=fields.String(required=True, validate=CELL), substitute=_substitute()
    ),
    "attack": _schema("attack", target=fields.Integer(required=True, strict=True, validate=SEAT)),
    "take_spoils": _schema("take_spoils", resources=_amounts()),
    "offer_trade": _schema(
        "offer_trade",
        target=fields.Integer(required=True, strict=True, validate=SEAT),
        give=_amounts(),
        get=_amounts(),
    ),
    "answer_trade": _schema("answer_trade", accept=StrictBoolean(required=True)),
    "build_colony": _schema(
        "build_colony",
        slot=_slot(),
        resource=_resource(required=False),
        relocate=_relocate(),
        substitute=_substitute(),
    ),
    "construct_federation_star": _schema(
        "construct_federation_star",
        project=fields.String(required=True, validate=validate.OneOf(sorted(STARS))),
        slot=_slot(),
        resource=_resource(required=False),
        relocate=_relocate(),
        substitute=_substitute(),
    ),
    "place_star": _schema("place_star", position=fields.String(required=True, validate=CELL)),
    "place_harbinger": _schema(
        "place_harbinger", position=fields.String(required=True, validate=CELL)
    ),
    "battle_harbinger": _schema(
        "battle_harbinger",
        position=fields.String(required=True, validate=CELL),
        slot=_slot(),
        relocate=_relocate(),
        substitute=_substitute(),
    ),
    "recruit_faction": _schema(
        "recruit_faction",
        resource=_resource(),
        replace=fields.String(validate=validate.OneOf(sorted(FACTIONS))),
        substitute=_substitute(),
    ),
    "keep_diplomacy": _schema(
        "keep_diplomacy",
        **{"return": fields.String(required=True, validate=validate.OneOf(sorted(DIPLOMACY)))},
    ),
    "take_ruler": _schema("take_ruler", card=fields.String(required=True)),
    "end_turn": _schema("end_turn"),
    "pass": _schema("pass"),
    "use_faction_ability": _schema(
        "use_faction_ability",
        faction=fields.String(required=True, validate=validate.OneOf(sorted(FACTIONS))),
        target=fields.Integer(required=True, strict=True, validate=SEAT),
    ),
    "trade_with_merchants": _schema("trade_with_merchants", give=_amounts(), get=_amounts()),
    "hire_mercenaries": _schema(
        "hire_mercenaries",
        pay=fields.String(required=True, validate=validate.OneOf(["artifacts", "hydrogen"])),
        target=fields.Integer(required=True, strict=True, validate=SEAT),
        substitute=_substitute(),
    ),
    "play_diplomacy": _schema(
        "play_diplomacy",
        card=fields.String(required=True, validate=validate.OneOf(sorted(DIPLOMACY))),
        target=fields.Integer(strict=True, validate=SEAT),
        resource=_resource(required=False),
        gain=_resource(required=False),
        faction=fields.String(validate=validate.OneOf(sorted(FACTIONS))),
    ),
}


#: The refusal code of a malformed field: the code the reducer gives for a bad value there.
FIELD_CODES = {
    "target": "bad_target",
    "slot": "bad_slot",
    "relocate": "bad_relocation",
    "to": "not_a_step",
    "resources": "bad_spoils",
    "accept": "bad_answer",
    "project": "no_such_project",
    "return": "bad_card",
    "card": "bad_card",
    "resource": "bad_resource",
    "gain": "bad_resource",
    "pay": "bad_mercenary_payment",
    "faction": "faction_not_yours",
    "replace": "must_replace_faction",
    "substitute": "bad_substitution",
}
#: Where an action gives a field's bad value another code than FIELD_CODES.
ACTION_FIELD_CODES = {
    ("place_start_star", "position"): "bad_star_position",
    ("place_setup_colony", "position"): "not_a_map_star",
    ("place_ark", "position"): "bad_ark_position",
    ("place_star", "position"): "bad_star_position",
    ("place_harbinger", "position"): "bad_harbinger_position",
    ("battle_harbinger", "position"): "no_such_harbinger",
    ("recruit_faction", "resource"): "no_such_faction",
    ("build_colony", "resource"): "bad_payment",
    ("construct_federation_star", "resource"): "bad_payment",
    ("offer_trade", "give"): "nothing_for_nothing",
    ("offer_trade", "get"): "nothing_for_nothing",
    ("trade_with_merchants", "give"): "bad_merchant_trade",
    ("trade_with_merchants", "get"): "bad_merchant_trade",
    ("play_diplomacy", "card"): "card_not_in_hand",
    ("play_diplomacy", "faction"): "bad_diplomacy_use",
}
#: A field the action does not take: the action's own misuse code, else ``unknown_field``.
UNKNOWN_FIELD_CODES = {
    "use_faction_ability": "bad_ability_use",
    "play_diplomacy": "bad_diplomacy_use",
}
Check = Callable[[Any], "str | None"]


def _compile(field: fields.Field) -> Check:
    """A fast check of one value against a schema field: its JSON type, then its validators
    (the schema's own); the error message, or None when the value fits."""
    if isinstance(field, fields.Boolean):
        kind: Any = bool
    elif isinstance(field, fields.Integer):
        kind = int
    elif isinstance(field, fields.String):
        kind = str
    elif isinstance(field, fields.Dict):
        kind = dict
    else:  # pragma: no cover - every schema field above is one of these
        raise TypeError(f"no fast check for {type(field).__name__}")
    tests = [(_predicate(validator), validator) for validator in field.validators]
    keys = _compile(field.key_field) if isinstance(field, fields.Dict) and field.key_field else None
    values = (
        _compile(field.value_field)
        if isinstance(field, fields.Dict) and field.value_field
        else None
    )

    def check(value: Any) -> str | None:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return f"Not a valid {kind.__name__}."
        for fits, validator in tests:
            if not fits(value):
                try:
                    validator(value)
                except ValidationError as error:
                    return _first(error.messages)
                return "Invalid value."  # pragma: no cover - the predicate mirrors it
        if kind is dict:
            for key, item in value.items():
                problem = (keys(key) if keys else None) or (values(item) if values else None)
                if problem:
                    return f"{key!r}: {problem}"
        return None

    return check


def _predicate(validator: Any) -> Callable[[Any], bool]:
    """A plain test equal to the marshmallow validator's verdict (its message is only
    needed on failure)."""
    if isinstance(validator, validate.OneOf):
        choices = frozenset(validator.choices)
        return lambda value: value in choices
    if isinstance(validator, WholeMatch):
        whole = validator.whole
        return lambda value: whole.fullmatch(value) is not None
    if isinstance(validator, validate.Regexp):
        pattern = validator.regex
        return lambda value: pattern.match(value) is not None
    if (
        isinstance(validator, validate.Range)
        and validator.min_inclusive
        and validator.max_inclusive
    ):
        low = validator.min if validator.min is not None else -math.inf
        high = validator.max if validator.max is not None else math.inf
        return lambda value: low <= value <= high
    if isinstance(validator, validate.Equal):
        wanted = validator.comparable
        return lambda value: value == wanted

    def passes(value: Any) -> bool:
        try:
            validator(value)
        except ValidationError:
            return False
        return True

    return passes


def _spec(schema: type[Schema]) -> tuple[frozenset[str], list[tuple[str, bool, Check]]]:
    declared = schema().fields
    checks = [(name, field.required, _compile(field)) for name, field in declared.items()]
    return frozenset(declared) | {"seat"}, checks


#: action type -> (the keys it may hold, (field, required, check) in declared order).
_SPECS = {kind: _spec(schema) for kind, schema in SCHEMAS.items()}


def shape_problem(kind: str, action: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) of the first field in declared order that does not fit, then of an
    unknown field ("" as the field), or None. Agrees with the marshmallow schema's load
    (tests/unit/impendium/test_contract.py), at a fraction of its cost per fold step."""
    allowed, checks = _SPECS[kind]
    for name, required, check in checks:
        if name in action:
            problem = check(action[name])
            if problem is not None:
                return name, problem
        elif required:
            return name, "Missing data for required field."
    for key in action:
        if key not in allowed:
            return "", f"{kind} takes no field {key!r}; it takes {', '.join(sorted(allowed))}."
    return None


def check_shape(kind: str, action: dict[str, Any]) -> None:
    """Raise IllegalAction unless ``action`` (a seat's, ``seat`` aside) fits its schema:
    every required field, no other, each of its type (a boolean is no integer)."""
    found = shape_problem(kind, action)
    if found is None:
        return
    field, message = found
    if not field:
        raise IllegalAction(UNKNOWN_FIELD_CODES.get(kind, "unknown_field"), message)
    code = ACTION_FIELD_CODES.get((kind, field), FIELD_CODES.get(field, "bad_action"))
    raise IllegalAction(code, f"{kind}: {field}: {message}")


def _first(message: Any) -> str:
    """The first message of a marshmallow error tree."""
    while isinstance(message, (list, dict)):
        message = next(iter(message.values() if isinstance(message, dict) else message), "")
    return str(message)
