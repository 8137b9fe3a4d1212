"""``resample_hidden`` is a function of the seat's information set (docs/analysis.md).

Agents and analyses see a position only through ``legal_actions(state, seat)`` and
``resample_hidden(state, seat, rng)``. For an analysis made for one seat to be the same for
two positions that differ only in what that seat cannot see, ``resample_hidden`` must depend
on nothing but what the seat can see and ``rng``: not on the order of a hidden pile, nor on
which hidden card sits in which other hand.

Two states of one information set are made the way a sealed branch or an agent makes them:
the second is ``resample_hidden`` of the first with another seed. Then, for every ruleset
(Tally included) at positions spread over random playouts at every player count and for
every seat:

- the seat's view and its legal actions are the same in both states;
- ``resample_hidden`` under the same seed gives the identical state from both.
"""

from __future__ import annotations

import random
from functools import cache

import pytest
from hypothesis import given
from hypothesis import strategies as st

from events.envelope import Envelope
from projections.fold import Game, copy_state
from projections.ruleset import Ruleset, State, all_rulesets
from projections.simulate import StuckGame, play_random

RULESETS = all_rulesets()  # Tally is registered by tests/conftest.py
GAMES_PER_COUNT = 2
EVERY = 5
MAX_STEPS = 500  # a long Impendium game is cut short: positions enough by then


@cache
def positions(ruleset_id: str) -> list[State]:
    """States every ``EVERY`` steps of a few random games at each player count."""
    ruleset = next(r for r in RULESETS if r.id == ruleset_id)
    found: list[State] = []

    def keep(game: Game, envelope: Envelope) -> None:
        if envelope["seq"] % EVERY == 0:
            found.append(copy_state(game.state))

    for count in range(ruleset.min_players, ruleset.max_players + 1):
        players = [f"P{n + 1}" for n in range(count)]
        for index in range(GAMES_PER_COUNT):
            try:
                play_random(
                    ruleset, players, f"infoset:{count}:{index}", max_steps=MAX_STEPS, on_step=keep
                )
            except StuckGame as stopped:
                assert "no end after" in str(stopped), stopped
    assert found
    return found


def check_one_information_set(
    ruleset: Ruleset, state: State, seat: int, seed: int, other_seed: int
) -> None:
    before = copy_state(state)
    twin = ruleset.resample_hidden(state, seat, random.Random(other_seed))
    assert state == before, "resample_hidden must not change the state it is given"
    assert ruleset.view(twin, seat) == ruleset.view(state, seat), "not one information set"
    assert ruleset.legal_actions(twin, seat) == ruleset.legal_actions(state, seat), (
        "the seat's legal actions depend on what it cannot see"
    )
    drawn = ruleset.resample_hidden(state, seat, random.Random(seed))
    again = ruleset.resample_hidden(twin, seat, random.Random(seed))
    assert drawn == again, (
        f"seat {seat}: resample_hidden depends on more than the seat's information set; "
        f"differs in {sorted(key for key in drawn if drawn[key] != again.get(key))}"
    )


@pytest.mark.parametrize("ruleset", RULESETS, ids=[ruleset.id for ruleset in RULESETS])
def test_every_position_and_seat_redraws_only_from_its_information_set(ruleset: Ruleset) -> None:
    for state in positions(ruleset.id):
        for seat in range(len(state["players"])):
            check_one_information_set(ruleset, state, seat, seed=0, other_seed=5)


@pytest.mark.parametrize("ruleset", RULESETS, ids=[ruleset.id for ruleset in RULESETS])
@given(pick=st.integers(min_value=0), seat=st.integers(min_value=0), seeds=st.data())
def test_resample_hidden_depends_only_on_the_information_set_and_the_seed(
    ruleset: Ruleset, pick: int, seat: int, seeds: st.DataObject
) -> None:
    found = positions(ruleset.id)
    state = found[pick % len(found)]
    seed = seeds.draw(st.integers(), label="seed")
    other_seed = seeds.draw(st.integers().filter(lambda n: n != seed), label="other seed")
    check_one_information_set(ruleset, state, seat % len(state["players"]), seed, other_seed)
