"""Seeded randomness: one generator per position in the effective history.

A game's secret seed and an action's position in the effective history fully decide
what that action draws, so a replay draws the same cards and undo-then-redo of the
same action draws them again (no rerolls through undo). Position 0 is the setup.
"""

from __future__ import annotations

import hashlib
import random


def derive_rng(seed: str, position: int) -> random.Random:
    """The generator for the action at ``position`` (0 = setup) of the game seeded ``seed``."""
    digest = hashlib.sha256(f"{seed}:{position}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def seed_commitment(seed: str) -> str:
    """sha256 of the seed, published at creation; the seed itself is revealed at the end."""
    return hashlib.sha256(seed.encode()).hexdigest()
