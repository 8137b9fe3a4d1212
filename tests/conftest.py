"""Shared fixtures. The test-only Tally ruleset is registered for every test."""

from __future__ import annotations

import os

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, settings

from projections.ruleset import register
from service.app import create_app
from service.bootstrap import Services
from tests.rulesets.tally import TALLY

pytest_plugins = ["tests.redis_servers"]

register(TALLY)

# Property tests draw the same examples on every run, so main never turns red by chance, and
# no example fails for being slow on a loaded machine (a timing is never a test's verdict).
# `make soak` (MEEPLE_SOAK_GAMES set) draws new examples each run, and more of them.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "soak", deadline=None, max_examples=1000, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("soak" if os.environ.get("MEEPLE_SOAK_GAMES") else "ci")


@pytest.fixture
def app(services: Services) -> Flask:
    """The app over the ``services`` fixture of the test's own module or folder."""
    return create_app(services=services)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
