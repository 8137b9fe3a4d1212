"""Impression keeps the hard contract of ``apply``: only IllegalAction, for any input whatever,
leaving the state unchanged (tests/sim/apply_contract.py)."""

from projections.games.impression import IMPRESSION
from tests.sim.apply_contract import check_apply_contract


def test_impression_apply_raises_only_illegal_action_for_any_input() -> None:
    check_apply_contract(IMPRESSION, [2, 3, 4])
