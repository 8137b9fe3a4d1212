"""Impendium keeps the hard contract of ``apply``: only IllegalAction, for any input whatever,
leaving the state unchanged (tests/sim/apply_contract.py)."""

import pytest

from projections.games.impendium import IMPENDIUM
from tests.sim.apply_contract import check_apply_contract


@pytest.mark.parametrize("variant", ["competitive", "cooperative"])
def test_impendium_apply_raises_only_illegal_action_for_any_input(variant: str) -> None:
    # A round limit keeps the playouts that supply the positions short; Turmoil brings its
    # own actions (merchants, mercenaries) into play.
    options = {"variant": variant, "round_limit": 12, "turmoil": True}
    counts = [1, 2, 4, 6] if variant == "competitive" else [3, 5]
    check_apply_contract(IMPENDIUM, counts, options)
