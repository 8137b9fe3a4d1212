"""Marshmallow schemas of every action a Restoration seat can post (one per action type).

They check the shape of a request; whether the action is legal now is the reducer's job
(rules.py), which answers with its own error codes.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from projections.games.restoration import data

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
    artisan = fields.Boolean(required=True)


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
