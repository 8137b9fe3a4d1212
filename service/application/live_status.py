"""The game as it stands after an event, as every live message carries it (docs/api.md,
"Live streams" and docs/operations.md, "Webhooks"): the stream's messages and the webhooks'
deliveries are made from the same ``Standing``.

A ``Standing`` holds the game's public status after one event (``round``, ``phase``,
``to_act``, ``awaiting_system``, ``finished``, the lobby's ``waiting_for_players`` and
``open_seats``, and ``result`` once finished) and, for each seat that must act then, the
summary of the decision it faces: the ``decision`` part of ``GET .../legal-actions``
(``projections.decisions``), never the list of actions. ``you(seat)`` gives a seat its own
part only: a decision summary may name what the seat holds (its hand's cards), so it goes to
that seat's stream and webhooks and to no one else's.

A seat *must act* when it is in ``to_act`` while no automatic step is pending, the game is not
over and no seat is open (``must_act``); then ``legal-actions`` lists its decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from events.envelope import Envelope
from projections import decisions
from projections.fold import Fetch, Game, Rebuild, advance, copy_state


def public_status(game: Game) -> dict[str, Any]:
    """The game's status as every answer shows it (``GET /games/{id}``, an action's answer):
    nobody acts and no automatic step runs while a seat is open (the lobby)."""
    status = game.ruleset.status(game.state)
    waiting = bool(game.open_seats)
    return {
        "round": status.get("round"),
        "phase": status.get("phase"),
        "to_act": [] if waiting else list(status.get("to_act", [])),
        "awaiting_system": None if waiting else status.get("awaiting_system"),
        "finished": bool(status.get("finished")),
        "waiting_for_players": waiting,
        "open_seats": game.open_seats,
    }


def must_act(status: dict[str, Any], seat: int) -> bool:
    """Whether ``seat`` must act now: awaited, with no step pending and the game going on."""
    return (
        seat in status["to_act"]
        and status["awaiting_system"] is None
        and not status["finished"]
        and not status.get("waiting_for_players")
    )


@dataclass(frozen=True)
class Standing:
    """The game after one event: its public status and the decision each awaited seat faces."""

    version: int
    status: dict[str, Any]
    #: seat -> ``{"types": [...]}`` for every seat that must act (``must_act``)
    decisions: dict[int, dict[str, Any]] = field(default_factory=dict)

    def must_act(self, seat: int) -> bool:
        return seat in self.decisions

    def you(self, seat: int) -> dict[str, Any]:
        """What this seat's own messages add: whether it must act, and the decision it faces
        (no types when it need not act)."""
        return {
            "seat": seat,
            "must_act": self.must_act(seat),
            "decision": self.decisions.get(seat, {"types": []}),
        }

    def message(self, seat: int | None) -> dict[str, Any]:
        """The members a live message adds beside its event: ``status``, and ``you`` for a
        seat's own stream or webhook (``seat`` None: a spectator, the admin, a branch's
        holder)."""
        found: dict[str, Any] = {"status": self.status}
        if seat is not None:
            found["you"] = self.you(seat)
        return found


def standing(game: Game) -> Standing:
    """Where ``game`` stands now (its decisions are described for the seats that must act)."""
    status = public_status(game)
    if status["finished"]:
        status["result"] = copy_state(game.ruleset.result(game.state))
    awaited: dict[int, dict[str, Any]] = {}
    for seat in status["to_act"]:
        if must_act(status, seat):
            described = game.ruleset.describe_actions(game.state, seat)
            chosen, _free = decisions.split_decision(described, game.ruleset.free_action_types)
            # A copy: the game is folded on in place afterwards (``fold_standings``).
            awaited[seat] = {"types": copy_state(chosen)}
    return Standing(game.version, status, awaited)


def fold_standings(
    game: Game, envelopes: Iterable[Envelope], fetch: Fetch, rebuild: Rebuild
) -> dict[int, Standing]:
    """Fold ``envelopes`` (those right after ``game``, in order) into ``game`` in place: where
    the game stands after each of them, by seq."""
    found: dict[int, Standing] = {}
    for envelope in envelopes:
        advance(game, envelope, fetch, rebuild)
        found[game.version] = standing(game)
    return found


class GameHistory:
    """Where a game stood at each version of a range, folded only when asked for (or all at
    once, ``through``: one fold along the range rather than one load per version)."""

    def __init__(self, folder: Any, game_id: str) -> None:
        self.folder = folder
        self.game_id = game_id
        self._standings: dict[int, Standing] = {}

    def standing(self, version: int) -> Standing:
        found = self._standings.get(version)
        if found is None:
            found = self._standings[version] = standing(self.folder.load(self.game_id, at=version))
        return found

    def status(self, version: int) -> dict[str, Any]:
        return self.standing(version).status

    def through(self, envelopes: list[Envelope]) -> None:
        """Know where the game stood after each of ``envelopes`` (contiguous, in seq order)
        and just before the first, folding along them once."""
        unknown = [i for i, e in enumerate(envelopes) if int(e["seq"]) not in self._standings]
        if not unknown:
            return
        wanted = envelopes[unknown[0] :]
        first = int(wanted[0]["seq"])
        if first <= 1:  # the creation opens the log: nothing comes before it
            self.standing(first)
            wanted = wanted[1:]
            if not wanted:
                return
            first = int(wanted[0]["seq"])
        game = self.folder.load(self.game_id, at=first - 1)
        self._standings.setdefault(first - 1, standing(game))
        fetch, rebuild = self.folder.stepper(self.game_id)
        for seq, found in fold_standings(game, wanted, fetch, rebuild).items():
            self._standings.setdefault(seq, found)
