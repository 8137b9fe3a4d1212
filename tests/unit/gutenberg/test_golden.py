"""Golden tests: each worked example or table of the rulebook, quoted."""

import pytest

from projections.games.gutenberg import data
from projections.games.gutenberg.effects import ink_cost
from projections.games.gutenberg.rules import GUTENBERG
from projections.games.gutenberg.scoring import final_result
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    give_inks,
    give_order,
    in_round,
    new_game,
    put_gear,
    refused,
    run_system,
)


def _end_the_round(state):
    state["phase"] = "round_end"  # every seat done with the round
    state["queue"], state["turn"] = [], 0
    assert run_system(state)[0] == "end_of_round"


@pytest.mark.parametrize(
    ("players", "after"),
    [(4, [10, 7, 8, 9]), (3, [9, 7, 8]), (2, [8, 7])],
)
def test_each_player_gives_one_marker_to_the_player_who_passed_the_first_player_token(
    players, after
):
    # "Each player gives 1 initiative marker to the player who just passed the 1st player
    # token. This means that the 1st player will have 7 initiative markers, the 2nd player
    # has 8, the 3rd player has 9 and the 4th player has 10." A7 B8 C9 D10 -> B7 C8 D9 A10.
    state = in_round(players)
    assert [p["markers"] for p in state["seats"]] == [7, 8, 9, 10][:players]
    _end_the_round(state)
    assert [p["markers"] for p in state["seats"]] == after
    assert state["first_player"] == 1


def test_first_ink_is_free_the_second_costs_one_and_the_third_two_guilders():
    # "The 1st ink is free, the 2nd costs 1 guilder, and the 3rd costs 2 guilders."
    full = ["red", "blue", "gold"]
    assert [ink_cost(full, count) for count in (1, 2, 3)] == [0, 1, 3]


def test_a_partly_taken_set_keeps_its_costs():
    # "A player may choose a set that was partially taken by another player, but the costs
    # remain the same, which means 1 or 2 guilders for the 2nd and 3rd inks."
    partly = [None, "blue", "gold"]
    assert [ink_cost(partly, count) for count in (1, 2)] == [1, 3]
    state = at_row(in_round(), "inks", [0, 1])
    state["board"]["inks"][0] = ["red", "blue", "gold"]
    act(state, 0, {"type": "take_inks", "set": 0, "count": 1})
    act(state, 1, {"type": "take_inks", "set": 0, "count": 2})
    assert state["seats"][0]["guilders"] == 10
    assert state["seats"][1]["guilders"] == 7
    assert state["seats"][1]["inks"] == {"blue": 1, "gold": 1}


def test_owning_three_types_the_next_costs_four_guilders():
    # German review: "Besitzt ein Spieler also 3 Lettern, kostet die nächste 4 Gulden";
    # the English cost table: the 4th type costs 4, the 5th 5.
    state = in_round()
    act(state, 0, {"type": "buy_type", "letter": "U"})
    assert state["seats"][0]["guilders"] == 6
    act(state, 0, {"type": "buy_type", "letter": "U"})
    assert state["seats"][0]["guilders"] == 1
    assert state["seats"][0]["types"] == {"A": 1, "I": 1, "O": 1, "U": 2}


def test_the_gear_ink_bonus_gives_only_two_points_for_an_order_needing_two_of_that_ink():
    # "If an order requires more than 1 of the indicated ink, only 2 points are gained."
    state = at_row(in_round(), "fulfill", [0])
    player = state["seats"][0]
    player["orders"] = []
    give_order(state, 0, "P02", "R11")  # A+I; colours: 2 black
    give_inks(state, 0, {"black": 2})
    put_gear(state, 0, 0, "G07", 3)  # active sector: 2 fame per order using black ink
    act(
        state,
        0,
        {
            "type": "fulfill_orders",
            "orders": [{"slot": 0, "colours": True, "decorations": False}],
            "ignore": None,
        },
    )
    assert player["fame"] == data.REFINEMENT["R11"]["colour_fame"] + 2
    assert player["gear_uses"][0] == 1


@pytest.mark.parametrize("round_", [1, 2])
def test_no_patronage_card_can_be_taken_in_the_first_two_rounds(round_):
    # "Note: In the 1st 2 rounds, the round marker has not reached any patronage cards."
    state = at_row(in_round(), "patronage")
    state["round"] = round_
    assert min(space["unlock"] for space in state["board"]["patronage"]) == 3
    card = state["board"]["patronage"][0]["card"]
    _meet_conditions(state, 0, card)
    legal = GUTENBERG.legal_actions(state, 0)
    assert not [a for a in legal if a["type"] == "take_patronage"]
    assert refused(state, 0, {"type": "take_patronage", "card": card}) == "patronage_locked"


def test_a_patronage_card_opens_once_the_round_marker_reaches_it():
    # "The card may be taken if it's on a space below or to the left of the round marker."
    state = at_row(in_round(), "patronage")
    space = state["board"]["patronage"][0]
    state["round"] = space["unlock"]
    _meet_conditions(state, 0, space["card"])
    inks = dict(state["seats"][0]["inks"])
    act(state, 0, {"type": "take_patronage", "card": space["card"]})
    player = state["seats"][0]
    assert player["patronage"] == [data.PATRONAGE[player["patronage"][0]]["id"]]
    assert space["card"] is None
    # "If a player uses ink to take a patronage card, the ink is put back in the bag."
    paid = data.PATRONAGE[player["patronage"][0]]["inks"]
    assert sum(inks.values()) - sum(player["inks"].values()) == sum(paid.values())


def _meet_conditions(state, seat, card):
    needs = data.PATRONAGE[card]
    player = state["seats"][seat]
    player["specialties"].update(needs["specialties"])
    player["types"] = dict(needs["types"])
    give_inks(state, seat, needs["inks"])


@pytest.mark.parametrize(("players", "cards"), [(2, 6), (3, 8), (4, 10)])
def test_the_draft_shows_six_eight_or_ten_cards_of_each_kind(players, cards):
    # "2 players: 6 cards; 3 players: 8 cards; 4 players: 10 cards"
    state = new_game(players)
    assert len(state["draft"]["printing"]) == cards
    assert len(state["draft"]["refinement"]) == cards


def test_final_scoring_of_a_hand_built_end_state_adds_every_line():
    # "6 points for each specialty at level VI, 3 ... at level V, 1 ... at level IV;
    # 8 points for each acquired patronage card; 1 point for every 3 guilders."
    state = in_round(2)
    ann, ben = state["seats"]
    ann.update(fame=20, guilders=14, patronage=["N01", "N02"])
    ann["specialties"] = dict(zip(data.SPECIALTIES, [6, 5, 4, 3], strict=True))
    ben.update(fame=20, guilders=14, patronage=["N03", "N04"], character="vietor")
    ben["specialties"] = dict(zip(data.SPECIALTIES, [6, 5, 4, 3], strict=True))
    result = final_result(state)
    assert result["scores"][0]["breakdown"] == {
        "fame": 20,
        "specialties": 10,
        "patronage": 16,
        "guilders": 4,
        "vietor": 0,
    }
    assert result["scores"][0]["total"] == 50
    # Hieronymus Vietor "doubles their fame points from guilders".
    assert result["scores"][1]["breakdown"]["vietor"] == 4
    assert result["scores"][1]["total"] == 54
    assert result["ranking"] == [[1], [0]]


def test_a_tie_goes_to_fewest_types_then_fewest_inks_then_is_shared():
    # "If there is a tie, the player with the fewest types wins. If there is still a tie,
    # the player with the fewest inks wins. If there is still a tie, the players share."
    state = in_round(4)
    for player in state["seats"]:
        player.update(fame=10, guilders=0, types={"A": 3}, inks={})
    state["seats"][1]["types"] = {"A": 4}
    state["seats"][2]["inks"] = {"red": 1}
    assert final_result(state)["ranking"] == [[0, 3], [2], [1]]
