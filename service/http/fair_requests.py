"""The serving process's places, taken by each request in its owner's fair order
(``service.application.request_shares``): a WSGI middleware around the Flask app, inside
``ProxyFix`` when proxies are trusted, so the address it charges is the client's.

The place is held while the app makes the answer, and given back as soon as the app returns
it: a streamed body (a live stream, an export) is sent without one, and a request that waits
for news gives its place back meanwhile (``request_shares.aside``, used by the live hub).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from service.application import apps, request_shares
from service.application.auth import AuthError, bearer_token, is_admin_token
from service.application.owners import owner_for
from service.application.request_shares import RequestShares
from service.http.app_keys import REQUEST_APP
from service.http.limits import client_address

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class FairRequests:
    """Runs ``app`` for each request inside one of ``shares``' places."""

    def __init__(
        self, app: WsgiApp, shares: RequestShares, admin_key: str | None, registry: Any = None
    ) -> None:
        self.app = app
        self.shares = shares
        self.admin_key = admin_key
        #: the client applications (service.application.apps): a key's requests share its own
        self.registry = registry

    def owner(self, environ: dict[str, Any]) -> str:
        try:
            token = bearer_token(environ.get("HTTP_AUTHORIZATION"))
        except AuthError:
            token = None  # refused by the app; charged to its address meanwhile
        admin = is_admin_token(token, self.admin_key)
        application = None
        if apps.is_app_key(token) and self.registry is not None:
            assert token is not None
            found = apps.app_of_key(self.registry, token)
            # Kept for the request's own look-up (service.http.app_keys): one per request.
            environ[REQUEST_APP] = found
            application = None if found is None else found.id
        address = client_address(environ.get("REMOTE_ADDR"))
        return owner_for(admin=admin, address=address, application=application).key

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        self.shares.enter(self.owner(environ))
        try:
            return self.app(environ, start_response)
        finally:
            self.shares.leave()


def install_fair_requests(
    app: Any, slots: int, admin_key: str | None, registry: Any = None
) -> RequestShares:
    """Wrap ``app.wsgi_app``; the shares, also the live hub's (``request_shares.install``)."""
    shares = RequestShares(slots)
    app.wsgi_app = FairRequests(app.wsgi_app, shares, admin_key, registry)
    request_shares.install(shares)
    return shares
