"""The live hub: who is told when a game's log grows, across processes (docs/operations.md,
"Live streams")."""
