"""The web app's files as the service serves them (service/http/web): the page at /, its ES
modules and styles, under a Content-Security-Policy that allows this origin only, and one
renderer module per ruleset the service hosts."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

from service.http.openapi import product_rulesets
from service.http.web import STATIC

MODULES = sorted(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.js"))


def test_the_page_at_the_root_is_the_web_app_under_a_strict_content_security_policy(
    client: FlaskClient,
) -> None:
    with client.get("/") as response:
        assert response.status_code == 200
        page = response.data
    assert response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert b'<script type="module" src="/static/app/main.js"></script>' in page


def test_the_page_holds_no_inline_script_or_style_and_loads_nothing_from_elsewhere() -> None:
    page = (STATIC / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []
    assert "<style" not in page and "style=" not in page
    for path in STATIC.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            text = path.read_text()
            assert not re.search(r"(src|href)=\"(https?:)?//", text), path
            assert not re.search(r"(import|from)\s*\(?\s*[\"'](https?:)?//", text), path


def test_every_module_and_stylesheet_is_served_with_its_type_and_the_policy(
    client: FlaskClient,
) -> None:
    assert "app/main.js" in MODULES and "games/common.js" in MODULES
    for module in MODULES:
        with client.get(f"/static/{module}") as response:
            assert response.status_code == 200, module
            assert response.mimetype == "text/javascript", module
            assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    with client.get("/static/app.css") as response:
        assert response.mimetype == "text/css"


def test_each_ruleset_the_service_hosts_has_a_table_renderer() -> None:
    renderers = {Path(m).stem for m in MODULES if m.startswith("games/")} - {"common"}
    assert {r.id for r in product_rulesets()} <= renderers


def test_a_missing_static_file_is_a_404_problem(client: FlaskClient) -> None:
    response = client.get("/static/games/no-such-game.js")
    assert response.status_code == 404
    assert response.json["code"] == "not_found"


def test_the_api_keeps_its_own_answers_without_the_pages_policy(client: FlaskClient) -> None:
    response = client.get("/rulesets")
    assert response.status_code == 200
    assert "Content-Security-Policy" not in response.headers
