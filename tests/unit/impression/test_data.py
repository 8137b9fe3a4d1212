"""The component data is checked when it is loaded: counts, unique ids, references."""

from __future__ import annotations

from typing import Any

import pytest

from projections.games.impression import data


def test_the_shipped_data_passes_its_checks() -> None:
    data.check()


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate order ids"):
        data.by_id([{"id": "O1"}, {"id": "O1"}], "order")


@pytest.mark.parametrize(
    ("effect", "problem"),
    [
        ({"icon": "teleport"}, "unknown icon"),
        ({"icon": "gain", "gain": {"gold": 1}}, "unknown good"),
        ({"icon": "free_technology", "level": "V"}, "unknown level"),
        ({"icon": "steps", "count": 0}, "positive number"),
    ],
)
def test_an_effect_that_does_not_resolve_is_refused(effect: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        data.check_effects([effect], "a test")


def test_a_broken_table_fails_the_load_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(data.WORKSHOP["W4"], "parent", "W99")
    with pytest.raises(ValueError, match="parent of W4"):
        data.check()


def test_orders_by_type_leave_five_of_type_one_after_the_two_player_removal() -> None:
    """Setup 5 removes "5 of each type" at 2 players, "then draw 5 tiles from the type I
    deck": type I needs 10 of the 36 orders (docs/rules/impression.md)."""
    counts = [sum(o["level"] == level for o in data.ORDERS.values()) for level in data.LEVELS]
    assert counts == [10, 9, 9, 8]


def test_a_table_short_of_type_one_orders_fails_the_load_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(data.ORDERS["OI10"], "level", "II")
    with pytest.raises(ValueError, match="type I orders left to display at 2 players"):
        data.check()


def test_every_level_has_twelve_technologies_and_nine_factories() -> None:
    for level in data.LEVELS:
        assert sum(t["level"] == level for t in data.TECHNOLOGIES.values()) == 12
        assert sum(f["level"] == level for f in data.FACTORIES.values()) == 9


def test_shops_without_a_travel_room_at_two_players_fail_the_load_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Shop Actions list Travel for every game, so the 2+ tiles alone must offer it."""
    monkeypatch.setitem(data.SHOPS["S1"], "room_II", [{"icon": "trade"}])
    with pytest.raises(ValueError, match="a room offering travel at 2 players"):
        data.check()
