"""Which client application a request speaks for (service.application.apps): looked up once
per request from its ``Authorization: Bearer mla_...`` key, for the rate limits, the storage
quotas, the request shares and the views alike."""

from __future__ import annotations

from typing import Any

from flask import current_app, request

from service.application import apps
from service.application.auth import AuthError, bearer_token

#: Where a request keeps the application its key names (its WSGI environ: one per request).
REQUEST_APP = "meeple.app"
_NO_APP = object()


def request_key() -> str | None:
    """The application key the request sends, if it sends one (whether known or not)."""
    try:
        token = bearer_token(request.headers.get("Authorization"))
    except AuthError:
        return None
    return token if apps.is_app_key(token) else None


def request_app() -> apps.App | None:
    """The client application whose key this request sends; None without a key, or for one
    unknown or revoked (the view then answers 401 ``invalid_token``)."""
    found: Any = request.environ.get(REQUEST_APP, _NO_APP)
    if found is _NO_APP:
        key = request_key()
        registry = current_app.extensions["meeple"].apps
        found = None if key is None or registry is None else apps.app_of_key(registry, key)
        request.environ[REQUEST_APP] = found
    return found


def forget_request_app() -> None:
    """The key was rotated or revoked during this request: look it up afresh if asked again."""
    request.environ.pop(REQUEST_APP, None)
