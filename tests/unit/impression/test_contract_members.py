"""The ruleset contract: views, hidden information, schemas, summaries."""

from __future__ import annotations

import json
import random

import pytest

from projections.fold import Game
from projections.games.impression import IMPRESSION, data
from projections.ruleset import IllegalAction
from projections.simulate import play_random
from tests.unit.impression.support import RULES, act, new_game


def test_the_view_shows_pile_sizes_never_their_order() -> None:
    state = new_game(3)
    view = RULES.view(state, 1)
    assert view["trading"]["draw_pile"] == len(state["trading"]["draw_pile"])
    assert view["orders"]["piles"] == {
        level: len(p) for level, p in state["orders"]["piles"].items()
    }
    assert view["orders"]["removed"] == {level: 3 for level in data.LEVELS}
    assert view["contracts"]["draw_pile"] == len(state["contracts"]["draw_pile"])
    assert view["boxed_discs"] == len(state["boxed_discs"])
    text = json.dumps(view)
    for hidden in state["contracts"]["draw_pile"] + state["boxed_discs"]:
        assert f'"{hidden}"' not in text


def test_the_top_lead_letters_back_and_the_top_factories_are_public() -> None:
    state = new_game(2)
    view = RULES.view(state, None)
    top = state["letters"]["draw_pile"][0]
    assert view["letters"]["top_back"] == data.LEAD_LETTERS[top]["letter"]
    assert view["factories"]["II"]["top"] == state["factories"]["II"]["draw_pile"][0]


def test_resampling_keeps_every_view_and_redraws_the_hidden_piles() -> None:
    state = new_game(4)
    resampled = RULES.resample_hidden(state, 2, random.Random(9))
    for seat in (None, 0, 2):
        assert RULES.view(resampled, seat) == RULES.view(state, seat)
    assert resampled["contracts"]["draw_pile"] != state["contracts"]["draw_pile"]
    assert sorted(resampled["contracts"]["draw_pile"]) == sorted(state["contracts"]["draw_pile"])


def test_every_legal_action_has_a_schema_that_loads_it_unchanged() -> None:
    schemas = RULES.action_schemas()
    checked: set[str] = set()

    def check(game: Game, _envelope: object) -> None:
        for seat in RULES.status(game.state)["to_act"]:
            for action in RULES.legal_actions(game.state, seat):
                if action["type"] not in checked:
                    assert schemas[action["type"]]().load(action) == action
                    checked.add(action["type"])

    play_random(IMPRESSION, ["A", "B", "C"], "schemas", on_step=check)
    assert {"shop", "reset", "buy_order", "advance_order", "end_turn"} <= checked


def test_summaries_name_the_player_and_what_they_did() -> None:
    state = new_game(2)
    seat = state["order"][0]
    name = state["players"][seat]
    letter = data.LEAD_LETTERS[state["letters"]["desk"][0]]["letter"]
    line = RULES.summarize(
        state, {"type": "reset", "slot": 0, "keep": 1, "lay_down": 0, "seat": seat}
    )
    assert line == f"{name} reset: kept lead letter {letter} on stack 1"
    assert RULES.summarize(state, {"type": "pay_wages", "seat": None}).startswith("Wages")
    assert RULES.summarize(state, {"type": "choose_resource", "resource": "ink", "seat": seat}) == (
        f"{name}: choose resource (resource ink)"
    )


def test_drawing_steps_reveal_hidden_information_and_plain_answers_do_not() -> None:
    state = new_game(2)
    assert RULES.reveals_hidden(state, {"type": "reset", "seat": 0}) is True
    assert RULES.reveals_hidden(state, {"type": "preparation", "seat": None}) is True
    assert RULES.reveals_hidden(state, {"type": "end_turn", "seat": 0}) is False


def test_a_seat_may_not_post_an_automatic_step() -> None:
    state = new_game(2)
    state["phase"] = "wages"
    with pytest.raises(IllegalAction) as error:
        act(state, 0, type="pay_wages")
    assert error.value.code == "system_only"


def test_summaries_name_the_tile_a_player_bought_or_used() -> None:
    state = new_game(2)
    tech = state["tech"]["II"]["display"][1]
    action = {"type": "buy_technology", "level": "II", "row": 1, "space": "W4", "mode": "up"}
    line = RULES.summarize(state, {**action, "relocate": None, "seat": 1})
    assert line == f"Bob bought technology {tech} and built it up on W4"
    trade = {"type": "trade_convert", "give": "ink", "take": ["lead", "paper"], "seat": 0}
    assert RULES.summarize(state, trade) == "Ann traded 1 ink for lead and paper"


def test_summaries_of_placing_ordering_and_choosing_the_first_tradesman() -> None:
    state = new_game(2)  # Ann's tradesmen stand in S1 and S9
    place = {"type": "place_tradesman", "shop": "S3", "seat": 1}
    assert RULES.summarize(state, place) == "Bob placed a tradesman in Ink maker, room II"
    tuck = {"type": "return_technologies", "order": ["BII4", "GII1"], "seat": 0}
    assert (
        RULES.summarize(state, tuck)
        == "Ann put technologies BII4, GII1 under their pile, in that order"
    )
    first = {"type": "act_first", "tradesman": 1, "seat": 0}
    assert RULES.summarize(state, first) == "Ann took the room II action in Workshop first"


def test_placing_ordering_and_choosing_the_first_tradesman_reveal_nothing() -> None:
    state = new_game(2)
    for kind in ("place_tradesman", "return_technologies", "act_first"):
        assert RULES.reveals_hidden(state, {"type": kind, "seat": 0}) is False
