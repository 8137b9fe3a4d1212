"""Component data is loaded and checked at import: counts, unique ids, references."""

import pytest

from projections.games.gutenberg import data


def test_the_shipped_component_data_passes_its_checks():
    data.check()
    assert len(data.CHARACTERS) == 10 and len(data.SPECIALTIES) == 4
    assert {s["symbol"] for g in data.GEARS.values() for s in g["sectors"]} == set(
        data.GEAR_SYMBOLS
    )


def test_every_reward_kind_appears_on_some_refinement_card():
    assert {c["bonus"]["kind"] for c in data.REFINEMENT.values()} == set(data.REWARD_KINDS)


@pytest.mark.parametrize(
    ("table", "key", "broken"),
    [
        ("PRINTING", "P01", {"id": "P01", "types": {"E": 1}, "guilders": 2}),
        ("REFINEMENT", "R01", {**data.REFINEMENT["R01"], "colours": {"purple": 1}}),
        ("REFINEMENT", "R02", {**data.REFINEMENT["R02"], "bonus": {"kind": "wine"}}),
        ("SPECIALTY_CARDS", "S01", {"id": "S01", "symbols": ["binding"]}),
        ("GEARS", "G01", {**data.GEARS["G01"], "sectors": data.GEARS["G01"]["sectors"][:3]}),
        ("GEARS", "G02", {**data.GEARS["G02"], "lines": "pink"}),
        ("PATRONAGE", "N01", {**data.PATRONAGE["N01"], "specialties": {"cooking": 3}}),
    ],
)
def test_a_broken_reference_is_reported(monkeypatch, table, key, broken):
    monkeypatch.setitem(getattr(data, table), key, broken)
    with pytest.raises(ValueError, match="gutenberg component data"):
        data.check()


def test_an_id_shared_by_two_kinds_of_component_is_reported(monkeypatch):
    monkeypatch.setitem(
        data.PATRONAGE, "P01", {"id": "P01", "specialties": {}, "types": {}, "inks": {}}
    )
    with pytest.raises(ValueError, match="unique"):
        data.check()
