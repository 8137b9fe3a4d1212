"""The Flask application factory (Flask tutorial style): ``create_app(config)``.

``app.extensions["meeple"]`` holds the ``Services`` the views and the jobs share.
"""

from __future__ import annotations

import importlib
import importlib.util

from flask import Flask, Response
from werkzeug.middleware.proxy_fix import ProxyFix

from service.bootstrap import Services, bootstrap
from service.config import Config, load_config
from service.http.attention import install_attention
from service.http.compression import install_compression
from service.http.errors import register_error_handlers, settle_retry_after
from service.http.fair_requests import install_fair_requests
from service.http.json_input import StrictJSONProvider
from service.http.limits import install_rate_limits
from service.http.observing import install_observing
from service.http.read_cache import install_read_cache
from service.http.storage_quotas import install_storage_quotas

#: Blueprints of the other parts of the service (notifications, the live stream, the lobby,
#: analyses, the web app), each a module exposing ``bp``; registered when present.
EXTRA_BLUEPRINTS = (
    "service.http.resources.webhooks",
    "service.http.resources.stream",
    "service.http.resources.time_travel",
    "service.http.resources.undo",
    "service.http.resources.branches",
    "service.http.resources.audits",
    "service.http.resources.lobby",
    "service.http.resources.analyses",
    "service.http.resources.apps",
    "service.http.resources.reviews",
    "service.http.web",
)


def create_app(config: Config | None = None, services: Services | None = None) -> Flask:
    """The API for ``config`` (default: from the environment), or around ready ``services``."""
    if services is None:
        services = bootstrap(config if config is not None else load_config())
    config = services.config
    # No app-wide static folder: the web app's blueprint serves /static/ (service/http/web).
    app = Flask(__name__, static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    # Every request body is read through app.json: depth-limited, no duplicate keys.
    app.json = StrictJSONProvider(app)
    app.json.max_depth = config.max_json_depth
    app.json.sort_keys = False
    if config.request_slots:
        # Inside ProxyFix (wrapped next), so that the address it charges is the client's.
        install_fair_requests(app, config.request_slots, config.admin_key, services.apps)
    if config.trusted_proxies:
        # remote_addr becomes the address the outermost trusted proxy saw; without proxies
        # X-Forwarded-For is the client's own claim and is ignored.
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=config.trusted_proxies, x_proto=config.trusted_proxies
        )
    app.extensions["meeple"] = services
    register_error_handlers(app)
    # First: its after-request function runs last, when the answer's status is final.
    install_observing(app, config.log_format)
    # Next: it compresses the body every later-registered function has finished with.
    install_compression(app)
    # Next: Retry-After is settled once every other after-request function has had its say.
    app.after_request(settle_retry_after)

    from service.http.resources import docs, probes
    from service.http.resources import games as api

    app.register_blueprint(api.bp)
    app.register_blueprint(docs.bp)
    app.register_blueprint(probes.bp)
    for name in EXTRA_BLUEPRINTS:
        if importlib.util.find_spec(name) is not None:
            app.register_blueprint(importlib.import_module(name).bp)
    install_rate_limits(app, config)
    install_storage_quotas(app, services)
    install_read_cache(app)
    install_attention(app)
    app.after_request(allow_browser_clients)
    # Heard from the start, every process's appends tell this one which of its cached games
    # are current (commands.load_for_action: an action on one needs no read first).
    streams = getattr(services.jobs, "streams", None)
    if streams is not None:
        streams.listen()
    return app


#: What a browser client may send and read across origins (docs/api.md, "Browsers").
CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": (
        "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID, "
        "Prefer, X-Request-ID"
    ),
    "Access-Control-Expose-Headers": (
        "ETag, Location, Retry-After, Idempotent-Replayed, Preference-Applied, "
        "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-Request-ID"
    ),
    "Access-Control-Max-Age": "600",
}


def allow_browser_clients(response: Response) -> Response:
    """Let web clients on any origin call the API. Safe with any origin because the API
    authenticates by bearer tokens a client sends on purpose, never by cookies."""
    for name, value in CORS_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
