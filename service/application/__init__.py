"""The application layer: what is done to games (commands, seats and the lobby's rules, bots'
turns, what a viewer may see); it knows no Flask and no status codes (docs/architecture.md)."""
