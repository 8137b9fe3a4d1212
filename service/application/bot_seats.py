"""Bot seats: how a seat is given to a bot (the request's schemas, the bot's name) and whose
turn is a bot's (docs/api.md, "Bots"); the turn itself is played by ``service.application.bots``.
"""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, validate

from projections.agents import AGENTS
from projections.fold import Game
from projections.ruleset import State

#: The most MCTS playouts a bot may think for per decision (bounded: anyone may seat a bot).
MAX_PLAYOUTS = 1000
#: MCTS playouts per decision when the seat does not say.
DEFAULT_PLAYOUTS = 100


class BotSchema(Schema):
    """A bot for a seat: which agent, and for ``mcts`` how many playouts a decision."""

    class Meta:
        unknown = RAISE

    agent = fields.String(required=True, validate=validate.OneOf(AGENTS))
    playouts = fields.Integer(
        validate=validate.Range(1, MAX_PLAYOUTS),
        allow_none=True,
        metadata={
            "description": f"mcts only: playouts per decision, its strength (default "
            f"{DEFAULT_PLAYOUTS}, at most {MAX_PLAYOUTS}); null for the other agents"
        },
    )

    @post_load
    def settled(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data["agent"] == "mcts":
            data["playouts"] = data.get("playouts") or DEFAULT_PLAYOUTS
        elif data.get("playouts") is not None:
            raise ValidationError({"playouts": ["Only an mcts bot has playouts."]})
        else:
            data["playouts"] = None
        return data


class BotSeatSchema(Schema):
    """A seat given to a bot at creation: ``{"bot": {...}, "name": "..."}``."""

    class Meta:
        unknown = RAISE

    bot = fields.Nested(BotSchema, required=True)
    name = fields.String(validate=validate.Length(min=1, max=40))


class OpenSeatSchema(Schema):
    """A seat left open at creation, for someone to join: ``{"open": true}``."""

    class Meta:
        unknown = RAISE

    open = fields.Boolean(required=True, validate=validate.Equal(True))


def bot_name(bot: dict[str, Any], name: str | None = None) -> str:
    """The name a bot's seat goes by ("MCTS bot (100 playouts)" unless one is given)."""
    if name:
        return name
    if bot["agent"] == "mcts":
        return f"MCTS bot ({bot['playouts']} playouts)"
    return f"{bot['agent'].capitalize()} bot"


def due_bot_seat(game: Game, state: State | None = None) -> int | None:
    """The bot seat whose turn it is in ``state`` (default the game's own; another when the
    caller holds the state an append is about to bring), the lowest if several act at once;
    or None."""
    if game.open_seats or not any(game.meta.get("bots") or ()):
        return None  # most games have no bot: no need to ask the rules whose turn it is
    status = game.ruleset.status(game.state if state is None else state)
    if status.get("finished") or status.get("awaiting_system"):
        return None
    for seat in sorted(int(seat) for seat in status.get("to_act", [])):
        if game.bot_of(seat):
            return seat
    return None
