"""Playing a game through the HTTP API alone, the way a client would: read the summary,
ask a seat that is to act for its legal actions, post one of them back verbatim, and let the
background jobs run the automatic steps."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from projections.ruleset import Ruleset
from service.bootstrap import Services
from tests.api.conftest import bearer, new_game, settle

#: (seat or None for a spectator, the response) for every response the client got
Observer = Callable[[int | None, TestResponse], None]
#: called before each action with the game's creation body and the number of the step
Interlude = Callable[[dict[str, Any], int], None]

MAX_ACTIONS = 20_000


def players_for(ruleset: Ruleset) -> list[str]:
    """Two players where the game allows it (secrets between seats need two), else its minimum."""
    count = min(max(2, ruleset.min_players), ruleset.max_players)
    return [f"Player {seat + 1}" for seat in range(count)]


def play_to_the_end(
    client: FlaskClient,
    services: Services,
    ruleset: Ruleset,
    rng: random.Random,
    observe: Observer | None = None,
    interlude: Interlude | None = None,
) -> dict[str, Any]:
    """Create a game of ``ruleset`` and play it to its end; the game's final summary."""
    game = new_game(client, ruleset.id, players_for(ruleset))
    seats = game["seats"]

    def get(seat: int | None, path: str) -> TestResponse:
        headers = bearer(seats[seat]["token"]) if seat is not None else {}
        response = client.get(f"/games/{game['id']}{path}", headers=headers)
        assert response.status_code == 200, (path, response.json)
        if observe is not None:
            observe(seat, response)
        return response

    for step in range(MAX_ACTIONS):
        if interlude is not None:
            interlude(game, step)
        summary = get(None, "").json
        status = summary["status"]
        if status["finished"]:
            return summary
        if status["awaiting_system"]:
            settle(services)
            continue
        candidates = list(status["to_act"]) or list(range(len(seats)))
        rng.shuffle(candidates)
        for seat in candidates:
            legal = get(seat, "/legal-actions").json
            if legal["actions"]:
                break
        else:
            raise AssertionError(f"{ruleset.id}: nobody can act and no step is due: {status}")
        action = rng.choice(legal["actions"])
        response = client.post(
            f"/games/{game['id']}/actions",
            json=action,
            headers={**bearer(seats[seat]["token"]), "If-Match": f'"{legal["version"]}"'},
        )
        assert response.status_code == 201, (ruleset.id, action, response.json)
        if observe is not None:
            observe(seat, response)
    raise AssertionError(f"{ruleset.id}: not finished after {MAX_ACTIONS} actions")
