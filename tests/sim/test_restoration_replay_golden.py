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
        160,
        "75de04299caf36444a0fd04036e1e387388c9393099840a1c0f824ec7e172b43",
        "d2abfb19d4b2229324e213374e190dce4dfacb31c98b6adc4a276ec5449c0e70",
    ),
    3: (
        231,
        "2e795e7c0217b94b40e35ed7164f736004ec9e2fd84ad52eb1e1efc62ea10ea9",
        "799690cedeeee51ffafb40522b63dffea3a20684b74f7cdf410949450e2f3930",
    ),
    4: (
        306,
        "8d99d3ea1c5329e8cb513e0bf24c960ab6d486ad0982835fb103a2a0a7e0aea8",
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
