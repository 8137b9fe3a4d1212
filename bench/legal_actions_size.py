"""The largest legal-actions answer (bytes of JSON) per game, before and after decisions were
described (docs/api.md, "Decisions"): ``python -m bench.legal_actions_size`` (not a ratio
bench; ``make bench`` skips it).

Random playouts of every game at its smallest and largest player counts
(``MEEPLE_BENCH_GAMES`` games per count, default 3) give the positions; at each one, for every
seat with a legal action, the answer is built as ``GET .../legal-actions`` builds it:

- before: ``{version, seat, actions}`` with the complete list (the answer before decisions
  were described);
- after: the answer with its defaults (decision and free actions described, a page of 100);
- after, ``list=false``: the descriptions alone.

Prints per game the positions seen and the largest answer of each kind, with the position's
phase and its longest list.
"""

from __future__ import annotations

import json
import os
from typing import Any

from projections import decisions
from projections.ruleset import all_rulesets
from projections.simulate import play_random

GAMES = int(os.environ.get("MEEPLE_BENCH_GAMES", "3"))
PAGE = 100  # service.http.resources.games.LEGAL_ACTIONS_PAGE


def _size(body: dict[str, Any]) -> int:
    return len(json.dumps(body, separators=(",", ":")))


def measure(ruleset: Any, games: int = GAMES) -> dict[str, Any]:
    """Positions seen and the largest answer of each kind for one ruleset."""
    largest = {"before": 0, "after": 0, "descriptions": 0}
    where = {"before": "", "after": "", "descriptions": ""}
    positions = 0

    def on_step(game: Any, envelope: Any) -> None:
        nonlocal positions
        for seat in range(len(game.meta["players"])):
            full = ruleset.legal_actions(game.state, seat)
            if not full:
                continue
            positions += 1
            head = {"version": game.version, "seat": seat}
            sizes = {
                "before": _size({**head, "actions": full}),
                "after": _size(
                    {**head, **decisions.answer(ruleset, game.state, seat, 0, PAGE, True)}
                ),
                "descriptions": _size(
                    {**head, **decisions.answer(ruleset, game.state, seat, 0, PAGE, False)}
                ),
            }
            for kind, size in sizes.items():
                if size > largest[kind]:
                    largest[kind] = size
                    where[kind] = f"{ruleset.status(game.state)['phase']}, {len(full)} actions"

    for count in sorted({ruleset.min_players, ruleset.max_players}):
        for index in range(games):
            players = [f"P{n + 1}" for n in range(count)]
            play_random(ruleset, players, f"size-{count}-{index}", on_step=on_step)
    return {"positions": positions, "largest": largest, "where": where}


def main() -> None:
    print(f"{'game':<12} {'positions':>9} {'before':>9} {'after':>9} {'list=false':>10}  where")
    for ruleset in all_rulesets():
        found = measure(ruleset)
        largest, where = found["largest"], found["where"]
        print(
            f"{ruleset.id:<12} {found['positions']:>9} {largest['before']:>9,} "
            f"{largest['after']:>9,} {largest['descriptions']:>10,}  "
            f"before: {where['before']}; after: {where['after']}"
        )


if __name__ == "__main__":
    main()
