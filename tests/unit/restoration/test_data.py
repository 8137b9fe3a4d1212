"""The component files are checked at import: counts, unique ids, references."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from projections.games.restoration import data


def test_the_shipped_component_files_pass_every_check() -> None:
    data.check()
    assert len(data.TILES) == 24 and len(data.EVENTS) == 6
    assert sum(data.MANAGER_COPIES for _ in data.MANAGERS) == 30


def test_every_tile_colour_starts_six_tiles() -> None:
    starts = [tile["spaces"][0]["colour"] for tile in data.TILES.values()]
    assert {colour: starts.count(colour) for colour in data.COLOURS} == dict.fromkeys(
        data.COLOURS, 6
    )


def broken(monkeypatch: pytest.MonkeyPatch, name: str, change: Callable[[Any], object]) -> None:
    """Replace one loaded file by a copy that ``change`` breaks."""
    value = copy.deepcopy(getattr(data, name))
    change(value)
    monkeypatch.setattr(data, name, value)


def test_a_repeated_tile_id_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken(monkeypatch, "TILES_FILE", lambda f: f["tiles"][1].update(id=f["tiles"][0]["id"]))
    with pytest.raises(data.DataError, match="repeated ids"):
        data.check()


def test_scoring_spaces_out_of_order_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # "the highest available scoring space": the first free one must be the highest.
    monkeypatch.setattr(data, "SCORING_SPACES", [4, 6, 8, 10])
    with pytest.raises(data.DataError, match="scoring spaces descend"):
        data.check()


def test_a_missing_event_tile_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken(monkeypatch, "EVENTS_FILE", lambda f: f["events"].pop())
    with pytest.raises(data.DataError, match="6 Event tiles"):
        data.check()


def test_an_unknown_effect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    broken(monkeypatch, "MANAGERS_FILE", lambda f: f["types"][0].update(effect_a="teleport"))
    with pytest.raises(data.DataError, match="unknown effect"):
        data.check()


def test_an_arrangement_must_place_every_auxiliary_board_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken(monkeypatch, "ARRANGEMENTS", lambda f: f["first_game"].update(north="C"))
    with pytest.raises(data.DataError, match="each auxiliary board once"):
        data.check()


def test_a_highest_construction_space_with_an_effect_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken(
        monkeypatch,
        "TILES_FILE",
        lambda f: f["tiles"][0]["spaces"][-1].update(effect="manager"),
    )
    with pytest.raises(data.DataError, match="highest space is bare"):
        data.check()
