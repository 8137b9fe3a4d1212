"""The test-only Tally ruleset keeps the hard contract of ``apply``: only IllegalAction, for
any input whatever, leaving the state unchanged (tests/sim/apply_contract.py)."""

from tests.rulesets.tally import TALLY
from tests.sim.apply_contract import check_apply_contract


def test_tally_apply_raises_only_illegal_action_for_any_input() -> None:
    check_apply_contract(TALLY, [1, 2, 3, 4])
