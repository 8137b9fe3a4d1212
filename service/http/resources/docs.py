"""The contract as served: ``GET /openapi.yaml`` and ``GET /docs``, a reference page rendered
on the server from the same spec: descriptions as Markdown, every schema a linked table,
an example request and answer for every operation, and an anchor for every error code the
service can answer with (``/docs#problem-<code>``, where each problem's ``type`` points),
the games' own codes included. Plain HTML and CSS, no script, nothing fetched from elsewhere
(a Content-Security-Policy says so), so it works offline.

The games' codes are the stable codes their rules raise ``IllegalAction`` with; they are read
from the rules' source (``game_codes``), so a new code is listed without anyone listing it.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import re
import sys
from collections.abc import Collection, Iterator
from functools import cache
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, render_template
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

import projections
from projections.ruleset import Ruleset, all_rulesets
from service.http.errors import PROBLEMS
from service.http.openapi import build_spec, spec_yaml

bp = Blueprint("docs", __name__, template_folder="templates")

STYLE = (Path(__file__).parent / "templates" / "docs.css").read_text()
#: Nothing but the page and its one inline style block (by hash): no script, no fetch.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    f"style-src 'sha256-{base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()}'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

_MARKDOWN = MarkdownIt("commonmark", {"html": False})
_PROJECTIONS = Path(projections.__file__).resolve().parent


def _cached(key: str, build: Any) -> Any:
    cache = current_app.extensions.setdefault("meeple_docs", {})
    if key not in cache:
        cache[key] = build()
    return cache[key]


@bp.get("/openapi.yaml")
def openapi_yaml() -> Response:
    """The OpenAPI 3 description of this API.
    ---
    get:
      operationId: getOpenapi
      tags: [service]
      summary: This API's OpenAPI document
      responses:
        200:
          description: openapi.yaml
          content:
            application/yaml:
              schema: {type: object, description: An OpenAPI 3.0 document}
    """
    server = current_app.extensions["meeple"].config.public_url
    text = _cached("yaml", lambda: spec_yaml(current_app, server=server))
    return Response(text, mimetype="application/yaml")


@bp.get("/docs")
def docs_page() -> Response:
    """A reference page for the API, rendered from the spec.
    ---
    get:
      operationId: getDocs
      tags: [service]
      summary: The API reference as a web page
      description: >
        Rendered on the server: no script, nothing fetched from elsewhere (its
        Content-Security-Policy allows nothing else). Every error code has an anchor,
        ``/docs#problem-<code>``, where each problem's ``type`` points.
      responses:
        200:
          description: HTML
          content:
            text/html:
              schema: {type: string}
    """
    server = current_app.extensions["meeple"].config.public_url
    html = _cached("html", lambda: render_page(build_spec(current_app, server=server)))
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


# The page ---------------------------------------------------------------------------------


def render_page(spec: dict[str, Any]) -> str:
    rulesets = all_rulesets()
    codes = problem_catalogue(rulesets)
    known = {entry["code"] for entry in codes}
    schemas = spec.get("components", {}).get("schemas", {})
    operations = [
        _operation(spec, path, method, operation, known)
        for path, item in spec.get("paths", {}).items()
        for method, operation in item.items()
    ]
    tags: dict[str, list[dict[str, Any]]] = {}
    for operation in operations:
        tags.setdefault(operation["tag"], []).append(operation)
    return render_template(
        "docs.html",
        style=Markup(STYLE),
        info=spec["info"],
        description=markdown(spec["info"].get("description", ""), known),
        servers=spec.get("servers", []),
        tags=tags,
        operations=operations,
        schemas=[_schema_entry(name, schema, known) for name, schema in sorted(schemas.items())],
        api_codes=[entry for entry in codes if entry["status"] is not None],
        game_codes=[entry for entry in codes if entry["status"] is None],
        games=[ruleset.id for ruleset in rulesets],
    )


def markdown(text: str, known_codes: Collection[str] = ()) -> Markup:
    """``text`` rendered as CommonMark (raw HTML escaped); a code span naming an error code
    links to that code's entry."""
    html = _MARKDOWN.render(text or "")

    def link(found: re.Match[str]) -> str:
        code = found.group(1)
        return (
            f'<a href="#problem-{code}">{found.group(0)}</a>'
            if code in known_codes
            else (found.group(0))
        )

    return Markup(re.sub(r"<code>([a-z][a-z0-9_]*)</code>", link, html))


def _operation(
    spec: dict[str, Any], path: str, method: str, operation: dict[str, Any], known: set[str]
) -> dict[str, Any]:
    parameters = [_resolve(spec, parameter) for parameter in operation.get("parameters", [])]
    body = (operation.get("requestBody") or {}).get("content", {})
    body_media, body_schema = next(iter(body.items()), (None, None))
    body_example = None
    if body_schema is not None:
        body_example = body_schema.get(
            "example", example(spec, body_schema.get("schema", {}), sent=True)
        )
    responses: list[dict[str, Any]] = []
    answer: Any = None
    answer_status = None
    for status, response in operation.get("responses", {}).items():
        response = _resolve(spec, response)
        contents: dict[str, dict[str, Any]] = response.get("content", {})
        media = next(iter(contents), None)
        content = contents[media] if media is not None else {}
        responses.append(
            {
                "status": str(status),
                "description": markdown(response.get("description", ""), known),
                "media": media,
                "schema": type_html(content.get("schema")) if content else None,
                "headers": sorted(response.get("headers", {})),
            }
        )
        if answer_status is None and str(status).startswith("2") and media is not None:
            answer_status = str(status)
            if "example" in content:
                answer = content["example"]
            elif media.endswith("json"):
                answer = example(spec, content.get("schema", {}))
    security = operation.get("security")
    callbacks = [
        {
            "name": name,
            "expression": expression,
            "method": verb.upper(),
            "summary": hook.get("summary", ""),
            "description": markdown(hook.get("description", ""), known),
            "parameters": [_resolve(spec, p) for p in hook.get("parameters", [])],
            "body_type": type_html(_first_schema(hook.get("requestBody", {}))),
        }
        for name, expressions in operation.get("callbacks", {}).items()
        for expression, item in expressions.items()
        for verb, hook in item.items()
    ]
    return {
        "callbacks": callbacks,
        "id": operation.get("operationId") or f"{method}-{path}",
        "tag": (operation.get("tags") or ["other"])[0],
        "method": method.upper(),
        "path": path,
        "summary": operation.get("summary", ""),
        "description": markdown(operation.get("description", ""), known),
        "security": _security(security),
        "parameters": [
            {
                "name": parameter["name"],
                "in": parameter["in"],
                "required": parameter.get("required", False),
                "type": type_html(parameter.get("schema")),
                "description": markdown(parameter.get("description", ""), known),
            }
            for parameter in parameters
        ],
        "body_media": body_media,
        "body_type": type_html(body_schema.get("schema")) if body_schema else None,
        "curl": _curl(spec, path, method, parameters, security, body_example),
        "responses": responses,
        "answer_status": answer_status,
        "answer": _show(answer) if answer is not None else None,
    }


def _first_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    for media in body.get("content", {}).values():
        schema: dict[str, Any] | None = media.get("schema")
        return schema
    return None


def _security(security: list[dict[str, Any]] | None) -> str:
    if not security:
        return "anonymous"
    schemes = [" + ".join(requirement) or "anonymous" for requirement in security]
    return " or ".join(schemes)


def _curl(
    spec: dict[str, Any],
    path: str,
    method: str,
    parameters: list[dict[str, Any]],
    security: list[dict[str, Any]] | None,
    body: Any,
) -> str:
    url = path
    for parameter in parameters:
        if parameter["in"] == "path":
            value = example(spec, parameter.get("schema", {}), name=parameter["name"])
            url = url.replace("{" + parameter["name"] + "}", str(value))
    lines = ["curl" if method == "get" else f"curl -X {method.upper()}"]
    if security and {} not in security:
        lines.append("-H 'Authorization: Bearer $TOKEN'")
    if body is not None:
        lines += ["-H 'Content-Type: application/json'", f"-d '{json.dumps(body)}'"]
    base = (spec.get("servers") or [{"url": ""}])[0]["url"].rstrip("/")
    lines.append(f'"{base}{url}"')
    return " \\\n  ".join(lines)


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2)


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    found: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    resolved: dict[str, Any] = found
    return resolved


# Schemas as tables, types as links ------------------------------------------------------


def type_html(schema: dict[str, Any] | None) -> Markup:
    """A schema's type in a few words, each named schema a link to its table."""
    if not schema:
        return Markup("any")
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return Markup('<a href="#schema-{0}"><code>{0}</code></a>').format(name)
    for combinator, joiner in (("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")):
        if combinator in schema:
            return Markup(joiner).join(type_html(part) for part in schema[combinator])
    kind = schema.get("type", "any")
    if kind == "array":
        words = Markup("array of {}").format(type_html(schema.get("items")))
    elif "enum" in schema:
        words = Markup(" | ").join(
            Markup("<code>{}</code>").format(json.dumps(value)) for value in schema["enum"]
        )
    elif kind == "object" and schema.get("properties"):
        # An inline object (a view's nested part): its keys and their types, so every schema
        # it names is linked too.
        words = (
            Markup("{")
            + Markup(", ").join(
                Markup("<code>{}</code>: {}").format(key, type_html(value))
                for key, value in schema["properties"].items()
            )
            + Markup("}")
        )
    elif kind == "object" and "additionalProperties" in schema and not schema.get("properties"):
        extra = schema["additionalProperties"]
        values = type_html(extra) if isinstance(extra, dict) else Markup("any")
        words = Markup("object of {}").format(values)
    else:
        words = Markup(escape(kind))
        if "format" in schema:
            words += Markup(" <small>({})</small>").format(schema["format"])
    if schema.get("nullable") and schema.get("enum") != [None]:
        words += Markup(" | <code>null</code>")
    return words


def _schema_entry(name: str, schema: dict[str, Any], known: set[str]) -> dict[str, Any]:
    required = set(schema.get("required", []))
    properties = [
        {
            "name": key,
            "type": type_html(value),
            "required": key in required,
            "description": markdown(_limits(value), known),
        }
        for key, value in schema.get("properties", {}).items()
    ]
    mapping = schema.get("discriminator", {}).get("mapping", {})
    return {
        "name": name,
        "description": markdown(schema.get("description", ""), known),
        "kind": None if properties or mapping else type_html(schema),
        "properties": properties,
        "discriminator": schema.get("discriminator", {}).get("propertyName"),
        "mapping": [(value, type_html({"$ref": ref})) for value, ref in sorted(mapping.items())],
    }


def _limits(schema: dict[str, Any]) -> str:
    """A property's description with its bounds and default, as a reader needs them."""
    words = [schema.get("description", "")]
    bounds = [
        f"{label} {schema[key]}"
        for key, label in (
            ("minimum", "at least"),
            ("maximum", "at most"),
            ("minLength", "length at least"),
            ("maxLength", "length at most"),
            ("minItems", "items at least"),
            ("maxItems", "items at most"),
        )
        if key in schema
    ]
    if bounds:
        words.append("(" + ", ".join(bounds) + ")")
    if "default" in schema:
        words.append(f"Default `{json.dumps(schema['default'])}`.")
    if "pattern" in schema:
        words.append(f"Pattern `{schema['pattern']}`.")
    return " ".join(word for word in words if word)


# Examples -------------------------------------------------------------------------------

_NAMED_EXAMPLES: dict[str, Any] = {
    "game_id": "3f2a9c1e5b7d4e8f",
    "id": "3f2a9c1e5b7d4e8f",
    "webhook_id": "9b1c44d2e0aa4f6b",
    "token": "mlt_5Qm0N8r2kP1sXv7YwZ3aB9cD",
    "name": "Ann",
    "seat": 0,
}


def example(
    spec: dict[str, Any],
    schema: dict[str, Any],
    name: str = "",
    depth: int = 0,
    *,
    sent: bool = False,
) -> Any:
    """A value that fits ``schema``: its own ``example`` where it has one, else one built
    from its type (the first variant, the first enum value, the least number allowed). A
    body ``sent`` by a client holds only the required members; an answer holds all."""
    if depth > 32:
        return None
    if "example" in schema:
        return schema["example"]
    if name in _NAMED_EXAMPLES:
        return _NAMED_EXAMPLES[name]
    if "$ref" in schema:
        return example(spec, _resolve(spec, schema), name, depth + 1, sent=sent)
    for combinator in ("oneOf", "anyOf"):
        if schema.get(combinator):
            return example(spec, schema[combinator][0], name, depth + 1, sent=sent)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = example(spec, part, name, depth + 1, sent=sent)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        required = schema.get("required", [])
        return {
            key: example(spec, value, key, depth + 1, sent=sent)
            for key, value in schema.get("properties", {}).items()
            if key in required or not sent
        }
    if kind == "array":
        return [example(spec, schema.get("items", {}), "", depth + 1, sent=sent)]
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 1.5))
    if kind == "boolean":
        return False
    if kind == "string":
        text = {"date-time": "2026-01-01T12:00:00Z", "uri": "https://example.org/hook"}.get(
            schema.get("format", ""), name or "text"
        )
        short = schema.get("minLength", 0) - len(text)
        if short > 0:
            text += ("-" + "0123456789abcdef" * (short // 16 + 1))[:short]
        return text[: schema.get("maxLength", len(text))]
    return None


# Error codes ----------------------------------------------------------------------------


def problem_catalogue(rulesets: list[Ruleset]) -> list[dict[str, Any]]:
    """Every code the service can answer with: the API's own (``PROBLEMS``, with status and
    title), then each game's rule codes (status 422) that the API does not already list,
    each with the games that raise it."""
    games: dict[str, list[str]] = {}
    for ruleset in sorted(rulesets, key=lambda r: r.id):
        for code in game_codes(ruleset):
            games.setdefault(code, []).append(ruleset.id)
    entries = [
        {"code": code, "status": status, "title": title, "games": games.get(code, [])}
        for code, (status, title) in sorted(PROBLEMS.items(), key=lambda i: (i[1][0], i[0]))
    ]
    entries += [
        {"code": code, "status": None, "title": None, "games": names}
        for code, names in sorted(games.items())
        if code not in PROBLEMS
    ]
    return entries


#: Codes the rules build from a template (an f-string), with the codes it can give.
TEMPLATE_CODES: dict[str, tuple[str, ...]] = {
    # impression rules: f"{what}_already_bought", what being buy_order's or buy_contract's
    "{what}_already_bought": ("order_already_bought", "contract_already_bought"),
}


def game_codes(ruleset: Ruleset) -> list[str]:
    """The codes ``ruleset``'s rules may raise ``IllegalAction`` with, read from the source:
    its package, the shared modules it imports (projections/components.py ...), and the fold
    every game's actions go through (``COMMON_MODULES``)."""
    module = sys.modules[type(ruleset).__module__]
    package = Path(module.__file__ or "").resolve().parent
    files = sorted(package.rglob("*.py"))
    shared = {name for file in files for name in _imported_projections(str(file))}
    files += [_PROJECTIONS / f"{name}.py" for name in sorted(shared | COMMON_MODULES)]
    codes: set[str] = set()
    for file in files:
        if not file.exists():
            continue
        found, templates = _codes_in(str(file))
        codes |= found
        for template in templates:
            codes.update(TEMPLATE_CODES.get(template, ()))
    return sorted(codes)


#: Modules of projections/ every game's actions pass through (fold.decide_action refuses an
#: action without a type for every game alike).
COMMON_MODULES = frozenset({"fold"})


@cache
def _imported_projections(file: str) -> frozenset[str]:
    """The top-level modules of projections/ that ``file`` imports (``components`` ...)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(Path(file).read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "projections":
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("projections."):
            names.add((node.module or "").split(".")[1])
    return frozenset(names - {"games"})


def unresolved_templates() -> set[str]:
    """Code templates in the rules' source that ``TEMPLATE_CODES`` does not expand."""
    found: set[str] = set()
    for file in _PROJECTIONS.rglob("*.py"):
        found |= _codes_in(str(file))[1]
    return found - set(TEMPLATE_CODES)


_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")


@cache
def _codes_in(file: str) -> tuple[frozenset[str], frozenset[str]]:
    """The codes in one module: the first argument of ``IllegalAction(...)``, and a string
    given to or kept in a name that holds a code (``code``, ``error_code``, ``*_code``,
    ``*_CODES`` tables); f-string templates apart."""
    codes: set[str] = set()
    templates: set[str] = set()
    for node in ast.walk(ast.parse(Path(file).read_text())):
        if isinstance(node, ast.Call):
            if _called(node) == "IllegalAction" and node.args:
                codes.update(_strings(node.args[0]))
                if isinstance(node.args[0], ast.JoinedStr):
                    templates.add(_template(node.args[0]))
            for keyword in node.keywords:
                if keyword.arg and _holds_code(keyword.arg):
                    codes.update(_strings(keyword.value))
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and _holds_code(t.id) for t in targets):
                codes.update(_strings(node.value))
        elif isinstance(node, ast.FunctionDef):
            arguments = node.args.posonlyargs + node.args.args
            defaults = [None] * (len(arguments) - len(node.args.defaults)) + node.args.defaults
            pairs = [
                *zip(arguments, defaults, strict=True),
                *zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True),
            ]
            for argument, default in pairs:
                if default is not None and _holds_code(argument.arg):
                    codes.update(_strings(default))
    return frozenset(codes), frozenset(templates)


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _holds_code(name: str) -> bool:
    return name in ("code", "error_code") or name.endswith(("_code", "_CODE", "_CODES"))


def _strings(node: ast.AST) -> Iterator[str]:
    """The snake_case string constants an expression may evaluate to."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if _SNAKE.fullmatch(node.value):
            yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp | ast.Dict):
        for value in node.values:
            if value is not None:
                yield from _strings(value)
    elif isinstance(node, ast.Call) and _called(node) == "get" and len(node.args) > 1:
        yield from _strings(node.args[1])  # CODES.get(key, "default")


def _template(node: ast.JoinedStr) -> str:
    return "".join(
        str(part.value) if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
        for part in node.values
        if isinstance(part, ast.Constant | ast.FormattedValue)
    )
