"""The REST API's own endpoints (the webhooks and the stream live in their own blueprints).

Each view's docstring ends with its OpenAPI operation in YAML after ``---``; service.http.openapi
collects them into openapi.yaml (the convention is explained there).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request, url_for

from projections.fold import Game
from projections.ruleset import all_rulesets
from service.application import app_custody, commands
from service.application.auth import AuthError, require_admin, require_seat
from service.application.visibility import sealed_until, visible_envelope
from service.http.errors import ApiError
from service.http.read_cache import spectators_answer
from service.http.resources.undo import move_offers
from service.http.schemas import (
    CreateGameSchema,
    EventQuerySchema,
    GameListQuerySchema,
)
from service.http.shared import (
    Asker,
    action_answer,
    action_includes,
    at_most,
    etag,
    json_body,
    legal_actions_body,
    load_query,
    not_modified,
    play_action,
    request_owner,
    service_version,
    services,
    status_of,
    viewer_of,
)


def seats_of(game: Game) -> list[dict[str, Any]]:
    """Who sits where (service.http.resources.lobby): each seat's name, kind and bot, no token."""
    from service.application.lobby import seats_of as lobby_seats

    return lobby_seats(game)


bp = Blueprint("api", __name__)


# -- endpoints -------------------------------------------------------------------------


@bp.get("/health")
def health() -> tuple[Response, int]:
    """Whether the store and the job queue answer, and which versions run.
    ---
    get:
      operationId: getHealth
      tags: [service]
      summary: Health of the service
      responses:
        200:
          description: Everything answers.
          content:
            application/json:
              schema: HealthSchema
        503:
          description: The store or the queue does not answer, or the store is full.
          content:
            application/json:
              schema: HealthSchema
    """
    found = services()
    store_ok = bool(found.store.ping())
    writes_ok = store_ok and bool(found.store.accepts_writes())
    ping_queue = getattr(found.jobs, "ping", None)
    queue_ok = bool(ping_queue()) if ping_queue is not None else True
    healthy = store_ok and writes_ok and queue_ok
    body = {
        "status": "ok" if healthy else "degraded",
        "store": store_ok,
        "store_writes": writes_ok,
        "queue": queue_ok,
        "version": service_version(),
        "rulesets": {ruleset.id: ruleset.rules_version for ruleset in all_rulesets()},
    }
    return jsonify(body), 200 if healthy else 503


@bp.get("/rulesets/<ruleset_id>/components")
def get_ruleset_components(ruleset_id: str) -> Response:
    """A game's printed components: the card, tile and board tables its rules read.
    ---
    get:
      operationId: getRulesetComponents
      codes: {404: [not_found]}
      tags: [rulesets]
      summary: A game's components (cards, tiles, boards)
      description: >
        Each of the game's component tables by name (for Impression ``shops``,
        ``technologies``, ``orders`` ...; for Impendium ``stars``, ``factions`` ...), exactly
        as the rules read them, so a client shows a card's name and effect from the ids a
        view holds. Only what the box holds: no deck order and no seat's hand.
      parameters:
        - {in: path, name: ruleset_id, required: true,
           schema: {type: string, minLength: 1, maxLength: 64}}
      responses:
        200:
          description: The game's component tables.
          content:
            application/json:
              schema: RulesetComponentsSchema
        404: NotFound
    """
    found = {ruleset.id: ruleset for ruleset in all_rulesets()}.get(ruleset_id)
    if found is None:
        raise ApiError(404, "not_found", f"This service hosts no game called {ruleset_id!r}.")
    response = jsonify(
        {
            "ruleset": found.id,
            "rules_version": found.rules_version,
            "components": found.components(),
        }
    )
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response


@bp.get("/rulesets")
def list_rulesets() -> Response:
    """Every game this service hosts.
    ---
    get:
      operationId: listRulesets
      tags: [rulesets]
      summary: The games this service hosts
      responses:
        200:
          description: Each game's id, title, player counts, rules version and options.
          content:
            application/json:
              schema: RulesetListSchema
    """
    return jsonify(
        {
            "rulesets": [
                {
                    "id": ruleset.id,
                    "title": ruleset.title,
                    "min_players": ruleset.min_players,
                    "max_players": ruleset.max_players,
                    "rules_version": ruleset.rules_version,
                    "options": dict(ruleset.options),
                    "option_descriptions": dict(ruleset.option_descriptions),
                    "actions": sorted(ruleset.action_schemas()),
                }
                for ruleset in all_rulesets()
            ]
        }
    )


@bp.get("/rulesets/<ruleset_id>/view-schema")
def get_view_schema(ruleset_id: str) -> Response:
    """The JSON Schema every view of this game fits (the ``state`` of a state answer).
    ---
    get:
      operationId: getViewSchema
      codes: {404: [not_found]}
      tags: [rulesets]
      summary: The JSON Schema of a game's seat view
      description: >
        A JSON Schema (draft 2020-12) of what ``GET /games/{id}/state`` answers as
        ``state`` for any seat or a spectator of this game; openapi.yaml holds the same
        schema as ``<Game>View``. 404 ``not_found`` for a ruleset this service does not
        host or one that publishes no schema.
      responses:
        200:
          description: The game's view schema.
          content:
            application/schema+json:
              schema: {type: object, description: "A JSON Schema document (draft 2020-12)"}
        404: NotFound
    """
    ruleset = next((r for r in all_rulesets() if r.id == ruleset_id), None)
    published = None if ruleset is None else ruleset.view_schema()
    if published is None:
        raise ApiError(404, "not_found", f"No view schema for a game {ruleset_id!r} here.")
    response = jsonify(published)
    response.mimetype = "application/schema+json"
    return response


@bp.post("/games")
def create_game() -> tuple[Response, int, dict[str, str]]:
    """Create a game; the seats' tokens are in this response only.
    ---
    post:
      operationId: createGame
      codes:
        401: [missing_token]
        403: [admin_required]
        422: [unknown_ruleset, invalid_player_count, unknown_option, invalid_option]
        429: [too_many_open_games, too_many_bot_games]
      tags: [games]
      summary: Create a game
      description: >
        Each player's seat's bearer token is returned here once and never again (the service
        keeps only its hash). A seat may instead be left open (``{"open": true}``, joined
        later: the game waits for its players) or given to a bot (``{"bot": {"agent":
        "mcts", "playouts": 100}}``); docs/api.md, "Lobby" and "Bots". A game with a bot
        counts against its owner's (the client address's) ``MEEPLE_MAX_BOT_GAMES_PER_OWNER``
        and the service's ``MEEPLE_MAX_BOT_GAMES`` while it is under way: 429
        ``too_many_bot_games``, whose ``detail`` says which (not for the admin). A ``seed``
        is accepted only with the admin key. Created with a client application's key, the
        game is that application's and it holds every named player's seat (docs/api.md,
        "Applications"); its bot games count against the application instead of the
        address.
      security: [{}, {appKey: []}, {adminKey: []}]
      requestBody:
        required: true
        content:
          application/json:
            schema: CreateGameSchema
      responses:
        201:
          description: The game, its status and each seat's token.
          headers:
            Location: Location
          content:
            application/json:
              schema: CreatedGameSchema
        401: Unauthorized
        403: Forbidden
    """
    body = CreateGameSchema().load(json_body())
    viewer = viewer_of(None)
    if "seed" in body:
        require_admin(viewer)
    from service.application import lobby

    if not viewer.admin:
        lobby.check_caps(services(), body["players"])
    created = lobby.create_game(
        services(),
        body["ruleset"],
        body["players"],
        body["options"],
        seed=body.get("seed"),
        owner=request_owner(viewer),
    )
    if viewer.app is not None:
        # Created with an application's key: the game is the application's, and so is every
        # player's seat it named (open seats are held by whoever joins them).
        players = [ticket.seat for ticket in created.seats if ticket.kind == "player"]
        app_custody.hold(services(), viewer.app, created.game_id, players)
    # Its status as GET /games/{id} shows it at this version: who acts first (nobody while a
    # seat is open), or the automatic step it awaits.
    game = commands.load_game(services(), created.game_id, at=created.version)
    payload = {
        "id": created.game_id,
        "version": created.version,
        "status": status_of(game),
        "seats": [
            {
                "seat": ticket.seat,
                "name": ticket.name,
                "token": ticket.token,
                "kind": ticket.kind,
                "bot": ticket.bot,
            }
            for ticket in created.seats
        ],
    }
    headers = {
        "Location": url_for("api.get_game", game_id=created.game_id),
        "Cache-Control": "no-store",
    }
    return jsonify(payload), 201, headers


@bp.get("/games")
def list_games() -> Response:
    """Games, newest first, from the game index (updated in the background).
    ---
    get:
      operationId: listGames
      tags: [games]
      summary: List games
      description: >
        Served from a read model the jobs keep up to date from the event feed, so a game
        appears (and its row moves on) a moment after its events are appended.
      parameters:
        - {in: query, name: ruleset, schema: {type: string, minLength: 1, maxLength: 64}}
        - {in: query, name: status, schema: {type: string, enum: [active, finished]}}
        - {in: query, name: player, schema: {type: string, minLength: 1, maxLength: 40},
           description: "A player's name"}
        - {in: query, name: open, schema: {type: boolean},
           description: "true: games waiting for players (a lobby); false: the others"}
        - {in: query, name: sandbox, schema: {type: boolean},
           description: "true: branches and other sandbox games; false: the others"}
        - {in: query, name: branch_of, schema: {type: string, pattern: '^[A-Za-z0-9_-]{1,64}$'},
           description: "Branches made from this game"}
        - {in: query, name: limit, schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
        - {in: query, name: cursor, schema: {type: string, pattern: '^[0-9]{1,18}$'},
           description: "next_cursor of the previous page"}
      responses:
        200:
          description: A page of games.
          content:
            application/json:
              schema: GameListSchema
    """
    query = load_query(GameListQuerySchema())
    page = services().game_index.query(
        ruleset=query.get("ruleset"),
        status=query.get("status"),
        player=query.get("player"),
        open=query.get("open"),
        sandbox=query.get("sandbox"),
        branch_of=query.get("branch_of"),
        limit=query["limit"],
        cursor=query.get("cursor"),
    )
    games = []
    for row in page.rows:
        public = row.public()
        games.append({"id": public.pop("game_id"), **public})
    return jsonify({"games": games, "next_cursor": page.next_cursor})


@bp.get("/games/<game_id>")
def get_game(game_id: str) -> Response:
    """A game's summary: players, version, status, and its result once finished.
    ---
    get:
      operationId: getGame
      tags: [games]
      summary: A game's summary
      parameters:
        - IfNoneMatch
      responses:
        200:
          description: The summary; ``seed`` and ``result`` are null until the game ends.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: GameSummarySchema
        304:
          description: The game has not moved since the version in If-None-Match.
          headers:
            ETag: ETag
    """
    game = commands.load_game(services(), game_id)
    unchanged = not_modified(game.version)
    if unchanged is not None:
        return unchanged
    status = status_of(game)
    finished = status["finished"]
    meta = game.meta
    response = jsonify(
        {
            "id": game_id,
            "ruleset": meta["ruleset"],
            "rules_version": meta["rules_version"],
            "players": meta["players"],
            "options": meta["options"],
            "version": game.version,
            "seed_commitment": meta["seed_commitment"],
            "seed": meta["seed"] if finished else None,
            "status": status,
            "result": game.ruleset.result(game.state) if finished else None,
            "seats": seats_of(game),
        }
    )
    response.headers["ETag"] = etag(game.version)
    return response


@bp.get("/games/<game_id>/state")
def get_state(game_id: str) -> Response:
    """The game as the bearer's seat sees it (a spectator's view without a token).
    ---
    get:
      operationId: getState
      codes: {403: [sealed_history]}
      tags: [play]
      summary: The state as this seat sees it
      security: [{}, {seatToken: []}, {appKey: []}]
      parameters:
        - IfNoneMatch
        - {in: query, name: at, schema: {type: integer, minimum: 1},
           description: "Time travel: the state after event N, as this viewer could see it
             (docs/history.md; If-None-Match is not used then)"}
      responses:
        200:
          description: The seat's view; ``ETag`` is the version it shows (N with ``at``).
          headers:
            ETag: ETag
          content:
            application/json:
              schema: StateSchema
        304:
          description: The game has not moved since the version in If-None-Match.
          headers:
            ETag: ETag
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    if "at" in request.args:
        from service.http.resources.time_travel import state_at

        return state_at(game_id, request.args["at"])
    game = commands.load_game(services(), game_id)
    viewer = viewer_of(game)
    unchanged = not_modified(game.version)
    if unchanged is not None:
        return unchanged
    response = jsonify(
        {
            "id": game_id,
            "version": game.version,
            "seat": viewer.seat,
            "status": status_of(game),
            "state": game.ruleset.view(game.state, viewer.seat),
        }
    )
    response.headers["ETag"] = etag(game.version)
    response.headers["Vary"] = "Authorization"
    response.headers["Cache-Control"] = "private, no-cache"
    return response


@bp.get("/games/<game_id>/legal-actions")
def get_legal_actions(game_id: str) -> Response:
    """What the bearer's seat may do now: the decision described, and its concrete actions,
    each of which can be posted back verbatim.
    ---
    get:
      operationId: getLegalActions
      codes:
        409: [version_conflict]
        422: [limit_too_large]
      tags: [play]
      summary: The seat's legal actions now
      description: >
        ``decision`` describes the action types that answer the decision the game awaits
        from this seat, and ``free_actions`` the free and "at any time" action types,
        apart: for each type its parameters as they stand now (enums of values, integer
        ranges, "choose n of these", "split n among these", values that depend on another
        parameter), so a form or a bot needs no list (docs/api.md, "Decisions").
        ``actions`` is a page of the complete list (``limit``, default 100, at most 1000;
        ``next_cursor`` leads on; a cursor of an older version answers 409
        ``version_conflict``); ``list=false`` leaves the list out.
        Empty for a spectator, for a seat with nothing to do, and while an automatic step
        is pending (``status.awaiting_system`` of the game).
      security: [{}, {seatToken: []}, {appKey: []}]
      parameters:
        - IfNoneMatch
        - LegalActionsLimit
        - LegalActionsCursor
        - LegalActionsList
      responses:
        200:
          description: The legal actions at this version.
          headers:
            ETag: ETag
          content:
            application/json:
              schema: LegalActionsSchema
        304:
          description: The game has not moved since the version in If-None-Match.
          headers:
            ETag: ETag
        401: Unauthorized
    """
    game = commands.load_game(services(), game_id)
    viewer = viewer_of(game)
    body = legal_actions_body(game, viewer.seat)
    asker = Asker(seat=viewer.seat, admin=viewer.admin, holder=viewer.holder)
    body.update(move_offers(game, asker))
    unchanged = not_modified(game.version)
    if unchanged is not None:
        return unchanged
    response = jsonify(body)
    response.headers["ETag"] = etag(game.version)
    response.headers["Vary"] = "Authorization"
    return response


@bp.post("/games/<game_id>/actions")
def post_action(game_id: str) -> tuple[Response, int, dict[str, str]]:
    """Play one action for the bearer's seat.
    ---
    post:
      operationId: postAction
      codes:
        403: [seat_required, seat_not_held]
        409: [version_conflict, awaiting_system_step, seats_open]
        422: [idempotency_key_reused, game_finished, not_your_turn, illegal_action, rules]
      tags: [play]
      summary: Play an action
      description: >
        The body is one action object, as ``legal-actions`` lists them. ``If-Match`` pins
        the version the action was chosen at (stale: 409, nothing appended);
        ``Idempotency-Key`` makes a retry return the first response and append nothing.
        ``Prefer: wait=N`` (RFC 7240) lets the answer wait up to N seconds (at most
        MEEPLE_MAX_WAIT) for the automatic steps the game awaits: before the action (instead
        of 409 awaiting_system_step) and after it (the state shown is after them, with
        ``Preference-Applied``); past N seconds the action is answered with 202 and the
        ``Location`` of the game's state, still awaiting its step.
        The answer carries the game's ``status`` after the action and, with
        ``?include=legal_actions``, what this seat may do next: the first ``limit`` (default
        100, at most 1000) of its legal actions and ``legal_actions_summary`` (the decision
        and the free actions described, how many in all, and the ``next_cursor`` of
        legal-actions for the rest), so a bot plays with one request per action.
      security: [{seatToken: []}, {appKey: []}]
      parameters:
        - IfMatch
        - IdempotencyKey
        - Prefer
        - Include
        - LegalActionsLimit
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Action'}
      responses:
        201:
          description: Appended; the game's status and the seat's view after it (and
            after the automatic steps it made due, with Prefer wait).
          headers:
            ETag: ETag
            Idempotent-Replayed: IdempotentReplayed
            Preference-Applied: PreferenceApplied
          content:
            application/json:
              schema: ActionResultSchema
        202:
          description: Appended, but its automatic steps were not done within the wait asked
            for (Prefer wait); the seat's view after the action, and where to look next.
          headers:
            ETag: ETag
            Location: Location
            Preference-Applied: PreferenceApplied
            Idempotent-Replayed: IdempotentReplayed
          content:
            application/json:
              schema: ActionResultSchema
        401: Unauthorized
        403: Forbidden
        409: Conflict
    """
    found = services()
    game, checked = commands.load_for_action(found, game_id)
    try:
        seat = require_seat(viewer_of(game))
    except AuthError:
        if checked:
            raise
        # The cache may not know a seat taken a moment ago in another process: ask the store.
        game, checked = commands.load_game(found, game_id), True
        seat = require_seat(viewer_of(game))
    include = action_includes()
    location = url_for("api.get_state", game_id=game_id)
    result, code, headers = play_action(game_id, seat, game, checked, location)
    return action_answer(result, seat, include, code, headers)


@bp.get("/games/<game_id>/events")
def get_events(game_id: str) -> Response:
    """The game's log as this viewer may see it.
    ---
    get:
      operationId: getEvents
      codes: {422: [limit_too_large]}
      tags: [play]
      summary: The event log
      description: >
        Secret parts of events are shown only to the seats they name, and to everyone once
        the game has finished; a withheld part is ``secret: null`` with ``redacted: true``.
        Pages of at most ``MEEPLE_MAX_PAGE`` (default 1000) events, larger ``limit`` gets
        422 ``limit_too_large``; ``next_after`` is the next page's ``after``.
      security: [{}, {seatToken: []}, {appKey: []}, {adminKey: []}]
      parameters:
        - {in: query, name: after, schema: {type: integer, minimum: 0, default: 0},
           description: "Events with seq greater than this"}
        - {in: query, name: limit, schema: {type: integer, minimum: 1, maximum: 1000,
           default: 100}}
      responses:
        200:
          description: Up to ``limit`` events after ``after``.
          content:
            application/json:
              schema: EventPageSchema
        401: Unauthorized
        422: UnprocessableEntity
    """
    found = services()
    game = commands.load_game(found, game_id)
    viewer = viewer_of(game)
    query = load_query(EventQuerySchema())
    cap = found.config.max_page
    at_most(query["limit"], cap, "limit", "limit_too_large", "continue with next_after")

    def page() -> Response:
        finished = bool(game.ruleset.status(game.state).get("finished"))
        sealed = sealed_until(game.meta)
        envelopes = found.store.read(game_id, after=query["after"], limit=query["limit"])
        events = [
            visible_envelope(
                envelope,
                viewer.seat,
                finished=finished,
                admin=viewer.admin,
                sealed=sealed,
                every_seat=viewer.holder,
            )
            for envelope in envelopes
            if envelope["seq"] <= game.version
        ]
        last = events[-1]["seq"] if events else query["after"]
        following = last if last < game.version else None
        return jsonify({"events": events, "version": game.version, "next_after": following})

    if viewer.spectator and not viewer.authenticated:
        # The same page for every spectator until the game moves on: answered once.
        key = ("events", game_id, game.version, query["after"], query["limit"])
        return spectators_answer(key, page)
    return page()
