"""Every game knows each of its things by one name: a name spelled otherwise is refused.

A legal action names cells, spaces, tiles and cards by strings ("1,0", "map:2,0/0",
"S07"). The same numbers spelled another way - a Unicode digit for an ASCII one (an
Arabic-Indic one), a leading zero ("01,0"), or "-0" for "0" ("1,-0") - are not the game's
names: a ruleset that read them with ``int()`` would store a second name for one thing, and
the rules that compare names (two Arks on one space, a card in a hand) would treat it as
another thing (docs/rules/impendium.md, "Held-out rules review").

For each game, at positions of random playouts (tests/sim/apply_contract.py), a few legal
actions of every type each seat has are rewritten, every string in them that holds an ASCII
digit (at any depth, keys of objects included) once per rewrite and digit run; ``apply``
must refuse each with IllegalAction and leave the state deep-equal to before.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from projections.fold import copy_state
from projections.games.gutenberg.rules import GUTENBERG
from projections.games.impendium import IMPENDIUM
from projections.games.impression import IMPRESSION
from projections.games.restoration.game import RESTORATION
from projections.ruleset import Action, IllegalAction, Ruleset
from tests.rulesets.tally import TALLY
from tests.sim.apply_contract import Position, canonical, collect_positions

#: A maximal run of ASCII digits in a name.
DIGITS = re.compile("[0-9]+", re.ASCII)
#: Other scripts' digits: int() reads each as the ASCII digit of the same value.
UNICODE_ZEROS = {"Arabic-Indic": 0x0660, "fullwidth": 0xFF10, "Devanagari": 0x0966}
#: Actions of one type rewritten per seat and position (the first listed and one at random).
PER_TYPE = 2


def respellings(name: str) -> Iterator[tuple[str, str]]:
    """(what, the name spelled otherwise) for each digit run of ``name``: its first digit in
    another script, a leading zero, and "-0" for a lone "0" not already signed."""
    for run in DIGITS.finditer(name):
        start = run.start()
        digit = int(name[start])
        for script, zero in UNICODE_ZEROS.items():
            other = chr(zero + digit)
            yield f"{script} digit", name[:start] + other + name[start + 1 :]
        yield "leading zero", name[:start] + "0" + name[start:]
        if run.group() == "0" and not name[:start].endswith("-"):
            yield "-0 for 0", name[:start] + "-" + name[start:]


def respelled_actions(action: Action) -> Iterator[tuple[str, Action]]:
    """(what, action) for every respelling of every name in ``action`` (``type`` aside)."""
    for path, name, is_key in _names(action):
        for what, other in respellings(name):
            yield (
                f"{'/'.join(map(str, path))}: {name!r} -> {other!r} ({what})",
                _replace(action, path, other, is_key),
            )


def _names(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str, bool]]:
    """(path, string, is a key) of every string holding an ASCII digit inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if path == () and key in ("type", "seat"):
                continue
            if isinstance(key, str) and DIGITS.search(key):
                yield (*path, key), key, True
            yield from _names(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _names(item, (*path, index))
    elif isinstance(value, str) and DIGITS.search(value):
        yield path, value, False


def _replace(action: Action, path: tuple[Any, ...], new: str, is_key: bool) -> Action:
    copy = copy_state(action)
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    if is_key:
        parent[new] = parent.pop(path[-1])
    else:
        parent[path[-1]] = new
    return copy


def _sampled(position: Position) -> Iterator[tuple[int, Action]]:
    picker = random.Random(position.label)
    for seat, actions in position.legal.items():
        by_type: dict[str, list[Action]] = {}
        for action in actions:
            by_type.setdefault(action["type"], []).append(action)
        for listed in by_type.values():
            chosen = [listed[0], picker.choice(listed)][:PER_TYPE]
            for action in {canonical(a): a for a in chosen}.values():
                yield seat, action


def refusals(ruleset: Ruleset, counts: list[int], options: dict[str, Any] | None) -> int:
    """Check every respelled name at positions of random games; the number of names seen."""
    names = 0
    for count in counts:
        for position in collect_positions(ruleset, count, options, playouts=2, wanted=24):
            for seat, action in _sampled(position):
                for what, respelled in respelled_actions(action):
                    names += 1
                    _refused(ruleset, position, {**respelled, "seat": seat}, what)
    return names


def _refused(ruleset: Ruleset, position: Position, action: Action, what: str) -> None:
    trial = position.before.state()
    try:
        ruleset.apply(trial, action, random.Random(0))
    except IllegalAction:
        position.before.check(trial, f"a refused respelling {action!r} at {position.label}")
        return
    raise AssertionError(
        f"{ruleset.id} accepted a name that is not its own ({what}): {action!r}\n"
        f"at {position.label}"
    )


#: (ruleset, player counts, options, whether its actions name anything by a string)
GAMES = [
    pytest.param(GUTENBERG, [2, 4], None, True, id="gutenberg"),
    pytest.param(RESTORATION, [2, 4], None, True, id="restoration"),
    pytest.param(IMPRESSION, [2, 4], None, True, id="impression"),
    # Long enough for stars and harbingers to be placed (fast galaxies draw them sooner).
    pytest.param(
        IMPENDIUM,
        [2, 5],
        {"round_limit": 20, "turmoil": True, "fast_galaxies": True},
        True,
        id="impendium-turmoil",
    ),
    pytest.param(IMPENDIUM, [1], {"round_limit": 6}, True, id="impendium-solo"),
    # Tally's actions hold numbers only (a bid, a card's value): nothing to respell.
    pytest.param(TALLY, [2, 4], None, False, id="tally"),
]


@pytest.mark.parametrize(("ruleset", "counts", "options", "names_things"), GAMES)
def test_a_name_spelled_otherwise_is_refused_and_changes_nothing(
    ruleset: Ruleset, counts: list[int], options: dict[str, Any] | None, names_things: bool
) -> None:
    names = refusals(ruleset, counts, options)
    assert (names > 0) == names_things, f"{ruleset.id}: {names} respelled names"


def test_respellings_keep_the_numbers_and_change_the_name() -> None:
    assert list(respellings("1,0")) == [
        ("Arabic-Indic digit", "\u0661,0"),
        ("fullwidth digit", "\uff11,0"),
        ("Devanagari digit", "\u0967,0"),
        ("leading zero", "01,0"),
        ("Arabic-Indic digit", "1,\u0660"),
        ("fullwidth digit", "1,\uff10"),
        ("Devanagari digit", "1,\u0966"),
        ("leading zero", "1,00"),
        ("-0 for 0", "1,-0"),
    ]
    assert ("-0 for 0", "2,-0") not in list(respellings("2,-0"))
    for _what, other in respellings("map:2,0/0"):
        assert other != "map:2,0/0"
        assert [int(n) for n in re.findall(r"\d+", other)] == [2, 0, 0]
