"""Who may ask for and read an analysis or a game review, the caps they count under, and
what a lapsed one reads as (service.http.resources.analyses and .reviews share them)."""

from __future__ import annotations

import time

from flask import request

from projections.fold import Game
from service.application.analyses import ACTIVE, Caps, Record, unfinished_now
from service.application.auth import AuthError, Viewer, bearer_token
from service.http.errors import ApiError
from service.http.limits import client_address, token_key
from service.http.shared import authenticate


def viewer_of(game: Game) -> Viewer:
    return authenticate(game.meta)


def may_read(game: Game, viewer: Viewer, seat: int, at: int) -> bool:
    """Whether ``viewer`` may ask for or read ``seat``'s analysis after event ``at``."""
    if viewer.admin:
        return True
    if at < game.sealed_until:
        return False
    finished = bool(game.ruleset.status(game.state).get("finished"))
    return finished or viewer.holder or viewer.seat == seat or seat in viewer.app_seats


def refuse(game: Game, viewer: Viewer, at: int) -> ApiError | AuthError:
    if at < game.sealed_until and not viewer.admin:
        return ApiError(
            403,
            "sealed_history",
            f"Up to event {game.sealed_until} this branch holds the secrets of a game that "
            "was still being played when it was made; only the admin may analyse there.",
        )
    if not viewer.authenticated:
        return AuthError(
            "missing_token",
            "While the game is played only a seat may analyse its own decisions: send its "
            "token as 'Authorization: Bearer <token>'.",
        )
    return ApiError(
        403,
        "not_your_seat",
        "While the game is played a seat may analyse only its own decisions.",
    )


def requester_of(viewer: Viewer) -> str:
    """Whom the per-requester cap counts: the application whose key was sent, else the token
    (hashed), else the client's address."""
    if viewer.app is not None:
        return f"app:{viewer.app}"
    try:
        token = bearer_token(request.headers.get("Authorization"))
    except AuthError:
        token = None
    if token is not None:
        return f"token:{token_key(token)}"
    return f"address:{client_address(request.remote_addr)}"


def within(name: str, value: float, cap: float) -> None:
    if value > cap:
        raise ApiError(
            422,
            "budget_too_large",
            f"{name} may be at most {cap:g}.",
            errors={name: [f"At most {cap:g}."]},
            maximum=cap,
        )


def over_cap(
    caps: Caps, game_id: str, seat: int, requester: str, owner: str, unfinished: list[Record]
) -> str | None:
    if sum(r["requester"] == requester for r in unfinished) >= caps.per_requester:
        return f"You have {caps.per_requester} analyses queued or running, the most allowed."
    # Tokens are free: the address they come from is counted too (records from before owners
    # were recorded count under their requester, an address where they had no token).
    mine = sum(r.get("owner", r["requester"]) == owner for r in unfinished)
    if caps.per_owner is not None and mine >= caps.per_owner:
        return (
            f"Your address has {caps.per_owner} analyses queued or running, whatever tokens "
            "asked for them: the most one owner may have."
        )
    # Per seat, not per game: a count over every seat would tell a seat its rival is
    # consulting the engine.
    if sum(r["game_id"] == game_id and r["seat"] == seat for r in unfinished) >= caps.per_game:
        return (
            f"Seat {seat} of this game has {caps.per_game} analyses queued or running, the most "
            "allowed."
        )
    if len(unfinished) >= caps.total:
        return f"The service runs {caps.total} analyses, the most it allows at once."
    return None


def lapsed(record: Record) -> Record:
    """A record left unfinished past its lease (its worker died) reads as failed."""
    if record["status"] in ACTIVE and not unfinished_now(record, time.time()):
        return {**record, "status": "failed", "error": "The analysis stopped; ask again."}
    return record
