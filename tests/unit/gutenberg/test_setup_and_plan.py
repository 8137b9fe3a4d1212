"""Setup ("Setup" 1-14), the character draw, the snake draft, types, and the secret plan."""

import random

import pytest

from projections.games.gutenberg import data
from projections.games.gutenberg.rules import GUTENBERG, ROWS
from projections.ruleset import IllegalAction
from tests.unit.gutenberg.helpers import act, in_round, new_game, refused, run_system


@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_fills_one_space_of_each_kind_per_player(players):
    state = new_game(players)
    board = state["board"]
    for kind in ("printing", "refinement", "specialty", "gears"):
        assert len(board[kind]) == players and all(board[kind])
    assert [len(ink_set) for ink_set in board["inks"]] == [3] * players
    # German review: "Von den Unterstützerkarten werden pro Spieler zwei Karten offen ...".
    assert len(board["patronage"]) == 2 * players
    assert len(state["patronage_box"]) == len(data.PATRONAGE) - 2 * players
    assert [p["guilders"] for p in state["seats"]] == [10] * players
    assert [p["markers"] for p in state["seats"]] == [7, 8, 9, 10][:players]
    assert state["side"] == ("1-2 players" if players == 2 else "3-4 players")


def test_two_players_play_without_the_white_line_gears():
    # "In a 2 player game, return the gears with white lines between sectors to the box."
    state = new_game(2)
    in_play = state["decks"]["gears"]["draw_pile"] + state["board"]["gears"]
    assert {data.GEARS[g]["lines"] for g in in_play} == {"grey"}
    assert len(in_play) == sum(1 for g in data.GEARS.values() if g["lines"] == "grey")


def test_setup_refuses_a_fifth_player():
    with pytest.raises(IllegalAction) as caught:
        GUTENBERG.setup(["a", "b", "c", "d", "e"], {}, random.Random(1))
    assert caught.value.code == "player_count"


def test_each_player_draws_two_characters_and_keeps_one_in_secret():
    state = new_game(3, characters=True)
    assert GUTENBERG.status(state)["to_act"] == [0, 1, 2]
    offer = state["seats"][0]["character_offer"]
    assert len(offer) == 2
    act(state, 0, {"type": "choose_character", "character": offer[1]})
    assert GUTENBERG.public_action(state, {"type": "choose_character", "character": offer[1]}) == {
        "type": "choose_character"
    }
    assert GUTENBERG.view(state, 1)["seats"][0]["character_choice"] is None
    assert GUTENBERG.view(state, 0)["seats"][0]["character_choice"] == offer[1]
    assert refused(state, 0, {"type": "choose_character", "character": offer[0]}) == (
        "not_your_turn"
    )
    other = next(c for c in data.CHARACTERS if c not in state["seats"][1]["character_offer"])
    assert refused(state, 1, {"type": "choose_character", "character": other}) == (
        "character_not_drawn"
    )


def test_characters_are_revealed_together_and_the_others_return_to_the_box():
    state = new_game(2, characters=True, seed="no-setup-powers")
    for seat in (0, 1):
        offer = state["seats"][seat]["character_offer"]
        act(state, seat, {"type": "choose_character", "character": offer[0]})
    assert GUTENBERG.status(state)["awaiting_system"] == "reveal_characters"
    run_system(state)
    kept = [p["character"] for p in state["seats"]]
    assert all(kept) and len(state["character_box"]) == len(data.CHARACTERS) - 2
    assert state["phase"] == "draft"


def test_the_draft_snakes_in_order_then_in_reverse_and_discards_the_four_left():
    state = new_game(2)
    picks = []
    while state["phase"] == "draft":
        seat = GUTENBERG.status(state)["to_act"][0]
        picks.append(seat)
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    assert picks == [0, 1, 1, 0]
    assert [len(p["orders"]) for p in state["seats"]] == [2, 2]
    assert len(state["decks"]["printing"]["discard_pile"]) == 2
    assert len(state["decks"]["refinement"]["discard_pile"]) == 2
    assert state["phase"] == "choose_types"


def test_drafting_a_card_not_on_offer_is_refused():
    state = new_game(2)
    card = state["board"]["printing"][0]
    action = {
        "type": "draft_order",
        "printing": card,
        "refinement": state["draft"]["refinement"][0],
    }
    assert refused(state, 0, action) == "card_not_offered"
    action = {"type": "draft_order", "printing": state["draft"]["printing"][0], "refinement": "R99"}
    assert refused(state, 0, action) == "card_not_offered"
    assert refused(state, 1, GUTENBERG.legal_actions(state, 0)[0]) == "not_your_turn"


def test_each_player_chooses_three_types_and_the_round_begins():
    state = new_game(2)
    while state["phase"] == "draft":
        seat = GUTENBERG.status(state)["to_act"][0]
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    assert len(GUTENBERG.legal_actions(state, 0)) == 20  # multisets of 3 from A, I, O, U
    assert refused(state, 0, {"type": "choose_types", "letters": ["A", "I"]}) == "three_types"
    assert refused(state, 0, {"type": "choose_types", "letters": ["A", "I", "E"]}) == "three_types"
    act(state, 0, {"type": "choose_types", "letters": ["A", "A", "U"]})
    assert state["seats"][0]["types"] == {"A": 2, "U": 1}
    assert refused(state, 0, {"type": "choose_types", "letters": ["A", "I", "O"]}) == (
        "not_your_turn"
    )
    act(state, 1, {"type": "choose_types", "letters": ["O", "I", "U"]})
    assert state["phase"] == "plan" and state["round"] == 1


def test_free_actions_wait_for_the_round():
    state = new_game(2)
    assert refused(state, 0, {"type": "buy_type", "letter": "A"}) == "not_during_setup"


def test_plans_are_secret_until_all_are_revealed_at_once():
    state = in_round(3)
    plan = {"type": "submit_plan", "rows": [3, 2, 1, 1, 0]}
    assert GUTENBERG.public_action(state, plan) == {"type": "submit_plan"}
    act(state, 0, plan)
    assert GUTENBERG.view(state, 1)["seats"][0]["plan"] is None
    assert GUTENBERG.view(state, 1)["seats"][0]["plan_submitted"] is True
    assert GUTENBERG.view(state, 0)["seats"][0]["plan"] == [3, 2, 1, 1, 0]
    assert GUTENBERG.status(state)["to_act"] == [1, 2]
    act(state, 1, {"type": "submit_plan", "rows": [0, 0, 0, 2, 6]})
    act(state, 2, {"type": "submit_plan", "rows": [1, 1, 1, 1, 1]})
    assert GUTENBERG.status(state)["awaiting_system"] == "reveal_plans"
    run_system(state)
    assert GUTENBERG.view(state, 1)["seats"][0]["plan"] == [3, 2, 1, 1, 0]


@pytest.mark.parametrize(
    ("rows", "code"),
    [
        ([1, 1, 1, 1], "bad_plan"),
        ([1, 1, 1, 1, -1], "bad_plan"),
        ([7, 0, 0, 0, 0], "row_full"),
        ([2, 2, 2, 2, 0], "too_many_markers"),
    ],
)
def test_a_plan_is_checked_against_rows_and_markers(rows, code):
    state = in_round(2)
    assert refused(state, 0, {"type": "submit_plan", "rows": rows}) == code


def test_a_plan_may_leave_markers_unplaced_and_every_plan_is_listed():
    state = in_round(2)
    legal = [a["rows"] for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "submit_plan"]
    assert [0, 0, 0, 0, 0] in legal and [6, 1, 0, 0, 0] in legal
    assert all(sum(rows) <= 7 and max(rows) <= 6 for rows in legal)


def test_most_markers_act_first_and_ties_go_by_player_order():
    # "The player with the most markers is 1st. Ties are broken by player order."
    state = in_round(4)
    state["first_player"] = 2
    plans = [[2, 0, 0, 0, 0], [3, 0, 0, 0, 0], [2, 0, 0, 0, 0], [0, 1, 0, 0, 0]]
    for seat, rows in enumerate(plans):
        act(state, seat, {"type": "submit_plan", "rows": rows})
    run_system(state)
    assert state["phase"] == "orders"
    # Seat 3 placed no marker on orders: "at least 1 marker on an action to take that action".
    assert state["queue"] == [1, 2, 0]
    assert GUTENBERG.status(state)["to_act"] == [1]


def test_an_action_row_nobody_chose_passes_straight_to_the_next():
    state = in_round(2)
    for seat in (0, 1):
        act(state, seat, {"type": "submit_plan", "rows": [0, 0, 0, 0, 1]})
    applied = run_system(state)
    assert applied == [
        "reveal_plans",
        "finish_action",
        "finish_action",
        "finish_action",
        "finish_action",
    ]
    assert state["phase"] == "patronage"
    assert all(card is None for card in state["board"]["printing"]), "leftovers discarded"
    assert ROWS[-1] == "patronage"
