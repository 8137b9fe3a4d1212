"""The browser app served at ``/``: a client of the REST API like any other (docs/web.md).

Everything here is static: ``static/index.html``, the shell's ES modules under
``static/app/`` and one renderer per game under ``static/games/``. No build step, nothing
from a CDN. The server adds no rule: the page reads the same API as any integrator.

Seat tokens stay in the browser (the URL fragment and ``sessionStorage``); the page never
puts one in a URL's path or query, so no server log holds one. The Content-Security-Policy
allows scripts, styles and requests from this origin only.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response

STATIC = Path(__file__).parent / "static"

bp = Blueprint("web", __name__, static_folder=str(STATIC), static_url_path="/static")

#: Scripts, styles, images and requests from this origin only; no inline script or style,
#: no plugins, no framing, no <base> rewriting, no form posts elsewhere.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    # A page URL may carry a token in its fragment; browsers never send fragments, and
    # no-referrer keeps even the path and query out of other sites' logs.
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


@bp.get("/")
def index() -> Response:
    """The web app: lobby, tables, play, replay and branches, in the browser.
    ---
    get:
      operationId: getWebApp
      tags: [service]
      summary: The web app
      description: >
        A page that plays, watches, replays and branches games through this API (plain ES
        modules under ``/static/``; docs/web.md). Seat tokens stay in the browser.
      responses:
        200:
          description: HTML
          content:
            text/html:
              schema: {type: string}
    """
    # A small page read whole: no open file is left to the WSGI server to close.
    response = Response((STATIC / "index.html").read_bytes(), mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.after_request
def secure(response: Response) -> Response:
    """Every page and asset of the web app carries the security headers."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response
