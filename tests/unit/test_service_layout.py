"""One concern per module in ``service/``: each resource's views import what they share from
``service.http``, never from another resource's module, so no two view modules import each
other (issue 12 point 7)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "service"

#: The modules that hold a resource's endpoints (a Flask blueprint each).
VIEW_MODULES = {
    "api",
    "analyses",
    "audits",
    "branches",
    "docs",
    "lobby",
    "stream",
    "time_travel",
    "undo",
    "webhooks",
}


#: The crossings that are the point: the state answer with ``?at=`` is time travel's (api
#: hands that one request over, and a branch holder's seat state is the same view); a new
#: game's open and bot seats are the lobby's (api asks it for the caps and the seats).
ALLOWED = {"api": {"time_travel", "lobby"}, "branches": {"time_travel"}}


def imported_service_modules(path: Path) -> set[str]:
    """Every ``service.X`` module the file imports, at its top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("service."):
                found.add(node.module.split(".")[1])
            elif node.module == "service":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("service."):
                    found.add(alias.name.split(".")[1])
    return found


def test_every_view_module_exists_and_holds_a_blueprint() -> None:
    for name in VIEW_MODULES:
        text = (SERVICE / f"{name}.py").read_text()
        assert "Blueprint(" in text, name


def test_no_view_module_imports_another_resources_module() -> None:
    crossings = {}
    for name in VIEW_MODULES:
        others = imported_service_modules(SERVICE / f"{name}.py") & (VIEW_MODULES - {name})
        others -= ALLOWED.get(name, set())
        if others:
            crossings[name] = sorted(others)
    assert crossings == {}


def test_the_shared_helpers_hold_no_endpoint() -> None:
    text = (SERVICE / "http.py").read_text()
    assert "Blueprint(" not in text and "@bp." not in text
