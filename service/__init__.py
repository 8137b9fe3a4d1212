"""Meeple Ledger's service: the HTTP edge, the application layer, the workers and the live hub,
wired by the composition root (docs/architecture.md)."""
