"""Restoration (2-4 players): the ruleset, registered under the id ``restoration``."""

from projections.games.restoration.game import RESTORATION, Restoration
from projections.ruleset import register

register(RESTORATION)

__all__ = ["RESTORATION", "Restoration"]
