"""The random-playout conformance check every ruleset must pass (RULESET-DONE.md, item 7).

``check_random_game`` plays one game to its end with random legal actions and checks, as it
goes and at the end:

- every step's chosen action applies; a sample of the other legal actions applies on a copy;
- illegal actions (another seat acting out of turn, an unknown type, the step just taken
  sent again) raise IllegalAction and leave the state exactly as it was (``Unchanged``:
  the same value and the same JSON types all the way down, so ``True`` never passes for
  ``1``);
- state round-trips through JSON exactly;
- no seat's view changes when everything that seat cannot see is redrawn by
  ``resample_hidden`` (so views leak nothing hidden), and no view holds the seed;
- ``summarize`` gives a line for every step;
- the game ends; a finished game has no legal actions and has a result with a ranking;
- replaying the log from scratch gives the identical state.

Games add their own invariants (no negative resources, every component somewhere exactly
once) through ``invariants``.
"""

from __future__ import annotations

import json
import os
import pickle
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from events.envelope import Envelope
from projections.fold import Game, advance, copy_state, refold, start, step_action
from projections.ruleset import IllegalAction, Ruleset, State
from projections.simulate import play_random

Invariants = Callable[[State], None]


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no NaN; ``true`` and ``1`` differ."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def strictly_equal(left: Any, right: Any) -> bool:
    """Equal with the same types all the way down (``True != 1``, ``1.0 != 1``, no tuples)."""
    return next(differences(left, right), None) is None


def differences(left: Any, right: Any, path: str = "state") -> Iterator[str]:
    """Where two values differ, in value or in type (dict key order aside), outermost first."""
    if type(left) is not type(right):
        yield f"{path}: {left!r} became {right!r}"
    elif isinstance(left, dict):
        for key in left.keys() | right.keys():
            if key not in right:
                yield f"{path}[{key!r}] was removed"
            elif key not in left:
                yield f"{path}[{key!r}] was added: {right[key]!r}"
            else:
                yield from differences(left[key], right[key], f"{path}[{key!r}]")
    elif isinstance(left, list):
        if len(left) != len(right):
            yield f"{path}: {len(left)} items became {len(right)}"
        else:
            for index, (was, now) in enumerate(zip(left, right, strict=True)):
                yield from differences(was, now, f"{path}[{index}]")
    elif left != right:
        yield f"{path}: {left!r} became {right!r}"


@dataclass(frozen=True)
class Unchanged:
    """A state as it was before ``apply`` was tried on it, to prove that a refused (or
    failing) action left it exactly so: a deep comparison, types included."""

    blob: bytes

    @classmethod
    def of(cls, state: State) -> Unchanged:
        return cls(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))

    def state(self) -> State:
        """A fresh copy of the state as it was."""
        return pickle.loads(self.blob)

    def check(self, state: State, what: str) -> None:
        if pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL) == self.blob:
            return  # the same bytes: surely unchanged (the walk below is slower)
        changed = list(differences(self.state(), state))
        assert not changed, f"{what} changed the state: " + "; ".join(changed[:5])


def games_per_count(default: int = 50) -> int:
    """How many random games per player count: 50 in CI, thousands in ``make soak``."""
    return int(os.environ.get("MEEPLE_SOAK_GAMES", default))


def check_random_game(
    ruleset: Ruleset,
    player_count: int,
    seed: str,
    options: dict[str, Any] | None = None,
    invariants: Invariants | None = None,
    sample_legal: int = 2,
    check_views_every: int = 7,
) -> Game:
    """Play and check one random game; returns the finished game."""
    players = [f"P{index + 1}" for index in range(player_count)]
    probe = random.Random(f"probe:{seed}")
    steps = 0

    def on_step(game: Game, envelope: Envelope) -> None:
        nonlocal steps
        steps += 1
        state = game.state
        assert strictly_equal(json.loads(json.dumps(state)), state), (
            "state must round-trip through JSON, types included"
        )
        if invariants is not None:
            invariants(state)
        status = ruleset.status(state)
        _check_legal_sample(ruleset, game, status, probe, sample_legal)
        _check_illegal(ruleset, game, status, probe)
        if envelope["type"] in ("action", "system"):
            _check_sent_again(ruleset, game, step_action(envelope))
        if steps % check_views_every == 0 or status["finished"]:
            _check_views(ruleset, game, probe)

    game, log = play_random(ruleset, players, seed, options, on_step=on_step)
    status = ruleset.status(game.state)
    assert status["finished"] and not status["to_act"] and status["awaiting_system"] is None
    for seat in range(player_count):
        assert ruleset.legal_actions(game.state, seat) == [], "a finished game has no actions"
    result = ruleset.result(game.state)
    assert result is not None and result["ranking"], "a finished game has a ranking"
    assert sorted(s for place in result["ranking"] for s in place) == list(range(player_count))
    replayed = _replay_with_summaries(ruleset, log.envelopes)
    assert replayed.state == game.state, "replaying the log gives the identical state"
    return game


def _check_legal_sample(
    ruleset: Ruleset, game: Game, status: dict[str, Any], probe: random.Random, count: int
) -> None:
    for seat in status["to_act"]:
        actions = ruleset.legal_actions(game.state, seat)
        for action in probe.sample(actions, min(count, len(actions))):
            _check_schema(ruleset, action)
            trial = copy_state(game.state)
            ruleset.apply(trial, {**action, "seat": seat}, random.Random(probe.random()))


def _check_schema(ruleset: Ruleset, action: dict[str, Any]) -> None:
    """Every legal action can be posted back verbatim: its type's schema loads it unchanged."""
    schemas = ruleset.action_schemas()
    assert action["type"] in schemas, f"no marshmallow schema for action {action['type']!r}"
    assert schemas[action["type"]]().load(action) == action, f"schema changes {action}"


def _check_illegal(
    ruleset: Ruleset, game: Game, status: dict[str, Any], probe: random.Random
) -> None:
    before = Unchanged.of(game.state)
    seats = range(len(game.meta["players"]))
    attempts: list[dict[str, Any]] = [
        {"type": "no_such_action_type", "seat": probe.choice(list(seats))}
    ]
    idle = [seat for seat in seats if not ruleset.legal_actions(game.state, seat)]
    for seat in status["to_act"]:
        for action in ruleset.legal_actions(game.state, seat)[:1]:
            for other in idle[:1]:
                attempts.append({**action, "seat": other})
    for attempt in attempts:
        try:
            ruleset.apply(game.state, attempt, random.Random(0))
        except IllegalAction as error:
            assert error.code and error.code == error.code.lower(), error
        else:
            raise AssertionError(f"illegal action was accepted: {attempt}")
        before.check(game.state, f"a refused {attempt}")


def _check_sent_again(ruleset: Ruleset, game: Game, action: dict[str, Any]) -> None:
    """The step just taken, sent again (a client retrying, a stale page, a second click):
    whether it is legal again or not, ``apply`` raises nothing but IllegalAction, and a
    refusal leaves the state exactly as it was."""
    before = Unchanged.of(game.state)
    trial = before.state()
    try:
        ruleset.apply(trial, action, random.Random(0))
    except IllegalAction as error:
        assert error.code and error.code == error.code.lower(), error
        before.check(trial, f"the refused repeat of {action}")
    except Exception as error:
        raise AssertionError(
            f"{action} sent again raised {type(error).__name__}: {error!r}, not IllegalAction"
        ) from error


def _check_views(ruleset: Ruleset, game: Game, probe: random.Random) -> None:
    seed = game.seed
    for seat in [None, *range(len(game.meta["players"]))]:
        view = ruleset.view(game.state, seat)
        text = json.dumps(view)
        assert seed not in text, "a view must never hold the seed"
        if seat is None:
            continue
        resampled = ruleset.resample_hidden(game.state, seat, random.Random(probe.random()))
        assert ruleset.view(resampled, seat) == view, (
            f"seat {seat}'s view changed when only what it cannot see was redrawn"
        )


def _replay_with_summaries(ruleset: Ruleset, envelopes: list[Envelope]) -> Game:
    """Fold the log from scratch, asking ``summarize`` for a line before every step."""
    by_seq = {envelope["seq"]: envelope for envelope in envelopes}
    game = start(envelopes[0])
    for envelope in envelopes[1:]:
        if envelope["type"] in ("action", "system"):
            line = ruleset.summarize(game.state, step_action(envelope))
            assert isinstance(line, str) and line.strip(), "summarize gives a readable line"
        advance(game, envelope, by_seq.__getitem__, lambda eff, _seq: refold(by_seq, eff))
    return game
