"""Bot seats: a job plays a bot's turn as soon as it is due (docs/api.md, "Bots").

A seat is a bot's when the game was created with ``{"bot": {"agent": ..., "playouts": ...}}``
in ``players`` or an open seat was given to one (service.http.resources.lobby). Every append asks
``due_bot_seat`` of the game after it; when the game waits for a bot (no automatic step
pending, no seat open, a bot seat in ``to_act``), the jobs queue ``bot_turn(game_id, version)``
on its own queue (``bots``, served after automatic steps; ``service.workers.jobs.Due.bot``), marked
due first as a step is, so a lost job is played by the sweep.

``bot_turn`` plays exactly once per version: it appends at the expected version with an
idempotency key derived from ``(game_id, version)``, as ``system_step`` does, so a second run
replays or meets a conflict and appends nothing. Its choice is deterministic: the agent's
generator derives from the game's secret seed, the bot's seat and the position, and the
agent is given only the seat's information set (``resample_hidden`` for that seat, on top of
what each agent redraws itself), so a bot never uses what its seat cannot see. The action is
appended as the seat's action, its actor naming the bot: ``{"seat": 2, "bot": "mcts"}``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from events.store import ConcurrencyConflict
from projections.agents import Budget, make_agent
from projections.fold import Game, copy_state, decide_action
from projections.rng import derive_rng
from projections.ruleset import IllegalAction
from service.application import commands
from service.application.bot_seats import DEFAULT_PLAYOUTS, due_bot_seat

log = logging.getLogger(__name__)


def bot_turn_key(game_id: str, version: int) -> str:
    """The idempotency key (and job id) of the bot's turn due after event ``version``."""
    return f"bot_turn-{game_id}-{version}"


def choose(game: Game, seat: int) -> dict[str, Any]:
    """The bot's action for ``seat``: deterministic, from the seat's information set alone."""
    bot = game.bot_of(seat) or {}
    rng = derive_rng(f"{game.seed_for(game.version + 1)}:bot:{seat}", game.position + 1)
    ruleset = game.ruleset
    # What the seat cannot see is redrawn before the agent looks (the agents redraw again
    # for each lookahead or playout): the bot decides on its information set alone.
    seen = ruleset.resample_hidden(copy_state(game.state), seat, rng)
    playouts = bot.get("playouts") or DEFAULT_PLAYOUTS
    agent = make_agent(str(bot.get("agent", "random")), Budget(iterations=int(playouts)))
    action = dict(agent.choose(ruleset, seen, seat, rng))
    action.pop("seat", None)
    return action


def bot_turn(services: Any, game_id: str, version: int) -> str:
    """Play the bot's turn due after event ``version``, once; what happened."""
    state = services.jobs.state
    try:
        game: Game = services.folder.load(game_id)
    except KeyError:
        state.clear_due(game_id, version)
        return "no_game"
    if game.version != version:
        state.clear_due(game_id, version)
        return "stale"
    seat = due_bot_seat(game)
    if seat is None:
        state.clear_due(game_id, version)
        return "nothing_due"
    bot = game.bot_of(seat) or {}
    action = choose(game, seat)
    try:
        event, new_state = decide_action(game, seat, action)
    except IllegalAction:
        # The information set allowed it, the table does not (a ruleset whose legal actions
        # leak what the seat cannot see would be a bug of its own): play a legal one.
        log.warning("bot of seat %s in game %s chose an illegal action", seat, game_id)
        legal = game.ruleset.legal_actions(game.state, seat)
        fallback = derive_rng(f"{game.seed_for(version + 1)}:bot:{seat}", game.position + 1)
        event, new_state = decide_action(game, seat, legal[fallback.randrange(len(legal))])
    event = replace(event, actor={"seat": seat, "bot": str(bot.get("agent"))})
    try:
        result = commands.append(
            services,
            game_id,
            [event],
            version,
            bot_turn_key(game_id, version),
            game=game,
            new_state=new_state,
        )
    except ConcurrencyConflict:
        state.clear_due(game_id, version)
        return "conflict"
    if result.replayed or not services.jobs.clears_due_with_append:
        state.clear_due(game_id, version)
    return "replayed" if result.replayed else "appended"
