"""Bot seats: a job plays a bot's turn as soon as it is due (docs/api.md, "Bots").

A seat is a bot's when the game was created with ``{"bot": {"agent": ..., "playouts": ...}}``
in ``players`` or an open seat was given to one (service.http.resources.lobby). Every append asks
``due_bot_seat`` of the game after it; when the game waits for a bot (no automatic step
pending, no seat open, a bot seat in ``to_act``), the jobs queue ``bot_turn(game_id, version)``
on its own queue (``bots``, served after automatic steps; ``service.workers.jobs.Due.bot``), marked
due first as a step is, so a lost job is played by the sweep.

A game of bots only that nobody has read or streamed for ``MEEPLE_BOT_GAME_IDLE`` seconds is
not played on: its turn pauses it (``bot_games.pauses``) until a read resumes it.

``bot_turn`` plays exactly once per version: it appends at the expected version with an
idempotency key derived from ``(game_id, version)``, as ``system_step`` does, so a second run
replays or meets a conflict and appends nothing. Its choice is deterministic: the agent's
generator derives from the game's secret seed, the bot's seat and the position, and the
agent is given only the seat's information set (``resample_hidden`` for that seat, on top of
what each agent redraws itself), so a bot never uses what its seat cannot see. The action is
appended as the seat's action, its actor naming the bot: ``{"seat": 2, "bot": "mcts"}``.

The search runs where it holds up nothing else (``Jobs.compute`` on the ``bots`` queue: a child
process of the embedded default, a bots worker on Redis), for at most
``MEEPLE_BOT_MAX_SECONDS``: a search that reaches them plays the best it found so far, and one
that has not answered ``COMPUTE_GRACE`` seconds later is killed and the seat plays a random
legal action (drawn, as everything here, from the game's seed).
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import Any

from events.store import ConcurrencyConflict
from projections.agents import Budget, make_agent
from projections.fold import Game, copy_state, decide_action
from projections.rng import derive_rng
from projections.ruleset import IllegalAction, Ruleset, from_reference, ruleset_reference
from service.application import bot_games, commands
from service.application.bot_seats import DEFAULT_PLAYOUTS, due_bot_seat
from service.application.services import ComputeClosed, ComputeFailed

log = logging.getLogger(__name__)


def bot_turn_key(game_id: str, version: int) -> str:
    """The idempotency key (and job id) of the bot's turn due after event ``version``."""
    return f"bot_turn-{game_id}-{version}"


#: The function a bot's search runs in (by name: it runs in another process).
CHOOSE = "service.application.bots:choose_action"
#: Seconds beyond MEEPLE_BOT_MAX_SECONDS after which a search that has not answered is killed.
COMPUTE_GRACE = 10.0


def choice_arguments(game: Game, seat: int, seconds: float | None = None) -> tuple[Any, ...]:
    """What ``choose_action`` needs to choose for ``seat``, as plain values another process
    can take: the ruleset's name, the state, the bot, the generator's key and position."""
    return (
        ruleset_reference(game.ruleset),
        game.state,
        seat,
        dict(game.bot_of(seat) or {}),
        f"{game.seed_for(game.version + 1)}:bot:{seat}",
        game.position + 1,
        seconds,
    )


def choose_action(
    reference: tuple[str, str],
    state: dict[str, Any],
    seat: int,
    bot: dict[str, Any],
    key: str,
    position: int,
    seconds: float | None = None,
    report: Any = None,
) -> dict[str, Any]:
    """The bot's action for ``seat``: deterministic (within ``seconds``, if given), from the
    seat's information set alone."""
    ruleset: Ruleset = from_reference(reference)
    rng = derive_rng(key, position)
    # What the seat cannot see is redrawn before the agent looks (the agents redraw again
    # for each lookahead or playout): the bot decides on its information set alone.
    seen = ruleset.resample_hidden(copy_state(state), seat, rng)
    playouts = int(bot.get("playouts") or DEFAULT_PLAYOUTS)

    def clock() -> float:
        # Read once a playout: ``report(None)`` ends the search if its process is stopping.
        if report is not None:
            report(None)
        return time.monotonic()

    budget = Budget(iterations=playouts, seconds=seconds, clock=clock if seconds else None)
    agent = make_agent(str(bot.get("agent", "random")), budget)
    action = dict(agent.choose(ruleset, seen, seat, rng))
    action.pop("seat", None)
    return action


def choose(game: Game, seat: int) -> dict[str, Any]:
    """The bot's action for ``seat``, chosen in this process."""
    return choose_action(*choice_arguments(game, seat))


def _random_legal(game: Game, seat: int) -> dict[str, Any]:
    """A legal action of the seat drawn from the game's seed (the fallback of a failed search)."""
    legal = game.ruleset.legal_actions(game.state, seat)
    fallback = derive_rng(f"{game.seed_for(game.version + 1)}:bot:{seat}", game.position + 1)
    return dict(legal[fallback.randrange(len(legal))])


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
    if bot_games.pauses(services, game, version):
        # Nobody attends this game of bots: it holds no compute and no place under the caps
        # until someone reads it again (which queues this turn anew).
        state.clear_due(game_id, version)
        return "paused"
    bot = game.bot_of(seat) or {}
    seconds = float(services.jobs.settings.bot_max_seconds)
    try:
        action = services.jobs.compute(
            "bots", CHOOSE, choice_arguments(game, seat, seconds), seconds + COMPUTE_GRACE
        )
    except ComputeClosed:
        return "stopped"  # the service is stopping: the turn stays due for the sweep
    except ComputeFailed as failure:
        log.warning("the bot of seat %s in game %s gave no action: %s", seat, game_id, failure)
        action = _random_legal(game, seat)
    try:
        event, new_state = decide_action(game, seat, action)
    except IllegalAction:
        # The information set allowed it, the table does not (a ruleset whose legal actions
        # leak what the seat cannot see would be a bug of its own): play a legal one.
        log.warning("bot of seat %s in game %s chose an illegal action", seat, game_id)
        event, new_state = decide_action(game, seat, _random_legal(game, seat))
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
