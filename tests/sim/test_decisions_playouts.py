"""Every game's descriptions of its decisions over random playouts (docs/api.md, Decisions): at
every position, for every seat, the descriptions name exactly the listed action types with
their counts, every listed action satisfies its type's description, what the sampler draws
from an exact description is a listed action (and applies), and the free action types are
the game's own and only those."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from projections import decisions
from projections.fold import Game, copy_state
from projections.ruleset import Ruleset, all_rulesets
from projections.simulate import play_random

GAMES_PER_COUNT = 2
#: the most games at the most players played until a free action is offered
MAX_GAMES_FOR_FREE = 8
SAMPLES = 3
#: the types each game describes itself (a split or choices instead of what the list gives),
#: each of which the playouts must meet
OWN_DESCRIPTIONS = {
    "gutenberg": {"submit_plan", "keep_gears", "choose_types"},
    "impendium": {"take_spoils"},
}


def _key(action: dict[str, Any]) -> str:
    return json.dumps(action, sort_keys=True)


def _check_position(
    ruleset: Ruleset, game: Game, seat: int, rng: random.Random, own: set[str]
) -> set[str]:
    """Check one seat's descriptions; the free action types it was offered. Adds to ``own``
    the types described by a game's own description."""
    listed = ruleset.legal_actions(game.state, seat)
    described = ruleset.describe_actions(game.state, seat)
    keys = {_key(action) for action in listed}
    counts: dict[str, set[str]] = {}
    for action in listed:
        counts.setdefault(action["type"], set()).add(_key(action))
    assert set(described) == set(counts), "the descriptions name the listed types"
    for kind, description in described.items():
        assert description["type"] == kind
        if description != decisions.describe_type(kind, [a for a in listed if a["type"] == kind]):
            own.add(kind)
        assert description["count"] == len(counts[kind]), f"{kind}: count"
    for action in listed:
        assert decisions.satisfies(described[action["type"]], action), action
    for description in described.values():
        if not description["exact"]:
            continue
        for _ in range(SAMPLES):
            drawn = decisions.sample(description, rng)
            assert _key(drawn) in keys, f"sampled {drawn} is not legal"
        trial = copy_state(game.state)
        ruleset.apply(trial, {**drawn, "seat": seat}, random.Random(rng.random()))
    decision, free = decisions.split_decision(described, ruleset.free_action_types)
    assert len(decision) + len(free) == len(described)
    return {description["type"] for description in free}


@pytest.mark.parametrize("ruleset", all_rulesets(), ids=lambda ruleset: ruleset.id)
def test_descriptions_fit_the_legal_actions_in_random_playouts(ruleset: Ruleset) -> None:
    free_seen: set[str] = set()
    own: set[str] = set()
    rng = random.Random(f"describe:{ruleset.id}")
    counts = sorted({ruleset.min_players, ruleset.max_players})
    games = [(count, index) for count in counts for index in range(GAMES_PER_COUNT)]
    # Free actions may take luck to be offered (Impression's need a signboard's cost or a
    # contract in hand): more games at the most players, a bounded few, until one is.
    extra = [(counts[-1], index) for index in range(GAMES_PER_COUNT, MAX_GAMES_FOR_FREE)]
    for count, index in games + extra:
        if (count, index) in extra and (free_seen or not ruleset.free_action_types):
            break

        def on_step(game: Game, envelope: Any) -> None:
            # The seats the game waits for, and now and then another one (free actions
            # out of turn).
            seats = set(ruleset.status(game.state)["to_act"])
            if envelope["seq"] % 4 == 0:
                seats.add(rng.randrange(len(game.meta["players"])))
            for seat in sorted(seats):
                free_seen.update(_check_position(ruleset, game, seat, rng, own))

        players = [f"P{n + 1}" for n in range(count)]
        play_random(ruleset, players, f"describe-{count}-{index}", on_step=on_step)
    assert own == OWN_DESCRIPTIONS.get(ruleset.id, set())
    assert free_seen <= ruleset.free_action_types
    if ruleset.free_action_types:
        assert free_seen, f"{ruleset.id}: no free action was offered in the playouts"


def test_gutenberg_describes_plans_and_guillards_gears_without_listing_them() -> None:
    """The huge choices are a split and choices, counted exactly, far shorter than the list;
    buying types and activating gears are free actions, never the decision."""
    ruleset = next(r for r in all_rulesets() if r.id == "gutenberg")
    seen: dict[str, int] = {}

    def on_step(game: Game, envelope: Any) -> None:
        for seat in range(len(game.meta["players"])):
            described = ruleset.describe_actions(game.state, seat)
            decision, free = decisions.split_decision(described, ruleset.free_action_types)
            assert not {"buy_type", "activate_gear"} & {d["type"] for d in decision}
            for description in decision:
                if description["type"] in ("submit_plan", "keep_gears"):
                    assert description["params"][0]["kind"] in ("split", "choose")
                    size = len(json.dumps(description))
                    seen[description["type"]] = max(seen.get(description["type"], 0), size)
            if any(d["type"] == "buy_type" for d in free):
                seen["buy_type"] = 1

    for index in range(3):
        play_random(ruleset, ["A", "B", "C", "D"], f"huge-{index}", on_step=on_step)
    assert set(seen) == {"submit_plan", "keep_gears", "buy_type"}
    assert seen["submit_plan"] < 400 and seen["keep_gears"] < 400
