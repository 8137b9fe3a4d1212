"""Undo and redo over HTTP (docs/history.md; the rules of what may be undone are in
projections/history.py)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from marshmallow import RAISE, Schema, fields, validate

from events.envelope import Envelope, NewEvent
from events.store import ConcurrencyConflict
from projections.fold import Game
from projections.history import redo_event, undo_event
from projections.ruleset import IllegalAction
from service.application import commands
from service.application.auth import (
    AuthError,
)
from service.application.services import Services
from service.config import Config
from service.http.errors import ApiError
from service.http.schemas import GameStatusSchema, ViewField
from service.http.shared import (
    Asker,
    asker_of,
    at_most,
    idempotency_key,
    if_match_version,
    load_game,
    load_query,
    services,
    status_of,
)

bp = Blueprint("undo", __name__)

# -- undo and redo ---------------------------------------------------------------------


class MoveResultSchema(Schema):
    seq = fields.Integer(required=True, metadata={"description": "The undone/redone event"})
    version = fields.Integer(required=True)
    status = fields.Nested(GameStatusSchema, required=True)
    state = ViewField(
        required=True,
        metadata={"description": "The asker's view after it (a spectator's for a branch's holder)"},
    )


@bp.post("/games/<game_id>/undo")
def post_undo(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Take back the last step: appends ``undone``, visible to everyone.
    ---
    post:
      operationId: postUndo
      codes:
        403: [seat_required]
        409: [version_conflict]
        422: [too_many_steps, undo_allowance_spent, idempotency_key_reused, nothing_to_undo,
              before_branch_point, not_your_action, turn_over, hidden_information_revealed]
      tags: [history]
      summary: Undo the last step
      description: >
        A seat may undo only its own actions of its current turn, and never across a step
        that revealed hidden information (codes ``nothing_to_undo``, ``not_your_action``,
        ``turn_over``, ``hidden_information_revealed``). A branch's holder may undo any step
        of the branch after its branch point. ``If-Match`` and ``Idempotency-Key`` work as
        for actions.
      security: [{seatToken: []}, {appKey: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - {in: query, name: steps, schema: {type: integer, minimum: 1, maximum: 100,
           default: 1}, description: "How many steps to undo, last first, in one append (at most
           MEEPLE_MAX_UNDO_STEPS, default 100: more is 422 too_many_steps)"}
      responses:
        201:
          description: Undone; the state after it.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: MoveResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
        422: UnprocessableEntity
    """
    return _undo_or_redo(game_id, "undo")


@bp.post("/games/<game_id>/redo")
def post_redo(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Put back the last undone step: appends ``redone``; the same cards come up again.
    ---
    post:
      operationId: postRedo
      codes:
        403: [seat_required]
        409: [version_conflict]
        422: [too_many_steps, undo_allowance_spent, idempotency_key_reused, nothing_to_redo,
              not_your_action]
      tags: [history]
      summary: Redo the last undone step
      description: >
        A seat may redo only its own undone action (codes ``nothing_to_redo``,
        ``not_your_action``); a new step in between leaves nothing to redo. ``If-Match``
        and ``Idempotency-Key`` work as for actions.
      security: [{seatToken: []}, {appKey: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - {in: query, name: steps, schema: {type: integer, minimum: 1, maximum: 100,
           default: 1}, description: "How many undone steps to redo, in one append (at most
           MEEPLE_MAX_UNDO_STEPS, default 100: more is 422 too_many_steps)"}
      responses:
        201:
          description: Redone; the state after it.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: MoveResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
        422: UnprocessableEntity
    """
    return _undo_or_redo(game_id, "redo")


def _undo_or_redo(game_id: str, what: str) -> tuple[Response, int, dict[str, str]]:
    found = services()
    game = load_game(game_id)
    asker = asker_of(game)
    if asker.admin:
        raise AuthError("seat_required", f"The admin key acts for no seat; it cannot {what}.", 403)
    if asker.app is not None and asker.seat is None:
        raise asker.no_single_seat()
    if asker.anonymous:
        raise AuthError("missing_token", "Send your seat token as 'Authorization: Bearer <token>'.")
    expected = if_match_version()
    key = idempotency_key()
    steps = load_query(MoveQuerySchema())["steps"]
    cap = found.config.max_undo_steps
    at_most(steps, cap, "steps", "too_many_steps", f"{what} in several requests for more")
    check_undo_allowance(game, steps, found.config)
    scoped = None if key is None else f"{what}:{asker.seat}:{key}"
    seat = None if asker.holder else asker.seat
    version = game.version
    try:
        if expected is not None and expected != version:
            raise ConcurrencyConflict(game_id, expected, version)
        events = _decide_moves(game, what, seat, steps)
    except (IllegalAction, ConcurrencyConflict):
        # A retry of a request that went through: answer as the first time.
        earlier = None if scoped is None else _earlier(found, game_id, scoped)
        if earlier is None:
            raise
        return _moved(game_id, earlier, asker, replayed=True)
    # One append for all the steps, so the jobs see only where they lead (undoing an
    # automatic step alone would have it run again at once). A repeated key gets the
    # first result from the store, which appends nothing.
    result = commands.append(found, game_id, events, version, scoped)
    return _moved(game_id, result.envelopes[-1], asker, replayed=result.replayed)


#: How far back an offer looks for the last seat's step behind automatic steps.
OFFER_LOOKBACK = 16


def move_offers(game: Game, asker: Asker) -> dict[str, dict[str, Any]]:
    """Whether ``asker`` may undo and redo now, decided as ``POST .../undo`` and ``.../redo``
    would decide them (the page offers only what would succeed), with the steps to send."""
    return {"undo": _offer(game, asker, "undo"), "redo": _offer(game, asker, "redo")}


def _offer(game: Game, asker: Asker, what: str) -> dict[str, Any]:
    if asker.admin or asker.anonymous:
        code = "seat_required" if asker.admin else "missing_token"
        return {"allowed": False, "steps": None, "code": code}
    steps = _holder_undo_steps(game) if asker.holder and what == "undo" else 1
    # The caller's game stays as it is: deciding moves the stacks of a copy.
    copy = Game(game.ruleset, game.meta, {}, game.version, list(game.effective), list(game.redo))
    try:
        check_undo_allowance(game, steps, services().config)
        _decide_moves(copy, what, None if asker.holder else asker.seat, steps)
    except (IllegalAction, ApiError) as refused:
        return {"allowed": False, "steps": None, "code": refused.code}
    return {"allowed": True, "steps": steps, "code": None}


def _holder_undo_steps(game: Game) -> int:
    """The last seat's step and the automatic steps after it (undoing those alone would only
    have them run again), within the branch's steps after its branch point."""
    undoable = [seq for seq in game.effective if seq > game.floor][-OFFER_LOOKBACK:]
    tops = services().folder.read_events(str(game.meta["game_id"]), undoable)
    for steps, seq in enumerate(reversed(undoable), start=1):
        if tops[seq]["type"] != "system":
            return min(steps, services().config.max_undo_steps)
    return 1


def undo_growth(game: Game) -> int:
    """The events of ``game``'s log that are not the steps it holds now (effective or on
    the redo stack): its header, and every undone and redone with the steps they threw away
    (a new step empties the redo stack). Undo and redo alone make it grow."""
    return game.version - len(game.effective) - len(game.redo)


def check_undo_allowance(game: Game, steps: int, config: Config) -> None:
    """Refuse an undo or redo of ``steps`` that would take the log past its allowance: a
    fixed ``undo_allowance`` and ``undo_allowance_per_step`` for each step the game holds,
    so undo storms cannot grow a game without end (docs/security.md, "What each owner may
    take"); branching from an earlier event explores without growing this game."""
    held = len(game.effective) + len(game.redo)
    allowance = config.undo_allowance + config.undo_allowance_per_step * held
    if undo_growth(game) + steps > allowance:
        raise ApiError(
            422,
            "undo_allowance_spent",
            f"This game's log holds {undo_growth(game)} events of undo and redo (and the steps "
            f"they set aside) for its {held} steps, and may hold {allowance}: play on, or "
            "branch from an earlier event to explore (POST /games/{id}/branches).",
            allowance=allowance,
        )


class MoveQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    # The upper bound is a setting (MEEPLE_MAX_UNDO_STEPS), checked by the view.
    steps = fields.Integer(load_default=1, validate=validate.Range(min=1))


def _decide_moves(game: Game, what: str, seat: int | None, steps: int) -> list[NewEvent]:
    """The ``undone`` (or ``redone``) events for ``steps`` steps, each decided on the game as
    the ones before it leave it (``game`` is the caller's copy; its stacks move here).

    Deciding needs only the effective history and the redo stack, never the state: the
    state after the undos is rebuilt once, from the nearest snapshot, when it is next read
    (docs/history.md, "What undo and redo cost")."""
    taken, put = (game.effective, game.redo) if what == "undo" else (game.redo, game.effective)
    tops = services().folder.read_events(str(game.meta["game_id"]), taken[-steps:])
    decide = undo_event if what == "undo" else redo_event
    events = []
    for _ in range(steps):
        events.append(decide(game, tops.get(taken[-1]) if taken else None, seat))
        put.append(taken.pop())
        game.version += 1
    return events


def _moved(
    game_id: str, envelope: Envelope, asker: Asker, replayed: bool
) -> tuple[Response, int, dict[str, str]]:
    seq = int(envelope["seq"])
    after = load_game(game_id, at=seq)
    body = {
        "seq": seq,
        "version": seq,
        "status": status_of(after),
        "state": after.ruleset.view(after.state, asker.seat),
    }
    headers = {"ETag": f'"{seq}"'}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(body), 201, headers


def _earlier(found: Services, game_id: str, key: str) -> Envelope | None:
    """The last event an earlier request with this Idempotency-Key appended, if any."""
    earlier = None
    for envelope in found.store.read(game_id):
        if envelope.get("idempotency_key") == key:
            earlier = envelope
    return earlier
