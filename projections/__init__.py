"""Folding events into game state: the ruleset contract, shared game pieces, the fold."""
