"""Random playouts of the test-only Tally ruleset through the shared conformance check."""

import pytest

from tests.rulesets.tally import TALLY
from tests.sim.conformance import check_random_game


@pytest.mark.parametrize("player_count", [1, 2, 3, 4])
def test_random_tally_games_pass_the_conformance_check(player_count: int) -> None:
    for index in range(20):
        check_random_game(TALLY, player_count, seed=f"tally-{player_count}-{index}")
