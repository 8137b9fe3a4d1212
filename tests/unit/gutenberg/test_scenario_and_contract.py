"""Whole rounds from a fixed seed with chosen actions, the end of round, and the ruleset
contract members (view, resample_hidden, summarize, schemas, result)."""

import json
import random

from projections.games.gutenberg import data
from projections.games.gutenberg.rules import GUTENBERG
from projections.simulate import play_random
from tests.unit.gutenberg.helpers import (
    act,
    at_row,
    close_round,
    finish_setup,
    in_round,
    new_game,
    run_system,
)


def _plan(state, plans):
    for seat, rows in enumerate(plans):
        act(state, seat, {"type": "submit_plan", "rows": rows})
    return run_system(state)


def test_two_rounds_of_a_two_player_game_from_a_fixed_seed():
    state = new_game(2, seed="scenario")
    while state["phase"] == "draft":
        seat = GUTENBERG.status(state)["to_act"][0]
        act(state, seat, GUTENBERG.legal_actions(state, seat)[0])
    act(state, 0, {"type": "choose_types", "letters": ["A", "A", "I"]})
    act(state, 1, {"type": "choose_types", "letters": ["O", "U", "I"]})
    ann, ben = state["seats"]
    # Round 1.
    _plan(state, [[1, 2, 0, 1, 1], [0, 1, 2, 1, 3]])
    assert state["phase"] == "orders" and state["queue"] == [0]
    board = state["board"]
    taken = {"printing": board["printing"][0], "refinement": board["refinement"][0]}
    act(state, 0, {"type": "take_order", **taken, "discard_slot": None})
    run_system(state)
    assert state["queue"] == [0, 1]
    act(state, 0, {"type": "take_inks", "set": 0, "count": 3})
    act(state, 1, {"type": "take_inks", "set": 1, "count": 1})
    run_system(state)
    assert state["queue"] == [1]
    card = board["specialty"][0]
    act(
        state,
        1,
        {"type": "develop_specialty", "card": card, "mode": "single", "specialty": "binding"},
    )
    run_system(state)
    assert state["queue"] == [0, 1], "a tie goes by player order"
    gear_a, gear_b = board["gears"]
    act(state, 0, {"type": "install_gear", "gear": gear_a, "rotation": 0, "replace_axle": None})
    act(state, 1, {"type": "install_gear", "gear": gear_b, "rotation": 1, "replace_axle": None})
    run_system(state)
    assert state["queue"] == [1, 0]
    act(state, 1, {"type": "patronage_reward", "reward": "guilders"})
    act(state, 0, {"type": "patronage_reward", "reward": "specialty"})
    act(state, 0, {"type": "advance_specialty", "specialty": "binding"})
    run_system(state)
    assert state["phase"] == "fulfill" and state["queue"] == [0, 1]
    act(state, 0, {"type": "pass"})
    act(state, 1, {"type": "pass"})
    assert close_round(state) == [0, 1], "both could still buy a type before the round ends"
    assert run_system(state) == ["end_of_round", "turn_gears"]
    assert (state["round"], state["phase"], state["first_player"]) == (2, "plan", 1)
    assert [p["markers"] for p in state["seats"]] == [8, 7]
    assert ann["guilders"] == 10 - 3 + 2 and ben["guilders"] == 10 + 2 + 3
    assert sum(ann["inks"].values()) == 3 and sum(ben["inks"].values()) == 1
    assert taken in ann["orders"] and len(ann["orders"]) == 3
    assert ann["gears"][0] == {"gear": gear_a, "rotation": 1}
    assert ben["gears"][0] == {"gear": gear_b, "rotation": 2}
    assert all(board["printing"]) and all(board["gears"]) and all(all(s) for s in board["inks"])
    assert board["patronage_rewards"] == {
        "order": None,
        "specialty": None,
        "guilders": None,
        "inks": None,
    }
    # Round 2: both go for patronage only; the first player (Ben) now wins the tie.
    _plan(state, [[0, 0, 0, 0, 1], [0, 0, 0, 0, 1]])
    assert state["phase"] == "patronage" and state["queue"] == [1, 0]
    act(state, 1, {"type": "patronage_reward", "reward": "inks"})
    act(state, 1, {"type": "take_ink", "ink": "red"})
    act(state, 1, {"type": "take_ink", "ink": "blue"})
    act(state, 0, {"type": "patronage_reward", "reward": "order"})
    act(state, 0, GUTENBERG.legal_actions(state, 0)[0])
    assert len(ann["orders"]) == 4
    run_system(state)
    assert state["queue"] == [1, 0]
    for seat in (1, 0):
        act(state, seat, {"type": "pass"})
    close_round(state)
    run_system(state)
    assert (state["round"], state["first_player"]) == (3, 0)
    assert [p["markers"] for p in state["seats"]] == [7, 8]
    assert ben["inks"].get("red", 0) >= 1 and ben["inks"].get("blue", 0) >= 1


def test_the_sixth_round_ends_in_final_scoring_with_a_ranking():
    state = at_row(in_round(3), "round_end", [])
    state["round"] = 6
    assert run_system(state) == ["end_of_round", "final_scoring"]
    result = GUTENBERG.result(state)
    assert state["finished"] and GUTENBERG.status(state)["finished"]
    assert sorted(s for place in result["ranking"] for s in place) == [0, 1, 2]
    for line in result["scores"]:
        assert line["total"] == sum(line["breakdown"].values())


def test_a_whole_random_game_ends_after_six_rounds():
    game, log = play_random(GUTENBERG, ["Ann", "Ben", "Cat", "Dan"], "whole-game")
    assert game.state["round"] == 6 and game.state["finished"]
    assert GUTENBERG.result(game.state)["ranking"]
    rounds = [e for e in log.envelopes if e["data"].get("action", {}).get("type") == "end_of_round"]
    assert len(rounds) == 6


def test_the_result_is_none_until_the_game_ends():
    assert GUTENBERG.result(in_round(2)) is None


def test_views_hide_deck_order_the_seed_and_other_seats_secrets():
    state = new_game(3, characters=True)
    act(
        state, 1, {"type": "choose_character", "character": state["seats"][1]["character_offer"][0]}
    )
    spectator = GUTENBERG.view(state, None)
    assert spectator["decks"]["printing"]["draw_pile"] == len(
        state["decks"]["printing"]["draw_pile"]
    )
    assert spectator["seats"][1]["character_offer"] == 2
    assert spectator["seats"][1]["character_choice"] is None
    assert spectator["seats"][1]["character_chosen"] is True
    assert (
        GUTENBERG.view(state, 1)["seats"][1]["character_offer"]
        == state["seats"][1]["character_offer"]
    )
    text = json.dumps(spectator)
    assert all(card not in text for card in state["decks"]["printing"]["draw_pile"])


def test_resampling_redraws_only_what_the_seat_cannot_see():
    state = new_game(4, characters=True)
    for seat in range(4):
        act(
            state,
            seat,
            {"type": "choose_character", "character": state["seats"][seat]["character_offer"][0]},
        )
    for seat in range(4):
        resampled = GUTENBERG.resample_hidden(state, seat, random.Random(seat))
        assert GUTENBERG.view(resampled, seat) == GUTENBERG.view(state, seat)
        assert (
            resampled["seats"][seat]["character_offer"] == state["seats"][seat]["character_offer"]
        )
    state = in_round(3)
    act(state, 0, {"type": "submit_plan", "rows": [1, 1, 1, 1, 1]})
    resampled = GUTENBERG.resample_hidden(state, 2, random.Random(9))
    assert sum(resampled["seats"][0]["plan"]) <= 7
    assert GUTENBERG.view(resampled, 2) == GUTENBERG.view(state, 2)


def test_every_legal_action_loads_unchanged_through_its_schema():
    schemas = GUTENBERG.action_schemas()
    state = at_row(in_round(4), "gears")
    seen = set()
    for row in ("orders", "inks", "specialties", "gears", "patronage", "fulfill"):
        at_row(state, row)
        for action in GUTENBERG.legal_actions(state, 0):
            seen.add(action["type"])
            assert schemas[action["type"]]().load(action) == action
    assert {"take_order", "take_inks", "develop_specialty", "install_gear", "pass"} <= seen


def test_summaries_name_the_player_and_what_happened():
    state = at_row(in_round(2), "inks")
    state["board"]["inks"][2 - 1] = [None, "red", "gold"]
    line = GUTENBERG.summarize(state, {"type": "take_inks", "set": 1, "count": 2, "seat": 0})
    assert line == "Ann took 2 inks from set 2 for 3 guilders"
    assert GUTENBERG.summarize(state, {"type": "end_of_round", "seat": None}).startswith(
        "Round 1 ends"
    )


def test_a_draw_or_a_reveal_marks_the_step_as_revealing():
    state = at_row(in_round(2), "patronage")
    assert GUTENBERG.reveals_hidden(
        state, {"type": "finish_action", "action": "patronage", "seat": None}
    )
    assert GUTENBERG.reveals_hidden(
        state, {"type": "patronage_reward", "reward": "order", "seat": 0}
    )
    assert not GUTENBERG.reveals_hidden(
        state, {"type": "patronage_reward", "reward": "guilders", "seat": 0}
    )
    assert not GUTENBERG.reveals_hidden(state, {"type": "buy_type", "letter": "A", "seat": 0})
    assert not GUTENBERG.reveals_hidden(state, {"type": "buy_type", "letter": "E", "seat": 0})


def test_keeping_a_drawn_order_shows_it_to_the_others_so_it_cannot_be_undone():
    # "they draw 2 printing and 2 refinement cards from their decks and chooses 1 of each type
    # to keep. The unchosen cards are discarded": the kept order lies in front of the player
    # and the others on the discard pile, face up.
    state = at_row(in_round(2), "patronage")
    act(state, 0, {"type": "patronage_reward", "reward": "order"})
    head = state["pending"][0]
    assert head["kind"] == "order" and GUTENBERG.view(state, 1)["pending"][0]["printing"] == 2
    keep = {
        "type": "keep_order",
        "printing": head["printing"][0],
        "refinement": head["refinement"][0],
        "discard_slot": None,
        "seat": 0,
    }
    assert GUTENBERG.reveals_hidden(state, keep)
    act(state, 0, keep)
    shown = GUTENBERG.view(state, 1)
    assert head["printing"][1] in shown["decks"]["printing"]["discards"]


def test_the_game_plays_without_characters_as_an_option():
    state = finish_setup(new_game(4, characters=False))
    assert all(p["character"] is None for p in state["seats"]) and state["phase"] == "plan"
    assert state["character_box"] == [] and GUTENBERG.options == {"characters": True}
    assert set(data.CHARACTERS) == data.KNOWN_CHARACTERS


def _offer(state, seat, character):
    """Arrange the character draw so ``seat`` is offered ``character`` (every tile kept once)."""
    mine = state["seats"][seat]["character_offer"]
    if character in mine:
        return
    for holder in [state["character_box"], *(p["character_offer"] for p in state["seats"])]:
        if character in holder:
            holder[holder.index(character)] = mine[0]
            break
    mine[0] = character
    state["character_box"].sort()


def test_a_round_with_gutenberg_caxton_plantinus_and_torinus_at_the_table():
    state = new_game(4, characters=True, seed="characters-scenario")
    chosen = ["gutenberg", "caxton", "plantinus", "torinus"]
    for seat, character in enumerate(chosen):
        _offer(state, seat, character)
    for seat, character in enumerate(chosen):
        act(state, seat, {"type": "choose_character", "character": character})
    finish_setup(state)
    assert [p["character"] for p in state["seats"]] == chosen
    # Caxton names his wild ink at the start of the round, before the plans.
    assert state["phase"] == "choose_wild_ink" and GUTENBERG.status(state)["to_act"] == [1]
    act(state, 1, {"type": "choose_wild_ink", "ink": "red"})
    state["seats"][2]["specialties"]["binding"] = 2
    act(state, 2, {"type": "swap_specialties", "first": "binding", "second": "typesetting"})
    assert state["seats"][2]["specialties"]["typesetting"] == 2
    _plan(state, [[1, 1, 1, 1, 3], [2, 2, 2, 1, 1], [0, 0, 0, 0, 1], [0, 3, 0, 0, 0]])
    assert state["phase"] == "gutenberg"
    act(state, 0, {"type": "move_marker", "from_row": "patronage", "to_row": "orders"})
    assert state["queue"] == [0, 1]  # 2 markers each on orders now; Ann is first player
    while not state["finished"] and state["round"] == 1:
        to_act = GUTENBERG.status(state)["to_act"]
        if not to_act:
            run_system(state)
            continue
        seat = to_act[0]
        pass_first = [a for a in GUTENBERG.legal_actions(state, seat) if a["type"] == "pass"]
        act(state, seat, (pass_first or GUTENBERG.legal_actions(state, seat))[:1][0])
    run_system(state)
    assert state["round"] == 2 and state["phase"] == "choose_wild_ink"
    caxton, plantinus = state["seats"][1], state["seats"][2]
    assert caxton["wild_ink"] is None and plantinus["power_used"] is False
    assert [p["markers"] for p in state["seats"]] == [10, 7, 8, 9]


def test_views_carry_what_every_card_in_sight_shows_but_not_another_seats_draw():
    state = at_row(in_round(2), "patronage", [0, 1])
    act(state, 0, {"type": "patronage_reward", "reward": "order"}, seed=2)
    drawn = state["pending"][0]["printing"]
    mine, theirs = GUTENBERG.view(state, 0), GUTENBERG.view(state, 1)
    card = state["board"]["refinement"][0]
    assert mine["catalogue"]["refinement"][card] == data.REFINEMENT[card]
    assert set(drawn) <= set(mine["catalogue"]["printing"])
    visible = {o["printing"] for p in state["seats"] for o in p["orders"]}
    assert not (set(drawn) - visible) & set(theirs["catalogue"]["printing"])
    assert mine["reward_track"]["2"] == data.REWARD_TRACK[2]


def test_a_gear_summary_says_which_sector_was_used_and_how():
    from tests.unit.gutenberg.helpers import put_gear

    state = in_round(2)
    put_gear(state, 0, 0, "G01", 0)
    action = {"type": "activate_gear", "axle": 0, "give": "red", "take": ["blue"], "seat": 0}
    assert GUTENBERG.summarize(state, action) == (
        "Ann used the gear on axle 1 (swap ink: give red, take blue)"
    )
