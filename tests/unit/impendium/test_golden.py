"""Golden tests: each worked example or stated figure of the Impendium rulebook, quoted."""

from __future__ import annotations

from projections.games.impendium import IMPENDIUM
from projections.games.impendium.data import FACTIONS, HARBINGERS, STARS
from tests.unit.impendium.helpers import Dice, act, auto, producing, put_star, refused, table


def _four_water_colonies(water: int) -> dict:
    state = table()
    water_stars = producing("water")
    put_star(state, "2,0", water_stars[0], [0, 0])
    put_star(state, "-2,0", water_stars[1], [0, 0])
    state["seats"][0]["resources"]["water"] = water
    return state


def test_recruiting_under_water_with_four_water_colonies_costs_ten_water() -> None:
    # "if I want to recruit the faction below the water symbol and I have 4 colonies that
    # can produce water, I must pay 10 water to recruit that faction."
    state = _four_water_colonies(10)
    wanted = state["subverting"]["water"]
    act(state, 0, "recruit_faction", resource="water")
    assert state["seats"][0]["resources"]["water"] == 0
    assert wanted in state["seats"][0]["factions"]


def test_recruiting_under_water_refuses_nine_water_with_four_water_colonies() -> None:
    state = _four_water_colonies(9)
    refused(state, 0, {"type": "recruit_faction", "resource": "water"}, "insufficient_resources")


def test_attack_winner_takes_the_difference_of_the_dice_not_of_the_totals() -> None:
    # "The winner then takes resources from the losing player equal to THE DIFFERENCE OF
    # THE DICE ROLL (not the added value of resources and dice)".
    state = table()
    state["seats"][0]["resources"] = {"life_forms": 2, "water": 3, "artifacts": 3, "hydrogen": 3}
    state["seats"][1]["resources"] = {"life_forms": 4, "water": 4, "artifacts": 4, "hydrogen": 4}
    act(state, 0, "attack", rng=Dice(5, 2), target=1)  # 5 + 2 = 7 beats 2 + 4 = 6
    assert state["last_attack"]["totals"] == [7, 6]
    assert state["pending"] == [{"kind": "spoils", "seat": 0, "from": 1, "amount": 3}]
    act(state, 0, "take_spoils", resources={"water": 2, "artifacts": 1})
    assert state["seats"][1]["resources"] == {
        "life_forms": 4,
        "water": 2,
        "artifacts": 3,
        "hydrogen": 4,
    }
    assert state["seats"][0]["resources"]["water"] == 5


def test_attack_never_takes_more_than_five() -> None:
    # "meaning the most you could possibly take is 5."
    state = table()
    act(state, 0, "attack", rng=Dice(6, 1), target=1)
    assert state["pending"][0]["amount"] == 5


def test_attack_winner_with_the_lower_die_still_takes_the_dice_difference() -> None:
    state = table()
    state["seats"][0]["resources"] = {"life_forms": 6, "water": 6, "artifacts": 6, "hydrogen": 6}
    state["seats"][1]["resources"] = {"life_forms": 0, "water": 3, "artifacts": 3, "hydrogen": 3}
    act(state, 0, "attack", rng=Dice(2, 5), target=1)  # 2 + 6 = 8 beats 5 + 0 = 5
    assert state["pending"][0] == {"kind": "spoils", "seat": 0, "from": 1, "amount": 3}


def test_moving_from_a_star_to_the_next_star_costs_two_then_one_hydrogen() -> None:
    # "2 Hydrogen to move off a star card onto a space between cards, 1 hydrogen to move
    # from a space between star cards onto a star card".
    state = table()
    red = next(c for c in producing("water") if STARS[c]["colour"] == "blue")
    put_star(state, "2,0", red)
    put_star(state, "4,0", next(c for c in STARS if STARS[c]["colour"] == "white"))
    state["arks"][0] = "2,0"  # seat 0's Ark is red, the star blue
    act(state, 0, "move", to="3,0")
    assert state["seats"][0]["resources"]["hydrogen"] == 3
    act(state, 0, "move", to="4,0")
    assert state["seats"][0]["resources"]["hydrogen"] == 2
    assert state["arks"][0] == "4,0"


def test_moving_off_a_star_of_your_arks_colour_costs_one_hydrogen() -> None:
    # "1 hydrogen to move off of a star card that shares the same color as your ark".
    state = table()
    put_star(state, "2,0", next(c for c in STARS if STARS[c]["colour"] == "red"))
    state["arks"][0] = "2,0"  # seat 0's Ark of Salvation is red
    act(state, 0, "move", to="3,0")
    assert state["seats"][0]["resources"]["hydrogen"] == 4


def test_moving_off_space_dust_costs_one_hydrogen() -> None:
    # "1 hydrogen to move off a destroyed star card (flipped upside down)".
    state = table()
    state["board"]["2,0"] = {"kind": "dust", "card": "S02"}
    state["arks"][0] = "2,0"
    act(state, 0, "move", to="3,0")
    assert state["seats"][0]["resources"]["hydrogen"] == 4


def test_a_harbinger_majority_tie_gives_each_tied_player_two_vp() -> None:
    # "In the case of a tie, the tying players each receive 2 VP. Every player who
    # participated in the battle also receives 1 VP per colony disc they contributed."
    card = next(c for c, h in HARBINGERS.items() if len(h["slots"]) == 4)
    state = table()
    put_star(state, "2,0", "S01")
    state["board"]["4,0"] = {"kind": "harbinger", "card": card, "discs": [0, 1, 1, None]}
    state["arks"][0] = "2,0"
    for resource in state["seats"][0]["resources"]:
        state["seats"][0]["resources"][resource] = 9
    act(state, 0, "battle_harbinger", position="4,0", slot=3)
    assert [mine["vp"] for mine in state["seats"]] == [2 + 2, 2 + 2]
    assert state["seats"][0]["vp_sources"]["harbinger_majority"] == 2
    assert "4,0" not in state["board"]
    assert card in state["decks"]["harbingers"]["discard_pile"]


def test_a_harbinger_majority_holder_receives_the_cards_victory_points() -> None:
    card = next(c for c, h in HARBINGERS.items() if len(h["slots"]) == 3)
    state = table()
    put_star(state, "2,0", "S01")
    state["board"]["4,0"] = {"kind": "harbinger", "card": card, "discs": [0, 1, None]}
    state["arks"][0] = "2,0"
    for resource in state["seats"][0]["resources"]:
        state["seats"][0]["resources"][resource] = 9
    act(state, 0, "battle_harbinger", position="4,0", slot=2)
    assert state["seats"][0]["vp"] == HARBINGERS[card]["vp"] + 2
    assert state["seats"][1]["vp"] == 1


def test_federation_star_participants_get_one_vp_per_disc() -> None:
    # "Every player who participated in the construction of the star receives 1 vp per
    # colony disc at the time of its construction."
    state = table()
    project = state["projects"][0]
    slots = STARS[project["card"]]["slots"]
    symbol = [i for i, slot in enumerate(slots) if "cost" in slot]
    discs: list[int | None] = [None] * len(slots)
    for n, index in enumerate(symbol[:-1]):
        discs[index] = 1 if n < 2 else 0
    project["discs"] = list(discs)
    for resource in state["seats"][0]["resources"]:
        state["seats"][0]["resources"][resource] = 9
    act(state, 0, "construct_federation_star", project=project["card"], slot=symbol[-1])
    ones = discs.count(0) + 1
    assert state["seats"][0]["vp"] == ones
    assert state["seats"][1]["vp"] == discs.count(1)
    assert state["pending"][0]["kind"] == "place_star"


def test_reaching_25_vp_gives_every_other_player_one_more_turn() -> None:
    # "until a player reaches 25 Victory points ... at which point, each player may take
    # one more turn before the game ends."
    state = table(3)
    state["seats"][0]["vp"] = 24
    state["seats"][0]["hand"] = ["D09"]  # Recognition: gain 1 victory point
    act(state, 0, "play_diplomacy", card="D09")
    assert state["end_trigger"] == {"reason": "victory_points", "seat": 0}
    assert state["final_turns"] == [1, 2]
    act(state, 0, "move", to="1,0")
    act(state, 0, "end_turn")
    assert state["turn"]["seat"] == 1
    act(state, 1, "pass")
    assert state["turn"]["seat"] == 2
    act(state, 2, "pass")
    assert IMPENDIUM.status(state)["awaiting_system"] == "final_scoring"
    auto(state)
    result = IMPENDIUM.result(state)
    assert result is not None and result["ranking"][0] == [0]


def _faction(kind: str, resource: str) -> str:
    return next(
        f
        for f, card in FACTIONS.items()
        if card["ability"]["kind"] == kind and card["ability"]["resource"] == resource
    )


def test_the_substitute_faction_lets_two_water_stand_for_two_of_another_resource() -> None:
    # "SUB 2 (water): Treat 2 water as a wild resource. Substitute up to 2 water to pay the
    # cost of 2 of any other resource."
    sub = _faction("substitute", "water")
    state = table()
    state["seats"][0]["factions"] = [sub]
    act(state, 0, "pass")  # abilities work on any player's turn: now it is seat 1's
    act(state, 0, "use_faction_ability", faction=sub, target=1)
    assert state["seats"][1]["discounts"]["substitute"] == {"water": 2}
    state["seats"][1]["resources"].update(artifacts=0, water=3)
    put_star(state, "2,0", "S04")  # slot 1 costs 1 artifact
    state["arks"][1] = "2,0"
    # The player chooses to let 1 water pay the artifact (docs/rules/impendium.md, "SUB 2").
    act(state, 1, "build_colony", slot=1, substitute={"water": {"artifacts": 1}})
    assert state["seats"][1]["resources"]["water"] == 2
    assert state["seats"][1]["discounts"]["substitute"] == {"water": 1}


def test_the_water_project_discount_takes_two_water_off_a_slot_demanding_water() -> None:
    # "-2 water, Cost for Federation Project: Reduce the cost of a federation project by 2
    # water. The project slot must specifically demand water."
    discount = _faction("project_discount", "water")
    state = table()
    state["seats"][0]["factions"] = [discount]
    card = next(c for c in STARS if STARS[c]["slots"][0].get("cost") == {"water": 2})
    state["projects"][0] = {"card": card, "discs": [None] * len(STARS[card]["slots"])}
    act(state, 0, "use_faction_ability", faction=discount, target=0)
    act(state, 0, "construct_federation_star", project=card, slot=0)
    assert state["seats"][0]["resources"]["water"] == 5
    assert state["seats"][0]["discounts"]["project"] == {}


def test_the_plus_two_water_faction_gains_two_water() -> None:
    # "+2 water: Gain 2 water."
    gain = _faction("gain", "water")
    state = table()
    state["seats"][0]["factions"] = [gain]
    act(state, 0, "use_faction_ability", faction=gain, target=1)
    assert state["seats"][1]["resources"]["water"] == 7
    assert gain in state["seats"][0]["turned"]
