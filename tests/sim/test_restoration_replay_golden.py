"""Golden replays: fixed-seed random Restoration games keep their exact log and final state.

A change that makes the fold faster must not change any result: the same seed gives the
same actions (the last event's hash chains every event before it) and folding that log
gives the same final state (sha256 of its canonical JSON). A change of rules changes these
figures on purpose, with a new ``rules_version``.
"""

from __future__ import annotations

import hashlib

import pytest

from events.envelope import canonical_json
from projections.fold import fold
from projections.games.restoration.game import RESTORATION
from projections.simulate import play_random

#: player count -> (events, the last event's hash, sha256 of the folded final state)
GOLDEN = {
    2: (
        213,
        "2c98f6885950210fb0c48436dfe739ec1c6c1c7fd73e866047708ce8a4302637",
        "d67d913ee5e14dc9e56438662dcdb1bad0406d372eaa3e6a49197a9cce1bdd88",
    ),
    3: (
        231,
        "bba4142de6354bf2dea6d52be0a5a864dcd0bfa69d95bd9cedc86fa191b781af",
        "799690cedeeee51ffafb40522b63dffea3a20684b74f7cdf410949450e2f3930",
    ),
    4: (
        306,
        "21d8a71aa507f35cb7c790c590e31d9479865d2e0c987a79fc7e6003330e58a6",
        "c78d6f6bff75145630c0e6f8ba24a5e6e942544c165a9d91cc98939fd7ec6c4b",
    ),
}


@pytest.mark.parametrize("player_count", sorted(GOLDEN))
def test_a_fixed_seed_game_replays_to_the_recorded_log_and_state(player_count: int) -> None:
    players = [f"P{index + 1}" for index in range(player_count)]
    game, log = play_random(RESTORATION, players, f"golden-restoration-{player_count}")
    events = log.envelopes
    replayed = fold(events)
    assert replayed.state == game.state
    state_hash = hashlib.sha256(canonical_json(replayed.state)).hexdigest()
    assert (len(events), events[-1]["hash"], state_hash) == GOLDEN[player_count]
