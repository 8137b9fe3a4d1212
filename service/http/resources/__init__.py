"""One Flask blueprint per resource of the REST API (docs/api.md)."""
