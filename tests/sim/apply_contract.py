"""The hard contract of ``apply`` every ruleset must keep (docs/architecture.md).

``apply`` raises only ``IllegalAction`` for any input whatever, and a refused action leaves
the state unchanged. Agents, imports and the HTTP edge all reach ``apply``; none of them may
see a ``KeyError`` or ``TypeError``, and a boolean is never an integer.

``check_apply_contract(ruleset, player_counts, options)`` takes states from random playouts
at each player count (positions spread over the game, at least one for every combination of
legal action types seen, so open decisions such as a pending reward choice are included) and
feeds ``apply``, on a copy of each state:

1. a systematic sweep: for one legal action of every type each waiting seat has, every
   mutation ``mutations`` lists (a key dropped, an unknown key added, a value replaced by
   another JSON type - bool, float, str, None, list, dict, negative, huge - a list emptied,
   shuffled or duplicated, nested values likewise, the ``type`` swapped) under every seat
   variant (the acting seat, another seat, None, a bool, out of range);
2. hypothesis: arbitrary JSON-like values (dicts with a ``type`` drawn from the ruleset's
   action types and random keys and values, and non-dicts) and random chains of mutations.

For each action: it either raises ``IllegalAction`` with a snake_case code and the copy is
unchanged (a deep comparison, types included, so ``True`` never passes for ``1``), or it is
accepted; any other exception fails with the action shown. An accepted mutant in which a value
changed its JSON type (bool, int, float, str, list or dict for another; None aside) fails, and after
an accepted action the state must still round-trip through JSON exactly, types included.

The depth scales with ``MEEPLE_SOAK_GAMES`` (50 in CI, 1000 in ``make soak``) like
``conformance.py``; hypothesis runs derandomized, so CI is reproducible.
"""

from __future__ import annotations

import json
import random
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from projections.fold import Game, copy_state
from projections.ruleset import Action, IllegalAction, Ruleset, State
from projections.simulate import play_random
from service.http.errors import PROBLEMS
from service.http.resources.docs import game_codes
from tests.sim.conformance import Unchanged, canonical, games_per_count, strictly_equal

#: The key a mutation adds; no ruleset's action has it.
UNKNOWN_KEY = "no_such_key"
HUGE = 10**18
#: ruleset id -> every code its IllegalAction refusals carried in this process
CODES_SEEN: dict[str, set[str]] = {}
_CI_GAMES = 50


@dataclass(frozen=True)
class Position:
    """One state met in a random playout, with what is needed to say where it came from."""

    label: str
    state: State
    seats: int
    #: seat -> its legal actions there (only seats that have some)
    legal: dict[int, list[Action]]
    #: the state as it was, to compare with after a refused action
    before: Unchanged


@dataclass(frozen=True)
class Mutant:
    """An action derived from a legal one; ``retyped`` when a value changed its JSON type."""

    what: str
    action: Any
    retyped: bool


def check_apply_contract(
    ruleset: Ruleset,
    player_counts: list[int] | range,
    options: dict[str, Any] | None = None,
    *,
    playouts: int | None = None,
    positions: int | None = None,
    per_type: int | None = None,
    max_examples: int | None = None,
) -> None:
    """Check that ``apply`` keeps its contract at positions of random games of ``ruleset``.

    ``playouts`` games per player count (default 3), ``positions`` states per player count
    (default 24), ``per_type`` positions at which each action type's mutations are all
    swept (default 2), ``max_examples`` hypothesis examples per player count (default 300);
    all grow with ``MEEPLE_SOAK_GAMES``.
    """
    depth = max(games_per_count(_CI_GAMES) / _CI_GAMES, 0.1)
    playouts = playouts or max(1, round(3 * depth))
    positions = positions or max(4, round(24 * depth))
    per_type = per_type or max(1, round(2 * depth))
    max_examples = max_examples or max(20, round(300 * depth))
    for count in player_counts:
        found = collect_positions(ruleset, count, options, playouts, positions)
        sweep_mutations(ruleset, found, per_type)
        fuzz(ruleset, found, max_examples)
    # every code a refusal carried has its entry on /docs (the problem's ``type`` points there)
    undocumented = CODES_SEEN.get(ruleset.id, set()) - set(game_codes(ruleset)) - set(PROBLEMS)
    assert not undocumented, (
        f"/docs lists no {sorted(undocumented)} (service/http/resources/docs.py game_codes)"
    )


# Positions ------------------------------------------------------------------------


def collect_positions(
    ruleset: Ruleset,
    player_count: int,
    options: dict[str, Any] | None,
    playouts: int,
    wanted: int,
) -> list[Position]:
    """``wanted`` states from ``playouts`` random games: one per combination of legal action
    types first (so rare decisions are all there), then spread at random over the rest."""
    players = [f"P{index + 1}" for index in range(player_count)]
    every: list[tuple[str, State, tuple[str, ...]]] = []
    for index in range(playouts):
        seed = f"apply-contract-{ruleset.id}-{player_count}-{index}"
        steps = 0

        def on_step(game: Game, _envelope: Any, seed: str = seed) -> None:
            nonlocal steps
            steps += 1
            kinds = {
                action["type"]
                for seat in range(player_count)
                for action in ruleset.legal_actions(game.state, seat)
            }
            label = f"{ruleset.id}, {player_count} players, seed {seed!r}, step {steps}"
            every.append((label, copy_state(game.state), tuple(sorted(kinds))))

        play_random(ruleset, players, seed, options, on_step=on_step)
    picker = random.Random(f"positions:{ruleset.id}:{player_count}")
    by_kinds: dict[tuple[str, ...], list[int]] = {}
    for number, (_label, _state, kinds) in enumerate(every):
        by_kinds.setdefault(kinds, []).append(number)
    chosen = [picker.choice(numbers) for _kinds, numbers in sorted(by_kinds.items())]
    rest = sorted(set(range(len(every))) - set(chosen))
    chosen += picker.sample(rest, min(len(rest), max(0, wanted - len(chosen))))
    positions = []
    for number in chosen:
        label, state, _kinds = every[number]
        legal = {
            seat: actions
            for seat in range(player_count)
            if (actions := ruleset.legal_actions(state, seat))
        }
        positions.append(Position(label, state, player_count, legal, Unchanged.of(state)))
    return positions


# The property ---------------------------------------------------------------------


def check_one(ruleset: Ruleset, position: Position, action: Any, retyped: bool = False) -> None:
    """``apply`` refuses ``action`` with IllegalAction leaving the state as it was, or accepts
    it (then it must not be a retyped mutant, and the state must round-trip through JSON)."""
    trial = position.before.state()
    try:
        ruleset.apply(trial, action, random.Random(0))
    except IllegalAction as error:
        assert isinstance(error.code, str) and error.code == error.code.lower() and error.code, (
            f"IllegalAction needs a snake_case code, got {error.code!r} for {action!r}"
        )
        CODES_SEEN.setdefault(ruleset.id, set()).add(error.code)
        position.before.check(trial, f"a refused ({error.code}) {action!r} at {position.label}")
        return
    except Exception as error:  # the contract is "nothing but IllegalAction"
        trace = "".join(traceback.format_exception(error, limit=-4))
        raise AssertionError(
            f"apply raised {type(error).__name__} instead of IllegalAction for {action!r}\n"
            f"at {position.label}\n{trace}"
        ) from error
    assert not retyped, (
        f"an action with a value of the wrong JSON type was accepted: {action!r}\n"
        f"at {position.label}"
    )
    text = _canonical_or_error(trial)
    assert strictly_equal(json.loads(text), trial), (
        f"after {action!r} the state no longer round-trips through JSON\nat {position.label}"
    )


def _canonical_or_error(state: State) -> str:
    try:
        return canonical(state)
    except (TypeError, ValueError) as error:
        raise AssertionError(f"the state is no longer JSON: {error}") from error


# Mutations ------------------------------------------------------------------------


def json_kind(value: Any) -> str:
    """The JSON type of a value, with bool apart from int and int apart from float."""
    if value is None:
        return "null"
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if isinstance(value, types):
            return kind
    return "list" if isinstance(value, list) else "dict" if isinstance(value, dict) else "other"


def replacements(value: Any) -> Iterator[tuple[str, Any]]:
    """Other values for ``value``: every other JSON type, and numbers out of any range."""
    candidates: list[tuple[str, Any]] = [
        ("true", True),
        ("false", False),
        ("zero", 0),
        ("one", 1),
        ("negative", -1),
        ("huge", HUGE),
        ("huge negative", -HUGE),
        ("float", 1.5),
        ("string", "x"),
        ("empty string", ""),
        ("null", None),
        ("empty list", []),
        ("list", [value]),
        ("empty dict", {}),
        ("dict", {"value": value}),
    ]
    if isinstance(value, int) and not isinstance(value, bool):
        candidates += [
            ("same number as float", float(value)),
            ("same number as string", str(value)),
            ("same number as bool", bool(value)),
            ("next number", value + 1),
            ("number below", value - 1),
        ]
    if isinstance(value, bool):
        candidates += [("same truth as number", int(value)), ("negation", not value)]
    if isinstance(value, str):
        candidates += [("other case", value.upper()), ("padded", f" {value} ")]
    for what, candidate in candidates:
        if json_kind(candidate) != json_kind(value) or candidate != value:
            yield what, candidate


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place inside an action (dict keys and list indexes), outermost first."""
    if isinstance(value, dict):
        for key in value:
            yield (*prefix, key)
            yield from _paths(value[key], (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*prefix, index)
            yield from _paths(item, (*prefix, index))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(action: Action, path: tuple[Any, ...], new: Any) -> Action:
    copy = copy_state(action)
    _get(copy, path[:-1])[path[-1]] = new
    return copy


def _drop(action: Action, path: tuple[Any, ...]) -> Action:
    copy = copy_state(action)
    del _get(copy, path[:-1])[path[-1]]
    return copy


def mutations(action: Action, action_types: list[str]) -> list[Mutant]:
    """Every single mutation of a legal ``action`` (``type`` and ``seat`` aside, see
    ``seat_variants``): keys dropped and added, values replaced, lists emptied, shuffled and
    duplicated, the ``type`` swapped."""
    found: list[Mutant] = [Mutant("unknown key added", {**action, UNKNOWN_KEY: 1}, False)]
    for path in _paths({k: v for k, v in action.items() if k not in ("type", "seat")}):
        where = "/".join(map(str, path))
        value = _get(action, path)
        parent = _get(action, path[:-1])
        if isinstance(parent, dict):
            found.append(Mutant(f"{where} dropped", _drop(action, path), False))
            nested = _set(action, path[:-1], {**parent, UNKNOWN_KEY: 1}) if path[:-1] else None
            if nested is not None:
                found.append(Mutant(f"unknown key added in {where}", nested, False))
        else:
            found.append(Mutant(f"{where} removed from its list", _drop(action, path), False))
        for what, new in replacements(value):
            retyped = new is not None and value is not None and json_kind(new) != json_kind(value)
            found.append(Mutant(f"{where} replaced by {what}", _set(action, path, new), retyped))
        if isinstance(value, list) and value:
            found.append(Mutant(f"{where} doubled", _set(action, path, value + value), False))
            found.append(Mutant(f"{where} reversed", _set(action, path, value[::-1]), False))
            found.append(
                Mutant(f"{where} first repeated", _set(action, path, [value[0]] * 3), False)
            )
    for other in action_types:
        if other != action.get("type"):
            found.append(Mutant(f"type swapped to {other}", {**action, "type": other}, False))
    for what, new in (
        ("type unknown", "no_such_action_type"),
        ("type null", None),
        ("type number", 1),
        ("type list", [action.get("type")]),
    ):
        found.append(Mutant(what, {**action, "type": new}, False))
    found.append(Mutant("type dropped", {k: v for k, v in action.items() if k != "type"}, False))
    return found


def seat_variants(seat: int, seats: int) -> list[tuple[str, Any, bool]]:
    """``seat`` values to try with an action: (what, value, retyped)."""
    others = [other for other in range(seats) if other != seat]
    return [
        ("the acting seat", seat, False),
        *[(f"seat {other}", other, False) for other in others[:1]],
        ("seat as bool", bool(seat), True),
        ("seat as float", float(seat), True),
        ("seat as string", str(seat), True),
        ("seat out of range", seats, False),
        ("negative seat", -1, False),
        ("huge seat", HUGE, False),
        ("seat as list", [seat], True),
        ("no seat key", _NO_SEAT, False),
    ]


_NO_SEAT = object()


def _retyped(legal: Action, mutant: Action) -> bool:
    """Whether a value at a place both actions have changed its JSON type (None aside)."""
    body = {key: value for key, value in mutant.items() if key not in ("type", "seat")}
    for path in _paths(body):
        try:
            old = _get(legal, path)
        except (KeyError, IndexError, TypeError):
            continue
        new = _get(mutant, path)
        if old is not None and new is not None and json_kind(old) != json_kind(new):
            return True
    return False


def _with_seat(action: Any, seat: Any) -> Any:
    if not isinstance(action, dict):
        return action
    if seat is _NO_SEAT:
        return {key: value for key, value in action.items() if key != "seat"}
    return {**action, "seat": seat}


def _action_types(ruleset: Ruleset, positions: list[Position]) -> list[str]:
    types = set(ruleset.action_schemas())
    types.update(a["type"] for p in positions for actions in p.legal.values() for a in actions)
    system = (ruleset.system_action(p.state) for p in positions)
    types.update(action["type"] for action in system if action is not None)
    return sorted(types)


def sweep_mutations(ruleset: Ruleset, positions: list[Position], per_type: int = 2) -> None:
    """Every mutation of a legal action of each type under every seat variant, and the
    action as a system step (``seat`` None), at the first ``per_type`` positions (and seats)
    where that type is legal."""
    types = _action_types(ruleset, positions)
    swept: Counter[str] = Counter()
    for position in positions:
        for seat, actions in position.legal.items():
            one_per_type = {action["type"]: action for action in reversed(actions)}
            for action in one_per_type.values():
                if swept[action["type"]] >= per_type:
                    continue
                swept[action["type"]] += 1
                for _what, seat_value, seat_retyped in seat_variants(seat, position.seats):
                    check_one(ruleset, position, _with_seat(action, seat_value), seat_retyped)
                check_one(ruleset, position, {**action, "seat": None})
                for mutant in mutations(action, types):
                    check_one(ruleset, position, {**mutant.action, "seat": seat}, mutant.retyped)


# Hypothesis -----------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=12,
)


def _arbitrary_actions(
    types: list[str], keys: list[str], values: list[Any]
) -> st.SearchStrategy[Any]:
    """Dicts with a ruleset's action type and random keys and values, and non-dicts."""
    value = _JSON | st.sampled_from(values) if values else _JSON
    key = st.sampled_from(keys) | st.text(max_size=8) if keys else st.text(max_size=8)
    shaped = st.builds(
        lambda kind, body: {**body, "type": kind},
        st.sampled_from(types),
        st.dictionaries(key, value, max_size=6),
    )
    return shaped | _JSON


def _keys_and_values(ruleset: Ruleset, positions: list[Position]) -> tuple[list[str], list[Any]]:
    keys = {name for schema in ruleset.action_schemas().values() for name in schema().fields}
    values: list[Any] = []
    seen: set[str] = set()
    for position in positions:
        for actions in position.legal.values():
            for action in actions:
                keys.update(action)
                for key, value in action.items():
                    text = canonical(value)
                    if key != "type" and text not in seen:
                        seen.add(text)
                        values.append(value)
    return sorted(keys), values


def fuzz(ruleset: Ruleset, positions: list[Position], max_examples: int) -> None:
    """Hypothesis: arbitrary actions and chains of mutations of legal ones, at random
    positions, under random seats."""
    types = _action_types(ruleset, positions)
    keys, values = _keys_and_values(ruleset, positions)
    arbitrary = _arbitrary_actions(types, keys, values)
    cache: dict[str, list[Mutant]] = {}

    def mutants_of(action: Action) -> list[Mutant]:
        key = canonical(action)
        if key not in cache:
            cache[key] = mutations(action, types)
        return cache[key]

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def run(data: st.DataObject) -> None:
        position = data.draw(st.sampled_from(positions), label="position")
        seats = [*range(position.seats), None, True, False, -1, position.seats]
        retyped = False
        mutate = data.draw(st.booleans(), label="mutate a legal action")
        if position.legal and mutate:
            seat = data.draw(st.sampled_from(sorted(position.legal)), label="seat")
            action = data.draw(st.sampled_from(position.legal[seat]), label="legal action")
            legal = action
            for _ in range(data.draw(st.integers(1, 3), label="mutations")):
                action = data.draw(st.sampled_from(mutants_of(action)), label="mutant").action
            seat_value: Any = data.draw(st.sampled_from(seats) | st.just(seat), label="seat")
            retyped = isinstance(seat_value, bool) or _retyped(legal, action)
        else:
            action = data.draw(arbitrary, label="arbitrary action")
            seat_value = data.draw(st.sampled_from([*seats, _NO_SEAT]), label="seat")
        check_one(ruleset, position, _with_seat(action, seat_value), retyped)

    run()


__all__ = [
    "Mutant",
    "Position",
    "canonical",
    "check_apply_contract",
    "check_one",
    "collect_positions",
    "fuzz",
    "json_kind",
    "mutations",
    "seat_variants",
    "sweep_mutations",
]
