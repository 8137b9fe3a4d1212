"""Shared fixtures. The test-only Tally ruleset is registered for every test."""

from __future__ import annotations

from projections.ruleset import register
from tests.rulesets.tally import TALLY

pytest_plugins = ["tests.redis_servers"]

register(TALLY)
