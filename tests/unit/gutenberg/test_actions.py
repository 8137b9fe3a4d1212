"""The five actions of "Execute Plans", the choices their rewards leave, and the general
refusals (turn, phase, automatic steps)."""

import pytest

from projections.games.gutenberg import data, effects
from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import act, at_row, give_inks, in_round, refused, run_system

# -- take orders ---------------------------------------------------------------------------


def test_taking_an_order_pairs_a_printing_and_a_refinement_card_from_the_board():
    state = at_row(in_round(), "orders")
    board = state["board"]
    printing, refinement = board["printing"][1], board["refinement"][2]
    act(
        state,
        0,
        {
            "type": "take_order",
            "printing": printing,
            "refinement": refinement,
            "discard_slot": None,
        },
    )
    assert state["seats"][0]["orders"][-1] == {"printing": printing, "refinement": refinement}
    assert board["printing"][1] is None and board["refinement"][2] is None
    assert state["turn"] == 1


def test_a_fifth_order_needs_an_existing_one_discarded_first():
    # "If a player has 4 orders and takes another, they must 1st discard an existing order."
    state = at_row(in_round(), "orders")
    player = state["seats"][0]
    player["orders"].extend(state["seats"][1]["orders"])
    state["seats"][1]["orders"] = []
    board = state["board"]
    action = {
        "type": "take_order",
        "printing": board["printing"][0],
        "refinement": board["refinement"][0],
    }
    assert refused(state, 0, {**action, "discard_slot": None}) == "must_discard_order"
    dropped = player["orders"][1]
    act(state, 0, {**action, "discard_slot": 1})
    assert len(player["orders"]) == 4 and dropped not in player["orders"]
    assert dropped["printing"] in state["decks"]["printing"]["discard_pile"]


def test_naming_a_discard_with_a_free_slot_or_a_card_not_on_the_board_is_refused():
    state = at_row(in_round(), "orders")
    board = state["board"]
    action = {
        "type": "take_order",
        "printing": board["printing"][0],
        "refinement": board["refinement"][0],
    }
    assert refused(state, 0, {**action, "discard_slot": 0}) == "discard_not_needed"
    assert (
        refused(state, 0, {**action, "printing": "P99", "discard_slot": None})
        == "card_not_on_board"
    )
    # A card is named by a string: null is not a card at all (the action's schema says so).
    assert (
        refused(state, 0, {**action, "refinement": None, "discard_slot": None})
        == "malformed_action"
    )


def test_after_everyone_took_orders_the_remaining_cards_are_discarded():
    state = at_row(in_round(), "orders", [0])
    left = list(state["board"]["printing"])
    act(state, 0, {"type": "pass"})
    assert GUTENBERG.status(state)["awaiting_system"] == "finish_action"
    act(state, None, {"type": "finish_action", "action": "orders"})
    assert state["board"]["printing"] == [None] * 4
    assert set(left) <= set(state["decks"]["printing"]["discard_pile"])
    assert state["phase"] == "inks"


# -- take inks -------------------------------------------------------------------------------


def test_taking_inks_goes_left_to_right_from_one_set():
    state = at_row(in_round(), "inks")
    state["board"]["inks"][1] = ["red", "blue", "gold"]
    act(state, 0, {"type": "take_inks", "set": 1, "count": 3})
    assert state["seats"][0]["inks"] == {"red": 1, "blue": 1, "gold": 1}
    assert state["seats"][0]["guilders"] == 7
    assert state["board"]["inks"][1] == [None, None, None]


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"set": 9, "count": 1}, "no_such_ink_set"),
        ({"set": 0, "count": 4}, "not_enough_inks"),
        ({"set": 0, "count": 0}, "not_enough_inks"),
    ],
)
def test_taking_inks_is_checked(action, code):
    state = at_row(in_round(), "inks")
    assert refused(state, 0, {"type": "take_inks", **action}) == code


def test_inks_cost_guilders_the_player_must_have():
    state = at_row(in_round(), "inks")
    state["seats"][0]["guilders"] = 2
    assert refused(state, 0, {"type": "take_inks", "set": 0, "count": 3}) == "not_enough_guilders"
    counts = {a["count"] for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "take_inks"}
    assert counts == {1, 2}


def test_inks_left_after_the_action_go_back_to_the_bag():
    state = at_row(in_round(), "inks", [])
    in_bag = sum(state["bag"]["contents"].values())
    run_system(state)
    assert sum(state["bag"]["contents"].values()) == in_bag + 12
    assert state["phase"] == "specialties"


# -- develop specialties -------------------------------------------------------------------


def _specialty_row(card):
    state = at_row(in_round(), "specialties")
    state["board"]["specialty"][0] = card
    state["decks"]["specialty"]["draw_pile"].remove(card)
    return state


def test_a_specialty_card_moves_one_level_per_symbol():
    state = _specialty_row("S01")  # two typesetting symbols
    act(
        state, 0, {"type": "develop_specialty", "card": "S01", "mode": "symbols", "specialty": None}
    )
    assert state["seats"][0]["specialties"]["typesetting"] == 2
    assert "S01" in state["decks"]["specialty"]["discard_pile"]


def test_a_specialty_card_may_instead_move_any_one_specialty_one_level():
    state = _specialty_row("S01")
    act(
        state,
        0,
        {"type": "develop_specialty", "card": "S01", "mode": "single", "specialty": "binding"},
    )
    assert state["seats"][0]["specialties"]["binding"] == 1


def test_a_specialty_card_is_checked():
    state = _specialty_row("S01")
    base = {"type": "develop_specialty", "card": "S01"}
    assert refused(state, 0, {**base, "mode": "single", "specialty": None}) == "bad_specialty_use"
    assert (
        refused(state, 0, {**base, "mode": "symbols", "specialty": "binding"})
        == "bad_specialty_use"
    )
    assert refused(state, 0, {**base, "card": "S99", "mode": "symbols", "specialty": None}) == (
        "card_not_on_board"
    )


def test_reaching_a_marked_level_first_moves_the_reward_disc_and_pays_its_reward():
    # "The 1st time a player reaches a level marked with '>' ... takes the reward. Reaching
    # the same reward level on another track does not give any additional reward."
    state = _specialty_row("S01")
    act(
        state, 0, {"type": "develop_specialty", "card": "S01", "mode": "symbols", "specialty": None}
    )
    player = state["seats"][0]
    assert player["reward_level"] == 2
    assert player["guilders"] == 10 + data.REWARD_TRACK[1]["amount"]
    assert effects.total(player["inks"]) == 1 and not state["pending"], "level II: 1 ink drawn"
    player["specialties"]["binding"] = 1
    state["turn"] = 0
    state["board"]["specialty"][1] = state["decks"]["specialty"]["draw_pile"].pop(0)
    card = state["board"]["specialty"][1]
    act(
        state,
        0,
        {"type": "develop_specialty", "card": card, "mode": "single", "specialty": "binding"},
    )
    assert player["reward_level"] == 2 and not state["pending"]
    assert player["guilders"] == 12


def test_a_step_beyond_level_six_pays_three_guilders_instead():
    # "If level VI is reached and the track would go up, the player instead receives 3 guilders."
    state = _specialty_row("S01")
    player = state["seats"][0]
    player["specialties"]["typesetting"] = 5
    player["reward_level"] = 6
    act(
        state, 0, {"type": "develop_specialty", "card": "S01", "mode": "symbols", "specialty": None}
    )
    assert player["specialties"]["typesetting"] == 6
    assert player["guilders"] == 13


# -- improve printing houses ---------------------------------------------------------------


def test_a_new_gear_goes_on_the_top_free_axle_with_a_sector_on_the_active_area():
    state = at_row(in_round(), "gears")
    gear = state["board"]["gears"][0]
    act(state, 0, {"type": "install_gear", "gear": gear, "rotation": 2, "replace_axle": None})
    assert state["seats"][0]["gears"][0] == {"gear": gear, "rotation": 2}
    assert state["board"]["gears"][0] is None


def test_a_full_printing_house_discards_an_unused_gear_for_a_new_one():
    # "If a player has 3 gears and takes a new gear, they must discard 1 to make room."
    state = at_row(in_round(), "gears")
    player = state["seats"][0]
    deck = state["decks"]["gears"]["draw_pile"]
    player["gears"] = [{"gear": deck.pop(0), "rotation": 0} for _ in range(3)]
    gear = state["board"]["gears"][0]
    base = {"type": "install_gear", "gear": gear, "rotation": 0}
    assert refused(state, 0, {**base, "replace_axle": None}) == "must_discard_gear"
    player["gear_uses"][1] = 1
    # "If a player has used a gear this round, that gear cannot be repositioned or discarded."
    assert refused(state, 0, {**base, "replace_axle": 1}) == "gear_used_this_round"
    old = player["gears"][2]["gear"]
    act(state, 0, {**base, "replace_axle": 2})
    assert player["gears"][2]["gear"] == gear
    assert old in state["decks"]["gears"]["discard_pile"]


def test_installing_a_gear_is_checked():
    state = at_row(in_round(), "gears")
    gear = state["board"]["gears"][0]
    base = {"type": "install_gear", "gear": gear, "rotation": 0, "replace_axle": None}
    assert refused(state, 0, {**base, "gear": "G99"}) == "gear_not_on_board"
    assert refused(state, 0, {**base, "rotation": 4}) == "bad_rotation"
    assert refused(state, 0, {**base, "replace_axle": 0}) == "axle_free"


def test_a_gear_can_be_repositioned_instead_of_taking_a_new_one():
    state = at_row(in_round(), "gears")
    player = state["seats"][0]
    player["gears"][0] = {"gear": state["decks"]["gears"]["draw_pile"].pop(0), "rotation": 0}
    assert (
        refused(state, 0, {"type": "reposition_gear", "axle": 0, "rotation": 0}) == "same_rotation"
    )
    assert (
        refused(state, 0, {"type": "reposition_gear", "axle": 1, "rotation": 1}) == "no_gear_there"
    )
    assert refused(state, 0, {"type": "reposition_gear", "axle": 5, "rotation": 1}) == "bad_axle"
    player["gear_uses"][0] = 1
    assert refused(state, 0, {"type": "reposition_gear", "axle": 0, "rotation": 1}) == (
        "gear_used_this_round"
    )
    player["gear_uses"][0] = 0
    act(state, 0, {"type": "reposition_gear", "axle": 0, "rotation": 3})
    assert player["gears"][0]["rotation"] == 3


# -- patronage -------------------------------------------------------------------------------


def test_three_guilders_from_patronage_block_that_reward_for_the_round():
    state = at_row(in_round(), "patronage", [0, 1])
    act(state, 0, {"type": "patronage_reward", "reward": "guilders"})
    assert state["seats"][0]["guilders"] == 13
    assert refused(state, 1, {"type": "patronage_reward", "reward": "guilders"}) == "reward_taken"
    assert refused(state, 1, {"type": "patronage_reward", "reward": "wine"}) == "no_such_reward"
    rewards = {a.get("reward") for a in GUTENBERG.legal_actions(state, 1)}
    assert "guilders" not in rewards and {"order", "specialty", "inks"} <= rewards


def test_two_inks_of_choice_from_patronage():
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    assert GUTENBERG.status(state)["to_act"] == [0]
    act(state, 0, {"type": "take_ink", "ink": "red"})
    act(state, 0, {"type": "take_ink", "ink": "red"})
    assert state["seats"][0]["inks"] == {"red": 2} and not state["pending"]


def test_a_specialty_level_from_patronage():
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "specialty"})
    assert refused(state, 0, {"type": "advance_specialty", "specialty": "poetry"}) == (
        "no_such_specialty"
    )
    act(state, 0, {"type": "advance_specialty", "specialty": "binding"})
    assert state["seats"][0]["specialties"]["binding"] == 1


def test_an_order_from_patronage_draws_two_plus_two_and_keeps_one_of_each():
    # "they draw 2 printing and 2 refinement cards from their decks and chooses 1 of each
    # type to keep. The unchosen cards are discarded."
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "order"}, seed=3)
    pending = state["pending"][0]
    assert (
        pending["kind"] == "order" and len(pending["printing"]) == len(pending["refinement"]) == 2
    )
    assert (
        refused(
            state,
            0,
            {
                "type": "keep_order",
                "printing": "P99",
                "refinement": pending["refinement"][0],
                "discard_slot": None,
            },
        )
        == "card_not_drawn"
    )
    assert (
        refused(
            state,
            0,
            {
                "type": "keep_order",
                "printing": pending["printing"][0],
                "refinement": "R99",
                "discard_slot": None,
            },
        )
        == "card_not_drawn"
    )
    before = len(state["decks"]["printing"]["discard_pile"])
    act(
        state,
        0,
        {
            "type": "keep_order",
            "printing": pending["printing"][1],
            "refinement": pending["refinement"][0],
            "discard_slot": None,
        },
    )
    assert state["seats"][0]["orders"][-1] == {
        "printing": pending["printing"][1],
        "refinement": pending["refinement"][0],
    }
    assert pending["printing"][0] in state["decks"]["printing"]["discard_pile"]
    assert len(state["decks"]["printing"]["discard_pile"]) == before + 1


def test_paying_two_guilders_draws_two_more_cards_of_the_players_choice():
    # "they may pay 2 guilders to draw 2 additional cards of their choice (2 printing,
    # 2 refinement, 1 of each). This can be repeated as many times as the player can afford."
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "order"}, seed=3)
    act(state, 0, {"type": "redraw_order", "cards": "mixed"})
    act(state, 0, {"type": "redraw_order", "cards": "printing"})
    pending = state["pending"][0]
    assert (len(pending["printing"]), len(pending["refinement"])) == (5, 3)
    assert state["seats"][0]["guilders"] == 6
    assert refused(state, 0, {"type": "redraw_order", "cards": "all"}) == "bad_redraw"
    state["seats"][0]["guilders"] = 1
    assert refused(state, 0, {"type": "redraw_order", "cards": "mixed"}) == "not_enough_guilders"
    state["seats"][0]["guilders"] = 2
    deck = state["decks"]["refinement"]
    deck["discard_pile"].extend(deck["draw_pile"])
    pending["refinement"].extend(deck["discard_pile"][1:])
    deck["draw_pile"], deck["discard_pile"] = [], deck["discard_pile"][:1]
    assert refused(state, 0, {"type": "redraw_order", "cards": "refinement"}) == "deck_empty"


def test_a_choice_blocks_everyone_elses_turn_actions_until_it_is_made():
    # Free actions stay open to everyone (tests/unit/gutenberg/test_free_actions.py).
    state = at_row(in_round(), "patronage", [0, 1])
    act(state, 0, {"type": "patronage_reward", "reward": "specialty"})
    assert GUTENBERG.status(state)["to_act"] == [0]
    assert refused(state, 1, {"type": "patronage_reward", "reward": "guilders"}) == "choice_pending"
    assert (
        refused(state, 1, {"type": "advance_specialty", "specialty": "binding"}) == "no_such_choice"
    )
    assert refused(state, 0, {"type": "take_ink", "ink": "red"}) == "no_such_choice"
    assert {a["type"] for a in GUTENBERG.legal_actions(state, 1)} == {"buy_type"}


def test_taking_a_patronage_card_whose_conditions_are_not_met_is_refused():
    state = at_row(in_round(), "patronage")
    space = state["board"]["patronage"][0]
    state["round"] = space["unlock"]
    assert refused(state, 0, {"type": "take_patronage", "card": space["card"]}) == (
        "conditions_not_met"
    )
    assert refused(state, 0, {"type": "take_patronage", "card": "N99"}) == "card_not_on_board"


def test_an_ink_choice_names_an_ink_in_the_bag():
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    give_inks(state, 1, {"red": state["bag"]["contents"]["red"]})
    del state["bag"]["contents"]["red"]
    assert refused(state, 0, {"type": "take_ink", "ink": "red"}) == "ink_not_in_bag"


def test_an_empty_bag_ends_an_ink_choice():
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    state["bag"]["contents"] = {"gold": 1}
    act(state, 0, {"type": "take_ink", "ink": "gold"})
    assert not state["pending"]


# -- turns, phases and automatic steps --------------------------------------------------------


def test_only_the_seat_whose_turn_it_is_acts():
    state = at_row(in_round(), "inks", [1, 0])
    assert refused(state, 0, {"type": "take_inks", "set": 0, "count": 1}) == "not_your_turn"
    assert (
        refused(
            state,
            1,
            {"type": "take_order", "printing": "P01", "refinement": "R01", "discard_slot": None},
        )
        == "phase_mismatch"
    )


def test_a_seat_cannot_send_an_automatic_step_or_an_unknown_action():
    state = in_round()
    assert refused(state, 0, {"type": "end_of_round"}) == "system_step_only"
    assert refused(state, 0, {"type": "juggle"}) == "unknown_action"
    assert refused(state, 7, {"type": "pass"}) == "no_such_seat"


def test_automatic_steps_run_only_when_due_and_hold_the_seats_back():
    state = in_round(2)
    assert refused_system(state, {"type": "end_of_round"}) == "no_system_step"
    act(state, 0, {"type": "submit_plan", "rows": [1, 0, 0, 0, 0]})
    act(state, 1, {"type": "submit_plan", "rows": [1, 0, 0, 0, 0]})
    assert GUTENBERG.status(state)["to_act"] == []
    assert refused(state, 0, {"type": "buy_type", "letter": "A"}) == "awaiting_system"
    assert GUTENBERG.legal_actions(state, 0) == []


def refused_system(state, action):
    from projections.ruleset import IllegalAction

    with pytest.raises(IllegalAction) as caught:
        act(state, None, action)
    return caught.value.code


def test_a_finished_game_refuses_every_action():
    state = in_round(2)
    state["finished"] = True
    assert refused(state, 0, {"type": "buy_type", "letter": "A"}) == "game_finished"
    assert GUTENBERG.legal_actions(state, 0) == []
    assert GUTENBERG.status(state)["to_act"] == []


def test_buying_a_type_names_a_type_and_needs_the_guilders():
    state = in_round()
    assert refused(state, 0, {"type": "buy_type", "letter": "E"}) == "no_such_type"
    state["seats"][0]["guilders"] = 3
    assert refused(state, 0, {"type": "buy_type", "letter": "A"}) == "not_enough_guilders"
    assert not [a for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "buy_type"]


def test_specialty_cards_and_gears_left_after_their_actions_are_discarded():
    state = at_row(in_round(), "specialties", [])
    for player in state["seats"]:
        player["plan"] = [0, 0, 0, 0, 0]
    cards, gears_left = list(state["board"]["specialty"]), list(state["board"]["gears"])
    act(state, None, {"type": "finish_action", "action": "specialties"})
    assert state["phase"] == "gears" and state["board"]["specialty"] == [None] * 4
    act(state, None, {"type": "finish_action", "action": "gears"})
    assert state["phase"] == "patronage" and state["board"]["gears"] == [None] * 4
    assert set(cards) <= set(state["decks"]["specialty"]["discard_pile"])
    assert set(gears_left) <= set(state["decks"]["gears"]["discard_pile"])


def test_with_the_board_emptied_a_late_player_can_only_pass():
    state = at_row(in_round(), "orders", [0])
    state["decks"]["printing"]["discard_pile"].extend(state["board"]["printing"])
    state["board"]["printing"] = [None] * 4
    assert GUTENBERG.legal_actions(state, 0)[0] == {"type": "pass"}
    assert not [a for a in GUTENBERG.legal_actions(state, 0) if a["type"] == "take_order"]
