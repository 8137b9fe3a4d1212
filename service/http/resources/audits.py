"""Audits and exports over HTTP: a game's chain, re-fold and automatic steps checked, and its
whole log as JSON Lines (docs/history.md)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from flask.blueprints import BlueprintSetupState
from marshmallow import Schema, fields

from projections.audit import AuditCache, audit, audit_branch_source, jsonl_lines, read_log
from projections.fold import Game
from service.application import commands
from service.http.errors import ApiError
from service.http.shared import (
    JSONL_MEDIA_TYPE,
    asker_of,
    finished,
    load_game,
    sealed_history,
    services,
)

bp = Blueprint("audits", __name__)

# -- audit and export --------------------------------------------------------------------


class AuditSchema(Schema):
    id = fields.String(required=True)
    ok = fields.Boolean(required=True)
    events = fields.Integer(required=True)
    seq = fields.Integer(
        required=True, allow_none=True, metadata={"description": "The first failing event"}
    )
    reason = fields.String(required=True, allow_none=True)
    finished = fields.Boolean(required=True)
    system_steps_checked = fields.Integer(required=True)
    seed_checked = fields.Boolean(
        required=True, metadata={"description": "The revealed seed matches its commitment"}
    )
    source_checked = fields.Boolean(
        required=True,
        metadata={"description": "A branch: its copy of the source's events was checked"},
    )


@bp.get("/games/<game_id>/audit")
def get_audit(game_id: str) -> Response:
    """Verify the game's log: ``ok``, or the first failing seq and why.
    ---
    get:
      operationId: getAudit
      tags: [history]
      summary: Audit the game
      description: >
        Checks the hash chain, re-folds every event under the rules the game was played
        with, recomputes every automatic step and compares it, and once the game has
        finished checks the revealed seed against its commitment. For a branch, also that it
        copied its source faithfully up to the branch point. ``meeple verify`` does the same
        offline on an export.
      security: [{}, {seatToken: []}, {adminKey: []}]
      responses:
        200:
          description: The audit's outcome.
          content:
            application/json:
              schema: AuditSchema
        401: Unauthorized
        409: Conflict
    """
    found = services()
    game = load_game(game_id)
    asker_of(game)
    last = found.store.read(game_id, after=game.version - 1, limit=1)
    key = (game_id, game.version, last[0]["hash"] if last else None)
    outcome = audits().get(key, lambda: _audit(game_id, game))
    return jsonify(outcome)


def _audit(game_id: str, game: Game) -> dict[str, Any]:
    found = services()
    envelopes = found.store.read(game_id, after=0, limit=game.version)
    report = audit(envelopes)
    source_checked = False
    branch = game.meta.get("branch")
    if report.ok and branch is not None:
        source = found.store.read(str(branch["source"]), after=0, limit=int(branch["at"]))
        if source:
            copied = audit_branch_source(envelopes, source)
            source_checked = copied.ok
            if not copied.ok:
                report = copied
    return {"id": game_id, **report.to_dict(), "source_checked": source_checked}


def audits() -> AuditCache:
    """This process's audit outcomes (docs/history.md, "What an audit costs")."""
    found: AuditCache = current_app.extensions["meeple_audits"]
    return found


@bp.get("/games/<game_id>/export")
def get_export(game_id: str) -> Response:
    """The whole log as JSON Lines, secrets included, for ``meeple verify``.
    ---
    get:
      operationId: exportGame
      codes: {403: [game_not_finished, sealed_history]}
      tags: [history]
      summary: Export the log
      description: >
        One canonical JSON envelope a line, exactly as stored, so anyone can check the
        hash chain and replay the game offline. Only once the game has finished (code
        ``game_not_finished`` before), or to the admin; a branch made while its source was
        being played only once that source has finished too (``sealed_history``).
      security: [{}, {adminKey: []}]
      responses:
        200:
          description: The log, as a file named ``<game_id>.jsonl``.
          headers:
            Content-Disposition:
              description: '``attachment; filename="<game_id>.jsonl"``'
              schema: {type: string}
          content:
            application/jsonl:
              schema:
                type: string
                format: binary
                description: >
                  JSON Lines: one event envelope a line (an Event, secrets included,
                  canonical JSON as stored: sorted keys, no spaces), oldest first, each line
                  ending with a newline; read it line by line, not as one JSON document.
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    found = services()
    game = load_game(game_id)
    asker = asker_of(game)
    if not asker.admin:
        if not finished(game):
            raise ApiError(
                403,
                "game_not_finished",
                "The full log holds every secret, so it is exported only once the game has "
                "ended (or to the admin); GET /games/{id}/events shows what you may see now.",
                title="The game has not finished",
            )
        if game.sealed_until and not _source_finished(game):
            raise sealed_history(game)
    # Streamed a page of events at a time: a long log never sits whole in memory.
    lines = jsonl_lines(read_log(found.store, game_id, upto=game.version))
    response = Response(lines, mimetype=JSONL_MEDIA_TYPE)
    response.headers["Content-Disposition"] = f'attachment; filename="{game_id}.jsonl"'
    return response


def _source_finished(game: Game) -> bool:
    """Whether the game a sealed branch keeps secrets of has finished since (then they are
    secrets no more); the sealed levels of a branch of a branch are checked in turn."""
    source = str(game.meta["branch"]["source"])
    try:
        found = load_game(source)
    except (commands.GameNotFound, ApiError):
        return False
    return finished(found) and (not found.sealed_until or _source_finished(found))


@bp.record_once
def _open_audits(state: BlueprintSetupState) -> None:
    extensions = state.app.extensions
    extensions["meeple_audits"] = AuditCache(extensions["meeple"].config.audit_cache_size)
