"""Each game publishes a JSON Schema of its seat view (projections/games/<id>/view_schema.json,
served at GET /rulesets/{id}/view-schema and in openapi.yaml as ``<Game>View``): every view
of random playouts at every player count, for each seat and the spectator after every step,
fits it."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from jsonschema import Draft202012Validator

from events.envelope import Envelope
from projections.fold import Game
from projections.ruleset import Ruleset
from projections.simulate import play_random
from service.http.openapi import product_rulesets

RULESETS = product_rulesets()


def validator_of(ruleset: Ruleset) -> jsonschema_rs.Draft202012Validator:
    """The game's view schema, compiled (jsonschema-rs: the Python validator takes ~40 ms a
    Gutenberg view, and these tests check thousands)."""
    schema = ruleset.view_schema()
    assert schema is not None, f"{ruleset.id} publishes no view schema"
    Draft202012Validator.check_schema(schema)
    return jsonschema_rs.Draft202012Validator(schema)


def misfits(validator: jsonschema_rs.Draft202012Validator, view: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in error.instance_path)}: {error.message}"[:300]
        for error in validator.iter_errors(view)
    ]


@pytest.mark.parametrize("ruleset", RULESETS, ids=[r.id for r in RULESETS])
def test_every_product_game_publishes_a_closed_view_schema(ruleset: Ruleset) -> None:
    schema = ruleset.view_schema()
    assert schema is not None
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert "phase" in schema["required"] and set(schema["required"]) <= set(schema["properties"])
    assert schema["properties"]["phase"]["enum"]


def option_sets(ruleset: Ruleset) -> list[dict[str, Any]]:
    """The defaults, and every on/off option the other way round (characters, turmoil ...)."""
    flipped = {name: not value for name, value in ruleset.options.items() if type(value) is bool}
    return [{}, flipped] if flipped else [{}]


PLAYOUTS = [
    (ruleset, count, options)
    for ruleset in RULESETS
    for count in range(ruleset.min_players, ruleset.max_players + 1)
    for options in option_sets(ruleset)
]


@pytest.mark.parametrize(
    ("ruleset", "player_count", "options"),
    PLAYOUTS,
    ids=[f"{r.id}-{n}-{'-'.join(o) or 'defaults'}" for r, n, o in PLAYOUTS],
)
def test_every_view_of_a_random_playout_fits_the_games_view_schema(
    ruleset: Ruleset, player_count: int, options: dict[str, Any]
) -> None:
    validator = validator_of(ruleset)
    seen = 0

    def on_step(game: Game, envelope: Envelope) -> None:
        nonlocal seen
        for seat in [None, *range(player_count)]:
            view = ruleset.view(game.state, seat)
            found = misfits(validator, view)
            assert not found, f"seq {envelope['seq']}, seat {seat}:\n" + "\n".join(found[:10])
            seen += 1

    players = [f"P{n + 1}" for n in range(player_count)]
    seed = f"view-schema-{ruleset.id}-{player_count}-{sorted(options)}"
    play_random(ruleset, players, seed, options, on_step=on_step)
    assert seen > player_count
