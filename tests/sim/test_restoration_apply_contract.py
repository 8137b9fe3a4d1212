"""Restoration keeps the hard contract of ``apply``: only IllegalAction, for any input
whatever, leaving the state unchanged (tests/sim/apply_contract.py)."""

import pytest

from projections.games.restoration import data
from projections.games.restoration.game import RESTORATION
from tests.sim.apply_contract import check_apply_contract


@pytest.mark.parametrize("player_count", [2, 3, 4])
def test_restoration_apply_raises_only_illegal_action_for_any_input(player_count: int) -> None:
    check_apply_contract(RESTORATION, [player_count])


def test_every_workshop_arrangement_keeps_the_contract() -> None:
    for arrangement in sorted(data.ARRANGEMENTS):
        check_apply_contract(
            RESTORATION, [3], {"arrangement": arrangement}, playouts=1, positions=6
        )
