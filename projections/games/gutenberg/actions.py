"""Marshmallow schemas of every Gutenberg seat action (each loads the whole action object).

Shapes only: whether an action is legal now is for rules.py to say, with its own codes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from marshmallow import Schema, fields, validate

from projections.action_fields import StrictBoolean
from projections.games.gutenberg import data

_SPECIALTY = validate.OneOf(data.SPECIALTIES)
_INK = validate.OneOf(data.INKS)
_TYPE = validate.OneOf(data.TYPES)
_ROWS = validate.OneOf(("orders", "inks", "specialties", "gears", "patronage"))
_ROTATION = validate.Range(0, data.SECTORS_PER_GEAR - 1)
_AXLE = validate.Range(0, 2)


def _type(name: str) -> Any:
    return fields.String(required=True, validate=validate.Equal(name))


def _int(**kwargs: Any) -> Any:
    return fields.Integer(strict=True, **kwargs)


class ChooseCharacterSchema(Schema):
    type = _type("choose_character")
    character = fields.String(required=True, validate=validate.OneOf(sorted(data.CHARACTERS)))


class DraftOrderSchema(Schema):
    type = _type("draft_order")
    printing = fields.String(required=True)
    refinement = fields.String(required=True)


class ChooseTypesSchema(Schema):
    type = _type("choose_types")
    letters = fields.List(
        fields.String(validate=_TYPE), required=True, validate=validate.Length(equal=3)
    )


class ChooseWildInkSchema(Schema):
    type = _type("choose_wild_ink")
    ink = fields.String(required=True, validate=_INK)


class SubmitPlanSchema(Schema):
    type = _type("submit_plan")
    rows = fields.List(
        _int(validate=validate.Range(0, 6)), required=True, validate=validate.Length(equal=5)
    )


class MoveMarkerSchema(Schema):
    type = _type("move_marker")
    from_row = fields.String(required=True, validate=_ROWS)
    to_row = fields.String(required=True, validate=_ROWS)


class PassSchema(Schema):
    type = _type("pass")


class _OrderCardsSchema(Schema):
    """1 printing + 1 refinement card, and the order discarded first when 4 are held."""

    printing = fields.String(required=True)
    refinement = fields.String(required=True)
    discard_slot = _int(required=True, allow_none=True, validate=validate.Range(0, 3))


class TakeOrderSchema(_OrderCardsSchema):
    type = _type("take_order")


class TakeInksSchema(Schema):
    type = _type("take_inks")
    set = _int(required=True, validate=validate.Range(0, 3))
    count = _int(required=True, validate=validate.Range(1, 3))


class DevelopSpecialtySchema(Schema):
    type = _type("develop_specialty")
    card = fields.String(required=True)
    mode = fields.String(required=True, validate=validate.OneOf(("symbols", "single")))
    specialty = fields.String(required=True, allow_none=True, validate=_SPECIALTY)


class InstallGearSchema(Schema):
    type = _type("install_gear")
    gear = fields.String(required=True)
    rotation = _int(required=True, validate=_ROTATION)
    replace_axle = _int(required=True, allow_none=True, validate=_AXLE)


class RepositionGearSchema(Schema):
    type = _type("reposition_gear")
    axle = _int(required=True, validate=_AXLE)
    rotation = _int(required=True, validate=_ROTATION)


class PatronageRewardSchema(Schema):
    type = _type("patronage_reward")
    reward = fields.String(
        required=True, validate=validate.OneOf(("order", "specialty", "guilders", "inks"))
    )


class TakePatronageSchema(Schema):
    type = _type("take_patronage")
    card = fields.String(required=True)


class OrderPartSchema(Schema):
    slot = _int(required=True, validate=validate.Range(0, 3))
    colours = StrictBoolean(required=True)
    decorations = StrictBoolean(required=True)


class IgnoreTypeSchema(Schema):
    slot = _int(required=True, validate=validate.Range(0, 3))
    letter = fields.String(required=True, validate=_TYPE)


class FulfillOrdersSchema(Schema):
    type = _type("fulfill_orders")
    orders = fields.List(
        fields.Nested(OrderPartSchema), required=True, validate=validate.Length(1, 4)
    )
    ignore = fields.Nested(IgnoreTypeSchema, required=True, allow_none=True)


class BuyTypeSchema(Schema):
    type = _type("buy_type")
    letter = fields.String(required=True, validate=_TYPE)


class ActivateGearSchema(Schema):
    """The parameters a sector needs: give/take (exchanges), specialty (lowest tie),
    choice (discard a type for fame or guilders); none for the others."""

    type = _type("activate_gear")
    axle = _int(required=True, validate=_AXLE)
    give = fields.String(validate=validate.OneOf([*data.INKS, *data.TYPES]))
    take = fields.List(
        fields.String(validate=validate.OneOf([*data.INKS, *data.TYPES])),
        validate=validate.Length(1, 2),
    )
    specialty = fields.String(validate=_SPECIALTY)
    choice = fields.String(validate=validate.OneOf(("fame", "guilders")))


class SwapSpecialtiesSchema(Schema):
    type = _type("swap_specialties")
    first = fields.String(required=True, validate=_SPECIALTY)
    second = fields.String(required=True, validate=_SPECIALTY)


class KeepOrderSchema(_OrderCardsSchema):
    type = _type("keep_order")


class RedrawOrderSchema(Schema):
    type = _type("redraw_order")
    cards = fields.String(
        required=True, validate=validate.OneOf(("printing", "refinement", "mixed"))
    )


class AdvanceSpecialtySchema(Schema):
    type = _type("advance_specialty")
    specialty = fields.String(required=True, validate=_SPECIALTY)


class TakeInkSchema(Schema):
    type = _type("take_ink")
    ink = fields.String(required=True, validate=_INK)


class ChooseUnglerSpecialtiesSchema(Schema):
    type = _type("choose_ungler_specialties")
    level_one = fields.String(required=True, validate=_SPECIALTY)
    level_two = fields.String(required=True, validate=_SPECIALTY)


class KeepGearsSchema(Schema):
    type = _type("keep_gears")
    gears = fields.List(fields.String(), required=True, validate=validate.Length(1, 2))
    rotations = fields.List(_int(validate=_ROTATION), required=True, validate=validate.Length(1, 2))


def shape_errors(action: dict[str, Any]) -> dict[str, Any] | None:
    """What is wrong with the shape of a seat's action (its ``seat`` aside), or None.

    The shape is the schema without its validators: every required key, no unknown key,
    each value of its field's JSON type (strictly: a boolean is not an integer). Values
    (ranges, names, list lengths) are for rules.py, which refuses them with its own codes.
    Every folded action passes here, so a check compiled from the schema answers first;
    marshmallow itself words the errors of an action that fails it.
    """
    kind = action.get("type")
    check = _SHAPE_CHECKS.get(kind) if isinstance(kind, str) else None
    if check is None:
        return {"type": ["Unknown action type."]}
    body = {key: value for key, value in action.items() if key != "seat"}
    if check(body):
        return None
    errors: dict[str, Any] = _SHAPES[str(kind)].validate(body)
    return errors or {"_schema": ["Not the shape of this action."]}


def _shape_only(schema: Schema) -> Schema:
    """``schema`` (a fresh instance, so the class is untouched) without value validators."""
    for field in schema.fields.values():
        _strip_validators(field)
    return schema


def _strip_validators(field: fields.Field) -> None:
    field.validators = []
    if isinstance(field, fields.List):
        _strip_validators(field.inner)
    if isinstance(field, fields.Nested) and isinstance(field.schema, Schema):
        _shape_only(field.schema)


def _compile_shape(schema: Schema) -> Callable[[Any], bool]:
    """A fast check of what ``_shape_only(schema).validate`` accepts (JSON values only)."""
    spec = [
        (field.data_key or name, field.required, field.allow_none, _compile_field(field))
        for name, field in schema.fields.items()
    ]
    names = frozenset(key for key, *_ in spec)

    def check(value: Any) -> bool:
        if not isinstance(value, dict) or not names.issuperset(value):
            return False
        for key, required, allow_none, fits in spec:
            if key not in value:
                if required:
                    return False
            elif value[key] is None:
                if not allow_none:
                    return False
            elif not fits(value[key]):
                return False
        return True

    return check


def _compile_field(field: fields.Field) -> Callable[[Any], bool]:
    if isinstance(field, fields.Nested) and isinstance(field.schema, Schema):
        return _compile_shape(field.schema)
    if isinstance(field, fields.List):
        inner, none_ok = _compile_field(field.inner), field.inner.allow_none
        return lambda value: (
            isinstance(value, list)
            and all(none_ok if item is None else inner(item) for item in value)
        )
    if isinstance(field, StrictBoolean):
        return lambda value: type(value) is bool
    if isinstance(field, fields.Integer) and field.strict:
        return lambda value: type(value) is int
    if isinstance(field, fields.String):
        return lambda value: type(value) is str
    # A field kind without a strict check here would let a boolean pass for a number.
    raise TypeError(f"no strict shape check for {type(field).__name__} fields")


SCHEMAS: dict[str, type[Schema]] = {
    "choose_character": ChooseCharacterSchema,
    "draft_order": DraftOrderSchema,
    "choose_types": ChooseTypesSchema,
    "choose_wild_ink": ChooseWildInkSchema,
    "submit_plan": SubmitPlanSchema,
    "move_marker": MoveMarkerSchema,
    "pass": PassSchema,
    "take_order": TakeOrderSchema,
    "take_inks": TakeInksSchema,
    "develop_specialty": DevelopSpecialtySchema,
    "install_gear": InstallGearSchema,
    "reposition_gear": RepositionGearSchema,
    "patronage_reward": PatronageRewardSchema,
    "take_patronage": TakePatronageSchema,
    "fulfill_orders": FulfillOrdersSchema,
    "buy_type": BuyTypeSchema,
    "activate_gear": ActivateGearSchema,
    "swap_specialties": SwapSpecialtiesSchema,
    "keep_order": KeepOrderSchema,
    "redraw_order": RedrawOrderSchema,
    "advance_specialty": AdvanceSpecialtySchema,
    "take_ink": TakeInkSchema,
    "choose_ungler_specialties": ChooseUnglerSpecialtiesSchema,
    "keep_gears": KeepGearsSchema,
}

#: the shape of each action, built once (building a marshmallow Schema is slow)
_SHAPES: dict[str, Schema] = {kind: _shape_only(schema()) for kind, schema in SCHEMAS.items()}
_SHAPE_CHECKS = {kind: _compile_shape(schema) for kind, schema in _SHAPES.items()}
