"""Derived views across games (the game index ...), kept up to date from the store's feed."""
