"""The contract as served: ``GET /openapi.yaml`` and ``GET /docs``, a reference page rendered
on the server from the same spec (plain HTML and CSS, no scripts, nothing fetched from a
CDN, so it works offline)."""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, current_app, render_template

from service.errors import PROBLEMS
from service.openapi import build_spec, spec_yaml

bp = Blueprint("docs", __name__, template_folder="templates")


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
      responses:
        200:
          description: HTML
          content:
            text/html:
              schema: {type: string}
    """
    server = current_app.extensions["meeple"].config.public_url
    html = _cached("html", lambda: render_page(build_spec(current_app, server=server)))
    return Response(html, mimetype="text/html")


def render_page(spec: dict[str, Any]) -> str:
    operations = []
    for path, item in spec.get("paths", {}).items():
        for method, operation in item.items():
            operations.append(
                {
                    "id": operation.get("operationId") or f"{method}-{path}",
                    "method": method.upper(),
                    "path": path,
                    "summary": operation.get("summary", ""),
                    "description": operation.get("description", ""),
                    "parameters": [
                        _resolve(spec, parameter) for parameter in operation.get("parameters", [])
                    ],
                    "body": _body(operation.get("requestBody")),
                    "responses": [
                        (str(status), _resolve(spec, response).get("description", ""))
                        for status, response in operation.get("responses", {}).items()
                    ],
                }
            )
    schemas = {
        name: json.dumps(schema, indent=2, sort_keys=True)
        for name, schema in sorted(spec.get("components", {}).get("schemas", {}).items())
    }
    problems = [
        {"code": code, "status": status, "title": title}
        for code, (status, title) in sorted(
            PROBLEMS.items(), key=lambda item: (item[1][0], item[0])
        )
    ]
    return render_template(
        "docs.html",
        info=spec["info"],
        servers=spec.get("servers", []),
        operations=operations,
        schemas=schemas,
        problems=problems,
    )


def _resolve(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    found: Any = spec
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    resolved: dict[str, Any] = found
    return resolved


def _body(body: dict[str, Any] | None) -> str | None:
    if not body:
        return None
    for media in body.get("content", {}).values():
        schema = media.get("schema", {})
        ref = schema.get("$ref")
        return ref.rsplit("/", 1)[-1] if ref else json.dumps(schema)
    return None
