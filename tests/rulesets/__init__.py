"""Test-only rulesets: they exercise the fold and the service, and are never product games."""
