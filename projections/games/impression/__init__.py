"""Impression: printing workshops, lead letters and travel (rules/impression.txt)."""

from projections.games.impression.rules import Impression
from projections.ruleset import register

IMPRESSION = register(Impression())

__all__ = ["IMPRESSION", "Impression"]
