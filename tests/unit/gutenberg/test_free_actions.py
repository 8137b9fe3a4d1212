"""Free actions at any time of a round (docs/rules/gutenberg.md): buying types, gear rewards and
Plantinus's swap are open after the last fulfilment, before the round ends, and while a
reward's choice is open (docs/rules/gutenberg.md, "Free actions")."""

from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import act, at_row, in_round, put_gear, refused, run_system


def _after_the_last_fulfilment(players: int = 2):
    """Round 1 of a game whose seats have all passed their fulfilment; seat 1 holds an
    unused fame-for-the-round gear (G01 turned to sector 2)."""
    state = at_row(in_round(players), "fulfill", list(range(players)))
    put_gear(state, 1, 0, "G01", 2)  # fame_round
    for seat in range(players):
        act(state, seat, {"type": "pass"})
    return state


def test_the_last_seat_to_fulfil_may_still_use_an_unused_gear_before_the_round_ends():
    """Rulebook, "Improve Printing Houses": "Players can gain the bonus from these sectors
    at any time." The last seat to fulfil still may, after fulfilling."""
    state = _after_the_last_fulfilment()
    assert GUTENBERG.system_action(state) is None, "the round does not end under the players"
    assert GUTENBERG.status(state)["phase"] == "round_end"
    assert {"type": "activate_gear", "axle": 0} in GUTENBERG.legal_actions(state, 1)
    act(state, 1, {"type": "activate_gear", "axle": 0})
    assert state["seats"][1]["fame"] == 1


def test_types_may_be_bought_after_the_last_fulfilment():
    """Rulebook, "Printing": "Players can buy types at any time during a round. It is not an
    action." """
    state = _after_the_last_fulfilment()
    assert {"type": "buy_type", "letter": "U"} in GUTENBERG.legal_actions(state, 0)
    act(state, 0, {"type": "buy_type", "letter": "U"})
    assert state["seats"][0]["types"]["U"] == 1 and state["seats"][0]["guilders"] == 6


def test_the_round_ends_once_every_seat_with_a_free_action_left_is_done():
    """Each seat closes its round with ``pass``; a seat with nothing left to do is not
    waited for, and then "End of Round" runs as before."""
    state = _after_the_last_fulfilment(3)
    state["seats"][2]["guilders"] = 0  # cannot buy a type, holds no gear: nothing to do
    assert GUTENBERG.status(state)["to_act"] == [0, 1]
    assert GUTENBERG.summarize(state, {"type": "pass", "seat": 1}) == "Ben is done with the round"
    act(state, 1, {"type": "pass"})
    assert GUTENBERG.status(state)["to_act"] == [0]
    assert refused(state, 1, {"type": "pass"}) == "not_your_turn"
    act(state, 1, {"type": "activate_gear", "axle": 0})  # free actions stay open till the end
    act(state, 0, {"type": "pass"})
    assert run_system(state) == ["end_of_round", "turn_gears"]
    assert (state["round"], state["phase"]) == (2, "plan")


def test_the_round_ends_at_once_when_nobody_has_a_free_action_left():
    state = at_row(in_round(2), "fulfill", [0, 1])
    for player in state["seats"]:
        player["guilders"] = 0
    act(state, 0, {"type": "pass"})
    act(state, 1, {"type": "pass"})
    assert GUTENBERG.system_action(state) == {"type": "end_of_round"}


def test_a_gear_reward_pays_for_a_redraw_while_the_order_choice_is_open():
    """Rulebook, "Improve Printing Houses": "Players can gain the bonus from these sectors at
    any time", and "Take Orders": "they may pay 2 guilders to draw 2 additional cards" - a
    player with 1 guilder discards a type for 5 guilders in the middle of the choice."""
    state = at_row(in_round(), "patronage", [0, 1])
    put_gear(state, 0, 0, "G03", 2)  # discard_type
    act(state, 0, {"type": "patronage_reward", "reward": "order"}, seed=3)
    state["seats"][0]["guilders"] = 1
    assert state["pending"][0]["kind"] == "order"
    assert not any(a["type"] == "redraw_order" for a in GUTENBERG.legal_actions(state, 0))
    discard = {"type": "activate_gear", "axle": 0, "give": "O", "choice": "guilders"}
    assert discard in GUTENBERG.legal_actions(state, 0)
    act(state, 0, discard)
    assert state["seats"][0]["guilders"] == 6 and state["pending"][0]["kind"] == "order"
    act(state, 0, {"type": "redraw_order", "cards": "mixed"})
    assert state["seats"][0]["guilders"] == 4


def test_other_seats_may_take_free_actions_while_a_choice_is_open():
    """Free actions are open to every player at any time of the round; only turn actions
    wait for the open choice (docs/rules/gutenberg.md, "Chained choices")."""
    state = at_row(in_round(), "patronage", [0, 1])
    act(state, 0, {"type": "patronage_reward", "reward": "specialty"})
    assert {"type": "buy_type", "letter": "U"} in GUTENBERG.legal_actions(state, 1)
    act(state, 1, {"type": "buy_type", "letter": "U"})
    assert state["seats"][1]["types"]["U"] == 1
    assert refused(state, 1, {"type": "patronage_reward", "reward": "guilders"}) == (
        "choice_pending"
    )
    assert GUTENBERG.status(state)["to_act"] == [0]


def test_an_ink_choice_ends_when_a_gear_empties_the_bag_during_it():
    """docs/rules/gutenberg.md, "Empty bag": an empty bag ends every open ink choice, however
    it was emptied."""
    state = at_row(in_round(), "patronage", [0, 1])
    put_gear(state, 1, 0, "G01", 1)  # gain_ink black
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    contents = state["bag"]["contents"]
    for colour in [c for c in contents if c != "black"]:
        state["seats"][0]["inks"][colour] = contents.pop(colour)
    state["seats"][0]["inks"]["black"] = contents["black"] - 1
    contents["black"] = 1
    act(state, 1, {"type": "activate_gear", "axle": 0})
    assert not state["bag"]["contents"] and state["pending"] == []
    assert GUTENBERG.status(state)["to_act"] == [1]
