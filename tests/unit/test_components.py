"""The shared game pieces: decks, bags, pools, tracks, turn order, ranking."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from projections import components
from projections.ruleset import IllegalAction


def test_drawing_takes_from_the_top_and_reshuffles_discards_when_empty() -> None:
    deck = components.new_deck(range(5), random.Random(1))
    top = deck["draw_pile"][:3]
    assert components.draw(deck, 3) == top
    components.discard(deck, top)
    drawn = components.draw(deck, 4, random.Random(2))
    assert len(drawn) == 4
    assert sorted(drawn + deck["draw_pile"]) == [0, 1, 2, 3, 4]
    assert deck["discard_pile"] == []


def test_drawing_without_rng_stops_at_an_empty_draw_pile() -> None:
    deck = {"draw_pile": [1], "discard_pile": [2, 3]}
    assert components.draw(deck, 3) == [1]
    assert deck["discard_pile"] == [2, 3]


def test_deck_size_shows_counts_never_order() -> None:
    deck = {"draw_pile": [5, 4], "discard_pile": [1]}
    assert components.deck_size(deck) == {"draw_pile": 2, "discard_pile": 1}


@given(st.dictionaries(st.sampled_from("abcde"), st.integers(0, 6)), st.integers(0, 40))
def test_bag_draws_never_create_or_lose_items(contents: dict[str, int], count: int) -> None:
    bag = components.new_bag(contents)
    before = components.bag_count(bag)
    drawn = components.bag_draw(bag, count, random.Random(count))
    assert len(drawn) == min(count, before)
    assert components.bag_count(bag) + len(drawn) == before
    components.bag_return(bag, drawn)
    assert {k: v for k, v in bag["contents"].items() if v} == {
        k: v for k, v in contents.items() if v
    }


def test_paying_more_than_the_pool_holds_names_what_is_short_and_changes_nothing() -> None:
    pool = {"guilders": 1, "ink": 3}
    with pytest.raises(IllegalAction) as refused:
        components.pool_pay(pool, {"guilders": 2, "ink": 1}, "insufficient_guilders", "an ink")
    assert refused.value.code == "insufficient_guilders"
    assert "1 guilders" in refused.value.message
    assert pool == {"guilders": 1, "ink": 3}
    components.pool_pay(pool, {"ink": 3})
    assert pool == {"guilders": 1, "ink": 0}


def test_track_markers_stay_on_the_track() -> None:
    assert components.track_move(3, 4, highest=5) == 5
    assert components.track_move(1, -3) == 0


def test_turn_order_helpers() -> None:
    assert components.next_seat(3, 4) == 0
    assert components.clockwise_from(2, 4) == [2, 3, 0, 1]
    assert components.snake_order(1, 3) == [1, 2, 0, 0, 2, 1]


def test_ranking_groups_equal_tie_breakers_into_one_place() -> None:
    scores = {0: (10, 2), 1: (12, 0), 2: (10, 2), 3: (10, 3)}
    assert components.ranking(scores) == [[1], [3], [0, 2]]
