"""The suites that prove a refused action changes nothing catch a ruleset that breaks it.

Every game's playouts (``conformance.check_random_game``) and fuzz (``apply_contract``)
compare the state after each refusal with the state before, deeply and types included
(``conformance.Unchanged``). Two careless variants of the test-only Tally show that the
comparison fails where it must: one that clears what it is about to refuse (as a rule that
pops a pending choice before it checks the choice), one that turns ``False`` into ``0``
(equal in Python, not the same state).
"""

from __future__ import annotations

import random

import pytest

from projections.ruleset import Action, IllegalAction, State
from tests.rulesets.tally import Tally
from tests.sim.apply_contract import check_apply_contract
from tests.sim.conformance import Unchanged, check_random_game


class ClearsBeforeRefusing(Tally):
    """A second bid is refused, but only after the first one was forgotten."""

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        try:
            super().apply(state, action, rng)
        except IllegalAction as refusal:
            if refusal.code == "already_bid":
                state["bids"][action["seat"]] = None
            raise


class RetypesBeforeRefusing(Tally):
    """Every refusal leaves ``finished`` as ``0`` instead of ``False``."""

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        try:
            super().apply(state, action, rng)
        except IllegalAction:
            state["finished"] = 0
            raise


def test_the_playouts_catch_a_refusal_that_changed_the_state() -> None:
    with pytest.raises(AssertionError, match=r"changed the state: state\['bids'\]\[\d\]"):
        check_random_game(ClearsBeforeRefusing(), 2, seed="careless-1")


def test_the_playouts_catch_a_refusal_that_changed_only_a_type() -> None:
    with pytest.raises(AssertionError, match=r"state\['finished'\]: False became 0"):
        check_random_game(RetypesBeforeRefusing(), 2, seed="careless-2")


def test_the_fuzz_catches_a_refusal_that_changed_the_state() -> None:
    with pytest.raises(AssertionError, match="changed the state"):
        check_apply_contract(RetypesBeforeRefusing(), [2], playouts=1, positions=4, per_type=1)


def test_an_unchanged_state_passes_and_a_changed_one_is_named() -> None:
    state = {"hand": [1, 2], "done": False, "score": 1}
    before = Unchanged.of(state)
    before.check({"score": 1, "done": False, "hand": [1, 2]}, "key order")  # the same state
    for changed, named in [
        ({"hand": [1, 2], "done": False, "score": True}, "state['score']: 1 became True"),
        ({"hand": [1, 2], "done": False, "score": 1.0}, "state['score']: 1 became 1.0"),
        ({"hand": [1], "done": False, "score": 1}, "state['hand']: 2 items became 1"),
        ({"hand": [1, 2], "score": 1}, "state['done'] was removed"),
    ]:
        with pytest.raises(AssertionError) as caught:
            before.check(changed, "a refusal")
        assert named in str(caught.value)
