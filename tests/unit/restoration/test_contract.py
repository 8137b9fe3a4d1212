"""The ruleset contract around the rules: views, resampling, schemas, timeline lines."""

from __future__ import annotations

import json
import random

import pytest
from marshmallow import ValidationError

from projections.fold import copy_state
from projections.games.restoration.game import RESTORATION
from projections.ruleset import IllegalAction, get_ruleset
from tests.unit.restoration.table import act, place_at, refused, table


def test_restoration_is_registered() -> None:
    ruleset = get_ruleset("restoration")
    assert (ruleset.min_players, ruleset.max_players, ruleset.rules_version) == (2, 4, "4")
    assert ruleset.options == {"arrangement": "first_game"}


def test_a_seat_sees_its_own_managers_and_only_the_size_of_other_hands() -> None:
    state = table(3)
    state["seats"][1]["hand"] = ["envoy", "herald"]
    view = RESTORATION.view(state, 0)
    assert view["seats"][0]["hand"] == state["seats"][0]["hand"]
    assert view["seats"][1]["hand"] is None and view["seats"][1]["hand_size"] == 2
    spectator = RESTORATION.view(state, None)
    assert all(player["hand"] is None for player in spectator["seats"])


def test_no_view_shows_the_order_of_a_deck_or_pile_or_a_face_down_event() -> None:
    state = table(4)
    view = RESTORATION.view(state, 2)
    assert view["managers"]["deck"] == {
        "draw_pile": len(state["managers"]["deck"]["draw_pile"]),
        "discard_pile": 0,
    }
    assert view["construction"]["pile"] == len(state["construction"]["pile"])
    assert view["events"]["face_down"] == 2
    text = json.dumps(view)
    for hidden in state["events"]["rounds"][1:] + state["events"]["unused"]:
        assert hidden not in text


def test_resampling_redraws_what_the_seat_cannot_see_and_nothing_else() -> None:
    state = table(4)
    for seat in range(4):
        state["seats"][seat]["hand"] = ["foreman", "broker", "steward"]
    changed = False
    for attempt in range(10):
        fresh = RESTORATION.resample_hidden(state, 0, random.Random(attempt))
        assert RESTORATION.view(fresh, 0) == RESTORATION.view(state, 0)
        assert fresh["seats"][0]["hand"] == state["seats"][0]["hand"]
        changed = changed or fresh["seats"][1]["hand"] != state["seats"][1]["hand"]
    assert changed


def test_a_card_taken_face_up_stays_in_that_hand_when_resampling() -> None:
    state = table(3)
    state["pending"].insert(0, {"kind": "manager", "seat": 1, "optional": True})
    taken = sorted(state["managers"]["supply"])[0]
    act(state, 1, "take_manager", source="supply", manager=taken)
    assert RESTORATION.view(state, 0)["seats"][1]["hand_public"] == [taken]
    for attempt in range(10):
        fresh = RESTORATION.resample_hidden(state, 0, random.Random(attempt))
        assert taken in fresh["seats"][1]["hand"]
        assert len(fresh["seats"][1]["hand"]) == 2


def test_every_legal_action_loads_unchanged_through_its_schema() -> None:
    state = table(3, event="masters_visit")
    state["seats"][0]["hand"] = ["foreman", "steward"]
    place_at(state, "B1", 1)
    schemas = RESTORATION.action_schemas()
    act(state, 0, "place_worker", position="AB1", artisan=False)
    for action in RESTORATION.legal_actions(state, 0):
        assert schemas[action["type"]]().load(action) == action


def test_schemas_refuse_unknown_fields_and_a_card_named_for_a_deck_draw() -> None:
    schemas = RESTORATION.action_schemas()
    with pytest.raises(ValidationError):
        schemas["end_turn"]().load({"type": "end_turn", "extra": 1})
    with pytest.raises(ValidationError):
        schemas["take_manager"]().load(
            {"type": "take_manager", "source": "deck", "manager": "envoy"}
        )
    with pytest.raises(ValidationError):
        schemas["take_manager"]().load({"type": "take_manager", "source": "supply"})
    with pytest.raises(ValidationError):
        schemas["move"]().load({"type": "end_turn", "workshop": "A"})


def test_timeline_lines_name_the_player_and_what_they_did() -> None:
    state = table(3)
    place_at(state, "AB1", 1)
    line = RESTORATION.summarize(
        state, {"type": "place_worker", "position": "AB1", "artisan": False, "seat": 0}
    )
    assert line == "Orange placed a worker at AB1, paying 1 reputation"
    act(state, 0, "place_worker", position="AB1", artisan=False)
    assert RESTORATION.summarize(state, {"type": "move", "workshop": "A", "seat": 0}) == (
        "Orange moved the Main Workshop (A) token to a development space"
    )
    drawn = RESTORATION.summarize(state, {"type": "take_manager", "source": "deck", "seat": 2})
    assert drawn == "Jade drew a Manager card from the top of the deck"
    assert RESTORATION.summarize(state, {"type": "audit", "seat": None}).startswith("The Audit")


def test_only_automatic_steps_and_deck_draws_reveal_hidden_information() -> None:
    state = table(3)
    assert RESTORATION.reveals_hidden(state, {"type": "audit", "seat": None})
    assert not RESTORATION.reveals_hidden(
        state, {"type": "place_worker", "position": "A1", "artisan": False, "seat": 0}
    )
    assert RESTORATION.public_action(state, {"type": "end_turn", "seat": 0}) is None


def test_a_seat_waiting_for_another_has_no_legal_actions() -> None:
    state = table(3)
    assert RESTORATION.legal_actions(state, 1) == []
    assert RESTORATION.status(state)["to_act"] == [0]


def test_every_action_type_has_its_own_timeline_line() -> None:
    state = table(3)
    samples = {
        "unlock_research": {"position": "RD2"},
        "place_worker": {"position": "RD1", "artisan": True},
        "move": {"workshop": "B"},
        "play_manager": {"manager": "envoy", "effect": "B"},
        "start_construction": {"tile": "T01"},
        "continue_construction": {"tile": "T01", "space": 0},
        "completion_choice": {"choice": "rest"},
        "develop": {"track": "technology"},
        "take_manager": {"source": "supply", "manager": "envoy"},
        "transfer": {"first": "A1/0", "second": "B1/artisan"},
        "adjust_reputation": {"direction": "down"},
        "place_upgrade": {"target": "ap_track"},
        "keep_worker": {"location": "pos:A1"},
    }
    lines = set()
    for kind in RESTORATION.action_schemas():
        line = RESTORATION.summarize(state, {"type": kind, **samples.get(kind, {}), "seat": 1})
        assert line.startswith("Grey ") and line != f"Grey {kind.replace('_', ' ')}"
        lines.add(line)
    assert len(lines) == len(RESTORATION.action_schemas())


def test_a_malformed_action_is_refused_before_anything_changes() -> None:
    state = table(3)
    assert refused(state, 0, "place_worker", position="A1", artisan=1) == "invalid_action"
    assert refused(state, 0, "place_worker", position="A1") == "invalid_action"
    assert refused(state, 0, "place_worker", position=["A1"], artisan=False) == "invalid_action"
    assert refused(state, 0, "end_turn", extra=1) == "invalid_action"
    assert refused(state, True, "place_worker", position="A1", artisan=False) == "no_such_seat"
    assert refused(state, 3, "place_worker", position="A1", artisan=False) == "no_such_seat"
    assert refused(state, None, "end_turn") == "no_such_seat"
    assert refused(state, None, "audit", at="now") == "invalid_action"
    before = copy_state(state)
    for action in (None, [], "end_turn", {"seat": 0}, {"type": ["end_turn"], "seat": 0}):
        with pytest.raises(IllegalAction):
            RESTORATION.apply(state, action, random.Random(0))  # type: ignore[arg-type]
    assert state == before
