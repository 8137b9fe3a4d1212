"""Seeded randomness: one generator per position in the effective history.

A game's secret seed and an action's position in the effective history fully decide
what that action draws, so a replay draws the same cards and undo-then-redo of the
same action draws them again (no rerolls through undo). Position 0 is the setup.

Most steps draw nothing, and seeding a Mersenne Twister costs about as much as applying
a typical action, so the generator is seeded on its first use (``LazyRandom``); it draws
exactly what ``random.Random`` seeded with the same key draws.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any


class LazyRandom(random.Random):
    """A ``random.Random`` that seeds itself with ``key`` only when first asked for a number."""

    def __init__(self, key: int) -> None:
        self._pending: int | None = key

    def _seed_now(self) -> None:
        if self._pending is not None:
            key, self._pending = self._pending, None
            super().seed(key)

    def seed(self, a: Any = None, version: int = 2) -> None:
        self._pending = None
        super().seed(a, version)

    def random(self) -> float:
        if self._pending is not None:
            self._seed_now()
        return super().random()

    def getrandbits(self, k: int) -> int:
        if self._pending is not None:
            self._seed_now()
        return super().getrandbits(k)

    def getstate(self) -> tuple[Any, ...]:
        self._seed_now()
        return super().getstate()

    def setstate(self, state: tuple[Any, ...]) -> None:
        self._pending = None
        super().setstate(state)


def derive_rng(seed: str, position: int) -> random.Random:
    """The generator for the action at ``position`` (0 = setup) of the game seeded ``seed``."""
    digest = hashlib.sha256(f"{seed}:{position}".encode()).digest()
    return LazyRandom(int.from_bytes(digest[:16], "big"))


def seed_commitment(seed: str) -> str:
    """sha256 of the seed, published at creation; the seed itself is revealed at the end."""
    return hashlib.sha256(seed.encode()).hexdigest()
