"""Who is asking: a seat (by its bearer token), the admin (by the admin key), or a spectator.

Seat tokens are random (``secrets.token_urlsafe(32)``), shown once when the game is created
and kept only as sha256 hex digests in the secret part of ``game_created`` (visible to
nobody). A token is compared to every seat's hash in constant time, so timing tells
nothing about which seat, if any, it almost matched.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: What a bearer token may look like (RFC 6750 ``b64token``), bounded in length.
_TOKEN = re.compile(r"^[A-Za-z0-9\-._~+/]{1,256}=*$")


class AuthError(Exception):
    """The request's credentials do not allow it: ``code`` is stable, ``message`` readable."""

    def __init__(self, code: str, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Viewer:
    """Whoever a request speaks for, in one game."""

    game_id: str | None
    seat: int | None = None
    admin: bool = False
    #: the holder of a branch's one token, who acts for every seat of that sandbox game
    holder: bool = False
    #: whether the request carried any credentials at all
    authenticated: bool = False
    #: the client application whose key was sent (service.application.apps), and the seats
    #: of this game it holds; ``seat`` is the one it holds when it holds exactly one
    app: str | None = None
    app_seats: frozenset[int] = frozenset()

    @property
    def spectator(self) -> bool:
        return self.seat is None and not self.admin


#: How a client application's key starts (service.application.apps.KEY_PREFIX): no seat
#: token does, so neither is ever taken for the other.
APP_KEY_PREFIX = "mla_"


def new_token() -> str:
    """A fresh seat token (256 bits of randomness), never one that looks like an app key."""
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith(APP_KEY_PREFIX):
            return token


def app_viewer(meta: Mapping[str, Any] | None, app_id: str, held: frozenset[int]) -> Viewer:
    """The viewer a client application's key makes in game ``meta``: the seat it holds when
    it holds exactly one (so ``/games/{id}/state`` and ``/actions`` speak for it), its held
    seats in any case (``/games/{id}/seats/{seat}/...`` for each)."""
    game_id = None if meta is None else str(meta["game_id"])
    seat = next(iter(held)) if len(held) == 1 else None
    return Viewer(game_id, seat=seat, authenticated=True, app=app_id, app_seats=held)


def token_hash(token: str) -> str:
    """What the log keeps of a token: its sha256 hex digest."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header; None when there is no header.

    Raises AuthError(invalid_token) for any other scheme or a malformed token.
    """
    if authorization is None or not authorization.strip():
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not _TOKEN.match(token):
        raise AuthError("invalid_token", "Send your seat token as 'Authorization: Bearer <token>'.")
    return token


def is_admin_token(token: str | None, admin_key: str | None) -> bool:
    """Whether ``token`` is the configured admin key (never true when none is configured)."""
    if token is None or not admin_key:
        return False
    return hmac.compare_digest(token.encode("utf-8"), admin_key.encode("utf-8"))


def seat_of(token: str, seat_token_hashes: Sequence[str]) -> int | None:
    """The seat whose token this is, or None; every hash is compared, in constant time each."""
    digest = token_hash(token)
    found = None
    for seat, expected in enumerate(seat_token_hashes):
        if hmac.compare_digest(digest, expected):
            found = seat
    return found


def resolve_viewer(
    meta: Mapping[str, Any] | None, authorization: str | None, admin_key: str | None
) -> Viewer:
    """The viewer of game ``meta`` (its folded ``Game.meta``) for this Authorization header.

    No header: a spectator. The admin key: the admin. A seat's token: that seat. Anything
    else: AuthError(invalid_token) - a wrong token is never silently downgraded to a
    spectator, so a client learns at once that its token is bad.
    """
    game_id = None if meta is None else str(meta["game_id"])
    token = bearer_token(authorization)
    if token is None:
        return Viewer(game_id)
    if is_admin_token(token, admin_key):
        return Viewer(game_id, admin=True, authenticated=True)
    if token.startswith(APP_KEY_PREFIX):
        # An application's key is resolved by the edge (``app_viewer``), never as a seat's.
        raise AuthError("invalid_token", "This application key is unknown or was revoked.")
    if meta is not None:
        seat = seat_of(token, meta.get("seat_token_hashes", []))
        if seat is not None:
            return Viewer(game_id, seat=seat, authenticated=True)
        holder_hash = meta.get("sandbox_token_hash")
        if holder_hash and hmac.compare_digest(token_hash(token), str(holder_hash)):
            return Viewer(game_id, holder=True, authenticated=True)
    raise AuthError("invalid_token", "This token belongs to no seat of this game.")


def require_seat(viewer: Viewer) -> int:
    """The viewer's seat, for what only a seat may do (posting actions)."""
    if viewer.seat is not None:
        return viewer.seat
    if viewer.admin:
        raise AuthError("seat_required", "The admin key acts for no seat; use a seat's token.", 403)
    if viewer.app is not None:
        if not viewer.app_seats:
            raise AuthError("seat_not_held", "Your application holds no seat of this game.", 403)
        raise AuthError(
            "seat_required",
            "Your application holds several seats of this game; act for one through "
            "/games/{id}/seats/{seat}/actions.",
            403,
        )
    if viewer.holder:
        raise AuthError(
            "seat_required",
            "This branch is not waiting for exactly one seat; act for a seat through "
            "/games/{id}/seats/{seat}/actions.",
            403,
        )
    raise AuthError("missing_token", "Send your seat token as 'Authorization: Bearer <token>'.")


def require_seat_or_admin(viewer: Viewer) -> Viewer:
    """The viewer, when it is a seat or the admin (managing a game's webhooks)."""
    if viewer.seat is None and not viewer.admin:
        if viewer.app is not None:
            raise AuthError(
                "seat_not_held", "Your application holds no single seat of this game.", 403
            )
        raise AuthError("missing_token", "Send a seat token or the admin key as a Bearer token.")
    return viewer


def require_admin(viewer: Viewer) -> Viewer:
    """The viewer, when it holds the admin key."""
    if not viewer.admin:
        if not viewer.authenticated:
            raise AuthError("missing_token", "This needs the admin key as a Bearer token.")
        # An application's key included: it is never the admin's.
        raise AuthError("admin_required", "Only the admin key may do this.", 403)
    return viewer
