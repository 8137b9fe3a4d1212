"""Gutenberg (Granna / Portal Games) as the ``gutenberg`` ruleset; see rules.py."""

from projections.games.gutenberg.rules import GUTENBERG
from projections.ruleset import register

register(GUTENBERG)
