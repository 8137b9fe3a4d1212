"""The ruleset contract every game implements (see docs/architecture.md and DESIGN.md).

A ruleset is pure: no Flask, Redis, clock, uuid or global random. State is plain
JSON data (dicts, lists, str, int, bool, None) that round-trips through JSON exactly.
An action is a dict with a ``type``; when the fold applies a seat's action it adds
``"seat": n`` (the acting seat, 0-based) and for an automatic step ``"seat": None``.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import random
import sys
from typing import Any, ClassVar

from projections.decisions import describe_list

State = dict[str, Any]
Action = dict[str, Any]


class IllegalAction(Exception):
    """An action the rules forbid: a stable snake_case ``code`` and a sentence a player reads."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"IllegalAction({self.code!r}, {self.message!r})"


class Ruleset:
    """Base class of a game's rules; subclasses fill in the members of the contract."""

    id: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    rules_version: ClassVar[str]
    #: option name -> default value; ``setup`` receives these merged with the game's options.
    options: ClassVar[dict[str, Any]] = {}
    #: option name -> what it means, its values and default, for a client (``GET /rulesets``);
    #: every game with options describes each of them.
    option_descriptions: ClassVar[dict[str, str]] = {}
    #: the action types that are free actions or the rulebook's "at any time" actions, which
    #: ``GET .../legal-actions`` lists apart from the decision the game awaits.
    free_action_types: ClassVar[frozenset[str]] = frozenset()

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        """The state before the first action; deterministic given ``rng``."""
        raise NotImplementedError

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        """Validate, then mutate ``state``; raise IllegalAction leaving the state unchanged."""
        raise NotImplementedError

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        """Every concrete legal action for ``seat`` now (without the ``seat`` key)."""
        raise NotImplementedError

    def status(self, state: State) -> dict[str, Any]:
        """``round``, ``phase``, ``to_act``, ``awaiting_system`` (name or None), ``finished``."""
        raise NotImplementedError

    def system_action(self, state: State) -> Action | None:
        """The automatic step due now, or None; applied with ``seat`` None."""
        raise NotImplementedError

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """What ``seat`` (or a spectator, None) may see: no other seat's secrets, no deck order."""
        raise NotImplementedError

    def result(self, state: State) -> dict[str, Any] | None:
        """Final scores with their breakdown and the ranking after tie-breakers, once finished."""
        raise NotImplementedError

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        """A copy with everything ``seat`` cannot see redrawn consistently with what it has seen."""
        raise NotImplementedError

    def summarize(self, state: State, action: Action) -> str:
        """One line a person reads in a timeline; ``state`` is the state before ``action``."""
        raise NotImplementedError

    # Optional members with defaults -------------------------------------------------

    def public_action(self, state: State, action: Action) -> Action | None:
        """The part of a seat's action everyone may see, or None when all of it is public.

        When this returns a dict, the event log stores it as the public ``data`` and the
        full action as a secret visible only to the acting seat (e.g. a secret plan).
        ``state`` is the state before the action.
        """
        return None

    def summarize_own(self, state: State, action: Action) -> str:
        """The line the acting seat itself reads for its own ``action`` (the candidates of its
        analysis, its review): ``summarize``'s, except that it may name what only that seat
        may see (its own secret plan). Never stored in the log nor shown to anyone else."""
        return self.summarize(state, action)

    def reveals_hidden(self, before: State, action: Action) -> bool:
        """Whether applying ``action`` to ``before`` brought hidden information to light
        (a card drawn, a plan revealed, a die rolled). Undo never crosses such a step.
        The default is the safe answer: any automatic step reveals."""
        return action.get("seat") is None

    def describe_actions(self, state: State, seat: int) -> dict[str, Any]:
        """action type -> the description of its parameters as they stand now, for ``seat``
        (projections/decisions.py). By default derived exactly from ``legal_actions``; a game
        whose list is huge describes that choice itself."""
        return describe_list(self.legal_actions(state, seat))

    def components(self) -> dict[str, Any]:
        """The game's printed components (cards, tiles, boards) as the rules read them:
        each ``data/<name>.json`` of the game's package under ``name``, so a client draws
        names and effects from the same tables as the rules. Never anything hidden: no
        deck order, no seat's cards, only what the box holds."""
        return _component_tables(sys.modules[type(self).__module__].__package__ or "")

    def value_names(self) -> dict[str, str]:
        """id -> the name the table shows for it (a shop, a tile, a character, a faction),
        from the component tables: every row with an ``id`` and a ``name``. A client labels
        a parameter's values with these (legal-actions' ``names``)."""
        return _value_names(sys.modules[type(self).__module__].__package__ or "")

    def action_schemas(self) -> dict[str, Any]:
        """action type -> marshmallow Schema class, for request validation and openapi.yaml."""
        return {}

    def view_schema(self) -> dict[str, Any] | None:
        """The JSON Schema (draft 2020-12) every ``view`` of this game fits, for clients
        (openapi.yaml's ``<Game>View``): ``view_schema.json`` in the game's package, or None
        when it has none."""
        package = sys.modules[type(self).__module__].__package__ or ""
        return _view_schema(package)


@functools.cache
def _view_schema(package: str) -> dict[str, Any] | None:
    found = importlib.resources.files(package).joinpath("view_schema.json")
    if not found.is_file():
        return None
    schema: dict[str, Any] = json.loads(found.read_text(encoding="utf-8"))
    return schema


_REGISTRY: dict[str, Ruleset] = {}


def register(ruleset: Ruleset) -> Ruleset:
    """Add a ruleset to the registry under its id (idempotent for the same class)."""
    existing = _REGISTRY.get(ruleset.id)
    if existing is not None and type(existing) is not type(ruleset):
        raise ValueError(f"two rulesets claim the id {ruleset.id!r}")
    _REGISTRY[ruleset.id] = ruleset
    return ruleset


def get_ruleset(ruleset_id: str) -> Ruleset:
    """The registered ruleset with this id; KeyError when none."""
    load_games()
    return _REGISTRY[ruleset_id]


def all_rulesets() -> list[Ruleset]:
    """Every registered product ruleset, sorted by id."""
    load_games()
    return [_REGISTRY[key] for key in sorted(_REGISTRY)]


_loaded = False


def load_games() -> None:
    """Import every package under projections/games; each registers its ruleset."""
    global _loaded
    if _loaded:
        return
    import importlib
    import pkgutil

    from projections import games

    for module in pkgutil.iter_modules(games.__path__):
        if module.ispkg:
            importlib.import_module(f"projections.games.{module.name}")
    _loaded = True


@functools.cache
def _component_tables(package: str) -> dict[str, Any]:
    folder = importlib.resources.files(package).joinpath("data")
    if not folder.is_dir():
        return {}
    return {
        entry.name.removesuffix(".json"): json.loads(entry.read_text(encoding="utf-8"))
        for entry in sorted(folder.iterdir(), key=lambda entry: entry.name)
        if entry.name.endswith(".json")
    }


@functools.cache
def _value_names(package: str) -> dict[str, str]:
    names: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ident, name = node.get("id"), node.get("name")
            if isinstance(ident, str) and isinstance(name, str) and ident != name:
                names.setdefault(ident, name)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(_component_tables(package))
    return names


def ruleset_reference(ruleset: Ruleset) -> tuple[str, str]:
    """What names a ruleset to another process: its id and the module that registers it (a
    test's own ruleset is found there too)."""
    return ruleset.id, type(ruleset).__module__


def from_reference(reference: tuple[str, str]) -> Ruleset:
    """The ruleset ``ruleset_reference`` named, in this process."""
    ruleset_id, module = reference
    load_games()
    if ruleset_id not in _REGISTRY:
        importlib.import_module(module)
    found = _REGISTRY.get(ruleset_id)
    if found is None:
        # A ruleset made but never registered (a test's): the module's instance, if one.
        for value in vars(sys.modules[module]).values():
            if isinstance(value, Ruleset) and value.id == ruleset_id:
                return value
        raise KeyError(ruleset_id)
    return found
