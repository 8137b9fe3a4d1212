"""Random legal playouts through a ruleset's own ``legal_actions``, kept as an in-memory log.

Used by ``meeple simulate``, the random-playout tests and the benchmarks. The log is a list
of sealed envelopes exactly as a store would hold them, so it can be exported, imported,
verified and replayed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from events.envelope import GENESIS_HASH, Envelope, NewEvent, seal
from projections.fold import (
    Game,
    advance,
    decide_action,
    decide_system,
    game_created_event,
    refold,
    start,
)
from projections.ruleset import Action, Ruleset

EPOCH = "1970-01-01T00:00:00Z"


class StuckGame(Exception):
    """Nobody can act and no automatic step is due, yet the game has not finished."""


@dataclass
class MemoryLog:
    """A game's log held in memory, appended to the way a store would."""

    game_id: str
    envelopes: list[Envelope] = field(default_factory=list)
    clock: Callable[[], str] = lambda: EPOCH

    def append(self, event: NewEvent) -> Envelope:
        prev = self.envelopes[-1]["hash"] if self.envelopes else GENESIS_HASH
        envelope = seal(self.game_id, len(self.envelopes) + 1, event, prev, self.clock(), None)
        self.envelopes.append(envelope)
        return envelope


def new_game(
    ruleset: Ruleset,
    players: list[str],
    seed: str,
    options: dict[str, Any] | None = None,
    game_id: str = "sim",
    clock: Callable[[], str] = lambda: EPOCH,
) -> tuple[Game, MemoryLog]:
    """A fresh game and its log, holding only ``game_created``."""
    log = MemoryLog(game_id, clock=clock)
    first = log.append(game_created_event(ruleset, players, options or {}, seed))
    return start(first), log


def step(game: Game, log: MemoryLog, event: NewEvent) -> Envelope:
    """Append ``event`` to the log and fold it into ``game``."""
    envelope = log.append(event)
    by_seq = {e["seq"]: e for e in log.envelopes}
    advance(game, envelope, by_seq.__getitem__, lambda effective, _seq: refold(by_seq, effective))
    return envelope


def choose_random_action(game: Game, rng: random.Random) -> tuple[int, Action] | None:
    """A random (seat, action) among the seats the game waits for, or None if none can act."""
    status = game.ruleset.status(game.state)
    seats = list(status.get("to_act") or [])
    rng.shuffle(seats)
    for seat in seats:
        actions = game.ruleset.legal_actions(game.state, seat)
        if actions:
            return seat, rng.choice(actions)
    return None


def play_random(
    ruleset: Ruleset,
    players: list[str],
    seed: str,
    options: dict[str, Any] | None = None,
    max_steps: int = 100_000,
    on_step: Callable[[Game, Envelope], None] | None = None,
    game_id: str = "sim",
) -> tuple[Game, MemoryLog]:
    """Play one game to its end with random legal actions; the choices derive from ``seed``."""
    game, log = new_game(ruleset, players, seed, options, game_id=game_id)
    chooser = random.Random(f"choices:{seed}")
    for _ in range(max_steps):
        status = ruleset.status(game.state)
        if status["finished"]:
            return game, log
        event: NewEvent | None = None
        if status.get("awaiting_system"):
            decided = decide_system(game)
            if decided is None:
                raise StuckGame(f"awaiting {status['awaiting_system']} but no system action")
            event = decided[0]
        else:
            choice = choose_random_action(game, chooser)
            if choice is None:
                raise StuckGame(f"nobody can act at version {game.version}: {status}")
            event = decide_action(game, *choice)[0]
        envelope = step(game, log, event)
        if on_step is not None:
            on_step(game, envelope)
    raise StuckGame(f"no end after {max_steps} steps")
