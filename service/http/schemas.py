"""Request and response bodies as marshmallow schemas (and, through apispec, openapi.yaml).

Response schemas describe what the service sends; they are used for documentation and by
the tests that check every response against openapi.yaml, not to filter responses.
"""

from __future__ import annotations

from typing import Any

from marshmallow import INCLUDE, RAISE, Schema, ValidationError, fields, validate

from service.application.bot_seats import BotSchema, BotSeatSchema, OpenSeatSchema

#: A name a person reads at the table; bounded so a listing stays a listing.
PLAYER_NAME = validate.Length(min=1, max=40)


class ReadyChecksSchema(Schema):
    store = fields.Boolean(required=True, metadata={"description": "The event store answers"})
    redis = fields.Boolean(
        metadata={"description": "The Redis of the queues answers (when MEEPLE_REDIS_URL is set)"}
    )
    queues = fields.Boolean(required=True, metadata={"description": "The job queues answer"})


class ProblemSchema(Schema):
    """An error (RFC 9457 problem details) with the API's stable ``code``."""

    type = fields.String(required=True, metadata={"description": "Link to the code's entry"})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True, metadata={"description": "A sentence a player reads"})
    code = fields.String(required=True, metadata={"description": "Stable snake_case code"})
    errors = fields.Dict(metadata={"description": "Invalid fields and what is wrong with each"})
    current_version = fields.Integer(metadata={"description": "With version_conflict"})
    step = fields.String(metadata={"description": "With awaiting_system_step: the pending step"})
    retry_after = fields.Integer(
        metadata={
            "description": "With a Retry-After header (429, 409 and 503 only): the same whole "
            "seconds, at least 1"
        }
    )
    maximum = fields.Float(
        metadata={
            "description": "With a cap's code (limit_too_large, too_many_steps,"
            " budget_too_large): the largest value allowed"
        }
    )
    checks = fields.Nested(
        ReadyChecksSchema, metadata={"description": "With not_ready: what answers (true) and not"}
    )


class ReadySchema(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["ready"]))
    checks = fields.Nested(ReadyChecksSchema, required=True)


class HealthSchema(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["ok", "degraded"]))
    store = fields.Boolean(required=True, metadata={"description": "The event store answers"})
    store_writes = fields.Boolean(
        required=True,
        metadata={
            "description": "The store takes writes: false once its memory (Redis maxmemory "
            "under noeviction) or disk is full, when every write answers 503 store_full"
        },
    )
    queue = fields.Boolean(required=True, metadata={"description": "The job queue answers"})
    version = fields.String(required=True, metadata={"description": "The service's version"})
    rulesets = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={"description": "ruleset id -> rules_version"},
    )


class RulesetSchema(Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    min_players = fields.Integer(required=True)
    max_players = fields.Integer(required=True)
    rules_version = fields.String(required=True)
    options = fields.Dict(required=True, metadata={"description": "option name -> default"})
    option_descriptions = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "option name -> what it means, its values and its default (for "
            "instance why a round limit exists where the rulebook sets no end)"
        },
    )
    actions = fields.List(
        fields.String(), required=True, metadata={"description": "The action types of this game"}
    )


class RulesetListSchema(Schema):
    rulesets = fields.List(fields.Nested(RulesetSchema), required=True)


class SeatField(fields.Field):
    """A seat of a new game: a player's name, ``{"open": true}`` or ``{"bot": {...}}``
    (service.http.resources.lobby, service.application.bots)."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Any:
        if isinstance(value, str):
            PLAYER_NAME(value)
            return value
        if isinstance(value, dict) and "open" in value:
            return OpenSeatSchema().load(value)
        if isinstance(value, dict) and "bot" in value:
            return BotSeatSchema().load(value)
        raise ValidationError('A name, {"open": true} or {"bot": {"agent": ...}}.')


#: How a seat of a new game is described in openapi.yaml.
SEAT_SPEC = {
    "oneOf": [
        {"type": "string", "minLength": 1, "maxLength": 40, "description": "A player's name"},
        {"$ref": "#/components/schemas/OpenSeat"},
        {"$ref": "#/components/schemas/BotSeat"},
    ]
}


class CreateGameSchema(Schema):
    """POST /games: a new game of ``ruleset`` for these players, seated in this order."""

    class Meta:
        unknown = RAISE

    ruleset = fields.String(required=True, validate=validate.Length(min=1, max=64))
    players = fields.List(
        SeatField(metadata=SEAT_SPEC),
        required=True,
        validate=validate.Length(min=1, max=16),
        metadata={
            "description": "One per seat, in seating order: a player's name, an open seat or a bot"
        },
    )
    options = fields.Dict(keys=fields.String(), load_default=dict)
    seed = fields.String(
        validate=validate.Length(min=1, max=256),
        metadata={"description": "Only with the admin key; otherwise the server draws one"},
    )


class SeatTokenSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    token = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The seat's bearer token: shown only once (null for an open seat "
            "and a bot's)"
        },
    )
    kind = fields.String(required=True, validate=validate.OneOf(["player", "open", "bot"]))
    bot = fields.Nested(
        BotSchema, required=True, allow_none=True, metadata={"description": "A bot's agent"}
    )


class SeatSchema(Schema):
    """Who sits at a seat (no token)."""

    seat = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(["player", "open", "bot"]))
    bot = fields.Nested(
        BotSchema,
        required=True,
        allow_none=True,
        metadata={"description": "A bot's agent and playouts; null for other seats"},
    )


class CreatedGameSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.Nested(
        "GameStatusSchema",
        required=True,
        metadata={"description": "The game's status at creation: who acts first"},
    )
    seats = fields.List(fields.Nested(SeatTokenSchema), required=True)


class GameStatusSchema(Schema):
    round = fields.Integer(required=True, allow_none=True)
    phase = fields.String(required=True, allow_none=True)
    to_act = fields.List(fields.Integer(), required=True)
    awaiting_system = fields.String(required=True, allow_none=True)
    finished = fields.Boolean(required=True)
    waiting_for_players = fields.Boolean(
        metadata={"description": "A seat is open: nobody acts until it is joined (the lobby)"}
    )
    open_seats = fields.List(fields.Integer(), metadata={"description": "Seats to join"})


class ScoreSchema(Schema):
    """One seat's final score (a game may add its own keys: tie-breakers, leftovers)."""

    class Meta:
        unknown = INCLUDE

    seat = fields.Integer(required=True)
    total = fields.Integer(required=True, metadata={"description": "Victory points in all"})
    breakdown = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        required=True,
        metadata={"description": "Where the points came from, by the rulebook's own names"},
    )


class GameResultSchema(Schema):
    """Who won: each seat's score with its breakdown, and the ranking after the tie-breakers
    (a game may add its own keys, such as Impendium's ``outcome``)."""

    class Meta:
        unknown = INCLUDE

    scores = fields.List(fields.Nested(ScoreSchema), required=True)
    ranking = fields.List(
        fields.List(fields.Integer()),
        required=True,
        metadata={"description": "Seats by place, first place first; seats tied share a place"},
    )


class ActorSchema(Schema):
    """Who made an event: a seat (``seat``) or the service's automatic step (``system``)."""

    seat = fields.Integer(metadata={"description": "The seat that acted"})
    system = fields.String(metadata={"description": "The automatic step's name"})


class GameSummarySchema(Schema):
    id = fields.String(required=True)
    ruleset = fields.String(required=True)
    rules_version = fields.String(required=True)
    players = fields.List(fields.String(), required=True)
    options = fields.Dict(required=True)
    version = fields.Integer(required=True)
    seed_commitment = fields.String(required=True)
    seed = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Revealed once the game has finished, null before"},
    )
    status = fields.Nested(GameStatusSchema, required=True)
    result = fields.Nested(
        GameResultSchema,
        required=True,
        allow_none=True,
        metadata={"description": "Scores with their breakdown and the ranking, once finished"},
    )
    seats = fields.List(fields.Nested(SeatSchema), required=True)


class GameRowSchema(Schema):
    id = fields.String(required=True)
    ruleset = fields.String(required=True)
    players = fields.List(fields.String(), required=True)
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["active", "finished"]))
    round = fields.Integer(required=True, allow_none=True)
    phase = fields.String(required=True, allow_none=True)
    to_act = fields.List(fields.Integer(), required=True)
    awaiting_system = fields.String(required=True, allow_none=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(
        required=True, metadata={"description": "Never before created_at (branches included)"}
    )
    open_seats = fields.List(
        fields.Integer(), required=True, metadata={"description": "Seats waiting for a player"}
    )
    bots = fields.List(fields.Integer(), required=True, metadata={"description": "Bot seats"})
    sandbox = fields.Boolean(required=True, metadata={"description": "A branch or a sandbox"})
    branch_of = fields.String(
        required=True, allow_none=True, metadata={"description": "The game a branch was made from"}
    )


class GameListSchema(Schema):
    games = fields.List(fields.Nested(GameRowSchema), required=True)
    next_cursor = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "Pass as ?cursor= for the next page; null on the last"},
    )


class GameListQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    ruleset = fields.String(validate=validate.Length(min=1, max=64))
    status = fields.String(validate=validate.OneOf(["active", "finished"]))
    player = fields.String(validate=PLAYER_NAME)
    open = fields.Boolean()
    sandbox = fields.Boolean()
    branch_of = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_-]{1,64}$"))
    limit = fields.Integer(load_default=20, validate=validate.Range(1, 100))
    cursor = fields.String(validate=validate.Regexp(r"^[0-9]{1,18}$"))


class ActionField(fields.Dict):
    """An action of the game's ruleset, as legal-actions lists it and POST .../actions takes it:
    ``Action`` in openapi.yaml (any game's ``<Game>Action``, a union discriminated by ``type``)."""


class ViewField(fields.Dict):
    """The game as one seat (or a spectator) sees it: ``View`` in openapi.yaml (any game's
    ``<Game>View``, each game's published JSON Schema of its view)."""


class StateSchema(Schema):
    id = fields.String(required=True)
    version = fields.Integer(required=True)
    seat = fields.Integer(
        required=True, allow_none=True, metadata={"description": "null for a spectator"}
    )
    status = fields.Nested(GameStatusSchema, required=True)
    state = ViewField(required=True, metadata={"description": "The game as this seat sees it"})


class _ParamRuleSchema(Schema):
    """What a parameter (or one case of a dependent one) allows; which members are present
    depends on ``kind`` (projections/decisions.py, docs/api.md "Decisions")."""

    kind = fields.String(
        validate=validate.OneOf(["enum", "range", "choose", "split"]),
        metadata={"description": "Absent in a case: enum"},
    )
    values = fields.List(fields.Raw(), metadata={"description": "enum: the allowed values"})
    omit = fields.Boolean(metadata={"description": "The key may also be left out"})
    min = fields.Integer(metadata={"description": "range: the least integer"})
    max = fields.Integer(metadata={"description": "range: the greatest integer"})
    from_ = fields.List(
        fields.Raw(), data_key="from", metadata={"description": "choose: the items to pick from"}
    )
    count = fields.Integer(metadata={"description": "choose: how many items the list holds"})
    distinct = fields.Boolean(metadata={"description": "choose: no item twice"})
    ordered = fields.Boolean(metadata={"description": "choose: another order is another action"})
    parts = fields.List(
        fields.String(), metadata={"description": "split: one integer per label, in order"}
    )
    min_each = fields.Integer(metadata={"description": "split: the least per part"})
    max_each = fields.Integer(metadata={"description": "split: the most per part"})
    total_min = fields.Integer(metadata={"description": "split: the least sum"})
    total_max = fields.Integer(metadata={"description": "split: the greatest sum"})
    max_per_part = fields.List(
        fields.Integer(), metadata={"description": "split: each part's own greatest integer"}
    )
    object = fields.Boolean(
        metadata={"description": "split: an object of part: integer, the parts at 0 left out"}
    )


class ParamCaseSchema(_ParamRuleSchema):
    when = fields.Dict(
        required=True,
        metadata={
            "description": "The values of the depends_on parameters this case is for; a name "
            "missing here means the action leaves that key out"
        },
    )


class ActionParamSchema(_ParamRuleSchema):
    name = fields.String(required=True, metadata={"description": "The action's key"})
    depends_on = fields.List(
        fields.String(),
        metadata={"description": "Earlier parameters whose values decide this one's (cases)"},
    )
    cases = fields.List(fields.Nested(ParamCaseSchema))


class ActionTypeDescriptionSchema(Schema):
    type = fields.String(required=True, metadata={"description": "The action type"})
    count = fields.Integer(
        required=True, metadata={"description": "How many concrete actions of the type"}
    )
    exact = fields.Boolean(
        required=True,
        metadata={"description": "Every action the description allows is legal now"},
    )
    params = fields.List(
        fields.Nested(ActionParamSchema),
        required=True,
        metadata={"description": "In order: a parameter depends only on earlier ones"},
    )


class DecisionSchema(Schema):
    types = fields.List(fields.Nested(ActionTypeDescriptionSchema), required=True)


#: A page of legal actions: by default and at most (``limit``).
LEGAL_ACTIONS_PAGE = 100
LEGAL_ACTIONS_MAX_PAGE = 1000
#: A legal-actions cursor: the version it was made at and the next page's first index.
LEGAL_ACTIONS_CURSOR = r"^[0-9]{1,18}\.[0-9]{1,9}$"


class LegalActionsQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    # The upper bound is checked by the view (422 limit_too_large).
    limit = fields.Integer(load_default=LEGAL_ACTIONS_PAGE, validate=validate.Range(min=1))
    cursor = fields.String(validate=validate.Regexp(LEGAL_ACTIONS_CURSOR))
    listed = fields.Boolean(data_key="list", load_default=True)


class MoveOfferSchema(Schema):
    allowed = fields.Boolean(
        required=True,
        metadata={"description": "Whether the request would succeed now, at this version"},
    )
    steps = fields.Integer(
        required=True,
        allow_none=True,
        metadata={
            "description": "The ``steps`` to send: for a branch's holder, the last seat's step "
            "and the automatic steps after it; null when not allowed"
        },
    )
    code = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "When not allowed, the code the request would be refused with"},
    )


class LegalActionsSchema(Schema):
    version = fields.Integer(required=True)
    seat = fields.Integer(required=True, allow_none=True)
    decision = fields.Nested(
        DecisionSchema,
        required=True,
        metadata={"description": "The decision awaited: the action types that answer it"},
    )
    free_actions = fields.Nested(
        DecisionSchema,
        required=True,
        metadata={"description": 'Free and "at any time" action types, apart'},
    )
    actions = fields.List(
        ActionField(),
        required=True,
        metadata={
            "description": "A page of the complete list (decision and free actions, in the "
            "game's order); each can be posted back verbatim. Empty with list=false"
        },
    )
    total = fields.Integer(required=True, metadata={"description": "How many legal actions in all"})
    next_cursor = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "The cursor of the next page; null on the last"},
    )
    names = fields.Dict(
        keys=fields.String(),
        values=fields.String(),
        required=True,
        metadata={
            "description": "The name the table shows for each id among the values above (a "
            "shop, a tile, a character, a faction), from the game's component tables"
        },
    )
    undo = fields.Nested(
        MoveOfferSchema,
        required=True,
        metadata={"description": "Whether POST .../undo would succeed now, and its steps"},
    )
    redo = fields.Nested(
        MoveOfferSchema,
        required=True,
        metadata={"description": "Whether POST .../redo would succeed now"},
    )


class LegalActionsSummarySchema(Schema):
    """What legal-actions says besides its page, in an action's answer."""

    decision = fields.Nested(
        DecisionSchema,
        required=True,
        metadata={"description": "The decision awaited: the action types that answer it"},
    )
    free_actions = fields.Nested(
        DecisionSchema,
        required=True,
        metadata={"description": 'Free and "at any time" action types, apart'},
    )
    total = fields.Integer(required=True, metadata={"description": "How many legal actions in all"})
    next_cursor = fields.String(
        required=True,
        allow_none=True,
        metadata={
            "description": "The cursor of legal-actions for the rest of the list (same "
            "version); null when legal_actions holds them all"
        },
    )


class ActionResultSchema(Schema):
    seq = fields.Integer(required=True)
    version = fields.Integer(required=True)
    status = fields.Nested(GameStatusSchema, required=True)
    state = ViewField(required=True, metadata={"description": "The seat's view after it"})
    legal_actions = fields.List(
        ActionField(),
        metadata={
            "description": "With ?include=legal_actions: what this seat may do next, the "
            "first page (limit) of the list legal-actions gives at this version (empty while "
            "an automatic step is pending or once the game is over)"
        },
    )
    legal_actions_summary = fields.Nested(
        LegalActionsSummarySchema,
        metadata={"description": "With ?include=legal_actions: the decision those answer"},
    )


class ActionQuerySchema(Schema):
    """POST .../actions: what to include in the answer besides the seat's view."""

    class Meta:
        unknown = RAISE

    include = fields.String(validate=validate.OneOf(["legal_actions"]))
    # The upper bound is checked by the view (422 limit_too_large).
    limit = fields.Integer(load_default=LEGAL_ACTIONS_PAGE, validate=validate.Range(min=1))


class EventSchema(Schema):
    game_id = fields.String(required=True)
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    schema_version = fields.Integer(required=True)
    actor = fields.Nested(ActorSchema, required=True)
    data = fields.Dict(
        keys=fields.String(),
        required=True,
        metadata={
            "description": "The public part, by type: game_created's ruleset, players, options "
            "and seed commitment; an action's action (as its seat posted it, or what others "
            "may see of it); a system step's step and result; undone's and redone's seq"
        },
    )
    secret = fields.Dict(
        required=True,
        allow_none=True,
        metadata={"description": "Only for the seats it names (all after the game ends)"},
    )
    recorded_at = fields.String(required=True)
    idempotency_key = fields.String(required=True, allow_none=True)
    prev_hash = fields.String(required=True)
    hash = fields.String(required=True)
    redacted = fields.Boolean(metadata={"description": "true when the secret part is withheld"})


class EventPageSchema(Schema):
    events = fields.List(fields.Nested(EventSchema), required=True)
    version = fields.Integer(required=True, metadata={"description": "The game's version now"})
    next_after = fields.Integer(
        required=True,
        allow_none=True,
        metadata={"description": "after= of the next page (null: this page reaches the end)"},
    )


class EventQuerySchema(Schema):
    class Meta:
        unknown = RAISE

    after = fields.Integer(load_default=0, validate=validate.Range(0, 2**53))
    # The upper bound is a setting (MEEPLE_MAX_PAGE), checked by the view.
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1))


class ActionSchema(Schema):
    """Any action of any game: an object with a ``type`` (each game's schemas say the rest)."""

    type = fields.String(required=True)


# -- webhook deliveries (service.application.webhooks): what a webhook's URL is POSTed -------------


class LiveStatusSchema(GameStatusSchema):
    """Where the game stands after the message's event (service.application.live_status)."""

    result = fields.Nested(
        GameResultSchema,
        metadata={
            "description": "Once finished (and only then): the scores with their breakdown "
            "and the ranking"
        },
    )


class YouSchema(Schema):
    """What a seat's own stream or webhook adds: whether that seat must act now."""

    seat = fields.Integer(required=True, metadata={"description": "The stream's or webhook's seat"})
    must_act = fields.Boolean(
        required=True,
        metadata={
            "description": "The game awaits this seat now (in to_act, no automatic step "
            "pending, the game going on)"
        },
    )
    decision = fields.Nested(
        DecisionSchema,
        required=True,
        metadata={
            "description": "The decision it faces, as legal-actions describes it (no types when "
            "it need not act); list the actions with GET .../legal-actions"
        },
    )


class _DeliveryFields(Schema):
    delivery_id = fields.String(
        required=True,
        metadata={"description": "Also the Meeple-Delivery header; the same on every attempt"},
    )
    webhook_id = fields.String(required=True)
    game_id = fields.String(required=True)
    seq = fields.Integer(required=True, metadata={"description": "The event it is about"})
    status = fields.Nested(
        LiveStatusSchema,
        required=True,
        metadata={"description": "Where the game stands after the event"},
    )
    you = fields.Nested(
        YouSchema,
        metadata={"description": "A seat's webhook (not the admin's): that seat's own turn"},
    )


class WebhookEventDeliverySchema(_DeliveryFields):
    """An event of the log, as the webhook's owner may see it."""

    kind = fields.String(
        required=True, validate=validate.OneOf(["action", "system", "undone", "redone"])
    )
    event = fields.Nested(EventSchema, required=True)


class WebhookYourTurnDeliverySchema(_DeliveryFields):
    """A seat must act after this event (the admin's webhooks hear of every seat, a seat's of
    itself): sent after every event after which it must act, and again as a reminder while
    it does not (``reminder``)."""

    kind = fields.String(required=True, validate=validate.OneOf(["your_turn"]))
    seat = fields.Integer(required=True)
    reminder = fields.Integer(
        metadata={
            "description": "A reminder (1, 2, ...): the seat has not acted since the your_turn "
            "of this seq (MEEPLE_YOUR_TURN_REMINDER, doubled each time)"
        }
    )


class WebhookGameFinishedDeliverySchema(_DeliveryFields):
    """The game has ended."""

    kind = fields.String(required=True, validate=validate.OneOf(["game_finished"]))
    result = fields.Nested(
        GameResultSchema,
        required=True,
        metadata={"description": "Scores with their breakdown and the ranking"},
    )


# -- the live stream's messages (service.http.resources.stream): the data of each message ----


class StreamEventSchema(EventSchema):
    """The ``data`` of an event's message (``id: <seq>``, ``event: <type>``): the event as
    ``GET .../events`` shows it, and beside its members where the game stands after it (not
    part of the event: its ``hash`` covers the envelope's members alone)."""

    status = fields.Nested(
        LiveStatusSchema, required=True, metadata={"description": "The game after this event"}
    )
    you = fields.Nested(
        YouSchema, metadata={"description": "On a seat's stream: that seat's own turn after it"}
    )


class StreamTurnSchema(Schema):
    """The ``data`` of the ``event: turn`` message a stream opens with (no ``id``: it is not
    an event, so Last-Event-ID keeps naming the last event): whose turn it is now."""

    game_id = fields.String(required=True)
    version = fields.Integer(required=True, metadata={"description": "The game's version now"})
    status = fields.Nested(LiveStatusSchema, required=True)
    you = fields.Nested(YouSchema, metadata={"description": "On a seat's stream: its own turn"})


class AppSeatEventSchema(Schema):
    """One held seat's part of an application stream's message."""

    seat = fields.Integer(required=True)
    event = fields.Nested(
        EventSchema, required=True, metadata={"description": "The event as this seat may see it"}
    )
    you = fields.Nested(YouSchema, required=True)


class AppStreamEventSchema(Schema):
    """The ``data`` of an event's message on ``GET /apps/me/stream`` (``id: <cursor>``)."""

    game_id = fields.String(required=True)
    seq = fields.Integer(required=True)
    type = fields.String(required=True)
    status = fields.Nested(
        LiveStatusSchema, required=True, metadata={"description": "The game after this event"}
    )
    seats = fields.List(
        fields.Nested(AppSeatEventSchema),
        required=True,
        metadata={"description": "The event as each seat the application holds may see it"},
    )


class AppStreamTurnSchema(Schema):
    """The ``data`` of an ``event: turn`` message of ``GET /apps/me/stream``: where one of its
    games stands now (no ``id``)."""

    game_id = fields.String(required=True)
    version = fields.Integer(required=True)
    status = fields.Nested(LiveStatusSchema, required=True)
    seats = fields.List(
        fields.Nested(YouSchema), required=True, metadata={"description": "Each held seat's turn"}
    )


#: The stream's message data, by name in openapi.yaml.
STREAM_MESSAGES: dict[str, type[Schema]] = {
    "StreamEvent": StreamEventSchema,
    "StreamTurn": StreamTurnSchema,
    "AppStreamEvent": AppStreamEventSchema,
    "AppStreamTurn": AppStreamTurnSchema,
}


#: Each ``kind`` of delivery and its body (a ``oneOf`` discriminated by ``kind``).
WEBHOOK_DELIVERIES: dict[str, type[Schema]] = {
    "action": WebhookEventDeliverySchema,
    "system": WebhookEventDeliverySchema,
    "undone": WebhookEventDeliverySchema,
    "redone": WebhookEventDeliverySchema,
    "your_turn": WebhookYourTurnDeliverySchema,
    "game_finished": WebhookGameFinishedDeliverySchema,
}


class RulesetComponentsSchema(Schema):
    ruleset = fields.String(required=True)
    rules_version = fields.String(required=True)
    components = fields.Dict(
        keys=fields.String(),
        required=True,
        metadata={"description": "table name -> the table, as in the game's data files"},
    )
