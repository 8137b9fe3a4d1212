"""Reading a game is attending it: a game of bots only that nobody reads or streams pauses at its
next bot turn, and the next read (or stream) of it resumes it (service.application.bot_games;
docs/operations.md, "Fair shares")."""

from __future__ import annotations

import logging

from flask import Flask, Response, request

from service.application import bot_games
from service.http.shared import services

log = logging.getLogger(__name__)


def install_attention(app: Flask) -> None:
    """Every successful read of a game (a ``GET`` of it or under it, its live stream's too)
    tells the bot games it was attended."""
    app.after_request(_attended)


def _attended(response: Response) -> Response:
    game_id = (request.view_args or {}).get("game_id")
    if game_id and request.method in ("GET", "HEAD") and response.status_code < 400:
        try:
            bot_games.attend(services(), str(game_id))
        except Exception:
            # The answer is made: a paused game stays paused until the next read.
            log.exception("could not note that game %s was read", game_id)
    return response
