"""The layers of the code, as docs/architecture.md draws them, held against its imports.

Every import counts: at a module's top, inside a function, or under ``TYPE_CHECKING``. A
circle of imports anywhere in ``events``, ``projections`` or ``service`` fails; so does an
import that runs up the layers (the application layer reaching for Flask or the HTTP edge,
a worker for the edge, anything low for the composition root).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("events", "projections", "service")

#: The composition root: it wires the rest and nothing below imports it. ``service.config``
#: is not among them: it is the settings every layer reads, and imports none of the service.
COMPOSITION_ROOT = ("service.app", "service.bootstrap", "service.cli")

#: What each layer may not import (by module prefix), beside the composition root.
FORBIDDEN = {
    "events": ("projections", "service", "flask", "werkzeug"),
    "projections": ("service", "flask", "werkzeug"),
    "service.application": ("flask", "werkzeug", "service.http", "service.workers", "service.live"),
    "service.live": ("flask", "werkzeug", "service.http", "service.workers"),
    "service.workers": ("flask", "werkzeug", "service.http"),
    "service.http": ("service.workers",),
    # What every layer counts and logs with: it knows none of them.
    "service.monitoring": (
        "flask",
        "werkzeug",
        "service.http",
        "service.workers",
        "service.live",
        "service.application",
    ),
}

#: The modules that hold a resource's endpoints, a Flask blueprint each.
RESOURCES = ROOT / "service" / "http" / "resources"

#: The crossings between resources that are the point: the state answer with ``?at=`` is
#: time travel's (games hands that one request over, and a branch holder's seat state is the
#: same view), and an application's stream sends its messages as the live streams do (its
#: webhooks take the seats' webhook body); and legal-actions says whether undo and redo would
#: succeed now as undo's own endpoints decide it (``undo.move_offers``), never by a copy.
ALLOWED_CROSSINGS = {
    "games": {"time_travel", "undo"},
    "branches": {"time_travel", "undo"},
    "apps": {"stream", "webhooks"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imports_of(name: str) -> set[str]:
    """Every module ``name`` imports (of this tree, or a library's top-level name)."""
    path = modules()[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules() else base)
    return found


def own_imports(name: str) -> set[str]:
    return {target for target in imports_of(name) if target in modules() and target != name}


def circles() -> Iterator[list[str]]:
    """Each strongly connected set of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> Iterator[list[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(own_imports(node)):
            if target not in index:
                yield from visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                yield sorted(component)

    for name in sorted(modules()):
        if name not in index:
            yield from visit(name)


def under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_the_walk_sees_every_package_and_a_planted_circle() -> None:
    # The walk itself: it finds the modules, reads function-level imports, and finds circles.
    assert {"events.envelope", "projections.fold", "service.application.commands"} <= set(modules())
    assert "service.application.commands" in own_imports("service.http.errors")
    assert "service.workers.jobs" in own_imports("service.bootstrap")
    assert "service.application.bot_seats" in own_imports("service.application.commands")
    assert not under("service.application.commands", "service.app")


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert list(circles()) == []


def test_no_layer_imports_one_above_it() -> None:
    upward = {}
    for name in modules():
        if any(under(name, root) for root in COMPOSITION_ROOT):
            continue  # the top: it may import every layer
        layer = max((prefix for prefix in FORBIDDEN if under(name, prefix)), key=len, default="")
        banned = (*FORBIDDEN.get(layer, ()), *COMPOSITION_ROOT)
        wrong = sorted(
            target for target in imports_of(name) if any(under(target, prefix) for prefix in banned)
        )
        if wrong:
            upward[name] = wrong
    assert upward == {}


def test_every_module_says_first_what_it_is_for() -> None:
    silent = [
        name
        for name, path in modules().items()
        if path.read_text().strip() and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert silent == []


def test_each_resource_is_a_blueprint_that_imports_no_other_resource() -> None:
    names = {path.stem for path in RESOURCES.glob("*.py") if path.stem != "__init__"}
    assert {"games", "lobby", "analyses", "stream", "webhooks"} <= names
    crossings = {}
    for name in sorted(names):
        text = (RESOURCES / f"{name}.py").read_text()
        assert "Blueprint(" in text, name
        others = (
            {
                target.rpartition(".")[2]
                for target in own_imports(f"service.http.resources.{name}")
                if target.startswith("service.http.resources.")
            }
            - {name}
            - ALLOWED_CROSSINGS.get(name, set())
        )
        if others:
            crossings[name] = sorted(others)
    assert crossings == {}


def test_the_shared_helpers_hold_no_endpoint() -> None:
    text = (ROOT / "service" / "http" / "shared.py").read_text()
    assert "Blueprint(" not in text and "@bp." not in text
