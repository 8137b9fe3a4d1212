"""The ruleset contract for Impendium: what views hide, resampling, schemas, timeline lines,
public parts of secret actions, and the checked component data."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.fold import copy_state
from projections.games.impendium import IMPENDIUM, data
from projections.games.impendium.actions import SCHEMAS, shape_problem
from projections.games.impendium.data import STARS
from projections.ruleset import IllegalAction, get_ruleset
from tests.unit.impendium.helpers import act, fresh, put_star, refused, star_ids, started, table


def test_the_ruleset_is_registered_under_its_id() -> None:
    assert get_ruleset("impendium") is IMPENDIUM
    assert IMPENDIUM.options == {
        "variant": "competitive",
        "fast_galaxies": False,
        "round_limit": None,
        "turmoil": False,
    }


def test_every_option_is_described_for_clients() -> None:
    assert set(IMPENDIUM.option_descriptions) == set(IMPENDIUM.options)
    assert all(text.strip() for text in IMPENDIUM.option_descriptions.values())


def test_a_view_shows_deck_sizes_never_their_order() -> None:
    state = started(3)
    seen = IMPENDIUM.view(state, None)
    assert seen["decks"]["stars"] == {
        "draw_pile": len(state["decks"]["stars"]["draw_pile"]),
        "discard_pile": 0,
    }
    assert "draw_pile" not in json.dumps(seen["seats"])


def test_a_seat_sees_its_own_diplomacy_hand_and_only_the_size_of_others() -> None:
    state = table()
    state["seats"][0]["hand"] = ["D01", "D02"]
    assert IMPENDIUM.view(state, 0)["seats"][0]["hand"] == ["D01", "D02"]
    assert IMPENDIUM.view(state, 1)["seats"][0] == {
        **IMPENDIUM.view(state, 1)["seats"][0],
        "hand": None,
        "hand_size": 2,
    }
    assert IMPENDIUM.view(state, None)["seats"][0]["hand"] is None


def test_the_cards_a_recruiter_chooses_from_are_theirs_alone_to_see() -> None:
    state = table()
    state["seats"][0]["resources"]["water"] = 14
    act(state, 0, "recruit_faction", resource="water")
    assert IMPENDIUM.view(state, 0)["pending"][0]["cards"] == state["pending"][0]["cards"]
    assert IMPENDIUM.view(state, 1)["pending"][0] == {
        "kind": "keep_diplomacy",
        "seat": 0,
        "card_count": 3,
    }


def test_a_trade_offer_is_seen_only_by_its_two_players_until_answered() -> None:
    state = table(3)
    state["arks"] = ["0,0", "0,0", "1,0"]
    act(state, 0, "offer_trade", target=1, give={"water": 2}, get={"hydrogen": 1})
    assert IMPENDIUM.view(state, 1)["pending"][0]["give"] == {"water": 2}
    assert IMPENDIUM.view(state, 2)["pending"][0] == {"kind": "trade", "seat": 1, "from": 0}
    public = IMPENDIUM.public_action(
        state,
        {
            "type": "offer_trade",
            "target": 1,
            "give": {"water": 2},
            "get": {"hydrogen": 1},
            "seat": 0,
        },
    )
    assert public == {"type": "offer_trade", "target": 1}


def test_resampling_keeps_a_seats_view_and_redraws_what_it_cannot_see() -> None:
    state = table(3)
    state["seats"][1]["hand"] = ["D01", "D02"]
    state["seats"][0]["hand"] = ["D03"]
    for card in ("D01", "D02", "D03"):
        state["decks"]["diplomacy"]["draw_pile"].remove(card)
    changed = False
    for n in range(5):
        again = IMPENDIUM.resample_hidden(state, 0, random.Random(n))
        assert IMPENDIUM.view(again, 0) == IMPENDIUM.view(state, 0)
        assert again["seats"][0]["hand"] == ["D03"]
        changed |= again["seats"][1]["hand"] != ["D01", "D02"]
    assert changed


def test_every_legal_action_loads_unchanged_through_its_schema() -> None:
    state = table()
    state["seats"][0]["factions"] = ["F02", "F13"]
    state["seats"][0]["hand"] = ["D05", "D29", "D33"]
    actions = IMPENDIUM.legal_actions(state, 0)
    kinds = {a["type"] for a in actions}
    assert {"attack", "offer_trade", "use_faction_ability", "play_diplomacy"} <= kinds
    schemas = IMPENDIUM.action_schemas()
    for action in actions:
        assert schemas[action["type"]]().load(action) == action


def test_a_schema_refuses_unknown_fields_and_wrong_types() -> None:
    from marshmallow import ValidationError

    schema = IMPENDIUM.action_schemas()["move"]()
    with pytest.raises(ValidationError):
        schema.load({"type": "move", "to": "1,0", "hydrogen": 2})
    with pytest.raises(ValidationError):
        schema.load({"type": "move", "to": 3})


def test_every_step_has_a_readable_timeline_line() -> None:
    state = fresh(2)
    line = IMPENDIUM.summarize(state, {"type": "place_start_star", "position": "2,0", "seat": 0})
    assert line.startswith("Ann placed ") and line.endswith(" at 2,0")
    state = table()
    state["seats"][0]["resources"]["water"] = 14
    assert IMPENDIUM.summarize(
        state, {"type": "recruit_faction", "resource": "water", "seat": 0}
    ).startswith("Ann recruited the ")
    assert IMPENDIUM.summarize(state, {"type": "move", "to": "1,0", "seat": 0}) == (
        "Ann moved their Ark to the space at 1,0 for 2 hydrogen"
    )
    assert IMPENDIUM.summarize(state, {"type": "end_of_round", "seat": None}) == (
        "Round 1 ends; the starting player marker passes, factions reset"
    )


def test_dice_and_draws_mark_a_step_undo_cannot_cross() -> None:
    state = table()
    assert IMPENDIUM.reveals_hidden(state, {"type": "attack", "target": 1, "seat": 0})
    assert IMPENDIUM.reveals_hidden(
        state, {"type": "recruit_faction", "resource": "water", "seat": 0}
    )
    assert IMPENDIUM.reveals_hidden(state, {"type": "end_of_round", "seat": None})
    assert not IMPENDIUM.reveals_hidden(state, {"type": "move", "to": "1,0", "seat": 0})
    assert not IMPENDIUM.reveals_hidden(state, {"type": "build_colony", "slot": 0, "seat": 0})


def test_only_the_disc_that_completes_a_project_draws_its_replacement() -> None:
    state = table()
    project = state["projects"][0]
    symbol = [i for i, slot in enumerate(STARS[project["card"]]["slots"]) if "cost" in slot]
    first = {"type": "construct_federation_star", "project": project["card"], "seat": 0}
    assert not IMPENDIUM.reveals_hidden(state, {**first, "slot": symbol[0]})
    for index in symbol[1:]:
        project["discs"][index] = 1
    assert IMPENDIUM.reveals_hidden(state, {**first, "slot": symbol[0]})


def test_placing_a_star_beside_its_colour_draws_and_elsewhere_does_not() -> None:
    state = table()
    blue, twin = star_ids("blue")[:2]
    put_star(state, "2,0", blue)
    state["pending"] = [{"kind": "place_star", "seat": 0, "card": twin, "colonies": []}]
    assert IMPENDIUM.reveals_hidden(state, {"type": "place_star", "position": "4,0", "seat": 0})
    assert not IMPENDIUM.reveals_hidden(
        state, {"type": "place_star", "position": "-2,0", "seat": 0}
    )


def test_the_component_data_matches_the_rulebooks_counts() -> None:
    assert len(data.STARS) == 50
    assert len(data.HARBINGERS) == 14
    assert len(data.FACTIONS) == 18
    assert len(data.RULERS) == 10
    assert len(data.DIPLOMACY) == 36
    assert {s["colour"] for s in data.STARS.values()} == set(data.COLOURS)


def test_bad_component_data_is_refused_at_load() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        data._by_id([{"id": "S01"}, {"id": "S01"}], "stars")
    with pytest.raises(ValueError, match="the rulebook lists 10"):
        data._by_id([{"id": "R01"}], "rulers")
    with pytest.raises(ValueError, match="bad slot"):
        data._check_slots([{"any": 0}], "S01", numeric_allowed=True)


def test_only_the_player_placing_a_starting_star_has_drawn_it() -> None:
    state = fresh(3)
    seen = IMPENDIUM.view(state, 2)
    assert seen["setup_star"] == state["setup_stars"][0]
    assert state["setup_stars"][1] not in json.dumps(seen)
    again = IMPENDIUM.resample_hidden(state, 2, random.Random(4))
    assert IMPENDIUM.view(again, 2) == seen
    assert again["setup_stars"][0] == state["setup_stars"][0]


def test_a_view_gives_each_players_colony_limits_and_recruiting_costs() -> None:
    state = table()
    put_star(state, "2,0", "S01", [0, 0])  # S01 yields water
    seen = IMPENDIUM.view(state, 1)["seats"][0]
    assert seen["ark_colour"] == "red"
    assert seen["colonies_on_map"] == 2
    assert seen["colony_cap"] == 3
    assert seen["free_discs"] == 7
    assert seen["recruit_costs"]["water"] == 12
    assert seen["recruit_costs"]["artifacts"] == 14


SHAPE_REFUSALS = [
    ({"type": "pass", "note": "bye"}, "unknown_field"),
    ({"type": "move", "to": "1,0", "replace": "F01"}, "unknown_field"),
    ({"type": "move"}, "not_a_step"),
    ({"type": "move", "to": 10}, "not_a_step"),
    ({"type": "attack", "target": True}, "bad_target"),
    (
        {"type": "offer_trade", "target": 1, "give": {"water": True}, "get": {"hydrogen": 1}},
        "nothing_for_nothing",
    ),
    ({"type": "build_colony", "slot": False}, "bad_slot"),
    ({"type": "build_colony", "slot": 0, "relocate": 3}, "bad_relocation"),
    (
        {"type": "use_faction_ability", "faction": "F13", "target": 0, "amount": 2},
        "bad_ability_use",
    ),
    ({"type": "play_diplomacy", "card": "D09", "colour": "red"}, "bad_diplomacy_use"),
]


@pytest.mark.parametrize(("action", "code"), SHAPE_REFUSALS)
def test_a_malformed_action_is_refused_by_its_shape_with_the_fields_code(
    action: dict, code: str
) -> None:
    # The hard contract of apply (docs/architecture.md): only IllegalAction, state unchanged,
    # booleans no numbers.
    state = table()
    state["seats"][0]["factions"] = ["F13"]
    state["seats"][0]["hand"] = ["D09"]
    refused(state, 0, action, code)


def test_an_answer_is_true_or_false_never_a_number() -> None:
    state = table()
    act(state, 0, "offer_trade", target=1, give={"water": 1}, get={"hydrogen": 1})
    refused(state, 1, {"type": "answer_trade", "accept": 1}, "bad_answer")


def test_an_action_that_is_no_object_and_an_automatic_step_with_fields_are_refused() -> None:
    state = table()
    before = copy_state(state)
    with pytest.raises(IllegalAction) as caught:
        IMPENDIUM.apply(state, ["pass"], random.Random(1))  # type: ignore[arg-type]
    assert caught.value.code == "bad_action" and state == before
    act(state, 0, "pass")
    act(state, 1, "pass")
    refused(state, None, {"type": "end_of_round", "extra": 1}, "unknown_field")


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=8),
    st.sampled_from([10**20, 1.5, "", "1,0", "-2,4", "water", "gold", "S01", "F13", "D09"]),
    st.sampled_from(["map:2,0/1", "project:S07/0", "harbinger:0,2/3", "artifacts", "x,y"]),
    st.dictionaries(
        st.sampled_from(["water", "hydrogen", "gold"]),
        st.one_of(st.integers(-1, 3), st.booleans(), st.none()),
        max_size=2,
    ),
    st.lists(st.integers(0, 2), max_size=2),
)


@given(
    kind=st.sampled_from(sorted(SCHEMAS)),
    data=st.data(),
)
@settings(max_examples=400, derandomize=True, deadline=None)
def test_the_fast_shape_check_agrees_with_the_marshmallow_schema(kind: str, data) -> None:
    declared = sorted(SCHEMAS[kind]().fields)
    keys = st.sampled_from([*declared, "no_such_key"])
    action = data.draw(st.dictionaries(keys, _VALUES, max_size=len(declared) + 1))
    action["type"] = kind
    errors = SCHEMAS[kind]().validate(action)
    found = shape_problem(kind, action)
    assert (found is None) == (not errors), (action, errors, found)
    if found is not None:
        field = found[0] or "no_such_key"
        assert field in errors, (action, errors, found)
