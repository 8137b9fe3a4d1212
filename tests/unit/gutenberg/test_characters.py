"""The ten characters ("Characters"), each power tested."""

from projections.games.gutenberg import data, effects
from projections.games.gutenberg.rules import GUTENBERG
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    give_inks,
    give_order,
    in_round,
    new_game,
    refused,
    run_system,
)


def _drawn(character, players=2):
    """A game in the character draw where seat 0 was offered ``character``."""
    state = new_game(players, characters=True)
    for holder in [state["character_box"], *(p["character_offer"] for p in state["seats"])]:
        if character in holder:
            holder[holder.index(character)] = state["seats"][0]["character_offer"][0]
            state["character_box"].sort()
            break
    state["seats"][0]["character_offer"][0] = character
    return state


def _revealed(character, players=2):
    state = _drawn(character, players)
    for seat, player in enumerate(state["seats"]):
        offer = [c for c in player["character_offer"] if c not in ("guillard", "ungler")]
        pick = character if seat == 0 else (offer or player["character_offer"])[0]
        act(state, seat, {"type": "choose_character", "character": pick})
    run_system(state)
    return state


def _holding(character, players=2):
    state = in_round(players)
    state["seats"][0]["character"] = character
    return state


def test_johannes_gutenberg_moves_one_marker_after_the_reveal():
    # "After all players have revealed initiative boards, but before actions are taken,
    # this player can move 1 initiative marker to a different action."
    state = _holding("gutenberg")
    act(state, 0, {"type": "submit_plan", "rows": [1, 0, 0, 0, 6]})
    act(state, 1, {"type": "submit_plan", "rows": [1, 0, 0, 0, 0]})
    run_system(state)
    assert state["phase"] == "gutenberg" and GUTENBERG.status(state)["to_act"] == [0]
    assert (
        refused(state, 0, {"type": "move_marker", "from_row": "inks", "to_row": "orders"})
        == "row_empty"
    )
    assert (
        refused(state, 0, {"type": "move_marker", "from_row": "orders", "to_row": "patronage"})
        == "row_full"
    )
    assert (
        refused(state, 0, {"type": "move_marker", "from_row": "orders", "to_row": "orders"})
        == "bad_rows"
    )
    act(state, 0, {"type": "move_marker", "from_row": "orders", "to_row": "inks"})
    assert state["seats"][0]["plan"] == [0, 1, 0, 0, 6]
    assert state["phase"] == "orders" and state["queue"] == [1]


def test_johannes_gutenberg_may_leave_the_plan_as_it_is():
    state = _holding("gutenberg")
    act(state, 0, {"type": "submit_plan", "rows": [1, 0, 0, 0, 0]})
    act(state, 1, {"type": "submit_plan", "rows": [2, 0, 0, 0, 0]})
    run_system(state)
    act(state, 0, {"type": "pass"})
    assert state["phase"] == "orders" and state["queue"] == [1, 0]


def _fulfil(character, orders, types, inks=None):
    state = at_row(_holding(character, 4), "fulfill", [0])
    player = state["seats"][0]
    for order in player["orders"]:
        state["decks"]["printing"]["discard_pile"].append(order["printing"])
        state["decks"]["refinement"]["discard_pile"].append(order["refinement"])
    player["orders"] = []
    for printing, refinement in orders:
        give_order(state, 0, printing, refinement)
    player["types"] = types
    give_inks(state, 0, inks or {})
    return state, player


def test_aldus_manutius_ignores_one_required_type_when_fulfilling_two_orders():
    # "If the player fulfills 2 or more orders at the same time, they can ignore 1 of the
    # required types on 1 order."
    state, player = _fulfil("manutius", [("P01", "R01"), ("P02", "R02")], {"A": 2, "I": 1})
    batch = [
        {"slot": 0, "colours": False, "decorations": False},
        {"slot": 1, "colours": False, "decorations": False},
    ]
    legal = [
        a
        for a in GUTENBERG.legal_actions(state, 0)
        if a["type"] == "fulfill_orders" and len(a["orders"]) == 2
    ]
    assert {a["ignore"]["letter"] for a in legal} == {"A"}
    assert refused(
        state, 0, {"type": "fulfill_orders", "orders": batch, "ignore": {"slot": 1, "letter": "U"}}
    ) == ("cannot_ignore_type")
    act(state, 0, {"type": "fulfill_orders", "orders": batch, "ignore": {"slot": 1, "letter": "A"}})
    assert player["orders"] == [] and player["types"] == {"A": 2, "I": 1}


def test_aldus_manutius_ignores_nothing_for_a_single_order():
    state, _ = _fulfil("manutius", [("P09", "R01")], {"A": 2})
    action = {
        "type": "fulfill_orders",
        "orders": [{"slot": 0, "colours": False, "decorations": False}],
        "ignore": {"slot": 0, "letter": "A"},
    }
    assert refused(state, 0, action) == "cannot_ignore_type"


def test_christophorus_plantinus_swaps_two_specialty_levels_once_per_round():
    state = _holding("plantinus")
    player = state["seats"][0]
    player["specialties"].update(binding=4, typesetting=1)
    assert refused(
        state, 1, {"type": "swap_specialties", "first": "binding", "second": "typesetting"}
    ) == ("not_your_power")
    assert refused(
        state, 0, {"type": "swap_specialties", "first": "binding", "second": "binding"}
    ) == ("bad_specialties")
    assert refused(
        state, 0, {"type": "swap_specialties", "first": "illuminating", "second": "woodcutting"}
    ) == ("same_levels")
    act(state, 0, {"type": "swap_specialties", "first": "binding", "second": "typesetting"})
    assert (player["specialties"]["binding"], player["specialties"]["typesetting"]) == (1, 4)
    assert refused(
        state, 0, {"type": "swap_specialties", "first": "binding", "second": "typesetting"}
    ) == ("power_used")
    state["phase"], state["queue"] = "round_end", []
    run_system(state)
    assert player["power_used"] is False


def test_sveboldus_fiol_gets_the_bonus_for_one_refinement_part():
    # "If this player fulfills only 1 of the 2 refinement requirements on an order, they
    # still gain the reward for completely fulfilling the order."
    state, player = _fulfil("fiol", [("P02", "R06")], {"A": 1, "I": 1}, {"black": 1, "blue": 1})
    assert data.REFINEMENT["R06"]["bonus"] == {"kind": "guilders", "amount": 2}
    act(
        state,
        0,
        {
            "type": "fulfill_orders",
            "orders": [{"slot": 0, "colours": True, "decorations": False}],
            "ignore": None,
        },
    )
    assert player["guilders"] == 10 + data.PRINTING["P02"]["guilders"] + 2


def test_carola_guillard_draws_four_gears_keeps_two_and_installs_them():
    state = _revealed("guillard")
    pending = state["pending"][0]
    assert pending["kind"] == "guillard" and len(pending["gears"]) == 4
    drawn = pending["gears"]
    assert GUTENBERG.view(state, 1)["pending"][0]["gears"] == 4, "others see only how many"
    assert refused(
        state, 0, {"type": "keep_gears", "gears": [drawn[0], "G99"], "rotations": [0, 0]}
    ) == ("gear_not_drawn")
    assert (
        refused(state, 0, {"type": "keep_gears", "gears": drawn[:2], "rotations": [0, 4]})
        == "bad_rotation"
    )
    act(state, 0, {"type": "keep_gears", "gears": [drawn[2], drawn[0]], "rotations": [1, 3]})
    player = state["seats"][0]
    assert player["gears"] == [
        {"gear": drawn[2], "rotation": 1},
        {"gear": drawn[0], "rotation": 3},
        None,
    ]
    assert {drawn[1], drawn[3]} <= set(state["decks"]["gears"]["discard_pile"])


def test_carola_guillard_installs_on_free_axles_only():
    state = _revealed("guillard")
    drawn = state["pending"][0]["gears"]
    state["seats"][0]["gears"][0] = {"gear": drawn[3], "rotation": 0}
    assert (
        refused(state, 0, {"type": "keep_gears", "gears": drawn[:2], "rotations": [0, 0]})
        == "axle_taken"
    )


def test_helena_ungler_starts_with_levels_one_and_two_and_the_level_two_reward():
    # "advances 1 specialty to level I and another to level II. Then they advance their
    # reward marker on the reward track to level II and gets the reward."
    state = _revealed("ungler")
    assert state["pending"][0] == {"seat": 0, "kind": "ungler"}
    action = {"type": "choose_ungler_specialties", "level_one": "binding", "level_two": "binding"}
    assert refused(state, 0, action) == "bad_specialties"
    act(state, 0, {**action, "level_two": "woodcutting"})
    player = state["seats"][0]
    assert player["specialties"]["binding"] == 1 and player["specialties"]["woodcutting"] == 2
    assert player["reward_level"] == 2
    assert data.REWARD_TRACK[2] == {"kind": "inks", "amount": 1}
    assert effects.total(player["inks"]) == 1 and state["pending"] == [], "1 ink drawn"
    assert player["guilders"] == 10, "only the level II reward, not level I's"


def test_godofredus_torinus_scores_three_when_every_ink_fits_his_orders():
    state = at_row(_holding("torinus"), "round_end", [])
    player = state["seats"][0]
    colours = {}
    for order in player["orders"]:
        for colour, amount in data.REFINEMENT[order["refinement"]]["colours"].items():
            colours[colour] = colours.get(colour, 0) + amount
    give_inks(state, 0, colours)
    run_system(state)
    assert player["fame"] == 3


def test_godofredus_torinus_scores_nothing_with_an_ink_that_fits_no_order():
    state = at_row(_holding("torinus"), "round_end", [])
    player = state["seats"][0]
    needed = set()
    for order in player["orders"]:
        needed |= set(data.REFINEMENT[order["refinement"]]["colours"])
    spare = next(c for c in data.INKS if c not in needed)
    give_inks(state, 0, {spare: 1})
    run_system(state)
    assert player["fame"] == 0


def test_godofredus_torinus_scores_nothing_without_inks():
    state = at_row(_holding("torinus"), "round_end", [])
    run_system(state)
    assert state["seats"][0]["fame"] == 0


def test_gulielmus_caxton_names_a_wild_ink_at_the_start_of_each_round():
    state = _revealed("caxton")
    while state["phase"] == "draft":
        seat = GUTENBERG.status(state)["to_act"][0]
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    for seat in (0, 1):
        act(state, seat, {"type": "choose_types", "letters": ["A", "I", "O"]})
    assert state["phase"] == "choose_wild_ink" and GUTENBERG.status(state)["to_act"] == [0]
    assert refused(state, 0, {"type": "choose_wild_ink", "ink": "green"}) == "no_such_ink"
    act(state, 0, {"type": "choose_wild_ink", "ink": "gold"})
    assert state["seats"][0]["wild_ink"] == "gold" and state["phase"] == "plan"


def test_gulielmus_caxtons_wild_ink_pays_for_any_colour():
    state, player = _fulfil("caxton", [("P02", "R11")], {"A": 1, "I": 1}, {"gold": 1, "black": 1})
    player["wild_ink"] = "gold"
    act(
        state,
        0,
        {
            "type": "fulfill_orders",
            "orders": [{"slot": 0, "colours": True, "decorations": False}],
            "ignore": None,
        },
    )
    assert player["inks"] == {} and player["fame"] == data.REFINEMENT["R11"]["colour_fame"]


def test_hieronymus_vietor_doubles_the_fame_from_guilders():
    from projections.games.gutenberg.scoring import breakdown

    state = _holding("vietor")
    state["seats"][0]["guilders"] = 10
    assert breakdown(state["seats"][0])["guilders"] == 3
    assert breakdown(state["seats"][0])["vietor"] == 3


def test_aldus_manutius_ignores_a_type_only_when_one_is_missing():
    state, _ = _fulfil("manutius", [("P01", "R01"), ("P02", "R02")], {"A": 3, "I": 1})
    batch = [
        {"slot": 0, "colours": False, "decorations": False},
        {"slot": 1, "colours": False, "decorations": False},
    ]
    action = {"type": "fulfill_orders", "orders": batch, "ignore": {"slot": 0, "letter": "A"}}
    assert refused(state, 0, action) == "ignore_not_needed"


def test_keeping_gears_shows_the_others_what_was_drawn_so_it_cannot_be_undone():
    # The kept gears are installed in front of the player and the rest go on the discard
    # pile face up: the other seats see the four drawn gears, which only Guillard had seen.
    state = _revealed("guillard")
    drawn = state["pending"][0]["gears"]
    keep = {"type": "keep_gears", "gears": drawn[:2], "rotations": [0, 0], "seat": 0}
    assert GUTENBERG.reveals_hidden(state, keep)
