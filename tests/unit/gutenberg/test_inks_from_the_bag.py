"""Inks from the bag: a reward's inks are drawn, Patronage's and the gears' are chosen
(docs/rules/gutenberg.md, "Inks from the bag").

The English rulebook's reward table says "Take the number of ink shown from the bag", with
no "any"; where a choice is meant it says so: Patronage "Take any 2 inks from the bag"
(German "2 beliebige Tintentropfen aus dem Beutel nehmen"), the gear "Exchange 1 ink for
any 2 inks from the bag". The German review draws "zufällig aus dem Beutel" where it means
a draw (setup) and takes "beliebige" inks where it means a choice.
"""

import random

from projections import components
from projections.games.gutenberg import data, effects
from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    give_inks,
    give_order,
    in_round,
    new_game,
    put_gear,
)

SEEDS = range(16)
BOTH_PARTS_OF_R01 = {
    "type": "fulfill_orders",
    "orders": [{"slot": 0, "colours": True, "decorations": True}],
    "ignore": None,
}
S01_SYMBOLS = {"type": "develop_specialty", "card": "S01", "mode": "symbols", "specialty": None}


def _fulfilling_r01() -> dict:
    """Ann fulfils P02 + R01 (1 black ink; typesetting II; bonus: 1 ink) with both parts met."""
    state = at_row(in_round(4), "fulfill", [0, 1])
    player = state["seats"][0]
    for order in player["orders"]:
        state["decks"]["printing"]["discard_pile"].append(order["printing"])
        state["decks"]["refinement"]["discard_pile"].append(order["refinement"])
    player["orders"] = []
    give_order(state, 0, "P02", "R01")
    player["types"] = {"A": 3, "I": 3, "O": 3, "U": 3}
    player["specialties"].update(data.REFINEMENT["R01"]["decorations"])
    give_inks(state, 0, {"black": 1})
    assert data.REFINEMENT["R01"]["bonus"] == {"kind": "inks", "amount": 1}
    return state


def _developing_s01() -> dict:
    """Ann uses S01 (two typesetting symbols) from level 0: she reaches reward level II."""
    state = at_row(in_round(), "specialties")
    state["board"]["specialty"][0] = "S01"
    state["decks"]["specialty"]["draw_pile"].remove("S01")
    assert data.REWARD_TRACK[2] == {"kind": "inks", "amount": 1}
    return state


def _expected_draw(bag: dict[str, int], count: int, seed: int) -> list[str]:
    """What the game's seeded randomness draws from ``bag`` (the setup's and refills' way)."""
    return components.bag_draw({"contents": dict(bag)}, count, random.Random(seed))


def test_a_refinement_bonus_of_inks_is_drawn_from_the_bag_not_chosen():
    """Reward table: "Take the number of ink shown from the bag"; "Fulfilling both of the
    requirements gives an additional bonus." No "any": the ink comes out of the bag unseen,
    drawn by the game's seeded randomness, and no choice is left open."""
    colours = set()
    for seed in SEEDS:
        state = _fulfilling_r01()
        player = state["seats"][0]
        bag_after_paying = dict(state["bag"]["contents"])
        bag_after_paying["black"] += 1  # "Colors require discarding (to the bag)" first
        act(state, 0, BOTH_PARTS_OF_R01, seed=seed)
        assert state["pending"] == [], "a drawn ink leaves nothing to choose"
        (drawn,) = _expected_draw(bag_after_paying, 1, seed)
        assert player["inks"] == {drawn: 1}
        expected_bag = dict(bag_after_paying)
        effects.add(expected_bag, drawn, -1)
        assert state["bag"]["contents"] == expected_bag
        colours.add(drawn)
    assert len(colours) > 1, "the draw depends on the luck, not on a fixed colour"


def test_the_reward_track_ink_is_drawn_from_the_bag_not_chosen():
    """ "The 1st time a player reaches a level marked with '>' ... the player advances their
    disc on the reward track to the next space and takes the reward" - level II's reward
    is the table's "Take the number of ink shown from the bag": drawn, not chosen."""
    colours = set()
    for seed in SEEDS:
        state = _developing_s01()
        bag = dict(state["bag"]["contents"])
        act(state, 0, S01_SYMBOLS, seed=seed)
        player = state["seats"][0]
        assert player["reward_level"] == 2 and state["pending"] == []
        (drawn,) = _expected_draw(bag, 1, seed)
        assert player["inks"] == {drawn: 1}
        assert components.bag_count(state["bag"]) == sum(bag.values()) - 1
        colours.add(drawn)
    assert len(colours) > 1


def test_helena_unglers_level_two_reward_ink_is_drawn_from_the_bag():
    """Helena Ungler: "they advance their reward marker on the reward track to level II and
    gets the reward" - level II's reward, an ink "from the bag", is drawn, not chosen."""
    state = new_game(2, characters=True)
    state["seats"][0]["character"] = "ungler"
    state["pending"] = [{"seat": 0, "kind": "ungler"}]
    bag = dict(state["bag"]["contents"])
    action = {
        "type": "choose_ungler_specialties",
        "level_one": "binding",
        "level_two": "woodcutting",
    }
    act(state, 0, action, seed=7)
    (drawn,) = _expected_draw(bag, 1, 7)
    assert state["seats"][0]["inks"] == {drawn: 1} and state["pending"] == []


def test_a_reward_drawing_from_the_bag_reveals_hidden_information():
    """A draw from the bag brings to light what nobody could see (DESIGN.md, "reveals_hidden":
    "a card drawn, a plan revealed, a die rolled"), so undo may not cross it; Patronage's
    "any 2 inks" are chosen in the open and reveal nothing."""
    fulfil = _fulfilling_r01()
    assert GUTENBERG.reveals_hidden(fulfil, {**BOTH_PARTS_OF_R01, "seat": 0})
    colours_only = {"slot": 0, "colours": True, "decorations": False}
    assert not GUTENBERG.reveals_hidden(
        fulfil, {**BOTH_PARTS_OF_R01, "orders": [colours_only], "seat": 0}
    ), "without the bonus nothing is drawn"
    assert GUTENBERG.reveals_hidden(_developing_s01(), {**S01_SYMBOLS, "seat": 0})
    patronage = at_row(in_round(), "patronage")
    assert not GUTENBERG.reveals_hidden(
        patronage, {"type": "patronage_reward", "reward": "inks", "seat": 0}
    )
    act(patronage, 0, {"type": "patronage_reward", "reward": "inks"})
    assert not GUTENBERG.reveals_hidden(patronage, {"type": "take_ink", "ink": "red", "seat": 0})


def test_patronage_inks_stay_a_choice_of_any_two():
    """Patronage: "Take any 2 inks from the bag"; German: "2 beliebige Tintentropfen aus dem
    Beutel nehmen" - both say the player picks them."""
    state = at_row(in_round(), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    assert state["pending"] == [{"seat": 0, "kind": "inks", "count": 2}]
    options = GUTENBERG.legal_actions(state, 0)
    assert [a for a in options if a["type"] == "take_ink"] == [
        {"type": "take_ink", "ink": ink} for ink in sorted(state["bag"]["contents"])
    ]


def test_a_draw_that_empties_the_bag_ends_an_open_choice_of_inks():
    """ "Inks are limited by the bag's contents": while Ann chooses her Patronage inks, Ben's
    gear lifts his typesetting to the level II reward, whose ink is drawn - the bag's last.
    Nothing is left for Ann to choose, so her choice ends and the game goes on."""
    state = at_row(in_round(), "patronage", [0, 1])
    put_gear(state, 1, 0, "G03", 3)  # active sector: typesetting +1
    ben = state["seats"][1]
    ben["specialties"]["typesetting"], ben["reward_level"] = 1, 1
    act(state, 0, {"type": "patronage_reward", "reward": "inks"})
    bag = state["bag"]["contents"]
    last = sorted(bag)[0]
    give_inks(state, 2, {colour: bag[colour] - (colour == last) for colour in list(bag)})
    assert components.bag_count(state["bag"]) == 1
    act(state, 1, {"type": "activate_gear", "axle": 0})
    assert ben["inks"] == {last: 1} and components.bag_count(state["bag"]) == 0
    assert state["pending"] == [] and GUTENBERG.status(state)["to_act"] == [1]
