"""What of an event a viewer may see (DESIGN.md, "Secrets").

Before a game ends, an event's ``secret`` part is shown only to the seats it names in
``visible_to`` (the seed and the token hashes are visible to nobody); once the game has
finished, or to the admin, every event is shown whole, so anyone can check the seed
against its commitment and replay the game offline. The one exception: the copied part of
a branch made from an unfinished game (``sealed``, see ``sealed_until``) stays sealed for
everyone but the admin.
"""

from __future__ import annotations

from typing import Any

from events.envelope import Envelope


def seat_changes_hands(envelope: Envelope, seat: int | None) -> bool:
    """Whether ``envelope`` ends what a seat's token started: the seat was left, joined,
    given to a bot, or its token renewed (``seat_changed``). A live stream or a webhook that
    the seat's token opened speaks for whoever held it then, so it stops there: the next
    holder's secrets never reach the last one (docs/api.md, "Lobby": "Seats change hands")."""
    return (
        seat is not None
        and envelope["type"] == "seat_changed"
        and envelope["data"].get("seat") == seat
    )


def seat_left(envelope: Envelope, seat: int | None) -> bool:
    """Whether ``envelope`` opens the seat again (``left``): what a client application held
    there ends (a token renewed leaves the application holding the seat: its custody is not a
    token's)."""
    data = envelope.get("data") or {}
    return (
        seat is not None
        and envelope["type"] == "seat_changed"
        and data.get("change") == "left"
        and data.get("seat") == seat
    )


def sealed_until(meta: dict[str, Any]) -> int:
    """The last seq whose secret stays sealed for all but the admin: the copied part of a
    branch made while its source was unfinished (the source's seed, the other seats'
    secrets), which stays sealed even after the branch ends (projections.history)."""
    return int(meta.get("branch", {}).get("sealed_until", 0))


def may_see_secret(
    envelope: Envelope,
    seat: int | None,
    *,
    finished: bool,
    admin: bool,
    sealed: int = 0,
    every_seat: bool = False,
) -> bool:
    """Whether this viewer may see the event's secret part. ``every_seat``: the viewer holds
    every seat (a branch's holder) and sees every seat's secrets, never the seed."""
    secret = envelope.get("secret")
    if not secret or admin:
        return True
    if envelope["seq"] <= sealed:
        return False
    if finished:
        return True
    visible_to = secret.get("visible_to", [])
    if every_seat:
        return bool(visible_to)
    return seat is not None and seat in visible_to


def visible_envelope(
    envelope: Envelope,
    seat: int | None,
    *,
    finished: bool,
    admin: bool = False,
    sealed: int = 0,
    every_seat: bool = False,
) -> dict[str, Any]:
    """The envelope as this viewer may see it: whole, or with its secret part withheld.

    A withheld envelope keeps every other field (its hash included) and says so with
    ``"redacted": true``; its hash then cannot be rechecked by that viewer, by design.
    """
    if may_see_secret(
        envelope, seat, finished=finished, admin=admin, sealed=sealed, every_seat=every_seat
    ):
        return dict(envelope)
    redacted = dict(envelope)
    redacted["secret"] = None
    redacted["redacted"] = True
    return redacted
