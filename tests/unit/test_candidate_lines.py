"""The lines a seat reads for its own candidates (projections/agents/lines.py): no two
candidates of one decision read alike, and a seat's own secret plan reads as what it is."""

from __future__ import annotations

import random

import pytest

from projections.agents.lines import candidate_lines
from projections.agents.playout import mover, play
from projections.ruleset import get_ruleset

GAMES = ("gutenberg", "restoration", "impression", "impendium")


@pytest.mark.parametrize("ruleset_id", GAMES)
def test_no_two_candidates_of_a_decision_read_alike(ruleset_id: str) -> None:
    ruleset = get_ruleset(ruleset_id)
    rng = random.Random(1)
    state = ruleset.setup(["Ann", "Bob"], {}, rng)
    checked = 0
    for _ in range(300):
        turn = mover(ruleset, state, rng)
        if turn is None:
            break
        seat, legal = turn
        lines = candidate_lines(ruleset, state, seat, legal[:300])
        assert len(set(lines)) == len(lines), [line for line in lines if lines.count(line) > 1][:3]
        checked += len(lines) > 1
        play(ruleset, state, seat, legal[rng.randrange(len(legal))], rng)
    assert checked > 10


def test_a_seat_reads_its_own_plan_and_the_timeline_does_not() -> None:
    ruleset = get_ruleset("gutenberg")
    rng = random.Random(2)
    state = ruleset.setup(["Ann", "Bob"], {}, rng)
    while True:
        seat, legal = mover(ruleset, state, rng) or (None, [])
        if legal and legal[0]["type"] == "submit_plan":
            break
        play(ruleset, state, seat, legal[rng.randrange(len(legal))], rng)
    plans = legal[:50]
    lines = candidate_lines(ruleset, state, seat, plans)
    for plan, line in zip(plans, lines, strict=True):
        rows = plan["rows"]
        assert line.startswith(f"{state['players'][seat]} planned {rows[0]} on orders")
        assert f"{rows[4]} on patronage" in line
        public = ruleset.summarize(state, {**plan, "seat": seat})
        assert public.endswith("submitted a secret plan")


def test_alike_lines_get_the_parameters_they_differ_in() -> None:
    ruleset = get_ruleset("gutenberg")
    state = ruleset.setup(["Ann", "Bob"], {}, random.Random(0))
    gears = [
        {"type": "install_gear", "gear": "G08", "rotation": turn, "replace_axle": None}
        for turn in range(4)
    ]
    lines = candidate_lines(ruleset, state, 0, gears)
    assert lines == [f"Ann installed gear G08 (rotation {turn})" for turn in range(4)]
