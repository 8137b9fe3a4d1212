"""The rules review's Impendium defects (docs/rules/impendium.md), each from the rulebook's
words."""

from __future__ import annotations

from projections.games.impendium import IMPENDIUM, rules
from projections.games.impendium.data import FACTIONS, STARS
from tests.unit.impendium.helpers import Dice, act, put_star, refused, started, table


def _rich(state: dict, seat: int, amount: int = 9) -> None:
    for resource in state["seats"][seat]["resources"]:
        state["seats"][seat]["resources"][resource] = amount


def _all_discs_out(state: dict, seat: int) -> None:
    """Seat's 9 discs: 4 colonies on the map at 2,0 and -2,0 ... (4 + 5 slots)."""
    put_star(state, "2,0", "S06", [seat] * 5)
    put_star(state, "-2,0", "S03", [seat] * 4)


def _faction(kind: str, resource: str) -> str:
    return next(
        f
        for f, card in FACTIONS.items()
        if card["ability"]["kind"] == kind and card["ability"]["resource"] == resource
    )


# -- 1. placed discs count as available for federation projects -----------------------------


def test_a_placed_disc_may_be_moved_onto_a_federation_project() -> None:
    """ "The colonies you have on the map or on federation projects already also count as
    available colonies and you may remove one to place the new one if you'd like." (Build a
    Colony); a federation star is built "Similar to building a colony"."""
    state = table()
    _rich(state, 0)
    _all_discs_out(state, 0)
    card = state["projects"][0]["card"]
    action = {"type": "construct_federation_star", "project": card, "slot": 0}
    refused(state, 0, action, "no_free_disc")
    listed = IMPENDIUM.legal_actions(state, 0)
    assert {**action, "relocate": "map:2,0/4"} in listed
    act(state, 0, "construct_federation_star", project=card, slot=0, relocate="map:2,0/4")
    assert state["projects"][0]["discs"][0] == 0
    assert state["board"]["2,0"]["colonies"][4] is None


def test_a_placed_disc_may_be_moved_onto_a_harbinger_battle() -> None:
    """Battling a harbinger is the other form of federation project: "place an available
    colony disc on the slot", and discs on the map or on projects "also count as available
    colonies and you may remove one to place the new one"."""
    state = table()
    _rich(state, 0)
    _all_discs_out(state, 0)
    state["board"]["0,2"] = {"kind": "harbinger", "card": "H07", "discs": [None] * 3}
    action = {"type": "battle_harbinger", "position": "0,2", "slot": 0}
    refused(state, 0, action, "no_free_disc")
    act(state, 0, "battle_harbinger", position="0,2", slot=0, relocate="map:-2,0/0")
    assert state["board"]["0,2"]["discs"][0] == 0
    assert state["board"]["-2,0"]["colonies"][0] is None


def test_a_disc_on_a_harbinger_may_be_moved_to_a_federation_project() -> None:
    """A disc on one federation project (a harbinger battle) is available for another."""
    state = table()
    _rich(state, 0)
    put_star(state, "2,0", "S06", [0] * 5)
    put_star(state, "-2,0", "S03", [0] * 3)
    state["board"]["0,2"] = {"kind": "harbinger", "card": "H07", "discs": [0, None, None]}
    card = state["projects"][0]["card"]
    act(state, 0, "construct_federation_star", project=card, slot=0, relocate="harbinger:0,2/0")
    assert state["board"]["0,2"]["discs"] == [None, None, None]
    assert state["projects"][0]["discs"][0] == 0


def test_a_disc_is_not_moved_within_the_same_project() -> None:
    state = table()
    _rich(state, 0)
    card = state["projects"][0]["card"]
    act(state, 0, "construct_federation_star", project=card, slot=0)
    state["turn"]["used"] = []
    refused(
        state,
        0,
        {
            "type": "construct_federation_star",
            "project": card,
            "slot": 1,
            "relocate": f"project:{card}/0",
        },
        "bad_relocation",
    )


# -- 2. SUB 2 pays a cost ----------------------------------------------------------------------


def test_sub_two_water_pays_two_of_other_resources_split_between_kinds() -> None:
    """ "SUB 2 (water): Treat 2 water as a wild resource. Substitute up to 2 water to pay the
    cost of 2 of any other resource." (Faction Card Clarification)"""
    sub = _faction("substitute", "water")
    state = table()
    state["seats"][0]["factions"] = [sub]
    state["seats"][0]["resources"] = {"life_forms": 0, "water": 4, "artifacts": 0, "hydrogen": 0}
    put_star(state, "2,0", "S05")  # slot 2 costs 1 artifact and 1 hydrogen
    state["arks"][0] = "2,0"
    refused(state, 0, {"type": "build_colony", "slot": 2}, "insufficient_resources")
    act(state, 0, "use_faction_ability", faction=sub, target=0)
    # The ability converts nothing by itself: the water is still water.
    assert state["seats"][0]["resources"] == {
        "life_forms": 0,
        "water": 4,
        "artifacts": 0,
        "hydrogen": 0,
    }
    split = {"water": {"artifacts": 1, "hydrogen": 1}}
    assert {"type": "build_colony", "slot": 2, "substitute": split} in IMPENDIUM.legal_actions(
        state, 0
    )
    act(state, 0, "build_colony", slot=2, substitute=split)
    assert state["seats"][0]["resources"]["water"] == 2
    assert state["board"]["2,0"]["colonies"][2] == 0
    assert state["seats"][0]["discounts"]["substitute"] == {}


def test_sub_two_water_covers_at_most_two() -> None:
    """ "Substitute up to 2 water" - never a third."""
    sub = _faction("substitute", "water")
    state = table()
    state["seats"][0]["factions"] = [sub]
    state["seats"][0]["resources"] = {"life_forms": 0, "water": 9, "artifacts": 0, "hydrogen": 0}
    put_star(state, "2,0", "S07")  # slot 2 costs 1 artifact, 1 hydrogen and 1 water
    put_star(state, "2,2", "S04")  # slot 2 costs 2 artifacts and 1 hydrogen
    state["arks"][0] = "2,2"
    act(state, 0, "use_faction_ability", faction=sub, target=0)
    refused(state, 0, {"type": "build_colony", "slot": 2}, "insufficient_resources")
    three = {"water": {"artifacts": 2, "hydrogen": 1}}
    refused(state, 0, {"type": "build_colony", "slot": 2, "substitute": three}, "bad_substitution")
    state["arks"][0] = "2,0"
    act(state, 0, "build_colony", slot=2, substitute={"water": {"artifacts": 1, "hydrogen": 1}})
    assert state["seats"][0]["resources"]["water"] == 6


# -- 3. a turn may end after only an attack or a trade --------------------------------------------


def test_a_turn_ends_after_only_a_trade() -> None:
    """ "On your turn, at any point when you occupy the same space as another player you may
    immediately Attack or Trade with that player": the rulebook sets no further condition
    on ending the turn."""
    state = table(3)
    act(state, 0, "offer_trade", target=1, give={"water": 1}, get={"hydrogen": 1})
    act(state, 1, "answer_trade", accept=False)
    assert {"type": "end_turn"} in IMPENDIUM.legal_actions(state, 0)
    act(state, 0, "end_turn")
    assert state["turn"]["seat"] == 1
    assert not state["passed"][0]


def test_a_turn_ends_after_only_an_attack() -> None:
    """ "you may immediately Attack or Trade with that player" - an attack is a turn's action."""
    state = table(3)
    state["seats"][1]["resources"] = {r: 0 for r in state["seats"][1]["resources"]}
    act(state, 0, "attack", rng=Dice(6, 1), target=1)
    assert state["pending"] == []
    act(state, 0, "end_turn")
    assert state["turn"]["seat"] == 1


# -- 4. faction abilities and diplomacy cards at any time -------------------------------


def test_a_faction_ability_is_used_while_resources_are_generated() -> None:
    """ "You may use all of your factions' abilities once per round at any time on any
    player's turn." (Faction Abilities)"""
    state = started(2)
    state["seats"][0]["factions"] = ["F13"]  # +2 hydrogen
    state["phase"] = "federation_resource"
    state["federation_taken"] = [False, False]
    before = state["seats"][1]["resources"]["hydrogen"]
    assert {"type": "use_faction_ability", "faction": "F13", "target": 1} in (
        IMPENDIUM.legal_actions(state, 0)
    )
    act(state, 0, "use_faction_ability", faction="F13", target=1)
    assert state["seats"][1]["resources"]["hydrogen"] == before + 2


def test_a_diplomacy_card_is_played_while_another_player_chooses() -> None:
    """ "These can be played at any time during the game." (Galactic Diplomacy cards)"""
    state = table()
    state["seats"][1]["hand"] = ["D09"]  # Recognition: +1 VP
    act(state, 0, "offer_trade", target=1, give={"water": 1}, get={"hydrogen": 1})
    assert {"type": "play_diplomacy", "card": "D09"} in IMPENDIUM.legal_actions(state, 1)
    act(state, 1, "play_diplomacy", card="D09")
    assert state["seats"][1]["vp"] == 1
    state["seats"][0]["factions"] = ["F13"]
    act(state, 0, "use_faction_ability", faction="F13", target=0)
    act(state, 1, "answer_trade", accept=True)
    assert state["pending"] == []


def test_spoils_shrink_to_what_the_loser_still_holds_after_a_card_at_any_time() -> None:
    # A card played "at any time" while the winner chooses may leave the loser with less
    # than the dice's difference: the winner takes what is left, never a stuck choice.
    state = table(3)
    state["seats"][1]["resources"] = {"life_forms": 0, "water": 2, "artifacts": 0, "hydrogen": 1}
    act(state, 0, "attack", rng=Dice(6, 1), target=1)
    assert state["pending"][0]["amount"] == 3
    state["seats"][2]["hand"] = ["D17"]  # Sabotage: another player loses 2 of a resource
    act(state, 2, "play_diplomacy", card="D17", target=1, resource="water")
    assert IMPENDIUM.legal_actions(state, 0)[0] == {
        "type": "take_spoils",
        "resources": {"hydrogen": 1},
    }
    refused(
        state, 0, {"type": "take_spoils", "resources": {"hydrogen": 1, "water": 2}}, "bad_spoils"
    )
    act(state, 0, "take_spoils", resources={"hydrogen": 1})
    assert state["pending"] == []


def test_a_trade_that_a_side_can_no_longer_pay_can_only_be_declined() -> None:
    state = table(3)
    act(state, 0, "offer_trade", target=1, give={"water": 5}, get={"hydrogen": 1})
    state["seats"][2]["hand"] = ["D17"]
    act(state, 2, "play_diplomacy", card="D17", target=0, resource="water")
    answers = [a for a in IMPENDIUM.legal_actions(state, 1) if a["type"] == "answer_trade"]
    assert answers == [{"type": "answer_trade", "accept": False}]
    refused(state, 1, {"type": "answer_trade", "accept": True}, "insufficient_resources")


# -- 5. no trading for zero -------------------------------------------------------------


def test_a_trade_of_one_kind_for_the_same_kind_is_refused() -> None:
    """ "Trading resources has no guideline aside from no trading for zero meaning you must
    actually exchange resources." (Move)"""
    state = table()
    refused(
        state,
        0,
        {"type": "offer_trade", "target": 1, "give": {"water": 1}, "get": {"water": 1}},
        "same_kind_trade",
    )
    refused(
        state,
        0,
        {
            "type": "offer_trade",
            "target": 1,
            "give": {"water": 2, "hydrogen": 1},
            "get": {"water": 1},
        },
        "same_kind_trade",
    )


def test_the_stand_in_stars_these_tests_pay_for_have_these_costs() -> None:
    assert STARS["S05"]["slots"][2] == {"cost": {"artifacts": 1, "hydrogen": 1}}
    assert STARS["S07"]["slots"][2] == {"cost": {"artifacts": 1, "hydrogen": 1, "water": 1}}
    assert STARS["S04"]["slots"][2] == {"cost": {"artifacts": 2, "hydrogen": 1}}


def test_the_reducers_relocation_test_agrees_with_the_listed_sources() -> None:
    state = table()
    put_star(state, "2,0", "S06", [0, 1, 0])
    state["board"]["0,2"] = {"kind": "harbinger", "card": "H07", "discs": [0, 1, None]}
    card = state["projects"][0]["card"]
    state["projects"][0]["discs"][1] = 0
    places = ["map:2,0", "map:0,0", "map:9,9", f"project:{card}", "project:S99"]
    places += ["harbinger:0,2", "harbinger:2,0", "nowhere:2,0"]
    candidates: list = [f"{where}/{index}" for where in places for index in range(6)]
    candidates += ["map:2,0/x", "map:2,0", "map:2,0/" + "9" * 5000, 7]
    for onto in (None, f"project:{card}", "harbinger:0,2"):
        for cap_factions in (["F13"], ["F13", "F01"]):
            state["seats"][0]["factions"] = cap_factions
            listed = set(rules.relocation_sources(state, 0, onto))
            accepted = {c for c in candidates if rules.may_relocate(state, 0, c, onto)}
            assert accepted == listed, (onto, cap_factions)
