"""SUB factions as the paying player's choice (rules version 5, docs/rules/impendium.md,
"SUB 2"): "SUB 2 (water): Treat 2 water as a wild resource. Substitute up to 2 water to pay
the cost of 2 of any other resource." (Faction Card Clarification)."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from projections.fold import RulesVersionMismatch, copy_state, start
from projections.games.impendium import IMPENDIUM, legal
from projections.games.impendium.actions import SCHEMAS
from projections.games.impendium.data import FACTIONS
from projections.simulate import new_game
from tests.unit.impendium.helpers import act, auto, put_star, refused, table

State = dict[str, Any]
Action = dict[str, Any]

#: S04's slot 1 costs 1 artifact; S05's slot 2 costs 1 artifact and 1 hydrogen; S04's slot 2
#: costs 2 artifacts and 1 hydrogen; S07's slot 2 costs 1 artifact, 1 hydrogen and 1 water.
ONE_ARTIFACT = ("S04", 1)
ARTIFACT_AND_HYDROGEN = ("S05", 2)
TWO_ARTIFACTS_AND_HYDROGEN = ("S04", 2)
ARTIFACT_HYDROGEN_AND_WATER = ("S07", 2)


def _sub(resource: str = "water") -> str:
    return next(
        faction
        for faction, card in FACTIONS.items()
        if card["ability"] == {"kind": "substitute", "resource": resource, "amount": 2}
    )


def _with_token(resource: str = "water", **pool: int) -> State:
    """Seat 0's turn; seat 0 used its SUB faction on itself; its pool is 5 of each unless
    ``pool`` says otherwise."""
    state = table()
    sub = _sub(resource)
    state["seats"][0]["factions"] = [sub]
    act(state, 0, "use_faction_ability", faction=sub, target=0)
    assert state["seats"][0]["discounts"]["substitute"] == {resource: 2}
    state["seats"][0]["resources"].update(pool)
    return state


def _on_star(state: State, card: str) -> State:
    put_star(state, "2,0", card)
    state["arks"][0] = "2,0"
    return state


def _build(slot: int, **fields: Any) -> Action:
    return {"type": "build_colony", "slot": slot, **fields}


def _pool(state: State) -> dict[str, int]:
    return dict(state["seats"][0]["resources"])


def _token(state: State) -> dict[str, int]:
    return dict(state["seats"][0]["discounts"]["substitute"])


# -- the player's choice ------------------------------------------------------------------------


def test_a_player_who_can_pay_in_kind_may_still_choose_to_substitute() -> None:
    """ "Substitute up to 2 water": the player may, even holding the artifact."""
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 1}})
    assert _pool(state) == {"life_forms": 5, "water": 4, "artifacts": 5, "hydrogen": 5}
    assert state["board"]["2,0"]["colonies"][slot] == 0


def test_a_player_who_chooses_not_to_substitute_pays_in_kind_and_keeps_their_water() -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    act(state, 0, "build_colony", slot=slot)
    assert _pool(state) == {"life_forms": 5, "water": 5, "artifacts": 4, "hydrogen": 5}
    assert _token(state) == {"water": 2}


def test_without_the_field_a_player_short_of_the_cost_is_refused_even_holding_a_token() -> None:
    """Water no longer pays a shortfall by itself: the player names the substitution."""
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(artifacts=0), card)
    refused(state, 0, _build(slot), "insufficient_resources")
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 1}})
    assert _pool(state)["water"] == 4


def test_two_water_may_be_split_across_kinds() -> None:
    """ "the cost of 2 of any other resource": 1 artifact and 1 hydrogen."""
    card, slot = ARTIFACT_AND_HYDROGEN
    state = _on_star(_with_token(artifacts=0, hydrogen=0, water=2), card)
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 1, "hydrogen": 1}})
    assert _pool(state) == {"life_forms": 5, "water": 0, "artifacts": 0, "hydrogen": 0}
    assert _token(state) == {}


def test_part_of_a_cost_may_be_substituted_and_the_rest_paid_in_kind() -> None:
    card, slot = TWO_ARTIFACTS_AND_HYDROGEN
    state = _on_star(_with_token(), card)
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 1}})
    assert _pool(state) == {"life_forms": 5, "water": 4, "artifacts": 4, "hydrogen": 4}


# -- up to 2, with the token, for what the cost demands -------------------------------------------


def test_a_token_substitutes_up_to_two_units_never_a_third() -> None:
    card, slot = TWO_ARTIFACTS_AND_HYDROGEN
    state = _on_star(_with_token(), card)
    three = {"water": {"artifacts": 2, "hydrogen": 1}}
    refused(state, 0, _build(slot, substitute=three), "bad_substitution")
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 2}})
    assert _pool(state) == {"life_forms": 5, "water": 3, "artifacts": 5, "hydrogen": 4}


def test_the_token_shrinks_by_what_was_used_and_its_last_unit_can_be_used_later() -> None:
    state = _with_token()
    act(state, 0, "move", to="1,0", substitute={"water": {"hydrogen": 1}})  # 2 off the federation
    assert _token(state) == {"water": 1}
    assert _pool(state) == {"life_forms": 5, "water": 4, "artifacts": 5, "hydrogen": 4}
    put_star(state, "2,0", ONE_ARTIFACT[0])
    act(state, 0, "move", to="2,0", substitute={"water": {"hydrogen": 1}})  # 1 onto a card
    assert _token(state) == {}
    assert _pool(state) == {"life_forms": 5, "water": 3, "artifacts": 5, "hydrogen": 4}


def test_a_token_with_one_unit_left_substitutes_only_one() -> None:
    card, slot = ARTIFACT_AND_HYDROGEN
    state = _on_star(_with_token(), card)
    state["seats"][0]["discounts"]["substitute"] = {"water": 1}
    split = {"water": {"artifacts": 1, "hydrogen": 1}}
    refused(state, 0, _build(slot, substitute=split), "bad_substitution")


def test_only_a_player_holding_the_token_may_substitute() -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(table(), card)
    refused(state, 0, _build(slot, substitute={"water": {"artifacts": 1}}), "bad_substitution")


def test_a_token_lets_only_its_own_resource_stand_in() -> None:
    """The SUB (life forms) token makes life forms wild, not water."""
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token("life_forms"), card)
    refused(state, 0, _build(slot, substitute={"water": {"artifacts": 1}}), "bad_substitution")
    act(state, 0, "build_colony", slot=slot, substitute={"life_forms": {"artifacts": 1}})
    assert _pool(state)["life_forms"] == 4


def test_the_token_given_by_another_players_faction_is_the_targets_to_use() -> None:
    """ "You may apply the ability to you or to another player" (Faction Abilities)."""
    card, slot = ONE_ARTIFACT
    state = table()
    state["seats"][1]["factions"] = [_sub()]
    act(state, 1, "use_faction_ability", faction=_sub(), target=0)
    _on_star(state, card)
    act(state, 0, "build_colony", slot=slot, substitute={"water": {"artifacts": 1}})
    assert _pool(state)["water"] == 4


@pytest.mark.parametrize(
    ("slot_of", "substitute", "why"),
    [
        (ONE_ARTIFACT, {"water": {"hydrogen": 1}}, "a kind the cost does not demand"),
        (ONE_ARTIFACT, {"water": {"artifacts": 2}}, "more than the cost of that kind"),
        (ARTIFACT_HYDROGEN_AND_WATER, {"water": {"water": 1}}, "water for water"),
        (ARTIFACT_AND_HYDROGEN, {"water": {"artifacts": 3}}, "past the token and the cost"),
    ],
)
def test_a_substitution_the_cost_does_not_call_for_is_refused(
    slot_of: tuple[str, int], substitute: dict[str, Any], why: str
) -> None:
    card, slot = slot_of
    state = _on_star(_with_token(), card)
    refused(state, 0, _build(slot, substitute=substitute), "bad_substitution")


def test_the_water_that_substitutes_must_be_in_the_pool() -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(water=0), card)
    refused(state, 0, _build(slot, substitute={"water": {"artifacts": 1}}), "bad_substitution")


def test_water_demanded_in_kind_and_as_a_substitute_must_both_be_in_the_pool() -> None:
    card, slot = ARTIFACT_HYDROGEN_AND_WATER
    state = _on_star(_with_token(artifacts=0, hydrogen=0, water=2), card)
    split = {"water": {"artifacts": 1, "hydrogen": 1}}
    refused(state, 0, _build(slot, substitute=split), "insufficient_resources")
    state["seats"][0]["resources"]["water"] = 3
    act(state, 0, "build_colony", slot=slot, substitute=split)
    assert _pool(state)["water"] == 0


def test_a_discounted_kind_is_demanded_only_as_far_as_the_discount_leaves_it() -> None:
    """A colony discount first: a slot of 1 artifact less 2 demands no artifact."""
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    state["seats"][0]["discounts"]["colony"] = {"artifacts": 2}
    refused(state, 0, _build(slot, substitute={"water": {"artifacts": 1}}), "bad_substitution")
    act(state, 0, "build_colony", slot=slot)
    assert _pool(state)["water"] == 5


@pytest.mark.parametrize(
    "substitute",
    [
        {},
        {"water": {}},
        {"water": {"artifacts": 0}},
        {"water": {"artifacts": -1}},
        {"water": {"artifacts": True}},
        {"water": {"artifacts": 1.0}},
        {"water": {"artifacts": "1"}},
        {"mud": {"artifacts": 1}},
        {"water": {"mud": 1}},
        {"water": 1},
        {"water": ["artifacts"]},
        None,
        [],
        "water",
        1,
    ],
)
def test_a_malformed_substitution_is_refused_by_its_own_code(substitute: Any) -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    refused(state, 0, _build(slot, substitute=substitute), "bad_substitution")


# -- every action that pays a cost --------------------------------------------------------------


def _move(state: State) -> Action:
    return {"type": "move", "to": "1,0"}  # 2 hydrogen off the federation card


def _colony(state: State) -> Action:
    card, slot = ARTIFACT_AND_HYDROGEN
    _on_star(state, card)
    return _build(slot)


def _construct(state: State) -> Action:
    card, slot = ARTIFACT_AND_HYDROGEN
    state["projects"][0] = {"card": card, "discs": [None] * 4}
    return {"type": "construct_federation_star", "project": card, "slot": slot}


def _battle(state: State) -> Action:
    state["board"]["2,0"] = {"kind": "harbinger", "card": "H01", "discs": [None] * 4}
    return {"type": "battle_harbinger", "position": "2,0", "slot": 0}  # 1 artifact, 1 hydrogen


def _recruit(state: State) -> Action:
    state["seats"][0]["resources"]["hydrogen"] = 14
    return {"type": "recruit_faction", "resource": "hydrogen"}  # 14 hydrogen


def _hire(state: State) -> Action:
    state["options"]["turmoil"] = True
    state["turmoil"] = {
        "entered": True,
        "markers": {
            "raiders": None,
            "neutron_storm": None,
            "merchants": None,
            "mercenaries": "0,0",
        },
        "last_rolls": None,
        "last_battle": None,
    }
    return {"type": "hire_mercenaries", "pay": "hydrogen", "target": 1}  # 3 hydrogen


#: action type -> (what puts seat 0 where it may take it, and returns it; its cost)
PAYING: dict[str, tuple[Callable[[State], Action], dict[str, int]]] = {
    "move": (_move, {"hydrogen": 2}),
    "build_colony": (_colony, {"artifacts": 1, "hydrogen": 1}),
    "construct_federation_star": (_construct, {"artifacts": 1, "hydrogen": 1}),
    "battle_harbinger": (_battle, {"artifacts": 1, "hydrogen": 1}),
    "recruit_faction": (_recruit, {"hydrogen": 14}),
    "hire_mercenaries": (_hire, {"hydrogen": 3}),
}


def _two_water_for(cost: dict[str, int]) -> dict[str, dict[str, int]]:
    """Both units of the token, on hydrogen first, then on artifacts."""
    hydrogen = min(2, cost["hydrogen"])
    kinds = {"hydrogen": hydrogen, "artifacts": 2 - hydrogen}
    return {"water": {kind: n for kind, n in kinds.items() if n}}


def test_every_action_that_pays_a_cost_takes_the_field_and_no_other_does() -> None:
    takes = {kind for kind, schema in SCHEMAS.items() if "substitute" in schema().fields}
    assert takes == set(PAYING)
    assert SCHEMAS["move"]().fields["substitute"].metadata["description"]


@pytest.mark.parametrize("kind", sorted(PAYING))
def test_every_paying_action_pays_with_the_substitution_chosen(kind: str) -> None:
    prepare, cost = PAYING[kind]
    state = _with_token()
    action = prepare(state)
    before = _pool(state)
    substitute = _two_water_for(cost)
    IMPENDIUM.apply(state, {**action, "substitute": substitute, "seat": 0}, random.Random(1))
    spent = {r: before[r] - _pool(state)[r] for r in before if before[r] != _pool(state)[r]}
    expected = dict(cost)
    for kind, n in substitute["water"].items():
        expected[kind] -= n
    assert spent == {**{r: n for r, n in expected.items() if n}, "water": 2}
    assert _token(state) == {}


@pytest.mark.parametrize("kind", sorted(PAYING))
def test_every_paying_action_refuses_a_substitution_without_the_token(kind: str) -> None:
    prepare, _cost = PAYING[kind]
    state = table()
    action = prepare(state)
    refused(state, 0, {**action, "substitute": {"water": {"hydrogen": 1}}}, "bad_substitution")


@pytest.mark.parametrize("kind", sorted(PAYING))
def test_every_paying_action_refuses_a_malformed_or_excessive_substitution(kind: str) -> None:
    prepare, _cost = PAYING[kind]
    state = _with_token()
    action = prepare(state)
    for substitute in ({"water": {"hydrogen": 3}}, {"water": {"life_forms": 1}}, {}):
        refused(state, 0, {**action, "substitute": substitute}, "bad_substitution")


def test_a_move_short_of_hydrogen_after_the_substitution_is_still_insufficient_hydrogen() -> None:
    state = _with_token(hydrogen=0)
    move = {"type": "move", "to": "1,0", "substitute": {"water": {"hydrogen": 1}}}
    refused(state, 0, move, "insufficient_hydrogen")
    act(state, 0, "move", to="1,0", substitute={"water": {"hydrogen": 2}})
    assert state["arks"][0] == "1,0"


def test_a_recruit_may_substitute_two_of_its_fourteen() -> None:
    state = _with_token(hydrogen=12)
    refused(state, 0, {"type": "recruit_faction", "resource": "hydrogen"}, "insufficient_resources")
    act(state, 0, "recruit_faction", resource="hydrogen", substitute={"water": {"hydrogen": 2}})
    assert _pool(state)["hydrogen"] == 0 and _pool(state)["water"] == 3


# -- the round's end ----------------------------------------------------------------------------


def test_an_unused_token_expires_at_the_round_end() -> None:
    state = _with_token()
    act(state, 0, "move", to="1,0", substitute={"water": {"hydrogen": 1}})
    act(state, 0, "pass")
    act(state, 1, "pass")
    assert _token(state) == {"water": 1}
    assert auto(state) == "end_of_round"
    assert _token(state) == {}


# -- the legal actions -----------------------------------------------------------------------------


def _builds(state: State, slot: int) -> list[Action]:
    return [
        a
        for a in IMPENDIUM.legal_actions(state, 0)
        if a["type"] == "build_colony" and a["slot"] == slot
    ]


def test_the_list_offers_paying_in_kind_and_substituting_when_both_are_possible() -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    assert _builds(state, slot) == [
        _build(slot),
        _build(slot, substitute={"water": {"artifacts": 1}}),
    ]


def test_the_list_offers_the_substitution_that_makes_an_unaffordable_cost_affordable() -> None:
    card, slot = ARTIFACT_AND_HYDROGEN
    state = _on_star(_with_token(artifacts=0, hydrogen=0), card)
    assert _builds(state, slot) == [
        _build(slot, substitute={"water": {"artifacts": 1, "hydrogen": 1}})
    ]
    state["seats"][0]["resources"]["hydrogen"] = 1
    assert _builds(state, slot) == [_build(slot, substitute={"water": {"artifacts": 1}})]


def test_with_two_tokens_the_list_offers_each_way_to_cover_the_shortfall() -> None:
    card, slot = ARTIFACT_AND_HYDROGEN
    state = _on_star(_with_token(artifacts=0, hydrogen=0), card)
    state["seats"][0]["discounts"]["substitute"] = {"water": 2, "life_forms": 2}
    assert [a["substitute"] for a in _builds(state, slot)] == [
        {"life_forms": {"artifacts": 1, "hydrogen": 1}},
        {"life_forms": {"artifacts": 1}, "water": {"hydrogen": 1}},
        {"water": {"artifacts": 1}, "life_forms": {"hydrogen": 1}},
        {"water": {"artifacts": 1, "hydrogen": 1}},
    ]
    IMPENDIUM.apply(state, {**_builds(state, slot)[1], "seat": 0}, random.Random(1))
    assert _pool(state) == {"life_forms": 4, "water": 4, "artifacts": 0, "hydrogen": 0}
    assert _token(state) == {"water": 1, "life_forms": 1}


def test_without_a_token_nothing_listed_substitutes() -> None:
    card, slot = ONE_ARTIFACT
    state = _on_star(table(), card)
    assert _builds(state, slot) == [_build(slot)]
    assert not any("substitute" in a for a in IMPENDIUM.legal_actions(state, 0))


def _listed(state: State, action: Action) -> list[Action]:
    """The listed actions that are ``action`` with some way of paying it."""
    return [
        a
        for a in IMPENDIUM.legal_actions(state, 0)
        if {k: v for k, v in a.items() if k != "substitute"} == action
    ]


@pytest.mark.parametrize("kind", sorted(PAYING))
def test_every_paying_action_is_listed_with_a_substitution_when_one_unit_short(kind: str) -> None:
    prepare, cost = PAYING[kind]
    state = _with_token()
    action = prepare(state)
    state["seats"][0]["resources"]["hydrogen"] = cost["hydrogen"] - 1
    listed = _listed(state, action)
    assert {"substitute": {"water": {"hydrogen": 1}}, **action} in listed
    assert all("substitute" in a for a in listed)  # in kind it cannot be paid
    for chosen in listed:
        IMPENDIUM.apply(copy_state(state), {**chosen, "seat": 0}, random.Random(1))


def test_the_substitutions_listed_for_one_cost_are_bounded() -> None:
    """Three tokens and a cost of three kinds: seven ways to spend one token on one kind."""
    card, slot = ARTIFACT_HYDROGEN_AND_WATER
    state = _on_star(_with_token(), card)
    state["seats"][0]["discounts"]["substitute"] = {"water": 2, "life_forms": 2, "artifacts": 2}
    listed = _builds(state, slot)
    assert listed[0] == _build(slot)
    assert len(listed) == 1 + legal.MAX_SUBSTITUTIONS
    for chosen in listed:
        IMPENDIUM.apply(copy_state(state), {**chosen, "seat": 0}, random.Random(1))


def test_each_listed_action_holds_its_own_substitution() -> None:
    """A fresh disc or one lifted from -2,0: two actions paid the same way, not one dict."""
    card, slot = ONE_ARTIFACT
    state = _on_star(_with_token(), card)
    put_star(state, "-2,0", card, [0])
    first, second = [a for a in _builds(state, slot) if "substitute" in a]
    assert first["substitute"] == second["substitute"]
    assert first["substitute"] is not second["substitute"]
    assert first["substitute"]["water"] is not second["substitute"]["water"]


# -- the rules version -----------------------------------------------------------------------


def test_logs_of_rules_version_four_are_refused() -> None:
    """The choice changes what a version 4 log replays to (water paid shortfalls by itself)."""
    assert IMPENDIUM.rules_version == "5"
    _game, log = new_game(IMPENDIUM, ["Ann", "Ben"], seed="version-4")
    created = dict(log.envelopes[0])
    created["data"] = {**created["data"], "rules_version": "4"}
    with pytest.raises(RulesVersionMismatch):
        start(created)
    start(log.envelopes[0])


def test_the_timeline_says_what_stood_in_for_what() -> None:
    state = _with_token()
    move = {"type": "move", "to": "1,0", "substitute": {"water": {"hydrogen": 2}}, "seat": 0}
    assert IMPENDIUM.summarize(state, move) == (
        "Ann moved their Ark to the space at 1,0 for 2 hydrogen, 2 water standing in for 2 hydrogen"
    )
    card, slot = ARTIFACT_AND_HYDROGEN
    _on_star(state, card)
    split = {"water": {"artifacts": 1, "hydrogen": 1}}
    assert IMPENDIUM.summarize(state, {**_build(slot, substitute=split), "seat": 0}).endswith(
        ", 2 water standing in for 1 artifacts, 1 hydrogen"
    )
    assert "standing in" not in IMPENDIUM.summarize(state, {**_build(slot), "seat": 0})
