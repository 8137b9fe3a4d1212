"""Marshmallow schemas of every action a Restoration seat can post (one per action type).

They check the shape of an action, at the HTTP edge and again in ``apply`` (``check_shape``,
so an agent or an import calling ``apply`` directly is refused with ``invalid_action`` for a
missing or unknown key or a value of the wrong type, never a crash); whether the action is
legal now is the reducer's job (rules.py), which answers with its own error codes.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from projections.action_fields import StrictBoolean
from projections.games.restoration import data
from projections.ruleset import Action, IllegalAction

_RESEARCH = sorted(data.RESEARCH)
_WORKER_REF = r"^[A-Z]+[0-9]*/(artisan|[0-9])$"
_LOCATION = r"^(pos:[A-Z]+[0-9]*|tile:[A-Za-z0-9_]+:[0-9]+|rd:[A-Za-z0-9_]+)$"


def _type(name: str) -> fields.String:
    return fields.String(required=True, validate=validate.Equal(name))


class UnlockResearchSchema(Schema):
    type = _type("unlock_research")
    position = fields.String(required=True, validate=validate.OneOf(_RESEARCH))


class PlaceWorkerSchema(Schema):
    type = _type("place_worker")
    position = fields.String(required=True, validate=validate.Length(min=1, max=16))
    artisan = StrictBoolean(required=True)


class MoveSchema(Schema):
    type = _type("move")
    workshop = fields.String(required=True, validate=validate.OneOf(sorted(data.BOARDS)))


class EndTurnSchema(Schema):
    type = _type("end_turn")


class PlayManagerSchema(Schema):
    type = _type("play_manager")
    manager = fields.String(required=True, validate=validate.OneOf(sorted(data.MANAGERS)))
    effect = fields.String(required=True, validate=validate.OneOf(["A", "B"]))


class StartConstructionSchema(Schema):
    type = _type("start_construction")
    tile = fields.String(required=True, validate=validate.OneOf(sorted(data.TILES)))


class ContinueConstructionSchema(Schema):
    type = _type("continue_construction")
    tile = fields.String(required=True, validate=validate.OneOf(sorted(data.TILES)))
    space = fields.Integer(required=True, strict=True, validate=validate.Range(0, 20))


class CompletionChoiceSchema(Schema):
    type = _type("completion_choice")
    choice = fields.String(required=True, validate=validate.OneOf(["rest", "take_back"]))


class DevelopSchema(Schema):
    type = _type("develop")
    track = fields.String(required=True, validate=validate.OneOf(["technology", "reputation"]))


class TakeManagerSchema(Schema):
    type = _type("take_manager")
    source = fields.String(required=True, validate=validate.OneOf(["supply", "deck"]))
    manager = fields.String(validate=validate.OneOf(sorted(data.MANAGERS)))

    @validates_schema
    def names_a_card_only_from_the_supply(self, values: dict[str, Any], **_: Any) -> None:
        if (values["source"] == "supply") != ("manager" in values):
            raise ValidationError("Name the 'manager' when, and only when, taking from the supply.")


class TransferSchema(Schema):
    type = _type("transfer")
    first = fields.String(required=True, validate=validate.Regexp(_WORKER_REF))
    second = fields.String(required=True, validate=validate.Regexp(_WORKER_REF))


class AdjustReputationSchema(Schema):
    type = _type("adjust_reputation")
    direction = fields.String(required=True, validate=validate.OneOf(["up", "down"]))


class PlaceUpgradeSchema(Schema):
    type = _type("place_upgrade")
    target = fields.String(required=True, validate=validate.OneOf([*_RESEARCH, "ap_track", "keep"]))


class SkipActionSchema(Schema):
    type = _type("skip_action")


class KeepWorkerSchema(Schema):
    type = _type("keep_worker")
    location = fields.String(required=True, validate=validate.Regexp(_LOCATION))


class CollectWorkersSchema(Schema):
    type = _type("collect_workers")


SCHEMAS: dict[str, type[Schema]] = {
    "unlock_research": UnlockResearchSchema,
    "place_worker": PlaceWorkerSchema,
    "move": MoveSchema,
    "end_turn": EndTurnSchema,
    "play_manager": PlayManagerSchema,
    "start_construction": StartConstructionSchema,
    "continue_construction": ContinueConstructionSchema,
    "completion_choice": CompletionChoiceSchema,
    "develop": DevelopSchema,
    "take_manager": TakeManagerSchema,
    "transfer": TransferSchema,
    "adjust_reputation": AdjustReputationSchema,
    "place_upgrade": PlaceUpgradeSchema,
    "skip_action": SkipActionSchema,
    "keep_worker": KeepWorkerSchema,
    "collect_workers": CollectWorkersSchema,
}

#: One instance per schema, reused: building a marshmallow Schema is slow.
_INSTANCES: dict[str, Schema] = {kind: schema() for kind, schema in SCHEMAS.items()}

#: Actions already found well-shaped, each as its items and their values' types: the fold
#: applies the same few hundred actions again and again, and a schema's validation costs
#: more than the rule it guards. The types are part of the key, so ``True`` never passes for
#: ``1`` (they are equal, and hash alike).
_VALID_SHAPES: set[tuple[tuple[tuple[str, Any], ...], tuple[type, ...]]] = set()
_VALID_SHAPES_KEPT = 4096


def check_shape(action: Action) -> None:
    """Refuse (``invalid_action``) a seat's action that is not exactly what its type's schema
    describes: a missing or unknown key, a value of the wrong type (a boolean is not a
    number), a number or a text out of its range. ``type`` is a known action type and
    ``seat`` a seat of the game, both checked by the caller."""
    shape: tuple[tuple[tuple[str, Any], ...], tuple[type, ...]] | None = (
        tuple(action.items()),
        tuple(map(type, action.values())),
    )
    try:
        if shape in _VALID_SHAPES:
            return
    except TypeError:  # a list or a dict inside: no action of this game holds one
        shape = None
    body = {key: value for key, value in action.items() if key != "seat"}
    errors = _INSTANCES[str(action["type"])].validate(body)
    if errors:
        raise IllegalAction(
            "invalid_action", f"That {action['type']} is malformed: {_sentence(errors)}."
        )
    if shape is not None and len(_VALID_SHAPES) < _VALID_SHAPES_KEPT:
        _VALID_SHAPES.add(shape)


def _sentence(errors: dict[str, Any]) -> str:
    """marshmallow's errors as one line: ``field: message`` each."""
    return "; ".join(
        f"{field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}"
        for field, messages in sorted(errors.items(), key=lambda item: str(item[0]))
    )
