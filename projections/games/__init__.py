"""One package per game; importing a package registers its ruleset (see projections.ruleset)."""
