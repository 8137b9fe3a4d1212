"""Marshmallow fields every game's action schemas share (``projections/games/<id>/actions.py``)."""

from __future__ import annotations

from typing import Any

from marshmallow import fields


class StrictBoolean(fields.Boolean):
    """``true`` or ``false`` only: marshmallow's Boolean also takes 1, "yes" and "on", and an
    action that says ``1`` where the rules ask yes or no is malformed, not ``true``."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value
