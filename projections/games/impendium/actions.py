"""Marshmallow schemas of every Impendium seat action (each loads the whole action object)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from projections.games.impendium.data import DIPLOMACY, FACTIONS, RESOURCES, STARS

CELL = validate.Regexp(r"^-?\d+,-?\d+$", error="A map cell is written 'x,y'.")
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
        validate=validate.Regexp(
            r"^(map:-?\d+,-?\d+|project:S\d+|harbinger:-?\d+,-?\d+)/\d+$",
            error="Name a placed disc: map:x,y/slot, project:card/slot or harbinger:x,y/slot.",
        ),
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
    "move": _schema("move", to=fields.String(required=True, validate=CELL)),
    "attack": _schema("attack", target=fields.Integer(required=True, strict=True, validate=SEAT)),
    "take_spoils": _schema("take_spoils", resources=_amounts()),
    "offer_trade": _schema(
        "offer_trade",
        target=fields.Integer(required=True, strict=True, validate=SEAT),
        give=_amounts(),
        get=_amounts(),
    ),
    "answer_trade": _schema(
        "answer_trade", accept=fields.Boolean(required=True, truthy={True}, falsy={False})
    ),
    "build_colony": _schema(
        "build_colony",
        slot=_slot(),
        resource=_resource(required=False),
        relocate=_relocate(),
    ),
    "construct_federation_star": _schema(
        "construct_federation_star",
        project=fields.String(required=True, validate=validate.OneOf(sorted(STARS))),
        slot=_slot(),
        resource=_resource(required=False),
        relocate=_relocate(),
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
    ),
    "recruit_faction": _schema(
        "recruit_faction",
        resource=_resource(),
        replace=fields.String(validate=validate.OneOf(sorted(FACTIONS))),
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
