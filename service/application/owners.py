"""Owners: whom a bot game and an analysis are charged to, so the caps on them and the shares of
the compute are counted per owner, not per token (docs/operations.md, "Fair shares").

Tokens are free (every new game hands out fresh ones), so a cap per token holds nobody back.
An owner is therefore

- a client application's key, where one is sent (client applications are not built yet:
  ``owner_for`` takes its id as ``application`` once they are, and nothing else changes);
- else the admin (the operator: never refused by the caps);
- else the client's address (``service.http.limits.client_address``: the /64 network of an
  IPv6 one, where one subscriber holds 2**64 addresses).

An owner is recorded where its game or analysis is created, beside the job state
(``service.application.bot_games``, the analysis's record), never in the game's log: the log
is public once the game ends, and an address is nobody else's business.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The admin's owner key.
ADMIN = "admin"


@dataclass(frozen=True)
class Owner:
    """An owner's key (``address:203.0.113.7``, ``admin``, ``app:<id>``) and whether the
    per-owner caps apply to it (not to the admin)."""

    key: str
    capped: bool = True


def owner_for(*, admin: bool, address: str, application: str | None = None) -> Owner:
    """The owner of a request: its application's key (the seam for client applications),
    else the admin, else its client's address."""
    if application is not None:
        return Owner(f"app:{application}")
    if admin:
        return Owner(ADMIN, capped=False)
    return Owner(f"address:{address}")


def unowned(game_id: str) -> Owner:
    """A game whose owner was never recorded (created before owners were, or by a tool that
    names none): its own owner, so its bots take their own share."""
    return Owner(f"game:{game_id}", capped=False)
