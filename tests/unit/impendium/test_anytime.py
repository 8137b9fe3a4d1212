"""Faction abilities and galactic diplomacy cards: usable at any time in the action turns,
by any player, on themselves or another player."""

from __future__ import annotations

import pytest

from projections.games.impendium import IMPENDIUM
from tests.unit.impendium.helpers import act, fresh, refused, table


def test_a_faction_ability_is_used_once_per_round_on_any_players_turn() -> None:
    state = table()
    state["seats"][1]["factions"] = ["F13"]  # +2 hydrogen
    act(state, 1, "use_faction_ability", faction="F13", target=0)
    assert state["seats"][0]["resources"]["hydrogen"] == 7
    refused(
        state,
        1,
        {"type": "use_faction_ability", "faction": "F13", "target": 1},
        "faction_already_used",
    )


def test_abilities_are_listed_for_a_player_whose_turn_it_is_not() -> None:
    state = table()
    state["seats"][1]["factions"] = ["F13"]
    listed = IMPENDIUM.legal_actions(state, 1)
    assert {"type": "use_faction_ability", "faction": "F13", "target": 0} in listed
    assert all(a["type"] in ("use_faction_ability", "play_diplomacy") for a in listed)


ABILITY_REFUSALS = [
    ({"faction": "F05", "target": 0}, "faction_not_yours"),
    ({"faction": "F13", "target": 9}, "bad_target"),
    ({"faction": "F13", "target": "Ben"}, "bad_target"),
    ({"faction": "F13", "target": 0, "amount": 2}, "bad_ability_use"),
    ({"faction": "F13", "target": 0, "colour": "red"}, "bad_ability_use"),
    ({"faction": "F02", "target": 0, "resource": "water", "amount": 2}, "bad_ability_use"),
    ({"faction": "F02", "target": 0, "resource": "hydrogen", "amount": 3}, "bad_ability_use"),
    ({"faction": "F02", "target": 0, "resource": "hydrogen"}, "bad_ability_use"),
]


@pytest.mark.parametrize(("fields", "code"), ABILITY_REFUSALS)
def test_faction_abilities_are_refused_when_not_owned_or_badly_aimed(
    fields: dict, code: str
) -> None:
    state = table()
    state["seats"][0]["factions"] = ["F02", "F13"]  # SUB 2 water, +2 hydrogen
    state["seats"][1]["resources"]["water"] = 1
    refused(state, 0, {"type": "use_faction_ability", **fields}, code)


def test_a_colony_discount_lowers_a_colony_slot_that_demands_its_resource() -> None:
    state = table()
    state["seats"][0]["factions"] = ["F04", "F18"]  # -2 water on a colony slot
    state["board"]["2,0"] = {"kind": "star", "card": "S04", "colonies": [None] * 4}
    state["arks"][0] = "2,0"
    act(state, 0, "use_faction_ability", faction="F04", target=0)
    assert state["seats"][0]["discounts"]["colony"] == {"water": 2}
    act(state, 0, "build_colony", slot=0)  # 2 water, all of it discounted
    assert state["seats"][0]["resources"]["water"] == 5
    assert state["seats"][0]["discounts"]["colony"] == {}


def test_while_a_choice_is_pending_the_others_may_only_use_abilities_and_cards() -> None:
    state = table()
    state["seats"][0]["factions"] = ["F13"]
    act(state, 0, "offer_trade", target=1, give={"water": 1}, get={"hydrogen": 1})
    refused(state, 0, {"type": "move", "to": "1,0"}, "awaiting_choice")
    assert IMPENDIUM.legal_actions(state, 0) == [
        {"type": "use_faction_ability", "faction": "F13", "target": 0},
        {"type": "use_faction_ability", "faction": "F13", "target": 1},
    ]


DIPLOMACY_CASES = [
    ("D01", {"resource": "water"}, 0, "water", 7),
    ("D05", {"target": 1, "resource": "water"}, 0, "water", 6),
    ("D05", {"target": 1, "resource": "water"}, 1, "water", 4),
    ("D17", {"target": 1, "resource": "artifacts"}, 1, "artifacts", 3),
    ("D21", {}, 0, "life_forms", 6),
    ("D25", {}, 0, "hydrogen", 8),
    ("D29", {"resource": "water", "gain": "artifacts"}, 0, "artifacts", 7),
    ("D29", {"resource": "water", "gain": "artifacts"}, 0, "water", 4),
]


@pytest.mark.parametrize(("card", "fields", "seat", "resource", "expected"), DIPLOMACY_CASES)
def test_each_diplomacy_card_does_what_it_says(
    card: str, fields: dict, seat: int, resource: str, expected: int
) -> None:
    state = table()
    state["seats"][0]["hand"] = [card]
    act(state, 0, "play_diplomacy", card=card, **fields)
    assert state["seats"][seat]["resources"][resource] == expected
    assert state["seats"][0]["hand"] == []
    assert state["decks"]["diplomacy"]["discard_pile"][-1] == card


def test_recognition_gives_a_victory_point_and_renewal_turns_a_faction_back() -> None:
    state = table()
    state["seats"][0]["hand"] = ["D09", "D13"]
    state["seats"][0]["factions"] = ["F13"]
    act(state, 0, "play_diplomacy", card="D09")
    assert state["seats"][0]["vp_sources"]["diplomacy"] == 1
    refused(
        state, 0, {"type": "play_diplomacy", "card": "D13", "faction": "F13"}, "bad_diplomacy_use"
    )
    act(state, 0, "use_faction_ability", faction="F13", target=0)
    act(state, 0, "play_diplomacy", card="D13", faction="F13")
    assert state["seats"][0]["turned"] == []


def test_recall_brings_the_ark_back_to_the_federation() -> None:
    state = table()
    state["seats"][0]["hand"] = ["D33", "D34"]
    refused(state, 0, {"type": "play_diplomacy", "card": "D33"}, "bad_diplomacy_use")
    state["arks"][0] = "1,0"
    act(state, 0, "play_diplomacy", card="D33")
    assert state["arks"][0] == "0,0"


DIPLOMACY_REFUSALS = [
    ({"card": "D09"}, "card_not_in_hand"),
    ({"card": "D01"}, "bad_diplomacy_use"),
    ({"card": "D01", "resource": "gold"}, "bad_resource"),
    ({"card": "D05", "target": 0, "resource": "water"}, "bad_target"),
    ({"card": "D05", "target": 1, "resource": "water"}, "nothing_to_take"),
    ({"card": "D29", "resource": "water", "gain": "water"}, "bad_resource"),
    ({"card": "D29", "resource": "artifacts", "gain": "hydrogen"}, "insufficient_resources"),
]


@pytest.mark.parametrize(("fields", "code"), DIPLOMACY_REFUSALS)
def test_diplomacy_cards_are_refused_when_not_held_or_badly_aimed(fields: dict, code: str) -> None:
    state = table()
    state["seats"][0]["hand"] = ["D01", "D05", "D29"]
    state["seats"][1]["resources"]["water"] = 0
    state["seats"][0]["resources"]["artifacts"] = 0
    refused(state, 0, {"type": "play_diplomacy", **fields}, code)


def test_abilities_are_not_used_during_setup_nor_while_an_automatic_step_is_due() -> None:
    # Abilities are "once per round": setup is no round yet, and an automatic step
    # (here the round's end) is taken before anyone acts again.
    state = fresh()
    state["seats"][0]["factions"] = ["F13"]
    refused(
        state, 0, {"type": "use_faction_ability", "faction": "F13", "target": 0}, "phase_mismatch"
    )
    state = table()
    state["seats"][0]["factions"] = ["F13"]
    act(state, 0, "pass")
    act(state, 1, "pass")
    refused(
        state, 0, {"type": "use_faction_ability", "faction": "F13", "target": 0}, "phase_mismatch"
    )
    assert IMPENDIUM.legal_actions(state, 0) == []
