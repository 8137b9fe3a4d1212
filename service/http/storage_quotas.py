"""Each owner's storage quota at the HTTP edge (service.application.quotas): a writing
request from an owner past its quota is refused with 429 ``storage_quota_exceeded`` before
it does anything, and what the others append is charged to their owner."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from flask import Flask, g, request

from service.application import quotas
from service.application.auth import AuthError, bearer_token, is_admin_token
from service.application.services import Services
from service.http.app_keys import request_app
from service.http.errors import ApiError
from service.http.limits import client_address

#: The methods that may append; DELETE only ever frees.
WRITES = frozenset({"POST", "PUT", "PATCH"})


def owner_of_request(admin_key: str | None) -> str | None:
    """Whom this request's appends are charged to: its client application (its key), else its
    client address, or nobody for the admin key."""
    try:
        token = bearer_token(request.headers.get("Authorization"))
    except AuthError:
        token = None
    if is_admin_token(token, admin_key):
        return None
    app = request_app()
    if app is not None:
        return app.owner
    return f"address:{client_address(request.remote_addr)}"


def install_storage_quotas(app: Flask, services: Services) -> None:
    found = services.quotas
    if found is None or not found.active:
        return

    @app.before_request
    def check_storage_quota() -> None:
        if request.method not in WRITES:
            return
        owner = owner_of_request(services.config.admin_key)
        if owner is None:
            return
        refused = found.refusal(owner, time.time())
        if refused is not None:
            raise ApiError(
                429,
                "storage_quota_exceeded",
                f"Your share of the store is used up ({refused.reason}); reads still work. "
                "Retry after the seconds in Retry-After.",
                headers={"Retry-After": str(refused.retry_after)},
            )
        g.meeple_storage_owner = quotas.set_owner(owner)

    @app.teardown_request
    def forget_storage_owner(error: Any = None) -> None:
        token = g.pop("meeple_storage_owner", None)
        if token is not None:
            with contextlib.suppress(ValueError):  # torn down in another context: ends with it
                quotas.reset_owner(token)
