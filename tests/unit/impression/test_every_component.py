"""Every factory fires on its trigger, every technology builds and acts, every contract and
city disc does what its data says."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from projections.games.impression import data, effects, scoring
from tests.unit.impression.support import SEAT, act, me, new_game, queue

State = dict[str, Any]


def _production(order: str, stage: int) -> Callable[[State], None]:
    def run(state: State) -> None:
        state["phase"] = "production"
        me(state).update(paper=9, lead=9, ink=9, capacity=5, budget=5)
        me(state)["line"][stage - 1] = order
        act(state, SEAT, type="advance_order", order=order)

    return run


def _reset(keep: int | None) -> Callable[[State], None]:
    def run(state: State) -> None:
        act(state, SEAT, type="reset", slot=0, keep=keep, lay_down=0)

    return run


def _workforce(state: State) -> None:
    me(state)["assistant_levels"] = [3, 6]
    queue(state, {"icon": "workforce"})


def _trade(state: State) -> None:
    queue(state, {"icon": "trade"})
    act(state, SEAT, type="trade_convert", give="ink", take=["paper", "lead"])


def _typeset(state: State) -> None:
    me(state)["stacks"] = [["LA1"], []]
    queue(state, {"icon": "typeset"})
    act(state, SEAT, type="typeset_on_stick", stack=0, cell=5)


def _city_disc(state: State) -> None:
    queue(state, {"icon": "city_tile"})
    act(state, SEAT, type="take_city_tile", city="Basel")


def _travel(state: State) -> None:
    queue(state, {"icon": "travel"})  # a travel action (the steps icon is none)
    act(state, SEAT, type="travel", track_steps=0, path=["coin1.1"])


def _technology(state: State) -> None:
    queue(state, {"icon": "technology", "no_resources": True})
    act(state, SEAT, type="buy_technology", level="I", row=0, space="W3", mode="up", relocate=None)


def _buy(kind: str) -> Callable[[State], None]:
    def run(state: State) -> None:
        state["phase"] = "orders"
        state["buying"] = {
            "queue": [0, 1],
            "index": 0,
            "order_bought": False,
            "contract_bought": False,
        }
        act(state, SEAT, type=f"buy_{kind}", slot=2)

    return run


def _order_of(colour: str) -> str:
    return next(o for o, tile in data.ORDERS.items() if tile["signboard"] == colour)


def scenario(trigger: dict[str, Any]) -> Callable[[State], None]:
    on = trigger["on"]
    if on == "stage_completed":
        return _production("OIII7", trigger["stage"])  # OIII7 carries no signboard
    if on == "order_completed":
        return _production(_order_of(trigger["signboard"]), 4)
    simple: dict[str, Callable[[State], None]] = {
        "reset": _reset(0),
        "letter_taken": _reset(0),
        "reset_discard": _reset(None),
        "workforce_gained": _workforce,
        "trade": _trade,
        "typeset": _typeset,
        "city_disc_gained": _city_disc,
        "travel": _travel,
        "technology": _technology,
        "buy_order": _buy("order"),
        "buy_contract": _buy("contract"),
    }
    return simple[on]


def played(factory: str | None, trigger: dict[str, Any]) -> State:
    state = new_game(2)
    state["order"] = [0, 1]
    for man in me(state)["tradesmen"]:
        man["room"] = "II"
    if factory is not None:
        me(state)["workshop"]["W1"]["up"] = {"kind": "factory", "id": factory}
    scenario(trigger)(state)
    return state


@pytest.mark.parametrize("factory", sorted(data.FACTORIES))
def test_every_factory_gives_its_bonus_when_its_trigger_happens(factory: str) -> None:
    tile = data.FACTORIES[factory]
    trigger = tile["trigger"]
    built = played(factory, trigger)
    without, with_it = me(played(None, trigger)), me(built)
    pending = built["pending"][SEAT]
    if "discount" in trigger:
        assert with_it["marks"] - without["marks"] == trigger["discount"]
        return
    (bonus,) = tile["bonus"]
    if bonus["icon"] == "gain":
        for good, amount in bonus["gain"].items():
            key = "marks" if good == "mark" else good
            assert with_it[key] - without[key] == amount
    elif bonus["icon"] == "capacity":
        assert with_it["capacity"] - without["capacity"] == 1
    else:
        assert any(
            effect["icon"] == bonus["icon"] and all(effect.get(k) == v for k, v in bonus.items())
            for effect in pending
        )


@pytest.mark.parametrize("tech", sorted(data.TECHNOLOGIES))
def test_every_technology_can_be_built_and_performs_its_action(
    tech: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queued: list[dict[str, Any]] = []
    original = effects.push

    def recording_push(state: State, seat: int, follow: list[dict[str, Any]]) -> None:
        queued.extend(follow)
        original(state, seat, follow)

    monkeypatch.setattr(effects, "push", recording_push)
    state = new_game(2)
    tile = data.TECHNOLOGIES[tech]
    level = tile["level"]
    column = state["tech"][level]
    if tech not in column["display"]:
        column["draw_pile"].remove(tech)
        column["draw_pile"].append(column["display"][0])
        column["display"][0] = tech
    row = column["display"].index(tech)
    space = next(s for s, sp in data.WORKSHOP.items() if sp["level"] == level)
    parent = data.WORKSHOP[space]["parent"]
    shop = me(state)["workshop"]
    while parent is not None:
        shop[parent]["up"] = {"kind": "factory", "id": "FI1"}
        parent = data.WORKSHOP[parent]["parent"]
    me(state)["capacity"] = 4  # capacity gains then land on spaces without rewards
    vp = me(state)["vp"]
    effects.start_effects(
        state,
        SEAT,
        [{"icon": "technology", "no_resources": True, "no_money": True}],
        random.Random(1),
    )
    act(
        state,
        SEAT,
        type="buy_technology",
        level=level,
        row=row,
        space=space,
        mode="up",
        relocate=None,
    )
    assert shop[space]["up"] == {"kind": "tech", "id": tech}
    covered = data.WORKSHOP[space]["action"]
    if tile["colour"] == "green":
        expected = effects.green_points(state, me(state), tile["victory_points"])
        assert me(state)["vp"] - vp == expected + sum(
            e.get("gain", {}).get("vp", 0) for e in covered
        )
        return
    (action,) = tile["action"]
    assert action in queued  # the covered action, then the technology's own action


@pytest.mark.parametrize("contract", sorted(data.CONTRACTS))
def test_every_contract_scores_a_whole_number_and_doubles_with_a_letter(contract: str) -> None:
    state = new_game(2)
    p = me(state)
    p.update(marks=10, workforce=6)
    p["completed"] = ["OI1", "OI2"]
    p["discs"] = [{"id": "D1", "used": False}, {"id": "D7", "used": True}]
    p["signboards"] = [
        {"colour": c, "source": "x", "used": False, "usable": True} for c in data.COLOURS
    ]
    for cell in range(9):
        p["board"][cell] = {
            "letter": f"L{'ABCDEF'[cell % 6]}1",
            "paired": None,
            "bonus_taken": True,
        }
    p["slots"][0].update(active=True, contract=contract)
    for space, tech in [
        ("W1", "GI1"),
        ("W3", "GI3"),
        ("W4", "GII1"),
        ("W7", "GIII1"),
        ("W10", "GIV1"),
    ]:
        p["workshop"][space]["up"] = {"kind": "tech", "id": tech}
    p["workshop"]["W2"]["up"] = {"kind": "factory", "id": "FI1"}
    state["streets"]["S1-S2"] = {"owner": SEAT, "reward": "ink"}
    single = scoring.contract_points(state, p, contract)
    assert isinstance(single, int) and single > 0
    p["letters_under"][contract] = "LA2"
    assert scoring.contract_points(state, p, contract) == 2 * single


@pytest.mark.parametrize("disc", sorted(data.DISCS))
def test_every_city_disc_is_a_signboard_or_a_reward_once(disc: str) -> None:
    state = new_game(2)
    state["order"] = [0, 1]
    state["map_discs"]["Basel"] = disc
    queue(state, {"icon": "city_tile"})
    act(state, SEAT, type="take_city_tile", city="Basel")
    tile = data.DISCS[disc]
    if "signboard" in tile:
        assert me(state)["signboards"][-1]["colour"] == tile["signboard"]
        return
    act(state, SEAT, type="use_city_disc", disc=disc)
    assert me(state)["discs"] == [{"id": disc, "used": True}]
