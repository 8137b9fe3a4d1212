"""The generated-client tests run the bots against a real ``meeple serve`` (the security
tests' ``live_server`` fixture)."""

from tests.security.conftest import live_server

__all__ = ["live_server"]
