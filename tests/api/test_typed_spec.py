"""openapi.yaml types the play loop (docs/api.md, The typed play loop): legal actions, action
bodies and answers reference ``Action`` (each game's union discriminated by ``type``), state answers
``View`` (each game's published view schema, converted to OpenAPI 3.0)."""

from __future__ import annotations

import random
from typing import Any

import pytest
import yaml
from openapi_schema_validator import OAS30Validator

from projections.fold import Game
from projections.ruleset import Ruleset
from projections.simulate import play_random
from service.http.openapi import _camel, openapi_schema, product_rulesets
from tests.api.test_openapi import OPENAPI_FILE

SPEC = yaml.safe_load(OPENAPI_FILE.read_text())
SCHEMAS = SPEC["components"]["schemas"]
RULESETS = product_rulesets()
ACTION = {"$ref": "#/components/schemas/Action"}
VIEW = {"$ref": "#/components/schemas/View"}


def body_of(path: str) -> Any:
    return SPEC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_legal_actions_bodies_and_answers_are_the_one_action_union() -> None:
    assert SCHEMAS["LegalActions"]["properties"]["actions"]["items"] == ACTION
    assert SCHEMAS["ActionResult"]["properties"]["legal_actions"]["items"] == ACTION
    assert body_of("/games/{game_id}/actions") == ACTION
    assert body_of("/games/{game_id}/seats/{seat}/actions") == ACTION
    games = [{"$ref": f"#/components/schemas/{_camel(r.id)}Action"} for r in RULESETS]
    assert SCHEMAS["Action"]["anyOf"] == games


def test_an_action_answer_carries_the_status_and_optionally_the_next_legal_actions() -> None:
    result = SCHEMAS["ActionResult"]
    assert result["properties"]["status"] == {"$ref": "#/components/schemas/GameStatus"}
    assert {"seq", "version", "status", "state"} <= set(result["required"])
    assert "legal_actions" not in result["required"]
    for path in ("/games/{game_id}/actions", "/games/{game_id}/seats/{seat}/actions"):
        parameters = SPEC["paths"][path]["post"]["parameters"]
        assert {"$ref": "#/components/parameters/Include"} in parameters
        invalid = SPEC["paths"][path]["post"]["responses"]["422"]["description"]
        assert "`invalid_query`" in invalid
    include = SPEC["components"]["parameters"]["Include"]
    assert include["in"] == "query" and include["schema"]["enum"] == ["legal_actions"]


def test_every_state_answer_is_the_view_union_of_the_games_view_schemas() -> None:
    for answer in ("State", "ActionResult", "MoveResult"):
        assert SCHEMAS[answer]["properties"]["state"] == VIEW, answer
    games = [{"$ref": f"#/components/schemas/{_camel(r.id)}View"} for r in RULESETS]
    assert SCHEMAS["View"]["anyOf"] == games
    for ruleset in RULESETS:
        published = ruleset.view_schema()
        assert published is not None
        root, definitions = openapi_schema(published, f"{_camel(ruleset.id)}View")
        assert SCHEMAS[f"{_camel(ruleset.id)}View"] == root
        for name, schema in definitions.items():
            assert SCHEMAS[name] == schema, name
        assert root["additionalProperties"] is False


def test_action_types_two_games_share_cannot_be_mistaken_for_each_other() -> None:
    """A generated client tries the union's members in turn: an action of one game must not
    parse as another game's action of the same type with fewer fields (it would drop some
    and post a different body). Either both have the same fields, or each requires one the
    other lacks."""
    fields: dict[str, dict[str, tuple[set[str], set[str]]]] = {}
    for ruleset in RULESETS:
        for kind, schema in ruleset.action_schemas().items():
            loaded = schema().fields
            required = {name for name, field in loaded.items() if field.required}
            fields.setdefault(kind, {})[ruleset.id] = (set(loaded), required)
    shared = {kind: games for kind, games in fields.items() if len(games) > 1}
    assert shared, "no type is shared: this test no longer guards anything"
    for kind, games in shared.items():
        for game, (names, _) in games.items():
            for other, (other_names, other_required) in games.items():
                if game == other or names == other_names:
                    continue
                assert other_required - names, f"{other}'s {kind} may parse as {game}'s"


def test_openapi_schema_writes_json_schema_the_way_openapi_3_0_does() -> None:
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "A game's view",
        "type": "object",
        "required": [],
        "properties": {
            "count": {"type": ["integer", "null"]},
            "side": {"const": "A"},
            "phase": {"type": ["string", "null"], "enum": ["plan", None], "description": "d"},
            "seat": {"oneOf": [{"$ref": "#/$defs/Seat"}, {"type": "null"}]},
        },
        "$defs": {"Seat": {"type": "object", "properties": {"coins": {"type": "integer"}}}},
    }
    root, definitions = openapi_schema(document, "GameView")
    # No title (generators would name the class after it), no empty required (3.0 wants one)
    assert {"$schema", "$defs", "title", "required"}.isdisjoint(root)
    assert root["properties"]["count"] == {"type": "integer", "nullable": True}
    assert root["properties"]["side"] == {"enum": ["A"]}
    assert root["properties"]["phase"] == {
        "oneOf": [
            {"type": "string", "enum": ["plan"]},
            {"type": "string", "nullable": True, "enum": [None]},
        ],
        "description": "d",
    }
    assert root["properties"]["seat"]["oneOf"] == [
        {"$ref": "#/components/schemas/GameViewSeat"},
        {"type": "object", "nullable": True, "enum": [None]},
    ]
    assert definitions == {"GameViewSeat": document["$defs"]["Seat"]}
    with pytest.raises(ValueError, match=r"no OpenAPI 3\.0 form"):
        openapi_schema({"type": ["integer", "string"]}, "GameView")


@pytest.mark.parametrize("ruleset", RULESETS, ids=[r.id for r in RULESETS])
def test_views_fit_the_games_view_in_openapi_yaml(ruleset: Ruleset) -> None:
    """The OpenAPI 3.0 form says what the JSON Schema says: a sample of real views, each
    seat's and the spectator's, fits ``<Game>View`` as an OpenAPI validator reads it."""
    validator = OAS30Validator(
        {"$ref": f"#/components/schemas/{_camel(ruleset.id)}View", "components": SPEC["components"]}
    )
    views: list[dict[str, Any]] = []
    sample = random.Random(ruleset.id)
    count = max(2, ruleset.min_players)

    def on_step(game: Game, envelope: Any) -> None:
        if sample.random() < 0.03 or ruleset.status(game.state)["finished"]:
            views.extend(ruleset.view(game.state, seat) for seat in [None, *range(count)])

    play_random(ruleset, [f"P{n}" for n in range(count)], f"oas-{ruleset.id}", on_step=on_step)
    assert len(views) > count + 1
    for view in views:
        errors = [error.message[:200] for error in validator.iter_errors(view)]
        assert not errors, errors[:5]
