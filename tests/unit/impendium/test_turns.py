"""Action turns: moving, meeting other Arks, colonies, federation projects, recruiting,
ending a turn and passing; each action's effect and each way it is refused."""

from __future__ import annotations

import random

from projections.games.impendium import IMPENDIUM, effects
from projections.games.impendium.data import HARBINGERS, STARS
from tests.unit.impendium.helpers import (
    Dice,
    act,
    put_star,
    refused,
    star_ids,
    table,
)


def _rich(state: dict, seat: int, amount: int = 9) -> None:
    for resource in state["seats"][seat]["resources"]:
        state["seats"][seat]["resources"][resource] = amount


# -- move ---------------------------------------------------------------------------------


def test_a_move_is_refused_off_the_map_and_without_hydrogen() -> None:
    state = table()
    refused(state, 0, {"type": "move", "to": "0,2"}, "not_a_step")
    refused(state, 0, {"type": "move", "to": "5,5"}, "not_a_step")
    refused(state, 0, {"type": "move", "to": ["1,0"]}, "not_a_step")
    state["seats"][0]["resources"]["hydrogen"] = 1
    refused(state, 0, {"type": "move", "to": "1,0"}, "insufficient_hydrogen")
    refused(state, 1, {"type": "move", "to": "1,0"}, "not_your_turn")


def test_moving_again_after_another_action_is_refused() -> None:
    # "you cannot move, build a colony, and then move again in the same turn."
    state = table()
    put_star(state, "2,0", star_ids("blue")[0])
    act(state, 0, "move", to="1,0")
    act(state, 0, "move", to="2,0")
    _rich(state, 0)
    act(state, 0, "build_colony", slot=0)
    refused(state, 0, {"type": "move", "to": "1,0"}, "action_already_taken")
    refused(state, 0, {"type": "build_colony", "slot": 1}, "action_already_taken")


# -- attack and trade -------------------------------------------------------------------------


def test_attacks_need_a_shared_space_and_come_once_per_opponent_per_turn() -> None:
    state = table(3)
    state["arks"][2] = "1,0"
    refused(state, 0, {"type": "attack", "target": 2}, "not_on_same_space")
    refused(state, 0, {"type": "attack", "target": 0}, "bad_target")
    refused(state, 0, {"type": "attack", "target": 7}, "bad_target")
    act(state, 0, "attack", rng=Dice(3, 3), target=1)  # equal totals: nobody wins
    assert state["pending"] == []
    assert state["last_attack"]["winner"] is None
    refused(state, 0, {"type": "attack", "target": 1}, "already_met")
    refused(
        state,
        0,
        {"type": "offer_trade", "target": 1, "give": {"water": 1}, "get": {"hydrogen": 1}},
        "already_met",
    )


def test_spoils_must_add_up_and_come_from_the_losers_stock() -> None:
    state = table()
    state["seats"][1]["resources"] = {"life_forms": 0, "water": 1, "artifacts": 5, "hydrogen": 5}
    act(state, 0, "attack", rng=Dice(4, 1), target=1)
    assert state["pending"][0]["amount"] == 3
    refused(state, 0, {"type": "take_spoils", "resources": {"artifacts": 2}}, "bad_spoils")
    refused(state, 0, {"type": "take_spoils", "resources": {"water": 3}}, "bad_spoils")
    refused(state, 1, {"type": "take_spoils", "resources": {"artifacts": 3}}, "not_your_choice")
    refused(state, 0, {"type": "answer_trade", "accept": True}, "no_choice_pending")
    refused(state, 0, {"type": "move", "to": "1,0"}, "awaiting_choice")
    assert IMPENDIUM.status(state)["to_act"] == [0]
    act(state, 0, "take_spoils", resources={"artifacts": 3})
    assert state["seats"][1]["resources"]["artifacts"] == 2


def test_the_defender_who_wins_chooses_the_spoils() -> None:
    state = table()
    act(state, 0, "attack", rng=Dice(1, 3), target=1)
    assert state["pending"][0] == {"kind": "spoils", "seat": 1, "from": 0, "amount": 2}
    assert IMPENDIUM.status(state)["to_act"] == [1]


def test_a_trade_offer_is_answered_by_the_other_player() -> None:
    state = table()
    give, get = {"water": 2}, {"hydrogen": 1}
    refused(
        state,
        0,
        {"type": "offer_trade", "target": 1, "give": {}, "get": get},
        "nothing_for_nothing",
    )
    refused(
        state,
        0,
        {"type": "offer_trade", "target": 1, "give": {"water": 9}, "get": get},
        "insufficient_resources",
    )
    refused(
        state,
        0,
        {"type": "offer_trade", "target": 1, "give": give, "get": {"hydrogen": 9}},
        "insufficient_resources",
    )
    act(state, 0, "offer_trade", target=1, give=give, get=get)
    assert IMPENDIUM.status(state)["to_act"] == [1]
    refused(state, 1, {"type": "answer_trade", "accept": "yes"}, "bad_answer")
    act(state, 1, "answer_trade", accept=True)
    assert state["seats"][0]["resources"]["water"] == 3
    assert state["seats"][0]["resources"]["hydrogen"] == 6
    assert state["seats"][1]["resources"]["water"] == 7
    assert state["pending"] == []


def test_a_rejected_trade_changes_nothing() -> None:
    state = table()
    act(state, 0, "offer_trade", target=1, give={"water": 1}, get={"artifacts": 1})
    act(state, 1, "answer_trade", accept=False)
    assert [m["resources"]["water"] for m in state["seats"]] == [5, 5]


def test_accepting_a_trade_that_a_side_can_no_longer_cover_is_refused() -> None:
    state = table()
    act(state, 0, "offer_trade", target=1, give={"water": 2}, get={"hydrogen": 1})
    state["seats"][0]["resources"]["water"] = 1  # as in a branch redrawn by another seat
    refused(state, 1, {"type": "answer_trade", "accept": True}, "insufficient_resources")


# -- build a colony -----------------------------------------------------------------------------


def test_building_a_colony_pays_the_slot_and_places_a_disc() -> None:
    state = table()
    card = "S01"  # slots: 1 artifacts, 1 water, 1 life forms, 4 of one kind
    put_star(state, "2,0", card)
    state["arks"][0] = "2,0"
    state["seats"][0]["factions"].append("F18")
    act(state, 0, "build_colony", slot=3, resource="hydrogen")
    assert state["seats"][0]["resources"]["hydrogen"] == 1
    assert state["board"]["2,0"]["colonies"] == [None, None, None, 0]


def test_building_a_colony_is_refused_off_a_star_or_on_a_taken_slot() -> None:
    state = table()
    refused(state, 0, {"type": "build_colony", "slot": 0}, "ark_not_on_star")
    put_star(state, "2,0", "S01", [1])
    state["arks"][0] = "2,0"
    state["seats"][0]["factions"].append("F18")
    refused(state, 0, {"type": "build_colony", "slot": 0}, "slot_taken")
    refused(state, 0, {"type": "build_colony", "slot": 7}, "bad_slot")
    refused(state, 0, {"type": "build_colony", "slot": 3}, "bad_payment")
    refused(state, 0, {"type": "build_colony", "slot": 1, "resource": "water"}, "bad_payment")
    refused(state, 0, {"type": "build_colony", "slot": 3, "resource": "gold"}, "bad_payment")
    state["seats"][0]["resources"]["water"] = 0
    refused(state, 0, {"type": "build_colony", "slot": 1}, "insufficient_resources")


def test_a_fourth_colony_needs_a_second_faction_or_a_moved_colony() -> None:
    # "you may only have 3 actual colonies on the map per faction under your control"
    state = table()
    put_star(state, "2,0", "S01")
    put_star(state, "-2,0", "S06", [0, 0, 0])
    state["arks"][0] = "2,0"
    refused(state, 0, {"type": "build_colony", "slot": 0}, "no_available_colony")
    refused(
        state, 0, {"type": "build_colony", "slot": 0, "relocate": "map:8,8/0"}, "bad_relocation"
    )
    act(state, 0, "build_colony", slot=0, relocate="map:-2,0/1")
    assert state["board"]["-2,0"]["colonies"][:3] == [0, None, 0]
    assert state["board"]["2,0"]["colonies"][0] == 0


def test_all_nine_discs_in_play_leave_no_colony_to_build() -> None:
    state = table()
    state["seats"][0]["factions"] = ["F01", "F02"]
    put_star(state, "2,0", "S01")
    put_star(state, "-2,0", "S06", [0, 0, 0])
    state["arks"][0] = "2,0"
    for project in state["projects"]:
        project["discs"] = [0, 0, *project["discs"][2:]]
    assert sum(p["discs"].count(0) for p in state["projects"]) == 6
    refused(state, 0, {"type": "build_colony", "slot": 0}, "no_available_colony")
    act(state, 0, "build_colony", slot=0, relocate=f"project:{state['projects'][0]['card']}/0")
    assert state["projects"][0]["discs"][0] is None


def test_a_colony_that_takes_the_majority_takes_the_ruler_card() -> None:
    # "If placing a colony shifts control of a galaxy into your hands, take a 'Ruler of the
    # Galaxy' card of your choosing from the incumbent ruler of the galaxy."
    state = table()
    state["options"]["fast_galaxies"] = True
    a, b = star_ids("green")[:2]
    put_star(state, "2,0", a, [1])
    put_star(state, "4,0", b, [0])
    state["galaxies"] = [
        {"id": 1, "colour": "green", "stars": ["2,0", "4,0"], "ruler": 1, "card": "R01"}
    ]
    state["arks"][0] = "4,0"
    state["seats"][0]["factions"].append("F18")
    _rich(state, 0)
    act(state, 0, "build_colony", slot=1)
    assert state["galaxies"][0]["ruler"] == 0
    assert state["galaxies"][0]["card"] == "R01"


def test_a_new_ruler_chooses_which_of_the_incumbents_cards_to_take() -> None:
    state = table()
    state["options"]["fast_galaxies"] = True
    g1, g2 = star_ids("green")[:2]
    r1, r2 = star_ids("red")[:2]
    put_star(state, "2,0", g1, [1])
    put_star(state, "4,0", g2, [0])
    put_star(state, "-2,0", r1, [1])
    put_star(state, "-4,0", r2)
    state["galaxies"] = [
        {"id": 1, "colour": "green", "stars": ["2,0", "4,0"], "ruler": 1, "card": "R01"},
        {"id": 2, "colour": "red", "stars": ["-4,0", "-2,0"], "ruler": 1, "card": "R09"},
    ]
    state["arks"][0] = "4,0"
    state["seats"][0]["factions"].append("F18")
    _rich(state, 0)
    act(state, 0, "build_colony", slot=1)
    assert state["pending"][0] == {
        "kind": "take_ruler",
        "seat": 0,
        "galaxy": 1,
        "options": ["R01", "R09"],
    }
    refused(state, 0, {"type": "take_ruler", "card": "R05"}, "bad_card")
    act(state, 0, "take_ruler", card="R09")
    assert state["galaxies"][0] == {
        "id": 1,
        "colour": "green",
        "stars": ["2,0", "4,0"],
        "ruler": 0,
        "card": "R09",
    }
    assert state["galaxies"][1]["card"] == "R01"
    assert state["galaxies"][1]["ruler"] == 1


# -- federation projects ------------------------------------------------------------------------


def test_constructing_needs_the_ark_on_the_federation_and_a_real_project() -> None:
    state = table()
    card = state["projects"][0]["card"]
    refused(
        state,
        0,
        {"type": "construct_federation_star", "project": "S99", "slot": 0},
        "no_such_project",
    )
    state["arks"][0] = "1,0"
    refused(
        state,
        0,
        {"type": "construct_federation_star", "project": card, "slot": 0},
        "ark_not_on_federation",
    )


def test_constructing_with_every_disc_in_play_is_refused() -> None:
    state = table()
    put_star(state, "2,0", "S06", [0, 0, 0, 0])
    put_star(state, "-2,0", "S03", [0, 0, 0, 0, 0])
    card = state["projects"][0]["card"]
    refused(
        state, 0, {"type": "construct_federation_star", "project": card, "slot": 0}, "no_free_disc"
    )


def test_one_disc_per_turn_on_federation_projects() -> None:
    # "On a player's turn they may place only one colony disc on a federation project."
    state = table()
    _rich(state, 0)
    card = state["projects"][0]["card"]
    act(state, 0, "construct_federation_star", project=card, slot=0)
    assert state["projects"][0]["discs"][0] == 0
    refused(
        state,
        0,
        {"type": "construct_federation_star", "project": card, "slot": 1},
        "action_already_taken",
    )
    refused(
        state,
        0,
        {"type": "construct_federation_star", "project": card, "slot": 0},
        "action_already_taken",
    )


def _complete_a_project(state: dict, card: str) -> None:
    slots = STARS[card]["slots"]
    state["projects"][0] = {
        "card": card,
        "discs": [1 if "cost" in s else None for s in slots[:-2]] + [None, None],
    }
    _rich(state, 0)
    act(state, 0, "construct_federation_star", project=card, slot=len(slots) - 2)


def test_a_completed_star_is_placed_by_its_builder_and_replaced() -> None:
    state = table()
    put_star(state, "2,0", star_ids("red")[0])
    card = star_ids("blue")[0]
    deck_top = state["decks"]["stars"]["draw_pile"][0]
    _complete_a_project(state, card)
    assert state["projects"][-1]["card"] == deck_top
    assert all(p["card"] != card for p in state["projects"])
    assert IMPENDIUM.status(state)["to_act"] == [0]
    refused(state, 0, {"type": "place_star", "position": "8,0"}, "bad_star_position")
    refused(state, 0, {"type": "place_star", "position": "2,0"}, "bad_star_position")
    act(state, 0, "place_star", position="4,0")
    assert state["board"]["4,0"]["card"] == card
    assert state["board"]["4,0"]["colonies"][0] == 1
    assert state["pending"] == []


def test_stars_are_never_built_next_to_a_harbinger() -> None:
    # "Note: You cannot build new star cards adjacent to harbingers of the void."
    state = table()
    state["board"]["2,2"] = {"kind": "harbinger", "card": "H07", "discs": [None] * 3}
    _complete_a_project(state, star_ids("blue")[0])
    places = [a["position"] for a in IMPENDIUM.legal_actions(state, 0) if a["type"] == "place_star"]
    assert "2,0" not in places and "0,2" not in places
    assert "-2,0" in places


def test_a_star_next_to_its_own_colour_draws_a_harbinger_placed_beside_it() -> None:
    state = table()
    blue, twin = star_ids("blue")[:2]
    put_star(state, "2,0", blue)
    harbinger = state["decks"]["harbingers"]["draw_pile"][0]
    _complete_a_project(state, twin)
    act(state, 0, "place_star", position="4,0")
    assert state["pending"] == [
        {"kind": "place_harbinger", "seat": 0, "card": harbinger, "near": "4,0"}
    ]
    refused(state, 0, {"type": "place_harbinger", "position": "-2,0"}, "bad_harbinger_position")
    act(state, 0, "place_harbinger", position="6,0")
    assert state["board"]["6,0"]["kind"] == "harbinger"


def test_three_connected_stars_of_a_colour_form_a_galaxy_whose_majority_draws_a_ruler() -> None:
    # "If a star card that is placed on the map creates a connection of 3 star cards of the
    # same color ... The player with the most colonies in this galaxy immediately draws a
    # ruler of the galaxy card".
    state = table()
    a, b, c = star_ids("white")[:3]
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [0, 0, 0])
    ruler = state["decks"]["rulers"]["draw_pile"][0]
    _complete_a_project(state, c)
    act(state, 0, "place_star", position="0,2")
    assert state["galaxies"] == []
    state = table()
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [0, 0, 0])
    _complete_a_project(state, c)
    act(state, 0, "place_star", position="4,2")
    assert state["galaxies"] == [
        {"id": 1, "colour": "white", "stars": ["2,0", "4,0", "4,2"], "ruler": 0, "card": ruler}
    ]


def test_two_stars_make_a_galaxy_in_the_faster_game() -> None:
    # "Note: Use 2 star cards to create galaxies for a faster game."
    state = table(fast_galaxies=True)
    a, b = star_ids("white")[:2]
    put_star(state, "2,0", a, [0])
    _complete_a_project(state, b)
    act(state, 0, "place_star", position="4,0")
    assert [g["stars"] for g in state["galaxies"]] == [["2,0", "4,0"]]


def test_a_galaxy_without_a_majority_has_no_ruler() -> None:
    state = table(fast_galaxies=True)
    a, b = star_ids("white")[:2]
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [1])
    effects.update_galaxies(state)
    assert state["galaxies"] == [
        {"id": 1, "colour": "white", "stars": ["2,0", "4,0"], "ruler": None, "card": None}
    ]


def test_a_galaxy_broken_by_a_destroyed_star_ends_and_its_ruler_card_returns() -> None:
    state = table(fast_galaxies=True)
    a, b = star_ids("white")[:2]
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [0])
    effects.update_galaxies(state)
    card = state["galaxies"][0]["card"]
    state["board"]["6,0"] = {"kind": "harbinger", "card": "H01", "discs": [None] * 4}
    effects.destroy_weakest_neighbour(state, "6,0")
    assert state["board"]["4,0"] == {"kind": "dust", "card": b}
    assert state["galaxies"] == []
    assert state["decks"]["rulers"]["draw_pile"][-1] == card


def test_battling_a_harbinger_needs_an_adjacent_card() -> None:
    state = table()
    state["board"]["2,0"] = {"kind": "harbinger", "card": "H07", "discs": [None] * 3}
    refused(
        state, 0, {"type": "battle_harbinger", "position": "4,0", "slot": 0}, "no_such_harbinger"
    )
    state["arks"][0] = "1,0"
    refused(
        state,
        0,
        {"type": "battle_harbinger", "position": "2,0", "slot": 0},
        "not_adjacent_to_harbinger",
    )
    state["arks"][0] = "0,0"
    _rich(state, 0)
    act(state, 0, "battle_harbinger", position="2,0", slot=0)
    assert state["board"]["2,0"]["discs"] == [0, None, None]
    assert HARBINGERS["H07"]["slots"][0]["cost"] == {"hydrogen": 1, "water": 2}
    assert state["seats"][0]["resources"]["water"] == 7


# -- recruit a faction ----------------------------------------------------------------------------


def test_recruiting_is_refused_away_from_the_federation_or_without_a_faction() -> None:
    state = table()
    state["subverting"]["water"] = None
    refused(state, 0, {"type": "recruit_faction", "resource": "water"}, "no_such_faction")
    state["arks"][0] = "1,0"
    refused(state, 0, {"type": "recruit_faction", "resource": "hydrogen"}, "ark_not_on_federation")


def test_recruiting_adds_the_faction_refills_the_slot_and_draws_three_diplomacy_cards() -> None:
    state = table()
    state["seats"][0]["resources"]["artifacts"] = 14
    wanted = state["subverting"]["artifacts"]
    refill = state["decks"]["factions"]["draw_pile"][0]
    drawn = state["decks"]["diplomacy"]["draw_pile"][:3]
    refused(
        state,
        0,
        {
            "type": "recruit_faction",
            "resource": "artifacts",
            "replace": state["seats"][0]["factions"][0],
        },
        "no_replacement_needed",
    )
    act(state, 0, "recruit_faction", resource="artifacts")
    assert state["seats"][0]["factions"][-1] == wanted
    assert state["subverting"]["artifacts"] == refill
    assert state["pending"] == [{"kind": "keep_diplomacy", "seat": 0, "cards": drawn}]
    refused(state, 0, {"type": "keep_diplomacy", "return": "D99"}, "bad_card")
    act(state, 0, "keep_diplomacy", **{"return": drawn[1]})
    assert state["seats"][0]["hand"] == [drawn[0], drawn[2]]
    assert state["decks"]["diplomacy"]["draw_pile"][-1] == drawn[1]


def test_a_returned_card_someone_draws_again_is_no_longer_known_where_it_lies() -> None:
    # Ben returned D05 under the deck; Ann draws it and returns it again: where it lies now
    # is Ann's secret, so redrawing what Ben cannot see no longer pins it.
    state = table()
    pile = state["decks"]["diplomacy"]["draw_pile"]
    pile.remove("D05")
    # The deck is drawn down to the card Ben returned under it: Ann's three are the last.
    pile[:] = [*pile[:2], "D05"]
    state["returned_diplomacy"][1] = ["D05"]
    state["seats"][0]["resources"]["water"] = 14
    act(state, 0, "recruit_faction", resource="water")
    assert "D05" in state["pending"][0]["cards"]
    assert state["returned_diplomacy"][1] == []
    act(state, 0, "keep_diplomacy", **{"return": "D05"})
    assert state["returned_diplomacy"] == [["D05"], []]
    bottoms = {
        IMPENDIUM.resample_hidden(state, 1, random.Random(n))["decks"]["diplomacy"]["draw_pile"][-1]
        for n in range(20)
    }
    assert bottoms != {"D05"}
    assert (
        IMPENDIUM.resample_hidden(state, 0, random.Random(1))["decks"]["diplomacy"]["draw_pile"][-1]
        == "D05"
    )  # Ann knows where she put it


def test_a_fourth_faction_replaces_one_to_the_bottom_of_the_faction_deck() -> None:
    # "You may only have 3 factions at a time but you may replace them ... placing the old
    # faction at the bottom of the faction deck."
    state = table()
    state["seats"][0]["factions"] = ["F01", "F02", "F03"]
    for f in ("F01", "F02", "F03"):
        for pile in ("draw_pile",):
            if f in state["decks"]["factions"][pile]:
                state["decks"]["factions"][pile].remove(f)
    state["seats"][0]["resources"]["artifacts"] = 14
    refused(state, 0, {"type": "recruit_faction", "resource": "artifacts"}, "must_replace_faction")
    act(state, 0, "recruit_faction", resource="artifacts", replace="F02")
    assert "F02" not in state["seats"][0]["factions"]
    assert len(state["seats"][0]["factions"]) == 3
    assert state["decks"]["factions"]["draw_pile"][-1] == "F02"


def test_the_solo_player_draws_no_diplomacy_cards() -> None:
    state = table(1, variant="solo")
    state["seats"][0]["resources"]["water"] = 14
    put_star(state, "2,0", "S01", [0])
    act(state, 0, "recruit_faction", resource="water")
    assert state["pending"] == [] and state["seats"][0]["hand"] == []


# -- ending a turn and passing ---------------------------------------------------------------------


def test_ending_a_turn_needs_an_action_and_passing_is_for_the_round() -> None:
    state = table(3)
    refused(state, 0, {"type": "end_turn"}, "no_action_taken")
    act(state, 0, "move", to="1,0")
    act(state, 0, "end_turn")
    assert state["turn"]["seat"] == 1
    act(state, 1, "pass")
    act(state, 2, "pass")
    assert state["turn"]["seat"] == 0
    act(state, 0, "pass")
    assert IMPENDIUM.status(state)["awaiting_system"] == "end_of_round"


def test_a_galaxy_that_grows_keeps_its_ruler_and_card() -> None:
    state = table(fast_galaxies=True)
    a, b, c = star_ids("white")[:3]
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [0])
    effects.update_galaxies(state)
    before = dict(state["galaxies"][0])
    put_star(state, "6,0", c, [1, 1, 1])
    effects.update_galaxies(state)
    assert state["galaxies"] == [{**before, "stars": ["2,0", "4,0", "6,0"]}]


def test_two_galaxies_joined_by_a_star_keep_the_older_and_return_the_others_card() -> None:
    state = table(fast_galaxies=True)
    a, b, c, d, e = star_ids("white")[:5]
    put_star(state, "2,0", a, [0])
    put_star(state, "4,0", b, [0])
    put_star(state, "8,0", c, [1])
    put_star(state, "10,0", d, [1])
    effects.update_galaxies(state)
    first, second = state["galaxies"]
    put_star(state, "6,0", e)
    effects.update_galaxies(state)
    assert state["galaxies"] == [{**first, "stars": ["2,0", "4,0", "6,0", "8,0", "10,0"]}]
    assert state["decks"]["rulers"]["draw_pile"][-1] == second["card"]
