"""What every resource's views share: the services, reading a request (body, query, version
and idempotency headers, who asks), and the answers to a state, legal-actions or action
request. Each resource of the REST API is its own module under ``service.http.resources``
(games and play in ``games``; ``time_travel``, ``undo``, ``branches``, ``audits``, ``lobby`` ...);
this one holds no endpoint.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

from flask import Response, current_app, jsonify, request
from marshmallow import Schema, ValidationError

from projections import decisions
from projections.fold import Game, RulesVersionMismatch
from service.application import apps, commands
from service.application.auth import (
    AuthError,
    Viewer,
    app_viewer,
    bearer_token,
    is_admin_token,
    resolve_viewer,
)
from service.application.live_status import public_status
from service.application.owners import Owner, owner_for
from service.application.services import Services
from service.http import limits
from service.http.app_keys import request_app
from service.http.errors import ApiError
from service.http.json_input import MalformedJson
from service.http.schemas import (
    LEGAL_ACTIONS_MAX_PAGE,
    LEGAL_ACTIONS_PAGE,
    ActionQuerySchema,
    LegalActionsQuerySchema,
)

#: Idempotency-Key and If-Match values a client may send (printable, bounded).
_IDEMPOTENCY_KEY = re.compile(r"^[\x21-\x7e]{1,200}$")
_VERSION_TAG = re.compile(r'^(?:W/)?"?([0-9]{1,18})"?$')

#: The media type of a game's exported log (one envelope a line).
JSONL_MEDIA_TYPE = "application/jsonl"


@functools.cache
def service_version() -> str:
    """The installed meeple-ledger's version (read once: the package's metadata is read from
    disk, which cost ``/health`` half of its time)."""
    try:
        return package_version("meeple-ledger")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0+unknown"


def services() -> Services:
    found: Services = current_app.extensions["meeple"]
    return found


# -- request helpers -------------------------------------------------------------------


def json_body() -> Any:
    """The request's JSON body: 415 unless it says it is JSON, 400 unless it parses."""
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise ApiError(
            415, "unsupported_media_type", "Send the body as JSON (Content-Type: application/json)."
        )
    data = request.get_data(cache=True)  # over MAX_CONTENT_LENGTH: werkzeug answers 413
    try:
        return current_app.json.loads(data)  # service.http.json_input: depth-limited, no duplicates
    except MalformedJson as error:
        raise ApiError(400, "malformed_json", f"The body {error.reason}.") from None


def load_query(schema: Schema) -> dict[str, Any]:
    try:
        loaded: dict[str, Any] = schema.load(request.args.to_dict())
    except ValidationError as error:
        names = ", ".join(sorted(str(name) for name in error.messages_dict))
        raise ApiError(
            422, "invalid_query", f"Invalid query parameters: {names}.", errors=error.messages
        ) from None
    return loaded


def at_most(value: int, cap: int, name: str, code: str, what: str) -> int:
    """``value`` of query parameter ``name``, or 422 ``code`` when it exceeds its ``cap``
    (a setting: each request's work is bounded, whatever a client asks)."""
    if value > cap:
        raise ApiError(
            422,
            code,
            f"{name} may be at most {cap}: {what}.",
            errors={name: [f"At most {cap}."]},
            maximum=cap,
        )
    return value


def authenticate(meta: Mapping[str, Any] | None) -> Viewer:
    """Who asks, in the game of ``meta`` (None: no game; only the admin key is anyone there):
    ``resolve_viewer`` under the rate limits. From an address locked out for its invalid
    tokens a token is refused (429) before it is looked at; a token that proves itself is
    counted by the limits that waited for it, one that does not against its address
    (service.http.limits)."""
    header = request.headers.get("Authorization")
    admin_key = services().config.admin_key
    try:
        token = bearer_token(header)
    except AuthError:
        token = header  # malformed: refused by resolve_viewer, after the lock-out
    if token is not None and not is_admin_token(token, admin_key):
        limits.refuse_locked_out()
    if apps.is_app_key(token):
        app = request_app()
        if app is None:
            raise AuthError("invalid_token", "This application key is unknown or was revoked.")
        held = frozenset() if meta is None else services().apps.held_seats(app.id, meta["game_id"])
        return app_viewer(meta, app.id, held)
    viewer = resolve_viewer(meta, header, admin_key)
    if token is not None and not viewer.admin:
        limits.token_proven(token)
    return viewer


def viewer_of(game: Game | None) -> Viewer:
    """Who asks. A branch's holder speaks here for the one seat the game waits for, if one;
    ``/games/{id}/seats/{seat}/...`` lets it speak for any seat."""
    viewer = authenticate(None if game is None else game.meta)
    if viewer.holder and game is not None:
        to_act = game.ruleset.status(game.state).get("to_act") or []
        if len(to_act) == 1:
            return replace(viewer, seat=int(to_act[0]))
    return viewer


def version_tags(header: str) -> list[str]:
    """The versions an If-Match / If-None-Match header names (``*`` kept as is)."""
    tags = []
    for part in header.split(","):
        part = part.strip()
        if part == "*":
            tags.append("*")
            continue
        match = _VERSION_TAG.match(part)
        if match is None:
            raise ApiError(400, "invalid_header", f'{part!r} is not a game version tag like "7".')
        tags.append(str(int(match.group(1))))
    return tags


def etag(version: int) -> str:
    return f'"{version}"'


def not_modified(version: int) -> Response | None:
    """304 when the request's If-None-Match already names this version, else None."""
    header = request.headers.get("If-None-Match")
    if header is None:
        return None
    tags = version_tags(header)
    if "*" not in tags and str(version) not in tags:
        return None
    response = Response(status=304)
    response.headers["ETag"] = etag(version)
    response.headers["Vary"] = "Authorization"
    return response


def status_of(game: Game) -> dict[str, Any]:
    """The game's status as answers show it (``service.application.live_status``)."""
    return public_status(game)


# -- who asks --------------------------------------------------------------------------


@dataclass(frozen=True)
class Asker:
    """Whoever a request speaks for, in one game."""

    seat: int | None = None
    admin: bool = False
    #: the holder of a branch: acts for every seat of that sandbox game
    holder: bool = False
    #: the client application whose key was sent, and the seats of the game it holds
    app: str | None = None
    app_seats: frozenset[int] = frozenset()

    @property
    def anonymous(self) -> bool:
        """Speaking for no seat: an application's key that holds no single seat here is too
        (it speaks for each of its seats at that seat's own address)."""
        return self.seat is None and not self.admin and not self.holder

    def no_single_seat(self) -> AuthError:
        """What an application's key that holds no single seat of the game is told where a
        seat must act (undo, redo, branching an unfinished game)."""
        return AuthError(
            "seat_required",
            "Your application holds no single seat of this game; only a seat may do this "
            "(send that seat's token).",
            403,
        )


def asker_of(game: Game) -> Asker:
    """The asker for this game's request; a token that is nothing here is refused."""
    viewer = authenticate(game.meta)
    return Asker(
        seat=viewer.seat,
        admin=viewer.admin,
        holder=viewer.holder,
        app=viewer.app,
        app_seats=viewer.app_seats,
    )


def load_game(game_id: str, at: int | None = None) -> Game:
    """The game (after event ``at``); 409 when it was played under other rules."""
    try:
        return commands.load_game(services(), game_id, at=at)
    except RulesVersionMismatch as error:
        raise ApiError(
            409,
            "rules_version_mismatch",
            f"This game was {error.reason}; it cannot be replayed or audited here. "
            "An export can be verified with `meeple verify` on a build that has those rules.",
            title="The game was played under other rules",
        ) from None


def finished(game: Game) -> bool:
    """Whether the game has ended."""
    return bool(game.ruleset.status(game.state).get("finished"))


def if_match_version() -> int | None:
    """The version ``If-Match`` pins (None: not given, or ``*``); 400 for a malformed one."""
    header = request.headers.get("If-Match")
    if header is None:
        return None
    tags = [tag for tag in version_tags(header) if tag != "*"]
    if len(tags) > 1:
        raise ApiError(400, "invalid_header", "If-Match names one version.")
    return int(tags[0]) if tags else None


def idempotency_key() -> str | None:
    """The request's ``Idempotency-Key`` (None: not given); 400 for a malformed one."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not _IDEMPOTENCY_KEY.match(key):
        raise ApiError(
            400, "invalid_header", "An Idempotency-Key is 1 to 200 visible ASCII characters."
        )
    return key


def legal_actions_body(game: Game, seat: int | None) -> dict[str, Any]:
    """The legal-actions answer of ``seat`` (None: a spectator) with the request's ``limit``,
    ``cursor`` and ``list`` (422 for a bad one, 409 for a cursor of another version)."""
    query = load_query(LegalActionsQuerySchema())
    limit = at_most(
        query["limit"],
        LEGAL_ACTIONS_MAX_PAGE,
        "limit",
        "limit_too_large",
        "continue with next_cursor",
    )
    start = 0
    if "cursor" in query:
        version, start = (int(part) for part in query["cursor"].split("."))
        if version != game.version:
            raise ApiError(
                409,
                "version_conflict",
                f"The game has moved on to version {game.version} since this cursor; "
                "ask for the legal actions again.",
                current_version=game.version,
            )
    # While a seat is open the game has not started: nobody may act yet.
    acting = None if game.open_seats else seat
    found = decisions.answer(game.ruleset, game.state, acting, start, limit, query["listed"])
    following = found.pop("next_start")
    return {
        "version": game.version,
        "seat": seat,
        **found,
        "next_cursor": None if following is None else f"{game.version}.{following}",
        "names": value_names(game.ruleset.value_names(), found),
    }


def value_names(known: dict[str, str], found: Any) -> dict[str, str]:
    """The table's name of every id among the answer's values (enums, listed actions): a
    component's name, or for ids joined by "-" (a street between two shops) the names
    joined by "to"."""
    names: dict[str, str] = {}
    stack = [found]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and node not in names:
            parts = node.split("-")
            if node in known:
                names[node] = known[node]
            elif len(parts) > 1 and all(part in known for part in parts):
                names[node] = " to ".join(known[part] for part in parts)
    return names


def prefer_wait(values: list[str], most: int) -> int | None:
    """The seconds a ``Prefer: wait=N`` header asks to wait (RFC 7240), capped at ``most``;
    None when no wait is asked. Other preferences are ignored, as the RFC wants."""
    asked = None
    for value in values:
        for preference in value.split(","):
            name, _, rest = preference.split(";", 1)[0].partition("=")
            if name.strip().lower() != "wait":
                continue
            seconds = rest.strip().strip('"')
            if not seconds.isascii() or not seconds.isdigit() or len(seconds) > 9:
                raise ApiError(
                    400, "invalid_header", "Prefer: wait=N takes a whole number of seconds."
                )
            asked = int(seconds)
    return None if asked is None else min(asked, most)


@dataclass(frozen=True)
class Includes:
    """What the answer to an action includes besides the status and the view (the query)."""

    legal_actions: bool = False
    #: how many legal actions the answer lists at most (the first page of legal-actions)
    limit: int = LEGAL_ACTIONS_PAGE


def action_includes() -> Includes:
    """The request's ``?include=legal_actions`` and ``limit`` (422 for a bad one)."""
    if not request.args:
        return Includes()  # the usual case, without building a schema
    query = load_query(_schema_instance(ActionQuerySchema))
    limit = at_most(
        query["limit"],
        LEGAL_ACTIONS_MAX_PAGE,
        "limit",
        "limit_too_large",
        "continue from legal_actions_summary.next_cursor",
    )
    return Includes(query.get("include") == "legal_actions", limit)


def play_action(
    game_id: str, seat: int, game: Game, checked: bool, location: str
) -> tuple[commands.ActResult, int, dict[str, str]]:
    """Play the request's action for ``seat`` (If-Match, Idempotency-Key and ``Prefer: wait``
    as both action addresses read them): the result, 201 (202 when the automatic steps it made
    due were not done within the wait) and the headers so far (``location``: the game's
    state, for a 202)."""
    found = services()
    expected = if_match_version()
    key = idempotency_key()
    action = load_action(game, json_body())
    wait = prefer_wait(request.headers.getlist("Prefer"), found.config.max_wait_seconds)
    if wait is None:
        result = commands.act(
            found, game_id, seat, action, expected, key, loaded=game, checked=checked
        )
        return result, 201, {}
    waited = commands.act_waiting(
        found,
        game_id,
        seat,
        action,
        expected,
        key,
        wait=wait,
        address=request.remote_addr or "unknown",
        loaded=game,
        checked=checked,
    )
    code, headers = 201, {}
    if waited.applied:
        headers["Preference-Applied"] = f"wait={wait}"
        if not waited.settled:
            code = 202
            headers["Location"] = location
    return waited.result, code, headers


def action_answer(
    result: commands.ActResult,
    seat: int,
    include: Includes,
    code: int = 201,
    headers: dict[str, str] | None = None,
) -> tuple[Response, int, dict[str, str]]:
    """The answer to an action (201, or 202 past a Prefer wait): the appended event's seq,
    the version, the game's status and ``seat``'s view after it, and with ``legal_actions``
    included the first page of what ``seat`` may do next and the decision it answers."""
    game = result.game
    status = status_of(game)
    body: dict[str, Any] = {
        "seq": result.seq,
        "version": result.version,
        "status": status,
        "state": game.ruleset.view(game.state, seat),
    }
    if include.legal_actions:
        # What legal-actions answers at this version: nothing while a step is pending, the
        # game is over or a seat is open; its next_cursor leads on there.
        acting = None if game.open_seats else seat
        found = decisions.answer(game.ruleset, game.state, acting, 0, include.limit, True)
        following = found["next_start"]
        body["legal_actions"] = found["actions"]
        body["legal_actions_summary"] = {
            "decision": found["decision"],
            "free_actions": found["free_actions"],
            "total": found["total"],
            "next_cursor": None if following is None else f"{game.version}.{following}",
        }
    headers = {**(headers or {}), "ETag": etag(result.version)}
    if result.replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(body), code, headers


def load_action(game: Game, body: Any) -> dict[str, Any]:
    """The body as an action of this game, validated by its schema for its ``type``."""
    if not isinstance(body, dict):
        raise ValidationError({"_schema": ["An action is a JSON object with a 'type'."]})
    kind = body.get("type")
    if not isinstance(kind, str):
        raise ValidationError({"type": ["Missing or not a string."]})
    schemas = game.ruleset.action_schemas()
    if not schemas:
        return dict(body)
    schema = schemas.get(kind)
    if schema is None:
        choices = ", ".join(sorted(schemas))
        raise ValidationError(
            {"type": [f"{game.ruleset.title} has no action {kind!r}: {choices}."]}
        )
    loaded: dict[str, Any] = _schema_instance(schema).load(body)
    return loaded


@functools.lru_cache(maxsize=256)
def _schema_instance(schema: type[Schema]) -> Schema:
    """One instance per schema class: building one costs more than the load it serves, and a
    marshmallow schema loads from any number of threads at once."""
    return schema()


def event_number(raw: str, name: str, version: int) -> int:
    """The event number ``raw`` names in query parameter ``name`` (1 to ``version``), or 422."""
    # ASCII digits only: str.isdigit also accepts "²" and "٣", which int() refuses or reads.
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18 or not 1 <= int(raw) <= version:
        raise ApiError(
            422,
            "invalid_query",
            f"{name} must be an event of this game, from 1 to {version}.",
            errors={name: [f"From 1 to {version}."]},
        )
    return int(raw)


def sealed_history(game: Game) -> ApiError:
    """403: up to ``game.sealed_until`` a branch holds its source's secrets (admin only)."""
    return ApiError(
        403,
        "sealed_history",
        f"Up to event {game.sealed_until} this branch holds the secrets of a game that was "
        "still being played when it was made; only the admin may look there.",
        title="This part of the history is sealed",
    )


def request_owner(viewer: Viewer) -> Owner:
    """Whom what this request starts (a bot game, an analysis) is charged to: its client
    application, where its key is sent, else the admin, else the client's address
    (service.application.owners)."""
    return owner_for(
        admin=viewer.admin,
        address=limits.client_address(request.remote_addr),
        application=viewer.app,
    )
