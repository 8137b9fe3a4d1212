"""Technology, the building rules, factories and travel."""

from __future__ import annotations

import random
from typing import Any

import pytest

from projections.games.impression import data, effects
from tests.unit.impression.support import (
    RULES,
    SEAT,
    act,
    clear_workshop,
    me,
    new_game,
    prompt,
    queue,
    refused,
    turn_game,
)


def show_tech(state: dict[str, Any], level: str, row: int, tech: str) -> None:
    column = state["tech"][level]
    if tech in column["draw_pile"]:
        column["draw_pile"].remove(tech)
        column["hidden"] -= 1
    old = column["display"][row]
    column["display"][row] = tech
    if old is not None and old != tech:
        column["draw_pile"].append(old)


def buy(
    level: str, row: int, space: str, mode: str = "up", relocate: str | None = None
) -> dict[str, Any]:
    return {
        "type": "buy_technology",
        "level": level,
        "row": row,
        "space": space,
        "mode": mode,
        "relocate": relocate,
    }


# -- technology ------------------------------------------------------------------------


def test_a_technology_costs_its_rows_resources_and_its_columns_marks() -> None:
    state = turn_game()
    show_tech(state, "I", 1, "GI1")  # green: half your capacity
    me(state)["capacity"] = 5
    queue(state, {"icon": "technology"})
    act(state, SEAT, **buy("I", 1, "W3"))  # row 2: 1 paper + 1 lead; column I: 1 mark
    p = me(state)
    assert (p["paper"], p["lead"], p["marks"]) == (0, 1, 2)  # W3 gave 1 lead back
    assert p["workshop"]["W3"]["up"] == {"kind": "tech", "id": "GI1"}
    assert p["vp"] == 2  # instant technology: half of capacity 5
    assert state["tech"]["I"]["display"][1] not in (None, "GI1")


def test_a_chain_reaches_a_lead_letter_its_own_technology_brought() -> None:
    # Technology: "Perform the newly built technology first, then follow the trail left,
    # carrying out each action until you reach one of your lead letters on the left".
    state = turn_game()
    clear_workshop(state, SEAT)
    p = me(state)
    p["stacks"] = [[], []]
    show_tech(state, "I", 0, "BI6")  # blue: take a lead letter into your workshop
    queue(state, {"icon": "technology"})
    act(state, SEAT, **buy("I", 0, "W1"))
    assert [effect["icon"] for effect in state["pending"][SEAT]] == ["gain_letter", "use_letter"]
    letter = state["letters"]["desk"][0]
    before = {good: p[good] for good in ("paper", "lead", "ink", "marks")}
    act(state, SEAT, type="gain_letter", slot=0, stack=0)
    assert p["stacks"][0] == [letter] and state["pending"][SEAT] == []
    gained = {"mark" if good == "marks" else good: p[good] - before[good] for good in before}
    expected = data.LEAD_LETTERS[letter]["gain"]
    assert {good: n for good, n in gained.items() if n} == expected


def test_a_chain_with_no_lead_letter_ends_at_column_one_without_asking() -> None:
    state = turn_game()
    clear_workshop(state, SEAT)
    me(state)["stacks"] = [[], []]
    show_tech(state, "I", 0, "BI9")  # blue: 2 marks
    queue(state, {"icon": "technology"})
    act(state, SEAT, **buy("I", 0, "W1"))
    assert state["pending"][SEAT] == []


def test_a_face_up_tile_needs_a_path_back_to_the_left_side_of_the_workshop() -> None:
    # Building rules: "you must form a continuous path from the left side of your workshop
    # toward the right"; only a tile placed face down one level higher needs no route.
    state = turn_game()
    clear_workshop(state, SEAT)
    p = me(state)
    p["paper"] = p["lead"] = p["ink"] = 9
    p["marks"] = 20
    assert (data.WORKSHOP["W7"]["parent"], data.WORKSHOP["W4"]["parent"]) == ("W4", "W1")
    show_tech(state, "I", 0, "BI9")
    queue(state, {"icon": "technology"})
    act(state, SEAT, **buy("I", 0, "W4", mode="down"))  # level I face down on level II
    state["pending"][SEAT] = []
    assert not any(spot["space"] == "W7" for spot in effects.placements(p, "III"))
    show_tech(state, "III", 0, "BIII1")
    queue(state, {"icon": "technology"})
    refused(state, SEAT, "illegal_placement", **buy("III", 0, "W7"))
    p["workshop"]["W1"]["up"] = {"kind": "tech", "id": "GI1"}  # the path now reaches W1
    assert {"space": "W7", "mode": "up", "relocate": None} in effects.placements(p, "III")


def test_a_technology_factory_saves_a_mark() -> None:
    state = turn_game()
    factory = next(
        f for f, t in data.FACTORIES.items() if t["trigger"] == {"on": "technology", "discount": 1}
    )
    me(state)["workshop"]["W2"]["up"] = {"kind": "factory", "id": factory}
    show_tech(state, "I", 0, "GI2")
    queue(state, {"icon": "technology"})
    act(state, SEAT, **buy("I", 0, "W1"))
    assert me(state)["marks"] == 3


def test_refreshing_a_column_draws_three_new_tiles_then_asks_the_order_of_the_old() -> None:
    # Technology: "pay 1 mark to discard the 3 available tiles in a chosen column and draw
    # 3 new ones ... Place the discarded tiles at the bottom of the draw pile in an order
    # of your choice."
    state = turn_game()
    old = list(state["tech"]["II"]["display"])
    new = state["tech"]["II"]["draw_pile"][:3]
    queue(state, {"icon": "technology"})
    act(state, SEAT, type="refresh_technologies", level="II")
    assert me(state)["marks"] == 2
    assert state["tech"]["II"]["display"] == new
    assert prompt(state, SEAT) == "return_technologies"
    orders = [action["order"] for action in RULES.legal_actions(state, SEAT)]
    assert len(orders) == 6 and all(sorted(order) == sorted(old) for order in orders)


def refreshed_level_two() -> tuple[dict[str, Any], list[str]]:
    """Ann refreshed the level II column in a technology action: the game and the old tiles."""
    state = turn_game()
    old = list(state["tech"]["II"]["display"])
    queue(state, {"icon": "technology"})
    act(state, SEAT, type="refresh_technologies", level="II")
    return state, old


def test_the_discarded_technologies_go_under_the_pile_in_the_chosen_order() -> None:
    state, old = refreshed_level_two()
    chosen = [old[2], old[0], old[1]]
    act(state, SEAT, type="return_technologies", order=chosen)
    assert state["tech"]["II"]["draw_pile"][-3:] == chosen
    assert RULES.view(state, None)["tech"]["II"]["known_bottom"] == chosen
    assert prompt(state, SEAT) == "technology"  # now choose from the new options
    refused(state, SEAT, "already_refreshed", type="refresh_technologies", level="II")


@pytest.mark.parametrize("rows", [[0, 1], [0, 0, 1], [0, 1, 2, 2], []])
def test_returning_anything_but_the_discarded_technologies_once_each_is_refused(
    rows: list[int],
) -> None:
    state, old = refreshed_level_two()
    order = [old[row] for row in rows]
    refused(state, SEAT, "not_the_discarded_technologies", type="return_technologies", order=order)


def test_returning_technologies_of_another_column_is_refused() -> None:
    state, _ = refreshed_level_two()
    others = list(state["tech"]["I"]["display"])
    refused(state, SEAT, "not_the_discarded_technologies", type="return_technologies", order=others)


def test_the_order_of_the_returned_technologies_cannot_be_declined() -> None:
    state, _ = refreshed_level_two()
    assert {"type": "decline"} not in RULES.legal_actions(state, SEAT)
    refused(state, SEAT, "choice_required", type="decline")


def test_a_single_discarded_technology_goes_under_the_pile_without_a_question() -> None:
    state = turn_game()
    column = state["tech"]["I"]
    last = column["display"][1]
    column["draw_pile"].extend(t for t in column["display"] if t != last)
    column["display"] = [None, last, None]
    queue(state, {"icon": "technology"})
    act(state, SEAT, type="refresh_technologies", level="I")
    assert column["draw_pile"][-1] == last
    assert prompt(state, SEAT) == "technology"


def test_a_refresh_from_a_short_pile_draws_only_new_tiles() -> None:
    # "draw 3 new ones": the tiles just discarded are not drawn again by the refresh
    state = turn_game()
    column = state["tech"]["III"]
    old = list(column["display"])
    column["draw_pile"], column["hidden"] = column["draw_pile"][:1], 1
    only = column["draw_pile"][0]
    queue(state, {"icon": "technology"})
    act(state, SEAT, type="refresh_technologies", level="III")
    assert column["display"] == [only, None, None]
    act(state, SEAT, type="return_technologies", order=old)
    assert column["draw_pile"] == old


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"type": "refresh_technologies", "level": "V"}, "wrong_level"),
        (buy("I", 5, "W1"), "empty_display_space"),
        (buy("II", 0, "W4"), "illegal_placement"),  # W1 below it is still empty
        (buy("I", 0, "W4", "up"), "illegal_placement"),
    ],
)
def test_a_technology_purchase_is_refused(action: dict[str, Any], code: str) -> None:
    state = turn_game()
    queue(state, {"icon": "technology"})
    refused(state, SEAT, code, **action)


def test_a_technology_beyond_your_means_is_refused() -> None:
    state = turn_game()
    queue(state, {"icon": "technology"})
    me(state)["paper"] = 0
    refused(state, SEAT, "insufficient_resources", **buy("I", 0, "W1"))
    me(state)["marks"] = 0
    refused(state, SEAT, "insufficient_marks", type="refresh_technologies", level="I")


def test_an_empty_pile_cannot_be_refreshed() -> None:
    state = turn_game()
    state["tech"]["IV"]["draw_pile"] = []
    state["tech"]["IV"]["hidden"] = 0
    queue(state, {"icon": "technology"})
    refused(state, SEAT, "pile_empty", type="refresh_technologies", level="IV")


def test_a_free_technology_icon_takes_its_level_for_nothing() -> None:
    state = turn_game()
    me(state)["workshop"]["W1"]["up"] = {"kind": "tech", "id": "GI1"}
    show_tech(state, "II", 2, "GII1")
    queue(state, {"icon": "free_technology", "level": "II"})
    refused(state, SEAT, "wrong_level", **buy("I", 0, "W2"))
    act(state, SEAT, **buy("II", 2, "W4"))
    # nothing paid; W4's capacity gain steps onto a space giving 1 paper
    assert me(state)["marks"] == 3 and me(state)["paper"] == 2


# -- building rules ------------------------------------------------------------------------


def test_face_down_one_level_higher_needs_no_path_and_gains_the_covered_action() -> None:
    state = turn_game()
    show_tech(state, "II", 0, "BII1")
    queue(state, {"icon": "technology", "no_resources": True, "no_money": True})
    act(state, SEAT, **buy("II", 0, "W9", "down"))  # W9 (level III): workforce
    assert me(state)["workshop"]["W9"]["down"] == {"kind": "tech", "id": "BII1"}
    assert me(state)["workforce"] == 3
    assert prompt(state, SEAT) == "assistant"  # workforce 3; the face-down tile does nothing


def test_replacing_a_tile_moves_it_face_down_one_level_higher() -> None:
    state = turn_game()
    me(state)["workshop"]["W1"]["up"] = {"kind": "tech", "id": "GI1"}
    show_tech(state, "I", 0, "GI2")
    queue(state, {"icon": "technology", "no_resources": True, "no_money": True})
    act(state, SEAT, **buy("I", 0, "W1", "replace", "W5"))  # W5: trade
    shop = me(state)["workshop"]
    assert shop["W1"]["up"]["id"] == "GI2" and shop["W5"]["down"]["id"] == "GI1"
    assert me(state)["paper"] == 1  # W1's own action (1 paper) is not gained again
    assert prompt(state, SEAT) == "trade"


def test_a_face_down_tile_can_later_be_covered_face_up() -> None:
    p = new_game()["seats"][0]
    p["workshop"]["W4"]["down"] = {"kind": "tech", "id": "GI1"}
    p["workshop"]["W1"]["up"] = {"kind": "tech", "id": "GI2"}
    assert {"space": "W4", "mode": "up", "relocate": None} in effects.placements(p, "II")


def test_a_full_workshop_takes_no_more_tiles() -> None:
    p = new_game()["seats"][0]
    for index, cell in enumerate(p["workshop"].values()):
        cell["down"] = {"kind": "tech", "id": f"X{index}"}
        cell["up"] = {"kind": "tech", "id": f"Y{index}"}
    assert all(effects.placements(p, level) == [] for level in data.LEVELS)


# -- factories ---------------------------------------------------------------------------


def test_building_a_factory_draws_three_keeps_one_and_pays_a_city_marker() -> None:
    state = turn_game()
    pile = state["factories"]["I"]["draw_pile"]
    drawn = pile[:3]
    queue(state, {"icon": "factory"})
    act(state, SEAT, type="draw_factories", level="I")
    assert state["pending"][SEAT][0]["drawn"] == drawn
    refused(state, SEAT, "factories_drawn", type="draw_factories", level="II")
    refused(
        state,
        SEAT,
        "factory_not_drawn",
        type="keep_factory",
        factory="FIV1",
        space="W1",
        mode="up",
        relocate=None,
    )
    act(state, SEAT, type="keep_factory", factory=drawn[1], space="W1", mode="up", relocate=None)
    assert me(state)["workshop"]["W1"]["up"] == {"kind": "factory", "id": drawn[1]}
    assert me(state)["city_markers"] == 11
    assert pile[-2:] == [drawn[0], drawn[2]]
    assert RULES.view(state, None)["factories"]["I"]["known_bottom"] == [drawn[0], drawn[2]]


def test_drawn_factories_cannot_be_declined_one_is_kept_for_a_city_marker() -> None:
    """Travel: "choose a type (I-IV), draw 3 factories from that stack, keep one and return
    the other two to the bottom of the pile, then discard your rightmost city marker as
    payment." Having seen the three, the player keeps one and pays; the public top tile is
    not sent to the bottom for free."""
    state = turn_game()
    queue(state, {"icon": "factory"})
    assert {"type": "decline"} in RULES.legal_actions(state, SEAT)  # nothing drawn yet
    act(state, SEAT, type="draw_factories", level="II")
    assert {"type": "decline"} not in RULES.legal_actions(state, SEAT)
    refused(state, SEAT, "choice_required", type="decline")
    kept = state["pending"][SEAT][0]["drawn"][0]
    act(state, SEAT, type="keep_factory", factory=kept, space="W7", mode="down", relocate=None)
    assert me(state)["city_markers"] == 11 and len(state["factories"]["II"]["draw_pile"]) == 8


def test_a_factory_may_still_be_declined_before_drawing() -> None:
    state = turn_game()
    queue(state, {"icon": "factory"})
    act(state, SEAT, type="decline")
    assert prompt(state, SEAT) is None and me(state)["city_markers"] == 12
    assert len(state["factories"]["II"]["draw_pile"]) == 9


def test_a_factory_is_refused_without_markers_drawing_or_room() -> None:
    state = turn_game()
    queue(state, {"icon": "factory"})
    refused(
        state,
        SEAT,
        "draw_first",
        type="keep_factory",
        factory="FI1",
        space="W1",
        mode="up",
        relocate=None,
    )
    me(state)["city_markers"] = 0
    refused(state, SEAT, "no_city_marker", type="draw_factories", level="I")
    me(state)["city_markers"] = 1
    state["factories"]["III"]["draw_pile"] = []
    refused(state, SEAT, "pile_empty", type="draw_factories", level="III")
    refused(state, SEAT, "workshop_full", type="draw_factories", level="IV")  # nothing connects


def test_a_factory_at_a_city_is_refused_when_none_can_be_built() -> None:
    state = turn_game()
    me(state)["city_markers"] = 0
    queue(state, {"icon": "stop_action"})
    refused(state, SEAT, "no_factory_possible", type="stop_action", action="build_factory")
    act(state, SEAT, type="stop_action", action="trade")
    assert prompt(state, SEAT) == "trade"


# -- travel ---------------------------------------------------------------------------------


def test_travel_splits_the_workforce_between_the_order_track_and_the_map() -> None:
    state = turn_game()  # workforce 2
    queue(state, {"icon": "travel"})
    act(state, SEAT, type="travel", track_steps=1, path=["coin1.1"])
    assert state["track"][SEAT]["section"] == 1 and state["agents"][SEAT] == "coin1.1"
    assert me(state)["marks"] == 2  # the coin paid to the supply
    assert prompt(state, SEAT) == "trade"  # stopping on a coin allows a trade


def test_stopping_in_a_new_city_takes_its_disc_places_a_marker_and_moves_the_director() -> None:
    state = turn_game()
    disc = state["map_discs"]["Frankfurt"]
    queue(state, {"icon": "travel"})
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", "Frankfurt"])
    p = me(state)
    assert p["discs"] == [{"id": disc, "used": False}]
    assert state["city_markers"]["Frankfurt"] == [SEAT] and p["city_markers"] == 11
    assert p["director"] == 1 and p["marks"] == 3  # paid 1 coin, the director gave 1 mark
    assert prompt(state, SEAT) == "stop_action"


def test_a_coin_with_another_agent_pays_that_player() -> None:
    state = turn_game()
    state["agents"][1] = "coin1.1"
    queue(state, {"icon": "travel"})
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", "Frankfurt"])
    assert state["seats"][1]["marks"] == 4


def test_a_road_between_your_own_markers_is_free_and_a_second_visit_moves_no_director() -> None:
    state = turn_game()
    state["city_markers"]["Mainz"] = [SEAT]
    state["city_markers"]["Frankfurt"] = [SEAT]
    me(state)["director"] = 1
    queue(state, {"icon": "travel"})
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", "Frankfurt"])
    assert me(state)["marks"] == 3 and me(state)["director"] == 1


def test_the_steps_icon_moves_without_a_trade_or_a_factory() -> None:
    state = turn_game()
    queue(state, {"icon": "steps", "count": 2})
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", "Frankfurt"])
    assert me(state)["director"] == 1 and prompt(state, SEAT) is None


@pytest.mark.parametrize(
    ("icon", "paid"), [({"icon": "travel"}, 1), ({"icon": "steps", "count": 3}, 2)]
)
def test_a_travel_discount_factory_saves_a_mark_on_a_travel_action_not_on_the_steps_icon(
    icon: dict[str, Any], paid: int
) -> None:
    # Factories: "1 mark less whenever you perform a travel action"; the steps icon "is not
    # a real travel action".
    state = turn_game()
    me(state)["workshop"]["W1"]["up"] = {"kind": "factory", "id": "FIII6"}
    assert data.FACTORIES["FIII6"]["trigger"] == {"on": "travel", "discount": 1}
    queue(state, icon)
    options = RULES.legal_actions(state, SEAT)
    route = ["coin2.1", "coin2.2"]  # two coins to the supply
    assert {"type": "travel", "track_steps": 0, "path": route} in options
    act(state, SEAT, type="travel", track_steps=0, path=route)
    assert me(state)["marks"] == 3 - paid


def test_a_free_travel_pays_nothing_on_the_map() -> None:
    state = turn_game()
    queue(state, {"icon": "travel", "free": True})
    act(state, SEAT, type="travel", track_steps=0, path=["coin2.1", "coin2.2"])
    assert me(state)["marks"] == 3


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ({"track_steps": -1, "path": []}, "bad_route"),
        ({"track_steps": 1, "path": ["coin1.1", "Frankfurt"]}, "too_many_steps"),
        ({"track_steps": 0, "path": []}, "empty_travel"),
        ({"track_steps": 0, "path": ["Frankfurt"]}, "not_adjacent"),
    ],
)
def test_a_travel_is_refused(action: dict[str, Any], code: str) -> None:
    state = turn_game()
    queue(state, {"icon": "travel"})
    refused(state, SEAT, code, type="travel", **action)


def test_a_travel_route_may_pass_a_space_again_and_return_to_its_start() -> None:
    """Travel: "Each coin or city space costs 1 movement point. Moving onto a coin costs 1
    mark to the supply"; only the Shop rules say "You cannot visit the same shop twice
    during a move, so you can never end where you started" - travel has no such rule."""
    state = turn_game()
    me(state)["workforce"] = 3
    queue(state, {"icon": "travel"})
    options = RULES.legal_actions(state, SEAT)
    assert {"type": "travel", "track_steps": 0, "path": ["coin1.1", "Mainz"]} in options
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", "Frankfurt", "coin1.1"])
    assert state["agents"][SEAT] == "coin1.1"
    assert me(state)["marks"] == 1  # the coin was entered twice: 1 mark each time
    assert prompt(state, SEAT) == "trade"


def test_a_travel_back_to_the_start_city_stops_there() -> None:
    state = turn_game()
    queue(state, {"icon": "travel"})
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1", data.START_CITY])
    assert state["agents"][SEAT] == data.START_CITY and me(state)["marks"] == 2
    assert me(state)["director"] == 0  # the white start city takes no marker
    assert prompt(state, SEAT) == "stop_action"


def test_the_listed_travel_routes_are_the_cheapest_and_priced_as_applied() -> None:
    state = turn_game()
    me(state)["workforce"] = 4
    state["agents"][1] = "coin1.1"  # Bob's agent: entering it pays Bob, not the supply
    queue(state, {"icon": "travel"})
    routes = effects.travel_routes(state, SEAT, state["pending"][SEAT][0])
    assert routes[(0, "Frankfurt")] == ["coin1.1", "Frankfurt"]
    for (steps, node), path in routes.items():
        assert steps + len(path) <= 4 and (path[-1] if path else data.START_CITY) == node
        paid = effects.map_payments(state, SEAT, path, {"icon": "travel"})
        assert paid[0] + sum(paid[1].values()) <= me(state)["marks"]


def test_travel_is_refused_past_the_track_or_beyond_your_marks() -> None:
    state = turn_game()
    state["track"][SEAT]["section"] = data.TRACK_SECTIONS
    queue(state, {"icon": "travel"})
    refused(state, SEAT, "track_end", type="travel", track_steps=1, path=[])
    me(state)["marks"] = 1
    refused(
        state, SEAT, "insufficient_marks", type="travel", track_steps=0, path=["coin2.1", "coin2.2"]
    )


def test_drawn_factories_that_no_longer_fit_go_back_under_their_pile_unpaid() -> None:
    """Building rules: "If all spaces in your workshop are occupied, you can no longer
    build a factory or technology" - here a pairing's technology, taken at any time while
    the drawn factories waited, filled the last space."""
    state = turn_game()
    queue(state, {"icon": "factory"})
    act(state, SEAT, type="draw_factories", level="II")
    drawn = list(state["pending"][SEAT][0]["drawn"])
    for index, cell in enumerate(me(state)["workshop"].values()):
        cell["down"] = {"kind": "tech", "id": f"X{index}"}
        cell["up"] = {"kind": "tech", "id": f"Y{index}"}
    effects.run(state, SEAT, random.Random(0))
    assert prompt(state, SEAT) is None and me(state)["city_markers"] == 12
    assert state["factories"]["II"]["draw_pile"][-3:] == drawn
