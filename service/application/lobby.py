"""The lobby's rules: which seats are open, bots' or held, and what joining, leaving, renewing a
token and giving a seat to a bot append (docs/api.md, "Lobby"); ``service.http.resources.lobby``
serves them.


A game may be created with open seats (``{"open": true}`` in ``players``) and bot seats
(``{"bot": {...}}``). Its first step waits until no seat is open: until then actions answer
409 ``seats_open``, no automatic step is due and ``status.waiting_for_players`` is true.
Every change of a seat is a ``seat_changed`` event in the log, its public part saying which
seat, what changed and the new name; a new token's sha256 is its secret part (visible to
nobody, as the tokens' hashes in ``game_created``); tokens themselves are never kept.

Who may do what, before the first step (``game_started`` after it):

- ``POST /games/{id}/seats/{seat}/join`` (anyone, no token): takes an open seat under a name
  and answers with the seat's token, once;
- ``POST /games/{id}/seats/{seat}/leave`` (the seat's token, or the admin key): the seat is
  open again and its token stops working;
- ``POST /games/{id}/seats/{seat}/bot`` (any seat's token of the game, or the admin key):
  an open seat is given to a bot;

and at any time ``POST /games/{id}/seats/{seat}/token``: with the seat's own token, a new
token replaces it (rotation); with the admin key, a lost token is re-issued. A branch's seats
are all played by its one token, so it has no lobby (409 ``seats_fixed``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from events.envelope import NewEvent
from events.store import ConcurrencyConflict
from projections.fold import Game
from service.application import bot_games, commands
from service.application.auth import Viewer, new_token, token_hash
from service.application.bot_seats import bot_name
from service.application.commands import CapReached, CommandError
from service.application.owners import Owner, owner_for
from service.application.services import Services


@dataclass(frozen=True)
class SeatChange:
    """A seat after a lobby command: the game's new version, and a new token (shown once)."""

    seat: int
    name: str
    version: int
    token: str | None = None
    bot: dict[str, Any] | None = None


def seat_kind(game: Game, seat: int) -> str:
    """``open``, ``bot`` or ``player``."""
    if seat in game.open_seats:
        return "open"
    return "bot" if game.bot_of(seat) else "player"


def seats_of(game: Game) -> list[dict[str, Any]]:
    """Who sits where: each seat's name, kind and bot (no token, no hash)."""
    return [
        {"seat": seat, "name": name, "kind": seat_kind(game, seat), "bot": game.bot_of(seat)}
        for seat, name in enumerate(game.meta["players"])
    ]


def started(game: Game) -> bool:
    """Whether the game's first step has been played (the lobby is closed then)."""
    return bool(game.effective or game.redo)


def join(found: Services, game_id: str, seat: int, name: str) -> SeatChange:
    """Take open ``seat`` under ``name``; its new token is in the answer only."""
    token = new_token()

    def decide(game: Game) -> NewEvent:
        # Whether the seat is open first: a taken seat is taken, started or not (the answer
        # does not depend on whether the first step has run yet).
        _seat_exists(game, seat)
        _no_branch(game)
        if seat not in game.open_seats:
            raise CommandError(
                "seat_taken", f"Seat {seat} is taken; GET the game to see which are open."
            )
        _before_start(game, seat)
        return seat_event(seat, "joined", {"seat": seat}, name=name, token=token)

    version = _append(found, game_id, decide)
    return SeatChange(seat, name, version, token=token)


def leave(found: Services, game_id: str, seat: int) -> SeatChange:
    """Open ``seat`` again (its token stops working)."""

    def decide(game: Game) -> NewEvent:
        # Who holds the seat first: an open or a bot seat has nobody to leave it, started
        # or not (the answer does not depend on whether the first step has run yet).
        _seat_exists(game, seat)
        _no_branch(game)
        _held(game, seat)
        _before_start(game, seat)
        return seat_event(seat, "left", {"seat": seat})

    version = _append(found, game_id, decide)
    return SeatChange(seat, f"Open seat {seat + 1}", version)


def seat_bot(
    found: Services,
    game_id: str,
    seat: int,
    bot: dict[str, Any],
    by: Viewer,
    owner: Owner | None = None,
) -> SeatChange:
    """Give open ``seat`` to a bot. A game's first bot makes it a bot game of ``owner``'s
    (whoever gives the seat: the admin when None), counted under its caps first (429
    ``too_many_bot_games``) and let go again if the seat is not given after all."""
    name = bot_name(bot)
    actor = {"seat": by.seat} if by.seat is not None else {"system": "admin"}
    counted = False
    if not any(commands.load_game(found, game_id).meta.get("bots") or ()):
        bot_games.admit(found, game_id, owner or owner_for(admin=True, address=""))
        counted = True

    def decide(game: Game) -> NewEvent:
        _seat_exists(game, seat)
        _no_branch(game)
        if seat not in game.open_seats:
            raise CommandError(
                "seat_taken", f"Seat {seat} is taken; only an open seat goes to a bot."
            )
        _before_start(game, seat)
        return seat_event(seat, "bot_seated", actor, name=name, bot=bot)

    try:
        version = _append(found, game_id, decide)
    except BaseException:
        if counted and not any(commands.load_game(found, game_id).meta.get("bots") or ()):
            bot_games.let_go(found, game_id)
        raise
    return SeatChange(seat, name, version, bot=bot)


def renew_token(
    found: Services, game_id: str, seat: int, by_admin: bool, by_app: bool = False
) -> SeatChange:
    """A new token for ``seat``: rotated by the seat itself, re-issued by the admin or by the
    client application that holds the seat (``system: app``: which one is not the log's
    business)."""
    token = new_token()
    names: list[str] = []

    def decide(game: Game) -> NewEvent:
        _seat_exists(game, seat)
        _no_branch(game)
        _held(game, seat)
        names[:] = [str(game.meta["players"][seat])]
        if by_admin:
            return seat_event(seat, "token_reissued", {"system": "admin"}, token=token)
        if by_app:
            return seat_event(seat, "token_reissued", {"system": "app"}, token=token)
        return seat_event(seat, "token_rotated", {"seat": seat}, token=token)

    version = _append(found, game_id, decide)
    return SeatChange(seat, names[0], version, token=token)


def seat_event(
    seat: int,
    change: str,
    actor: dict[str, Any],
    *,
    name: str | None = None,
    token: str | None = None,
    bot: dict[str, Any] | None = None,
) -> NewEvent:
    """The ``seat_changed`` event: public who and what; a new token's hash kept secret."""
    data: dict[str, Any] = {"seat": seat, "change": change}
    if name is not None:
        data["name"] = name
    if bot is not None:
        data["bot"] = bot
    secret = None if token is None else {"visible_to": [], "token_hash": token_hash(token)}
    return NewEvent(type="seat_changed", actor=actor, data=data, secret=secret)


def _append(found: Services, game_id: str, decide: Any) -> int:
    """Decide on the latest game and append at its version; a concurrent append is retried
    (on the new game, where the seat may since be taken)."""
    attempts = found.config.action_retries + 1
    for attempt in range(attempts):
        game = commands.load_game(found, game_id)
        event = decide(game)
        try:
            result = commands.append(found, game_id, [event], game.version)
        except ConcurrencyConflict:
            if attempt == attempts - 1:
                raise
            continue
        return result.version
    raise AssertionError("unreachable")  # pragma: no cover


def _seat_exists(game: Game, seat: int) -> None:
    count = len(game.meta["players"])
    if not 0 <= seat < count:
        raise CommandError("no_such_seat", f"This game has seats 0 to {count - 1}.")


def _no_branch(game: Game) -> None:
    if "branch" in game.meta:
        raise CommandError("seats_fixed", "A branch's one token plays every seat; it has no lobby.")


def _before_start(game: Game, seat: int) -> None:
    _seat_exists(game, seat)
    _no_branch(game)
    if started(game):
        raise CommandError("game_started", "The game has started: its seats are settled.")


def _held(game: Game, seat: int) -> None:
    """The seat is a player's (not open, not a bot's)."""
    kind = seat_kind(game, seat)
    if kind == "open":
        raise CommandError("seat_open", f"Seat {seat} is open: nobody holds a token for it.")
    if kind == "bot":
        raise CommandError("seat_is_bot", f"Seat {seat} is played by a bot, which has no token.")


#: Seconds a client is told to wait when a cap on lobbies is reached.
CAP_RETRY_AFTER = 60


def check_caps(found: Services, seats: list[Any]) -> None:
    """Refuse a new game with an open seat past ``MEEPLE_MAX_OPEN_GAMES`` waiting games:
    anonymous clients may start these, so how many there are at once is bounded
    (``CapReached``). Counted in the game index, a moment behind the log. (Games with bots
    are counted per owner as well as in all, when they are made: ``create_game``,
    ``seat_bot``.)"""
    if not any(isinstance(seat, dict) and seat.get("open") for seat in seats):
        return
    waiting, _ = found.game_index.count_lobbies()
    if waiting >= found.config.max_open_games:
        raise CapReached(
            "too_many_open_games",
            f"{waiting} games already wait for players; join one (GET /games?open=true) "
            "or name every player.",
            retry_after=CAP_RETRY_AFTER,
        )


def create_game(
    found: Services,
    ruleset_id: str,
    players: Sequence[str | Mapping[str, Any]],
    options: Mapping[str, Any] | None = None,
    seed: str | None = None,
    *,
    owner: Owner,
) -> commands.CreatedGame:
    """``commands.create_game``, a game with a bot seat counted first under its owner's caps
    on bot games (429 ``too_many_bot_games``: ``bot_games.admit``), and let go again if it
    is not created after all (bad options)."""
    if not any(isinstance(seat, Mapping) and seat.get("bot") for seat in players):
        return commands.create_game(found, ruleset_id, players, options, seed)
    game_id = uuid.uuid4().hex
    bot_games.admit(found, game_id, owner)
    try:
        return commands.create_game(found, ruleset_id, players, options, seed, game_id=game_id)
    except BaseException:
        bot_games.let_go(found, game_id)
        raise
