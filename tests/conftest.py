"""Shared fixtures. The test-only Tally ruleset is registered for every test."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from projections.ruleset import register
from service.app import create_app
from service.bootstrap import Services
from tests.rulesets.tally import TALLY

pytest_plugins = ["tests.redis_servers"]

register(TALLY)


@pytest.fixture
def app(services: Services) -> Flask:
    """The app over the ``services`` fixture of the test's own module or folder."""
    return create_app(services=services)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
