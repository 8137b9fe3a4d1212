"""Golden replays of Impression: three fixed random games (2, 3 and 4 players, rules 5),
stored as their seat and system actions, fold to the same final state today as when they
were recorded. Any change to the fold that changes a result - a faster path that is not
quite the same - fails here, whatever ``legal_actions`` lists now.

A deliberate rules change (with a new ``rules_version``) re-records them:
``python -m tests.sim.test_impression_golden_replay``.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from events.envelope import NewEvent, canonical_json
from projections.fold import decide_system, fold
from projections.games.impression import IMPRESSION
from projections.ruleset import Action
from projections.simulate import new_game, play_random, step

GOLDEN = Path(__file__).parents[1] / "unit" / "impression" / "data" / "golden_games.jsonl"
COUNTS = (2, 3, 4)


def state_hash(state: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(state)).hexdigest()


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """Rebuild the game's log from its recorded actions, then fold the log from scratch."""
    game, log = new_game(IMPRESSION, record["players"], record["seed"])
    for action in record["actions"]:
        seat = action["seat"]
        body: Action = {key: value for key, value in action.items() if key != "seat"}
        if seat is None:
            decided = decide_system(game)
            assert decided is not None and decided[0].data["action"] == body
            event = decided[0]
        else:
            event = NewEvent(type="action", actor={"seat": seat}, data={"action": body})
        step(game, log, event)
    folded = fold(log.envelopes)
    assert folded.state == game.state
    return folded.state


def records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLDEN.read_text().splitlines()]


@pytest.mark.parametrize("index", range(len(COUNTS)))
def test_a_recorded_game_folds_to_its_recorded_final_state(index: int) -> None:
    record = records()[index]
    state = replay(record)
    assert state["finished"] and IMPRESSION.rules_version == record["rules_version"]
    assert state_hash(state) == record["final_state_sha256"]


def record_games() -> None:
    """Play and store the golden games (only after a deliberate rules change)."""
    lines = []
    for count in COUNTS:
        players = [f"P{index + 1}" for index in range(count)]
        seed = f"golden-impression-{count}"
        game, log = play_random(IMPRESSION, players, seed)
        actions = [
            {**envelope["data"]["action"], "seat": envelope["actor"].get("seat")}
            for envelope in log.envelopes[1:]
        ]
        record = {
            "players": players,
            "seed": seed,
            "rules_version": IMPRESSION.rules_version,
            "final_state_sha256": state_hash(game.state),
            "actions": actions,
        }
        lines.append(json.dumps(record, separators=(",", ":")))
    GOLDEN.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    record_games()
    sys.exit(0)
