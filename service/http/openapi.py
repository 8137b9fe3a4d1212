"""openapi.yaml, generated from the running app's views and marshmallow schemas (apispec).

One source of truth: ``meeple openapi`` (``make openapi``) writes openapi.yaml from the code,
and tests/api/test_openapi.py fails when the file and the code drift apart.

How a view documents itself (every blueprint, the webhooks and the stream included):

- its docstring ends with ``---`` and then the OpenAPI operation(s) in YAML, keyed by
  method (``get:``, ``post:``), as apispec's ``load_operations_from_docstring`` reads them;
- bodies name marshmallow schema classes by their class name (``schema: WebhookSchema``);
  the class must be imported somewhere (defining it registers it with marshmallow). It
  becomes ``#/components/schemas/Webhook`` (the ``Schema`` suffix dropped; schemas of a game
  package are prefixed with the game, e.g. ``TallyBid``);
- path parameters (``<game_id>``) are added from the URL rule when not declared;
- error responses list the problem codes the operation can answer. Those of its kind are
  added (500 ``internal_error``, 503 ``store_unavailable`` and ``store_full``; a game in the
  path: 404 ``game_not_found``, 409 ``rules_version_mismatch``; a body: 400
  ``malformed_json``, 413, 415, 422 ``invalid_body``; a query: 422 ``invalid_query``; a
  header parameter: 400 ``invalid_header``; a token: 401 ``invalid_token``, 429
  ``too_many_invalid_tokens``, and ``missing_token`` when it is not optional; 429
  ``rate_limited`` when service.http.limits rate-limits it, and ``storage_quota_exceeded``
  and 503 ``replication_lag`` when it writes); the view lists the rest under ``codes``
  (``codes: {409: [version_conflict], 422: [game_finished, rules]}``, ``rules`` for the
  game's own codes). A view may still name a shared response
  (``409: Conflict``); one with no code is an error, so the spec never promises a status
  an operation cannot answer. GET /health's 503 has a body of its own;
- security: ``[{seatToken: []}]``, ``[{adminKey: []}]``, or ``[{}, {seatToken: []}]`` when the
  token is optional; without it an operation is anonymous (``security: []``). Shared
  headers (``ETag: ETag``, ``Location: Location``, ``Retry-After: RetryAfter``,
  ``Idempotent-Replayed: IdempotentReplayed``) and parameters (``- IfMatch``,
  ``- IfNoneMatch``, ``- IdempotencyKey``, and the legal-actions query ``- LegalActionsLimit``,
  ``- LegalActionsCursor``, ``- LegalActionsList``) are named the same way; see ``build_spec``.

Each ruleset's actions are ``<Game>Action``: a ``oneOf`` of its action schemas discriminated
by ``type``; ``Action`` (the body of POST /games/{id}/actions, the items of legal-actions) is
any game's action. Each ruleset's view schema (``Ruleset.view_schema``, JSON Schema) is
``<Game>View`` written as OpenAPI 3.0 (``openapi_schema``); ``View`` is any game's view. A
marshmallow ``ActionField`` or ``ViewField`` (service.http.schemas) stands for ``Action`` or
``View``; ``- Include`` names the ``?include=`` query parameter of an action.
``WebhookDelivery`` is what a webhook is POSTed (the ``delivery`` callback of createWebhook),
discriminated by ``kind``. Nullable schemas are rewritten the way generators read them
(``_typed_nullables``), and ``<int:...>`` path parameters are integers.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from apispec.ext.marshmallow.common import resolve_schema_cls
from apispec.yaml_utils import load_operations_from_docstring
from flask import Flask
from werkzeug.routing import IntegerConverter

from projections.ruleset import Ruleset, all_rulesets
from service.http import schemas as api_schemas
from service.http.errors import PROBLEM_MEDIA_TYPE, PROBLEMS
from service.http.limits import LIMITED_ENDPOINTS
from service.http.storage_quotas import WRITES as STORAGE_WRITES

TITLE = "Meeple Ledger"
OPENAPI_VERSION = "3.0.3"
_RULE_ARGUMENT = re.compile(r"<(?:[a-z_]+:)?([a-z_]+)>")
_METHODS = ("get", "put", "post", "patch", "delete")

DESCRIPTION = """\
An event-sourced game-state service for modern board games. Every action is an immutable
event in a hash-chained log, one stream per game; a game's state is the fold of its events.

Seats authenticate with the bearer token they were given when the game was created. Errors
are `application/problem+json` with a stable `code`; see docs/api.md for the conventions
(versions and ETags, If-Match, Idempotency-Key, pagination)."""


def product_rulesets() -> list[Ruleset]:
    """The rulesets this build ships (projections/games), without test-only ones."""
    return [r for r in all_rulesets() if type(r).__module__.startswith("projections.games.")]


def schema_name(schema: Any) -> str:
    """Component name of a schema: its class name without ``Schema``, prefixed by its game."""
    cls = resolve_schema_cls(schema)  # a class, an instance, or a class name
    if isinstance(cls, list):
        cls = cls[0]
    name = cls.__name__.removesuffix("Schema") or cls.__name__
    module = cls.__module__
    prefix = ""
    if module.startswith("projections.games.") or module.startswith("tests.rulesets."):
        prefix = _camel(module.split(".")[2])
    if prefix and not name.startswith(prefix):
        name = prefix + name
    return name


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _problem_response(status: int, codes: list[str]) -> dict[str, Any]:
    """The problem response of ``status`` listing the ``codes`` an operation may answer."""
    listed = ", ".join(f"`{code}`" for code in codes if code != RULE_CODES)
    if RULE_CODES in codes:
        listed += (
            ", and the game's own codes for a move its rules forbid (such as"
            " Restoration's `phase_mismatch`)"
        )
    description = f"{_STATUS_TEXT[status]}. Codes: {listed}"
    response: dict[str, Any] = {
        "description": description,
        "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
    }
    if status == 429 or "awaiting_system_step" in codes:
        response["headers"] = {"Retry-After": {"$ref": "#/components/headers/RetryAfter"}}
    if "rate_limited" in codes:
        for header in RATE_LIMIT_HEADERS:
            response["headers"][header] = {
                "$ref": f"#/components/headers/{header.replace('-', '')}"
            }
    return response


#: The headers on every response of a rate-limited operation (service.http.limits).
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": "Requests allowed in the window of the limit nearest to being reached",
    "X-RateLimit-Remaining": "Requests left in that window",
    "X-RateLimit-Reset": "When the oldest request counted in that window leaves it (Unix time)",
}


SHARED_RESPONSES = {
    "BadRequest": (400, "Malformed JSON or header"),
    "Unauthorized": (401, "Missing or invalid token"),
    "Forbidden": (403, "The token may not do this"),
    "NotFound": (404, "No such game or resource"),
    "Conflict": (409, "The game moved on, or an automatic step is pending (Retry-After)"),
    "PayloadTooLarge": (413, "The body is over the size limit"),
    "UnsupportedMediaType": (415, "The body is not JSON"),
    "UnprocessableEntity": (
        422,
        "Schema errors (naming the fields), or an action the rules forbid (the game's code)",
    ),
    "TooManyRequests": (429, "Over a limit: retry after Retry-After seconds"),
    "InternalError": (500, "Something went wrong on the server (no details are leaked)"),
    "ServiceUnavailable": (503, "The event store is unavailable"),
}
_STATUS_TEXT = {status: text for status, text in SHARED_RESPONSES.values()}
_STATUS_TEXT[403] = "The token may not do this, or not yet"

#: In an operation's ``codes``: the game's own codes (IllegalAction) may be answered too.
RULE_CODES = "rules"


def build_spec(
    app: Flask, rulesets: list[Ruleset] | None = None, server: str | None = None
) -> dict[str, Any]:
    """The OpenAPI document of ``app`` with the actions of ``rulesets`` (default: all).

    ``server`` is the base URL a deployment serves at (MEEPLE_PUBLIC_URL); the committed
    openapi.yaml names the relative ``/``, so it holds for every deployment.
    """
    rulesets = all_rulesets() if rulesets is None else rulesets
    extra: dict[str, Any] = {
        "info": {"description": DESCRIPTION},
        "servers": [{"url": "/" if server is None else server}],
    }
    marshmallow = MarshmallowPlugin(schema_name_resolver=schema_name)
    spec = APISpec(
        title=TITLE,
        version=_version(),
        openapi_version=OPENAPI_VERSION,
        plugins=[marshmallow],
        **extra,
    )
    assert marshmallow.converter is not None
    marshmallow.converter.add_attribute_function(_component_field)
    components = spec.components
    components.schema("Problem", schema=api_schemas.ProblemSchema)
    # The seats of a new game that are not a name (referenced from CreateGame's players).
    from service.application.bot_seats import BotSeatSchema, OpenSeatSchema

    components.schema("OpenSeat", schema=OpenSeatSchema)
    components.schema("BotSeat", schema=BotSeatSchema)
    components.security_scheme(
        "seatToken",
        {"type": "http", "scheme": "bearer", "description": "A seat's token from POST /games"},
    )
    components.security_scheme(
        "adminKey", {"type": "http", "scheme": "bearer", "description": "MEEPLE_ADMIN_KEY"}
    )
    components.security_scheme(
        "appKey",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "A client application's key (mla_...) from POST /apps",
        },
    )
    for header, description in RATE_LIMIT_HEADERS.items():
        components.header(
            header.replace("-", ""), {"description": description, "schema": {"type": "integer"}}
        )
    components.header(
        "ETag", {"description": "The game's version, quoted", "schema": {"type": "string"}}
    )
    components.header(
        "Location", {"description": "Where the new resource lives", "schema": {"type": "string"}}
    )
    components.header(
        "RetryAfter", {"description": "Seconds to wait", "schema": {"type": "integer"}}
    )
    components.header(
        "IdempotentReplayed",
        {
            "description": "true when this is the first response to an earlier request with "
            "the same Idempotency-Key (nothing was appended this time)",
            "schema": {"type": "string", "enum": ["true"]},
        },
    )
    components.parameter(
        "IfMatch",
        "header",
        {
            "name": "If-Match",
            "description": 'The version the action was chosen at, e.g. "7"; stale -> 409',
            "schema": {"type": "string", "pattern": '^(W/)?"?[0-9]{1,18}"?$'},
        },
    )
    components.parameter(
        "IfNoneMatch",
        "header",
        {
            "name": "If-None-Match",
            "description": "A version from an earlier ETag; unchanged -> 304",
            "schema": {"type": "string", "pattern": '^(W/)?"?[0-9]{1,18}"?$'},
        },
    )
    components.header(
        "PreferenceApplied",
        {
            "description": "The wait granted to a Prefer: wait=N request (RFC 7240), e.g. "
            "wait=5 (N capped by MEEPLE_MAX_WAIT)",
            "schema": {"type": "string", "pattern": "^wait=[0-9]{1,9}$"},
        },
    )
    components.parameter(
        "Prefer",
        "header",
        {
            "name": "Prefer",
            "description": "wait=N (RFC 7240): wait up to N seconds for the automatic steps "
            "the game awaits before answering; other preferences are ignored",
            "schema": {"type": "string"},
        },
    )
    components.parameter(
        "IdempotencyKey",
        "header",
        {
            "name": "Idempotency-Key",
            "description": "A retry with the same key returns the first response",
            "schema": {"type": "string", "pattern": "^[\\x21-\\x7e]{1,200}$"},
        },
    )
    _legal_actions_parameters(components)
    components.parameter(
        "Include",
        "query",
        {
            "name": "include",
            "description": "``legal_actions``: the answer also lists what the seat may do next "
            "(the first ``limit``) and the decision it answers (``legal_actions_summary``)",
            "schema": {"type": "string", "enum": ["legal_actions"]},
        },
    )
    _action_components(spec, rulesets)
    _view_components(spec, rulesets)
    _delivery_components(spec)
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint == "static":
            continue
        view = app.view_functions[rule.endpoint]
        operations = load_operations_from_docstring(view.__doc__ or "")
        operations = {
            method: operation
            for method, operation in operations.items()
            if method in _METHODS and method.upper() in (rule.methods or ())
        }
        if not operations:
            continue
        path = _RULE_ARGUMENT.sub(r"{\1}", rule.rule)
        integers = {
            name
            for name, converter in rule._converters.items()
            if isinstance(converter, IntegerConverter)
        }
        for method, operation in operations.items():
            limited = rule.endpoint in LIMITED_ENDPOINTS
            writes = method.upper() in STORAGE_WRITES
            _complete(operation, list(rule.arguments), integers, limited, writes)
        spec.path(path=path, operations=operations)
    document = spec.to_dict()
    document["tags"] = _tags(document)
    _component_refs(document)
    _typed_nullables(document)
    return document


#: What each group of operations is for (the top-level ``tags``, in this order; a tag an
#: operation names that is not here is listed after them, described by its name).
TAGS = {
    "games": "Create, list and read games",
    "play": "A seat's state, legal actions and actions; the live stream",
    "lobby": "Open seats: join, leave, tokens, bots",
    "history": "Time travel, undo and redo, branches, audits and exports (docs/history.md)",
    "analysis": "What-if analyses of a decision (docs/analysis.md)",
    "notifications": "Webhooks and their deliveries",
    "rulesets": "The games hosted: options, components, view schemas",
    "service": "Health, readiness, metrics, the spec and the docs",
}


def _tags(document: dict[str, Any]) -> list[dict[str, str]]:
    """The top-level ``tags``: every tag an operation names, each described once."""
    used = {
        tag
        for item in document.get("paths", {}).values()
        for operation in item.values()
        if isinstance(operation, dict)
        for tag in operation.get("tags", [])
    }
    names = [tag for tag in TAGS if tag in used] + sorted(used - set(TAGS))
    return [{"name": tag, "description": TAGS.get(tag, tag.capitalize())} for tag in names]


#: Fields that stand for a union of every game's schemas, and the component each refers to.
_COMPONENT_FIELDS = {api_schemas.ActionField: "Action", api_schemas.ViewField: "View"}


def _component_field(self: Any, field: Any, **kwargs: Any) -> dict[str, Any]:
    """Marks an ActionField or ViewField for ``_component_refs`` (apispec's attribute
    functions may only add keys, and a ``$ref`` takes no siblings)."""
    name = _COMPONENT_FIELDS.get(type(field))
    return {} if name is None else {"x-component": name}


def _component_refs(node: Any) -> None:
    """Each schema marked by ``_component_field`` becomes the reference to its component."""
    if isinstance(node, list):
        for item in node:
            _component_refs(item)
    elif isinstance(node, dict):
        if "x-component" in node:
            name = node["x-component"]
            node.clear()
            node["$ref"] = f"#/components/schemas/{name}"
            return
        for value in node.values():
            _component_refs(value)


_APISPEC_NULL = {"type": "object", "nullable": True}


def _null_only(kind: str) -> dict[str, Any]:
    """The schema whose one value is null, as OpenAPI 3.0.3 says it (``nullable`` adds null
    to the type, not to an ``enum``); generators read it as None."""
    return {"type": kind, "nullable": True, "enum": [None]}


def _typed_nullables(document: dict[str, Any]) -> None:
    """Nullable schemas as generators read them (OpenAPI 3.0), checked with
    openapi-python-client: every ``nullable`` beside a ``type``; a nullable enum property
    as ``oneOf`` of a named enum (``<Schema><Field>``, no null in it) and the null-only
    schema (``null`` inside the enum gave a class per alternative, and ``nullable`` beside
    an enum without null is dropped); a nullable reference as ``oneOf`` of the reference
    and the null-only schema (apispec's ``anyOf`` with an empty nullable object gave an
    anonymous class)."""
    schemas = document["components"]["schemas"]
    for name in list(schemas):
        for field, prop in schemas[name].get("properties", {}).items():
            if prop.get("nullable") is True and isinstance(prop.get("enum"), list):
                enum_name = f"{name}{_camel(field)}"
                enum = {
                    "type": prop["type"],
                    "enum": [value for value in prop["enum"] if value is not None],
                }
                if schemas.setdefault(enum_name, enum) != enum:
                    raise ValueError(f"{enum_name} is already another schema")
                described = {"description": prop["description"]} if "description" in prop else {}
                prop.clear()
                prop.update(
                    oneOf=[{"$ref": f"#/components/schemas/{enum_name}"}, _null_only(enum["type"])],
                    **described,
                )
    _nullable_refs(document)


def _nullable_refs(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _nullable_refs(item)
        return
    if not isinstance(node, dict):
        return
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and _APISPEC_NULL in any_of:
        del node["anyOf"]
        node["oneOf"] = [item for item in any_of if item != _APISPEC_NULL]
        node["oneOf"].append(_null_only("object"))
    if (
        node.get("nullable") is True
        and isinstance(node.get("enum"), list)
        and len(node["enum"]) > 1
    ):
        node["enum"] = [value for value in node["enum"] if value is not None]
    for value in node.values():
        _nullable_refs(value)


def _legal_actions_parameters(components: Any) -> None:
    """``- LegalActionsLimit``, ``- LegalActionsCursor``, ``- LegalActionsList``: the query
    of both legal-actions operations (docs/api.md, "Decisions")."""
    components.parameter(
        "LegalActionsLimit",
        "query",
        {
            "name": "limit",
            "description": "How many actions of the list this page holds",
            "schema": {
                "type": "integer",
                "minimum": 1,
                "maximum": api_schemas.LEGAL_ACTIONS_MAX_PAGE,
                "default": api_schemas.LEGAL_ACTIONS_PAGE,
            },
        },
    )
    components.parameter(
        "LegalActionsCursor",
        "query",
        {
            "name": "cursor",
            "description": "next_cursor of the previous page (at the same version)",
            "schema": {"type": "string", "pattern": api_schemas.LEGAL_ACTIONS_CURSOR},
        },
    )
    components.parameter(
        "LegalActionsList",
        "query",
        {
            "name": "list",
            "description": "false: only the descriptions, no list",
            "schema": {"type": "boolean", "default": True},
        },
    )


def _action_components(spec: APISpec, rulesets: list[Ruleset]) -> None:
    per_game = []
    for ruleset in rulesets:
        game = _camel(ruleset.id)
        refs: dict[str, str] = {}
        for kind, schema in sorted(ruleset.action_schemas().items()):
            name = f"{game}{_camel(kind)}Action"
            spec.components.schema(name, schema=schema)
            refs[kind] = f"#/components/schemas/{name}"
        union: dict[str, Any]
        if refs:
            union = {
                "oneOf": [{"$ref": ref} for ref in refs.values()],
                "discriminator": {"propertyName": "type", "mapping": refs},
            }
        else:
            union = {
                "type": "object",
                "required": ["type"],
                "properties": {"type": {"type": "string"}},
            }
        union["description"] = f"An action of {ruleset.title}"
        spec.components.schema(f"{game}Action", union)
        per_game.append({"$ref": f"#/components/schemas/{game}Action"})
    action: dict[str, Any] = {
        "description": "An action of the game's ruleset: {type, ...}, as legal-actions lists "
        "it (the games share some type names, so this is anyOf their unions)"
    }
    if per_game:
        action["anyOf"] = per_game
    else:
        action.update(type="object", required=["type"], properties={"type": {"type": "string"}})
    spec.components.schema("Action", action)


def _view_components(spec: APISpec, rulesets: list[Ruleset]) -> None:
    """``<Game>View``: each ruleset's JSON Schema of its seat view (its ``$defs`` become
    ``<Game>View<Name>``), and ``View``, any of them (the ``state`` of a state answer)."""
    per_game = []
    for ruleset in rulesets:
        name = f"{_camel(ruleset.id)}View"
        published = ruleset.view_schema()
        if published is None:
            view: dict[str, Any] = {"type": "object", "description": f"{ruleset.title}'s view"}
        else:
            view, definitions = openapi_schema(published, name)
            for definition, schema in definitions.items():
                spec.components.schema(definition, schema)
        spec.components.schema(name, view)
        per_game.append({"$ref": f"#/components/schemas/{name}"})
    spec.components.schema(
        "View",
        {
            "description": "The game as one seat (or a spectator) sees it: its ruleset's view, "
            "also served as JSON Schema at GET /rulesets/{ruleset_id}/view-schema",
            "anyOf": per_game,
        }
        if per_game
        else {"type": "object", "description": "The game as one seat sees it"},
    )


def openapi_schema(document: dict[str, Any], prefix: str) -> tuple[Any, dict[str, Any]]:
    """A JSON Schema (draft 2020-12, the subset the games' view schemas use) as OpenAPI 3.0
    schemas: the root and its ``$defs`` named ``<prefix><Name>``. ``type: [T, "null"]``
    becomes ``nullable``, a nullable enum or ``{"type": "null"}`` in a ``oneOf`` the
    null-only schema, ``const`` a one-value enum, and ``$ref``s point into components."""
    definitions = {
        f"{prefix}{key}": _openapi_node(value, prefix)
        for key, value in document.get("$defs", {}).items()
    }
    # The title stays in the served schema: generators would name the class after it.
    root = {k: v for k, v in document.items() if k not in ("$defs", "$schema", "$id", "title")}
    return _openapi_node(root, prefix), definitions


def _openapi_node(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_openapi_node(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _openapi_node(value, prefix) for key, value in node.items()}
    ref = converted.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        converted["$ref"] = f"#/components/schemas/{prefix}{ref.removeprefix('#/$defs/')}"
    if "const" in converted:
        converted["enum"] = [converted.pop("const")]
    if converted.get("required") == []:
        del converted["required"]  # OpenAPI 3.0 wants at least one name there
    kind = converted.get("type")
    if kind == "null":
        return _null_only("object")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        if len(others) != 1:
            raise ValueError(f"{prefix}: type {kind} has no OpenAPI 3.0 form")
        converted["type"] = others[0]
        if "null" in kind:
            if isinstance(converted.get("enum"), list):
                enum = [value for value in converted.pop("enum") if value is not None]
                description = converted.pop("description", None)
                nullable_enum: dict[str, Any] = {
                    "oneOf": [{**converted, "enum": enum}, _null_only(others[0])]
                }
                if description is not None:
                    nullable_enum["description"] = description
                return nullable_enum
            converted["nullable"] = True
    if isinstance(converted.get("oneOf"), list):
        options = converted["oneOf"]
        nulls = [o for o in options if o.get("nullable") is True and o.get("enum") == [None]]
        typed = [o for o in options if o not in nulls]
        if nulls and len(typed) == 1 and "type" in typed[0]:
            nulls[0]["type"] = typed[0]["type"]
    return converted


def _delivery_components(spec: APISpec) -> None:
    """``WebhookDelivery``: the body POSTed to a webhook (the callback of createWebhook); and
    the data of the live stream's messages (``StreamEvent``, ``StreamTurn``)."""
    for name, message in api_schemas.STREAM_MESSAGES.items():
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=message)
    mapping: dict[str, str] = {}
    for kind, schema in api_schemas.WEBHOOK_DELIVERIES.items():
        name = schema_name(schema)
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=schema)
        mapping[kind] = f"#/components/schemas/{name}"
    spec.components.schema(
        "WebhookDelivery",
        {
            "description": "What a webhook's URL is POSTed, by ``kind`` (Meeple-Event)",
            "oneOf": [{"$ref": ref} for ref in dict.fromkeys(mapping.values())],
            "discriminator": {"propertyName": "kind", "mapping": mapping},
        },
    )


def _complete(
    operation: dict[str, Any],
    arguments: list[str],
    integers: set[str],
    rate_limited: bool,
    writes: bool = False,
) -> None:
    operation.setdefault("security", [])  # anonymous unless the view says otherwise
    parameters = operation.setdefault("parameters", [])
    declared = {p.get("name") for p in parameters if isinstance(p, dict)}
    for name in sorted(arguments):
        if name not in declared:
            schema: dict[str, Any] = (
                {"type": "integer", "minimum": 0}  # <int:...> takes no sign
                if name in integers
                else {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}
            )
            parameters.append({"in": "path", "name": name, "required": True, "schema": schema})
    if not parameters:
        operation.pop("parameters")
    responses = operation.setdefault("responses", {})
    codes = _codes_of(operation, arguments, parameters, rate_limited, writes)
    for status, listed in codes.items():
        given = responses.pop(status, responses.pop(str(status), None))
        if isinstance(given, dict) and PROBLEM_MEDIA_TYPE not in given.get("content", {}):
            responses[status] = given  # a body of its own (GET /health's 503)
            continue
        if given is not None and given != status_name(status):
            raise ValueError(
                f"{operation.get('operationId')}: the {status} response is {given!r}; name the "
                f"shared one ({status_name(status)}) and list its codes in `codes`"
            )
        responses[status] = _problem_response(status, listed)
    for status, given in responses.items():
        if int(status) >= 400 and isinstance(given, str):
            raise ValueError(
                f"{operation.get('operationId')}: {given} ({status}) without a code it may "
                "answer: list them in `codes` or drop the response"
            )
    operation["responses"] = dict(sorted(responses.items(), key=lambda item: str(item[0])))


def status_name(status: int) -> str:
    """The shared response a view names for ``status`` (``409: Conflict``)."""
    return next(name for name, (value, _) in SHARED_RESPONSES.items() if value == status)


def _codes_of(
    operation: dict[str, Any],
    arguments: list[str],
    parameters: list[Any],
    rate_limited: bool,
    writes: bool = False,
) -> dict[int, list[str]]:
    """status -> the problem codes this operation may answer: those every operation of its
    kind may (a game in the path, a body, a query, a header, a token, a rate limit), and the
    ones its view lists in ``codes``."""
    codes: dict[int, list[str]] = {}

    def add(status: int, *names: str) -> None:
        for name in names:
            if name != RULE_CODES and PROBLEMS.get(name, (None,))[0] != status:
                raise ValueError(f"{operation.get('operationId')}: {name} is not a {status}")
            if name not in codes.setdefault(status, []):
                codes[status].append(name)

    add(500, "internal_error")
    add(503, "store_unavailable", "store_full")
    if "game_id" in arguments:
        add(404, "game_not_found")
        add(409, "rules_version_mismatch")
    if "requestBody" in operation:
        add(400, "malformed_json")
        add(413, "payload_too_large")
        add(415, "unsupported_media_type")
        add(422, "invalid_body")
    places = [_SHARED_PARAMETERS[p] if isinstance(p, str) else p.get("in") for p in parameters]
    if "query" in places:
        add(422, "invalid_query")
    if "header" in places:
        add(400, "invalid_header")
    if rate_limited:
        add(429, "rate_limited")
    if writes:
        add(429, "storage_quota_exceeded")
        add(503, "replication_lag")
    security = operation.get("security", [])
    if any(security):
        add(401, "invalid_token")
        add(429, "too_many_invalid_tokens")
        if {} not in security:
            add(401, "missing_token")
    for status, names in operation.pop("codes", {}).items():
        add(int(status), *names)
    return dict(sorted(codes.items()))


#: Where each shared parameter (a view names it: ``- IfMatch``) is sent.
_SHARED_PARAMETERS = {
    "IfMatch": "header",
    "IfNoneMatch": "header",
    "IdempotencyKey": "header",
    "Include": "query",
    "Prefer": "header",
    "LegalActionsLimit": "query",
    "LegalActionsCursor": "query",
    "LegalActionsList": "query",
}


def _version() -> str:
    from service.http.shared import service_version

    return service_version()


class _Dumper(yaml.SafeDumper):
    """Multi-line text as literal blocks, so descriptions read in the file as in the code."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def spec_yaml(app: Flask, rulesets: list[Ruleset] | None = None, server: str | None = None) -> str:
    """openapi.yaml's text."""
    return yaml.dump(
        build_spec(app, rulesets, server),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
