"""Impression's effect engine: one handler per icon of the rulebook's Iconography, and the
factories' triggers.

Rooms, workshop spaces, composing sticks, contract slots, technologies, city discs, the
director and the capacity track all print effects as ``{"icon": ..., ...}`` dicts. An
effect is queued on its seat's ``pending`` list and resolved front first:

- an *automatic* handler (resources, capacity, workforce...) resolves at once and may
  return follow-up effects, which go to the front of the queue (resolved depth first);
- a *choice* handler waits for its seat to answer with one of the actions its ``options``
  lists (or ``decline``: every printed benefit may be forgone, docs/rules/impression.md;
  a choice of order is not a benefit and cannot be declined); a choice with nothing to
  choose fizzles.

The shared pieces the handlers need (workforce and capacity tracks, lead letters, the
building rules, orders in production) live here too, so that rules.py only drives phases.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from projections import components
from projections.games.impression import data
from projections.ruleset import Action, IllegalAction, State

Effect = dict[str, Any]
Player = dict[str, Any]

REWARD_TYPES = ["paper", "lead", "ink", "mark", "capacity"]


# -- small helpers -------------------------------------------------------------------


def player(state: State, seat: int) -> Player:
    found: Player = state["seats"][seat]
    return found


def goods_text(goods: dict[str, int]) -> str:
    return ", ".join(f"{amount} {good}" for good, amount in goods.items()) or "nothing"


def has_goods(p: Player, goods: dict[str, int]) -> bool:
    return all(p[_key(good)] >= amount for good, amount in goods.items())


def _key(good: str) -> str:
    return "marks" if good == "mark" else good


def gain_goods(p: Player, goods: dict[str, int], sign: int = 1) -> None:
    """Resources, marks and victory points from (or back to) the common supply."""
    for good, amount in goods.items():
        p[_key(good)] += sign * amount


def push(state: State, seat: int, effects: list[Effect]) -> None:
    """Queue effects ahead of what is already pending (resolved depth first)."""
    if effects:
        state["pending"][seat][0:0] = [dict(effect) for effect in effects]


# -- tracks (Shop Actions: capacity and workforce) ------------------------------------


def change_capacity(p: Player, steps: int, reward: bool = False) -> list[Effect]:
    """Move the capacity marker; past the top each step is 1 mark (Shop Actions).

    With ``reward`` (the capacity-gain icon, and production moving it down) the marker also
    earns what is printed on each space it enters.
    """
    follow: list[Effect] = []
    step = 1 if steps > 0 else -1
    for _ in range(abs(steps)):
        if step > 0 and p["capacity"] >= data.CAPACITY_MAX:
            p["marks"] += 1
            continue
        if step < 0 and p["capacity"] <= 0:
            break
        p["capacity"] += step
        if reward:
            follow.extend(data.CAPACITY_TRACK[p["capacity"]])
    return follow


def change_workforce(p: Player, steps: int) -> list[Effect]:
    """Move the workforce marker and the capacity marker with it (Shop Actions).

    Past the top each gain is 1 victory point; reaching 3 and 6 places an assistant (once
    each per game, docs/rules/impression.md); each gain fires the workforce factories.
    """
    follow: list[Effect] = []
    for _ in range(abs(steps)):
        if steps > 0:
            if p["workforce"] >= data.WORKFORCE_MAX:
                p["vp"] += 1
            else:
                p["workforce"] += 1
                change_capacity(p, 1)
                level = p["workforce"]
                if (
                    level in data.BOARD["assistant_at_workforce"]
                    and level not in p["assistant_levels"]
                ):
                    p["assistant_levels"].append(level)
                    follow.append({"icon": "assistant"})
            follow.extend(fire(p, "workforce_gained"))
        elif p["workforce"] > 0:
            p["workforce"] -= 1
            change_capacity(p, -1)
    return follow


# -- factories' recurring bonuses (Factories) ----------------------------------------


def face_up_tiles(p: Player, kind: str) -> list[str]:
    return [
        cell["up"]["id"]
        for cell in p["workshop"].values()
        if cell["up"] is not None and cell["up"]["kind"] == kind
    ]


def all_tiles(p: Player, kind: str) -> list[str]:
    found = []
    for cell in p["workshop"].values():
        for face in ("down", "up"):
            if cell[face] is not None and cell[face]["kind"] == kind:
                found.append(cell[face]["id"])
    return found


def fire(p: Player, trigger: str, **match: Any) -> list[Effect]:
    """The bonuses of the player's face-up factories whose trigger matches."""
    bonuses: list[Effect] = []
    for factory_id in face_up_tiles(p, "factory"):
        factory = data.FACTORIES[factory_id]
        wanted = factory["trigger"]
        if wanted["on"] == trigger and all(wanted.get(k, v) == v for k, v in match.items()):
            bonuses.extend(factory["bonus"])
    return bonuses


def discount(p: Player, trigger: str) -> int:
    """Marks saved by face-up factories that make an action cheaper."""
    return sum(
        data.FACTORIES[f]["trigger"].get("discount", 0)
        for f in face_up_tiles(p, "factory")
        if data.FACTORIES[f]["trigger"]["on"] == trigger
    )


# -- lead letters ---------------------------------------------------------------------


def refill_desk(state: State, rng: random.Random) -> None:
    """Setup 7 / Reset: every empty desk space gets the top of the face-down pile."""
    letters = state["letters"]
    for index, slot in enumerate(letters["desk"]):
        if slot is None:
            drawn = components.draw(letters, 1, rng)
            letters["desk"][index] = drawn[0] if drawn else None


def keep_letter(p: Player, letter: str, stack: int) -> list[Effect]:
    """A letter kept goes on top of one of the two stacks (Reset); fires its factories."""
    p["stacks"][stack].append(letter)
    return fire(p, "letter_taken")


def free_stacks(p: Player) -> list[int]:
    """Where a kept letter may go: an empty space if there is one, else on top of either
    ("if there's no free space, you must cover a previous tile", Reset)."""
    empty = [index for index, stack in enumerate(p["stacks"]) if not stack]
    return empty or list(range(len(p["stacks"])))


def top_letters(p: Player) -> list[int]:
    return [index for index, stack in enumerate(p["stacks"]) if stack]


# -- building rules (Building Rules for Factories and Technologies) --------------------


def level_above(level: str) -> str | None:
    index = data.LEVELS.index(level)
    return data.LEVELS[index + 1] if index + 1 < len(data.LEVELS) else None


def placements(p: Player, level: str) -> list[dict[str, Any]]:
    """Every legal place for a tile of ``level``: face up on a connected space of its level,
    face down on an empty space one level higher, or replacing a face-up tile of its level
    whose tile moves face down to an empty space one level higher."""
    found: list[dict[str, Any]] = []
    higher = level_above(level)
    shop = p["workshop"]
    for space_id, space in data.WORKSHOP.items():
        cell = shop[space_id]
        if space["level"] == level:
            if cell["up"] is None and linked_to_the_left(shop, space_id):
                found.append({"space": space_id, "mode": "up", "relocate": None})
            elif cell["up"] is not None and higher is not None:
                for target_id, target in data.WORKSHOP.items():
                    if target["level"] == higher and not _occupied(shop[target_id]):
                        found.append({"space": space_id, "mode": "replace", "relocate": target_id})
        elif space["level"] == higher and not _occupied(cell):
            found.append({"space": space_id, "mode": "down", "relocate": None})
    return found


def _occupied(cell: dict[str, Any]) -> bool:
    return cell["up"] is not None or cell["down"] is not None


def linked_to_the_left(shop: dict[str, Any], space_id: str) -> bool:
    """Whether a tile built face up on ``space_id`` continues a path from the left side of
    the workshop: every space on its trail back to column 1 holds a tile ("you must form a
    continuous path from the left side of your workshop toward the right"; a tile placed
    face down one level higher needs no route, but a route through it still needs the
    spaces left of it)."""
    parent = data.WORKSHOP[space_id]["parent"]
    while parent is not None:
        if not _occupied(shop[parent]):
            return False
        parent = data.WORKSHOP[parent]["parent"]
    return True


def check_placement(p: Player, level: str, action: Action) -> None:
    wanted = {key: action.get(key) for key in ("space", "mode", "relocate")}
    if wanted not in placements(p, level):
        raise IllegalAction(
            "illegal_placement",
            f"A level {level} tile cannot go there: build face up on a level {level} space "
            "connected from the left, face down on an empty space one level higher, or "
            "replace a tile of its level and move that one face down one level higher.",
        )


def build(p: Player, kind: str, tile_id: str, action: Action) -> list[Effect]:
    """Place the tile and return the covered space's action (the building rules)."""
    space_id = action["space"]
    cell = p["workshop"][space_id]
    tile = {"kind": kind, "id": tile_id}
    if action["mode"] == "down":
        cell["down"] = tile
        return list(data.WORKSHOP[space_id]["action"])
    if action["mode"] == "replace":
        # only the newly covered action is gained, not the replaced tile's again
        p["workshop"][action["relocate"]]["down"] = cell["up"]
        cell["up"] = tile
        return list(data.WORKSHOP[action["relocate"]]["action"])
    cell["up"] = tile
    return list(data.WORKSHOP[space_id]["action"])


def chain(p: Player, space_id: str) -> list[Effect]:
    """Technology: a blue technology's chain follows the trail right to left, performing each
    face-up blue technology on it, and ends with a lead letter's resources (or column 1).

    The lead letter is asked for when the chain reaches it, after the actions before it:
    a letter one of them brings is reached too, and one they use up is not (the choice
    fizzles with no letter on the left)."""
    effects: list[Effect] = []
    parent = data.WORKSHOP[space_id]["parent"]
    while parent is not None:
        up = p["workshop"][parent]["up"]
        if up is not None and up["kind"] == "tech":
            tech = data.TECHNOLOGIES[up["id"]]
            if tech["colour"] == "blue":
                effects.extend(tech["action"])
        parent = data.WORKSHOP[parent]["parent"]
    effects.append({"icon": "use_letter"})
    return effects


# -- orders in production (Production Phase) -----------------------------------------


def order_stage(p: Player, order_id: str) -> int:
    """0 while waiting next to the workshop, 1-4 in the production line."""
    if order_id in p["orders_waiting"]:
        return 0
    return int(p["line"].index(order_id)) + 1


def advance_problem(p: Player, order_id: str, pay: bool) -> IllegalAction | None:
    """Why this order cannot move one stage now, or None."""
    if order_id not in p["orders_waiting"] and order_id not in p["line"]:
        return IllegalAction("order_not_yours", "Advance one of your own orders.")
    stage = order_stage(p, order_id)
    if stage < 4 and p["line"][stage] is not None:
        return IllegalAction(
            "stage_occupied",
            f"Stage {stage + 1} holds another order: advance that one first (no overtaking).",
        )
    if pay and stage > 0:
        cost = data.ORDERS[order_id]["stage_costs"][stage - 1]
        if not has_goods(p, cost):
            return IllegalAction(
                "insufficient_resources",
                f"Leaving stage {stage} costs {goods_text(cost)}; you cannot pay it.",
            )
    return None


def advance_order(p: Player, order_id: str, pay: bool) -> list[Effect]:
    """Move an order one stage: pay its current stage's resources (entering stage 1 is
    free); leaving stage 4 completes it for its victory points and signboard."""
    stage = order_stage(p, order_id)
    order = data.ORDERS[order_id]
    if pay and stage > 0:
        gain_goods(p, order["stage_costs"][stage - 1], -1)
    follow: list[Effect] = []
    if stage == 0:
        p["orders_waiting"].remove(order_id)
    else:
        p["line"][stage - 1] = None
        follow.extend(fire(p, "stage_completed", stage=stage))
    if stage < 4:
        p["line"][stage] = order_id
        return follow
    p["completed"].append(order_id)
    p["vp"] += order["vp"]
    if order["signboard"] is not None:
        p["signboards"].append(
            {"colour": order["signboard"], "source": order_id, "used": False, "usable": False}
        )
        follow.extend(fire(p, "order_completed", signboard=order["signboard"]))
    return follow


def advanceable(p: Player, pay: bool) -> list[str]:
    orders = list(p["orders_waiting"]) + [o for o in p["line"] if o is not None]
    return [o for o in orders if advance_problem(p, o, pay) is None]


# -- the handlers ---------------------------------------------------------------------


@dataclass
class Handler:
    """How one icon resolves: automatically (``auto``) or by its seat's choice."""

    describe: str
    auto: Callable[[State, int, Effect], list[Effect]] | None = None
    options: Callable[[State, int, Effect], list[Action]] | None = None
    resolve: Callable[[State, int, Effect, Action, random.Random], list[Effect]] | None = None
    #: action types answering this prompt (besides ``decline``)
    answers: tuple[str, ...] = ()
    #: a prompt validated by its own code rather than by membership in ``options``
    validate: Callable[[State, int, Effect, Action], None] | None = None
    error_code: str = "illegal_choice"
    single_auto: bool = False
    #: False for a choice of order, which forgoes no benefit and has no default answer
    declinable: bool = True
    #: a quicker test that ``options`` is not empty (the queue asks it of every choice)
    possible: Callable[[State, int, Effect], bool] | None = None
    #: what an effect leaves behind when it fizzles with nothing left to choose
    fizzle: Callable[[State, Effect], None] | None = None
    #: why a declinable choice can no longer be declined once this effect has begun
    #: (a cost already owed), or None while it still can
    committed: Callable[[Effect], str | None] | None = None

    def refusal(self, effect: Effect) -> str | None:
        """Why ``decline`` is refused for this waiting effect, or None when it may be."""
        if not self.declinable:
            return f"This choice cannot be declined: {self.describe}."
        return self.committed(effect) if self.committed is not None else None


HANDLERS: dict[str, Handler] = {}


def handler(icon: str, **kwargs: Any) -> None:
    HANDLERS[icon] = Handler(**kwargs)


def _auto_gain(state: State, seat: int, effect: Effect) -> list[Effect]:
    gain_goods(player(state, seat), effect["gain"])
    return []


handler("gain", describe="gain goods", auto=_auto_gain)
handler(
    "capacity",
    describe="gain 1 capacity",
    auto=lambda s, seat, e: change_capacity(player(s, seat), 1),
)
handler(
    "capacity_down",
    describe="lose 1 capacity",
    auto=lambda s, seat, e: change_capacity(player(s, seat), -1),
)
handler(
    "capacity_gain",
    describe="gain 1 capacity and the reward it steps onto",
    auto=lambda s, seat, e: change_capacity(player(s, seat), 1, reward=True),
)
handler(
    "workforce",
    describe="gain 1 workforce",
    auto=lambda s, seat, e: change_workforce(player(s, seat), 1),
)
handler(
    "workforce_down",
    describe="lose 1 workforce",
    auto=lambda s, seat, e: change_workforce(player(s, seat), -1),
)


def _auto_pair(state: State, seat: int, effect: Effect) -> list[Effect]:
    player(state, seat)["pairing"] = True
    return []


handler("pair", describe="learn to pair city tiles with lead letters", auto=_auto_pair)


def _auto_green(state: State, seat: int, effect: Effect) -> list[Effect]:
    p = player(state, seat)
    p["vp"] += green_points(state, p, effect["victory_points"])
    return []


handler("green_vp", describe="score an instant technology", auto=_auto_green)


def green_points(state: State, p: Player, rule: dict[str, Any]) -> int:
    """Technologies Giving You Victory Points: the standing when the tile is built."""
    kind = rule["kind"]
    if kind == "half_capacity":
        return int(p["capacity"]) // 2
    if kind == "assistants":
        return assistants_on_board(state, p["seat"])
    if kind == "workforce":
        return int(p["workforce"])
    if kind == "technologies_of_level":
        return sum(data.TECHNOLOGIES[t]["level"] == rule["level"] for t in all_tiles(p, "tech"))
    return letters_on_board(p, rule["letter"])


def assistants_on_board(state: State, seat: int) -> int:
    return sum(street["owner"] == seat for street in state["streets"].values())


def letters_on_board(p: Player, letter: str) -> int:
    """Letters on the composing sticks, paired city tiles included."""
    count = 0
    for cell in p["board"]:
        if cell is None:
            continue
        count += data.LEAD_LETTERS[cell["letter"]]["letter"] == letter
        if cell["paired"] is not None:
            count += data.DISCS[cell["paired"]]["letter"] == letter
    return count


# gain_choice: "1 resource of your choice, for the generic version"


def _choice_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [{"type": "choose_resource", "resource": r} for r in data.RESOURCES]


def _choice_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    player(state, seat)[action["resource"]] += 1
    left = int(effect.get("count", 1)) - 1
    return [{"icon": "gain_choice", "count": left}] if left > 0 else []


handler(
    "gain_choice",
    describe="choose resources",
    options=_choice_options,
    resolve=_choice_resolve,
    answers=("choose_resource",),
    error_code="unknown_resource",
)


# use_letter: "Take the resource(s) from one of your lead letters ... the one on top."


def _letter_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [{"type": "use_letter", "stack": i} for i in top_letters(player(state, seat))]


def _letter_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    gain_goods(p, data.LEAD_LETTERS[p["stacks"][action["stack"]][-1]]["gain"])
    return []


handler(
    "use_letter",
    describe="take the resources of the top lead letter of one of your stacks",
    options=_letter_options,
    resolve=_letter_resolve,
    answers=("use_letter",),
    error_code="no_letter_there",
    single_auto=True,
)


# trade (Trade)


def trade_options(state: State, seat: int, effect: Effect) -> list[Action]:
    p = player(state, seat)
    options: list[Action] = []
    pile_left = state["trading"]["draw_pile"] or state["trading"]["discard_pile"]
    if (
        not effect.get("keep_tile")
        and not effect.get("refreshed")
        and p["marks"] >= 1
        and pile_left
    ):
        options.append({"type": "refresh_trading_tiles"})
    for give in data.RESOURCES:
        if p[give] < 1:
            continue
        others = [r for r in data.RESOURCES if r != give]
        for i, first in enumerate(others):
            for second in others[i:]:
                options.append({"type": "trade_convert", "give": give, "take": [first, second]})
    for tile_id in state["trading"]["display"]:
        if tile_id is None:
            continue
        tile = data.TRADING_TILES[tile_id]
        directions = [False, True] if tile["two_way"] else [False]
        for reverse in directions:
            give = tile["take"] if reverse else tile["give"]
            for times in range(1, tile["repeats"] + 1):
                cost = {good: amount * times for good, amount in give.items()}
                if has_goods(p, cost):
                    options.append(
                        {"type": "trade_tile", "tile": tile_id, "reverse": reverse, "times": times}
                    )
    return options


def _trade_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    p = player(state, seat)
    kind = action["type"]
    if kind == "refresh_trading_tiles":
        if effect.get("refreshed") or effect.get("keep_tile"):
            raise IllegalAction(
                "already_refreshed", "The trading tiles may be refreshed once, before trading."
            )
        if p["marks"] < 1:
            raise IllegalAction("insufficient_marks", "Refreshing the trading tiles costs 1 mark.")
        return
    if kind == "trade_convert":
        give, take = action.get("give"), action.get("take")
        if give not in data.RESOURCES or not isinstance(take, list) or len(take) != 2:
            raise IllegalAction("unknown_resource", "Give 1 paper, lead or ink and take 2 others.")
        if give in take or any(t not in data.RESOURCES for t in take):
            raise IllegalAction(
                "same_resource_type", "The 2 resources you take must be of another type."
            )
        if p[give] < 1:
            raise IllegalAction("insufficient_resources", f"You have no {give} to give.")
        return
    tile_id = str(action.get("tile"))
    if tile_id not in state["trading"]["display"]:
        raise IllegalAction("tile_not_displayed", "Choose one of the 3 face-up trading tiles.")
    tile = data.TRADING_TILES[tile_id]
    if action.get("reverse") and not tile["two_way"]:
        raise IllegalAction("one_way_tile", "This trading tile only converts left to right.")
    times = action.get("times")
    if not isinstance(times, int) or not 1 <= times <= tile["repeats"]:
        raise IllegalAction(
            "repeat_limit", f"This tile converts 1 to {tile['repeats']} times in one trade."
        )
    give = tile["take"] if action.get("reverse") else tile["give"]
    if not has_goods(p, {good: amount * times for good, amount in give.items()}):
        raise IllegalAction("insufficient_resources", "You cannot pay for that many conversions.")


def _trade_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    trading = state["trading"]
    if action["type"] == "refresh_trading_tiles":
        p["marks"] -= 1
        components.discard(trading, [t for t in trading["display"] if t is not None])
        drawn = components.draw(trading, 3, rng)
        trading["display"] = drawn + [None] * (3 - len(drawn))
        return [{**effect, "refreshed": True}]
    if action["type"] == "trade_convert":
        p[action["give"]] -= 1
        for taken in action["take"]:
            p[taken] += 1
    else:
        tile = data.TRADING_TILES[action["tile"]]
        give, take = (
            (tile["take"], tile["give"]) if action["reverse"] else (tile["give"], tile["take"])
        )
        for _ in range(action["times"]):
            gain_goods(p, give, -1)
            gain_goods(p, take)
        if not effect.get("keep_tile"):
            index = trading["display"].index(action["tile"])
            components.discard(trading, [action["tile"]])
            drawn = components.draw(trading, 1, rng)
            trading["display"][index] = drawn[0] if drawn else None
    return fire(p, "trade")


def _trade_possible(state: State, seat: int, effect: Effect) -> bool:
    """A resource to convert 1:2 is enough; otherwise look at the tiles and the refresh."""
    p = player(state, seat)
    return any(p[give] >= 1 for give in data.RESOURCES) or bool(trade_options(state, seat, effect))


handler(
    "trade",
    describe="trade",
    options=trade_options,
    possible=_trade_possible,
    resolve=_trade_resolve,
    answers=("refresh_trading_tiles", "trade_convert", "trade_tile"),
    validate=_trade_validate,
)


# typeset (Typesetting)


def typeset_options(state: State, seat: int, effect: Effect) -> list[Action]:
    p = player(state, seat)
    options: list[Action] = []
    for stack in top_letters(p):
        for cell, content in enumerate(p["board"]):
            if content is None:
                options.append({"type": "typeset_on_stick", "stack": stack, "cell": cell})
        for slot in p["slots"]:
            contract = slot["contract"]
            if contract is not None and p["letters_under"].get(contract) is None:
                options.append(
                    {"type": "typeset_under_contract", "stack": stack, "contract": contract}
                )
    return options


def _typeset_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    p = player(state, seat)
    stack = action.get("stack")
    if stack not in (0, 1) or not p["stacks"][stack]:
        raise IllegalAction("no_letter_there", "Take a lead letter from the top of a stack.")
    if action["type"] == "typeset_on_stick":
        cell = action.get("cell")
        if not isinstance(cell, int) or not 0 <= cell < 9:
            raise IllegalAction("unknown_space", "Composing stick spaces are numbered 0 to 8.")
        if p["board"][cell] is not None:
            raise IllegalAction(
                "space_occupied", "That composing stick space already holds a letter."
            )
        return
    contract = action.get("contract")
    if contract not in [slot["contract"] for slot in p["slots"]]:
        raise IllegalAction("contract_not_active", "Place letters only under an active contract.")
    if p["letters_under"].get(contract) is not None:
        raise IllegalAction(
            "letter_already_under", "That contract already has a lead letter under it."
        )


def _typeset_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    letter = p["stacks"][action["stack"]].pop()
    follow = fire(p, "typeset")
    if action["type"] == "typeset_under_contract":
        p["letters_under"][action["contract"]] = letter
        return follow
    return place_on_stick(p, letter, action["cell"], always_bonus=False) + follow


def place_on_stick(p: Player, letter: str, cell: int, always_bonus: bool) -> list[Effect]:
    """A letter on a composing stick: a matching letter earns the space's bonus, and a
    completed formation activates its contract slot (Typesetting)."""
    printed = data.STICKS[cell // 3][cell % 3]
    matches = always_bonus or data.LEAD_LETTERS[letter]["letter"] == printed["letter"]
    p["board"][cell] = {"letter": letter, "paired": None, "bonus_taken": matches}
    unlock_slots(p)
    return list(printed["bonus"]) if matches else []


def unlock_slots(p: Player) -> None:
    filled = {cell for cell, content in enumerate(p["board"]) if content}
    for index, spots in enumerate(_FORMATION_SPOTS):
        slot = p["slots"][index]
        if not slot["active"] and any(cells <= filled for cells in spots):
            slot["active"] = True


def _formation_spots(formation: list[list[int]]) -> list[frozenset[int]]:
    """Every place a slot's formation fits on the 3x3 composing sticks (moved, never
    rotated), as the cells (row * 3 + column) it covers."""
    spots = []
    for row in range(3):
        for col in range(3):
            cells = [(row + dr, col + dc) for dr, dc in formation]
            if all(0 <= r < 3 and 0 <= c < 3 for r, c in cells):
                spots.append(frozenset(r * 3 + c for r, c in cells))
    return spots


_FORMATION_SPOTS = [_formation_spots(slot["formation"]) for slot in data.SLOTS]


handler(
    "typeset",
    describe="typeset a lead letter",
    options=typeset_options,
    resolve=_typeset_resolve,
    answers=("typeset_on_stick", "typeset_under_contract"),
    validate=_typeset_validate,
)


# reposition_letter: "to an empty space on your composing stick board, regardless of
# whether the letters match" (the bonus is earned as if they matched)


def _reposition_options(state: State, seat: int, effect: Effect) -> list[Action]:
    p = player(state, seat)
    return [
        {"type": "reposition_letter", "stack": stack, "cell": cell}
        for stack in top_letters(p)
        for cell, content in enumerate(p["board"])
        if content is None
    ]


def _reposition_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    letter = p["stacks"][action["stack"]].pop()
    return place_on_stick(p, letter, action["cell"], always_bonus=True)


handler(
    "reposition_letter",
    describe="set a lead letter on any empty composing stick space",
    options=_reposition_options,
    resolve=_reposition_resolve,
    answers=("reposition_letter",),
    error_code="illegal_reposition",
)


# assistant (The Effects of the Assistants)


def assistants_in_hand(state: State, seat: int) -> list[str]:
    """The rewards of the seat's assistants not yet placed: each of its 5 assistants is marked
    with its own reward ("the reward marked on that assistant (1 paper / 1 lead / 1 ink /
    1 mark / 1 capacity)"), and a placed one stays in its street."""
    placed = {street["reward"] for street in state["streets"].values() if street["owner"] == seat}
    return [reward for reward in REWARD_TYPES if reward not in placed]


def _assistant_options(state: State, seat: int, effect: Effect) -> list[Action]:
    if player(state, seat)["assistants"] < 1:
        return []
    rewards = assistants_in_hand(state, seat)
    return [
        {"type": "place_assistant", "street": street, "reward": reward}
        for street in state["street_names"]
        if street not in state["streets"]
        for reward in rewards
    ]


def _assistant_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    if action.get("street") not in state["street_names"]:
        raise IllegalAction("unknown_street", "Choose a street between two adjacent shops.")
    if action["street"] in state["streets"]:
        raise IllegalAction("street_taken", "Only 1 assistant may stand in a street.")
    if action.get("reward") not in REWARD_TYPES:
        raise IllegalAction(
            "unknown_reward", "An assistant gives paper, lead, ink, mark or capacity."
        )
    if action["reward"] not in assistants_in_hand(state, seat):
        raise IllegalAction(
            "assistant_placed",
            f"Your {action['reward']} assistant is already in a street: each of your "
            "assistants is marked with its own reward.",
        )


def _assistant_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    player(state, seat)["assistants"] -= 1
    state["streets"][action["street"]] = {"owner": seat, "reward": action["reward"]}
    return []


handler(
    "assistant",
    describe="place an assistant in a free street",
    options=_assistant_options,
    resolve=_assistant_resolve,
    answers=("place_assistant",),
    validate=_assistant_validate,
)


# signboard_action: "perform 1 signboard action of your choice (workforce, travel, technology)"

SIGNBOARD_EFFECTS: dict[str, Effect] = {
    "workforce": {"icon": "workforce"},
    "travel": {"icon": "travel", "free": True},
    "technology": {"icon": "technology", "no_resources": True, "no_money": True},
}


def _signboard_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [{"type": "choose_signboard_action", "action": kind} for kind in SIGNBOARD_EFFECTS]


def _signboard_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    return [SIGNBOARD_EFFECTS[action["action"]]]


handler(
    "signboard_action",
    describe="choose a signboard action",
    options=_signboard_options,
    resolve=_signboard_resolve,
    answers=("choose_signboard_action",),
    error_code="unknown_signboard_action",
)


# city_tile: "get a city tile from a city of your choice; your director does not move"


def _city_tile_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "take_city_tile", "city": city}
        for city, disc in state["map_discs"].items()
        if disc is not None
    ]


def take_disc(state: State, seat: int, city: str) -> list[Effect]:
    p = player(state, seat)
    disc = state["map_discs"][city]
    if disc is None:
        return []
    state["map_discs"][city] = None
    p["discs"].append({"id": disc, "used": False})
    colour = data.DISCS[disc].get("signboard")
    if colour is not None:
        p["signboards"].append({"colour": colour, "source": disc, "used": False, "usable": True})
    return fire(p, "city_disc_gained")


handler(
    "city_tile",
    describe="take a city tile from any city",
    options=_city_tile_options,
    resolve=lambda s, seat, e, a, rng: take_disc(s, seat, a["city"]),
    answers=("take_city_tile",),
    error_code="no_city_tile_there",
)


# move_down: "move your tradesman down to a room II and take its action; twice: twice"


def _move_down_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "move_down", "tradesman": index}
        for index, man in enumerate(player(state, seat)["tradesmen"])
        if man["room"] == "I"
    ]


def _move_down_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    man = player(state, seat)["tradesmen"][action["tradesman"]]
    enter_room(state, seat, action["tradesman"], man["shop"], "II")
    room = data.SHOPS[man["shop"]]["room_II"]
    return list(room) * int(effect.get("times", 1))


def enter_room(state: State, seat: int, index: int, shop: str, room: str) -> None:
    """A tradesman arrives; each tradesman already in that room earns its owner 1 mark."""
    for other_seat, other in enumerate(state["seats"]):
        for other_index, man in enumerate(other["tradesmen"]):
            same = other_seat == seat and other_index == index
            if not same and man["shop"] == shop and man["room"] == room:
                other["marks"] += 1
    man = player(state, seat)["tradesmen"][index]
    man["shop"], man["room"] = shop, room


handler(
    "move_down",
    describe="move a tradesman from room I down to room II",
    options=_move_down_options,
    resolve=_move_down_resolve,
    answers=("move_down",),
    error_code="not_in_room_one",
)


# room_two_order: B. Reset: "carry out the action of the room II entered by tradesmen
# that moved during this Reset action" -- with two, the player says which acts first.


def _first_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [{"type": "act_first", "tradesman": index} for index in effect["tradesmen"]]


def _first_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    if action.get("tradesman") not in effect["tradesmen"]:
        raise IllegalAction(
            "tradesman_not_moved",
            "Choose tradesman 0 or 1: both moved down to room II in this Reset.",
        )


def _first_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    first = action["tradesman"]
    order = [first, *(index for index in effect["tradesmen"] if index != first)]
    men = player(state, seat)["tradesmen"]
    return [room for index in order for room in data.SHOPS[men[index]["shop"]]["room_II"]]


handler(
    "room_two_order",
    describe="choose which tradesman moved by your Reset takes its room II action first",
    options=_first_options,
    resolve=_first_resolve,
    answers=("act_first",),
    validate=_first_validate,
    declinable=False,
)


# discard_letter: "discard a lead letter from the typesetting table ... gain the resources"


def _discard_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "discard_desk_letter", "slot": index}
        for index, letter in enumerate(state["letters"]["desk"])
        if letter is not None
    ]


def _discard_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    letters = state["letters"]
    letter = letters["desk"][action["slot"]]
    letters["desk"][action["slot"]] = None
    components.discard(letters, [letter])
    gain_goods(player(state, seat), data.LEAD_LETTERS[letter]["gain"])
    refill_desk(state, rng)
    return []


handler(
    "discard_letter",
    describe="discard a lead letter from the desk for its resources",
    options=_discard_options,
    resolve=_discard_resolve,
    answers=("discard_desk_letter",),
    error_code="empty_desk_space",
)


# gain_letter: "gain 1 lead letter from the typesetting table; marked: also its resources"


def _gain_letter_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "gain_letter", "slot": index, "stack": stack}
        for index, letter in enumerate(state["letters"]["desk"])
        if letter is not None
        for stack in free_stacks(player(state, seat))
    ]


def _gain_letter_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    letters = state["letters"]
    letter = letters["desk"][action["slot"]]
    letters["desk"][action["slot"]] = None
    if effect.get("with_resources"):
        gain_goods(p, data.LEAD_LETTERS[letter]["gain"])
    follow = keep_letter(p, letter, action["stack"])
    refill_desk(state, rng)
    return follow


handler(
    "gain_letter",
    describe="take a lead letter from the desk onto a stack",
    options=_gain_letter_options,
    resolve=_gain_letter_resolve,
    answers=("gain_letter",),
    error_code="empty_desk_space",
)


# advance_order: "advance one of your orders by 1 stage without moving your capacity marker"


def _advance_options(state: State, seat: int, effect: Effect) -> list[Action]:
    pay = not effect.get("free")
    return [{"type": "advance_order", "order": o} for o in advanceable(player(state, seat), pay)]


def _advance_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    problem = advance_problem(player(state, seat), str(action.get("order")), not effect.get("free"))
    if problem is not None:
        raise problem


handler(
    "advance_order",
    describe="advance one of your orders by 1 stage",
    options=_advance_options,
    resolve=lambda s, seat, e, a, rng: advance_order(
        player(s, seat), a["order"], not e.get("free")
    ),
    answers=("advance_order",),
    validate=_advance_validate,
)


# buy: "buy 1 order or contract, refilling it from the draw pile afterward"


def price(state: State, seat: int, slot: int, kind: str, free: bool) -> int:
    """Order and Contract Phase: 1-5 marks by position, 1 less per section advanced,
    nothing on the rightmost section; factories may make it 1 cheaper."""
    if free:
        return 0
    section = state["track"][seat]["section"]
    if section >= data.TRACK_SECTIONS:
        return 0
    table = data.ORDER_DATA if kind == "order" else data.CONTRACT_DATA
    base = max(0, table["prices"][slot] - section)
    return max(0, base - discount(player(state, seat), f"buy_{kind}"))


def buy_problem(state: State, seat: int, kind: str, slot: Any, free: bool) -> IllegalAction | None:
    display = state["orders" if kind == "order" else "contracts"]["display"]
    if not isinstance(slot, int) or not 0 <= slot < len(display) or display[slot] is None:
        return IllegalAction("empty_display_space", f"Choose a displayed {kind}.")
    p = player(state, seat)
    if kind == "order" and len(p["orders_waiting"]) >= data.BOARD["orders_waiting_max"]:
        return IllegalAction(
            "two_orders_waiting",
            "You already have 2 orders waiting: start one in production before buying more.",
        )
    cost = price(state, seat, slot, kind, free)
    if p["marks"] < cost:
        return IllegalAction(
            "insufficient_marks", f"That {kind} costs {cost} marks; you have {p['marks']}."
        )
    return None


def buy(state: State, seat: int, kind: str, slot: int, free: bool) -> None:
    p = player(state, seat)
    p["marks"] -= price(state, seat, slot, kind, free)
    table = state["orders" if kind == "order" else "contracts"]
    tile = table["display"][slot]
    table["display"][slot] = None
    table["taken"] += 1
    if kind == "order":
        p["orders_waiting"].append(tile)
    else:
        p["contracts"].append(tile)


def _buy_options(state: State, seat: int, effect: Effect) -> list[Action]:
    free = bool(effect.get("free"))
    options: list[Action] = []
    for kind in ("order", "contract"):
        display = state["orders" if kind == "order" else "contracts"]["display"]
        for slot in range(len(display)):
            if buy_problem(state, seat, kind, slot, free) is None:
                options.append({"type": f"buy_{kind}", "slot": slot})
    return options


def _buy_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    kind = action["type"].removeprefix("buy_")
    problem = buy_problem(state, seat, kind, action.get("slot"), bool(effect.get("free")))
    if problem is not None:
        raise problem


def refill_orders(state: State, rng: random.Random) -> None:
    """Fill empty order spaces from the current level's pile, then the next level's."""
    orders = state["orders"]
    for index, slot in enumerate(orders["display"]):
        if slot is None:
            for level in data.LEVELS:
                if orders["piles"][level]:
                    orders["display"][index] = orders["piles"][level].pop(0)
                    break


def refill_contracts(state: State, rng: random.Random) -> None:
    contracts = state["contracts"]
    for index, slot in enumerate(contracts["display"]):
        if slot is None:
            drawn = components.draw(contracts, 1, rng)
            contracts["display"][index] = drawn[0] if drawn else None


def _buy_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    kind = action["type"].removeprefix("buy_")
    buy(state, seat, kind, action["slot"], bool(effect.get("free")))
    if kind == "order":
        refill_orders(state, rng)
    else:
        refill_contracts(state, rng)
    return []


handler(
    "buy",
    describe="buy an order or a contract",
    options=_buy_options,
    resolve=_buy_resolve,
    answers=("buy_order", "buy_contract"),
    validate=_buy_validate,
)


# technology and free_technology (Technology)


def tech_cost(state: State, seat: int, effect: Effect, level: str, row: int) -> dict[str, int]:
    cost: dict[str, int] = {}
    if not effect.get("no_resources"):
        cost.update(data.TECH_DATA["row_costs"][row])
    if not effect.get("no_money"):
        marks = data.TECH_DATA["column_marks"][level] - discount(player(state, seat), "technology")
        if marks > 0:
            cost["mark"] = marks
    return cost


def _tech_levels(effect: Effect) -> list[str]:
    return [effect["level"]] if effect.get("level") else list(data.LEVELS)


def technology_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return list(_technology_choices(state, seat, effect))


def _technology_possible(state: State, seat: int, effect: Effect) -> bool:
    return next(_technology_choices(state, seat, effect), None) is not None


def _technology_choices(state: State, seat: int, effect: Effect) -> Iterator[Action]:
    p = player(state, seat)
    for level in _tech_levels(effect):
        column = state["tech"][level]
        can_refresh = column["draw_pile"] and p["marks"] >= 1 and not effect.get("refreshed")
        if can_refresh:
            yield {"type": "refresh_technologies", "level": level}
        spots = placements(p, level)
        if not spots:
            continue
        for row, tech in enumerate(column["display"]):
            if tech is None or not has_goods(p, tech_cost(state, seat, effect, level, row)):
                continue
            for spot in spots:
                yield {"type": "buy_technology", "level": level, "row": row, **spot}


def _tech_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    p = player(state, seat)
    level = action.get("level")
    if level not in _tech_levels(effect):
        raise IllegalAction("wrong_level", f"Choose a technology of level {_tech_levels(effect)}.")
    if action["type"] == "refresh_technologies":
        if effect.get("refreshed"):
            raise IllegalAction("already_refreshed", "A column may be refreshed once per action.")
        if p["marks"] < 1:
            raise IllegalAction("insufficient_marks", "Refreshing a column costs 1 mark.")
        if not state["tech"][level]["draw_pile"]:
            raise IllegalAction("pile_empty", "That column's draw pile is empty.")
        return
    row = action.get("row")
    column = state["tech"][level]["display"]
    if not isinstance(row, int) or not 0 <= row < len(column) or column[row] is None:
        raise IllegalAction("empty_display_space", "Choose a displayed technology.")
    pay_check = tech_cost(state, seat, effect, level, row)
    if not has_goods(p, pay_check):
        raise IllegalAction(
            "insufficient_resources", f"That technology costs {goods_text(pay_check)}."
        )
    check_placement(p, level, action)


def _tech_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    level = action["level"]
    column = state["tech"][level]
    if action["type"] == "refresh_technologies":
        p["marks"] -= 1
        # Technology: "discard the 3 available tiles in a chosen column and draw 3 new
        # ones ... Place the discarded tiles at the bottom of the draw pile in an order of
        # your choice": the new tiles come first, then the player orders the old ones.
        discarded = [t for t in column["display"] if t is not None]
        column["display"] = [draw_known(column) for _ in column["display"]]
        follow: list[Effect] = []
        if discarded:
            follow.append({"icon": "return_technologies", "level": level, "tiles": discarded})
        return [*follow, {**effect, "refreshed": True}]
    row = action["row"]
    tech_id = column["display"][row]
    gain_goods(p, tech_cost(state, seat, effect, level, row), -1)
    column["display"][row] = draw_known(column)
    follow = build(p, "tech", tech_id, action)
    tech = data.TECHNOLOGIES[tech_id]
    if action["mode"] != "down":
        if tech["colour"] == "green":
            follow.append({"icon": "green_vp", "victory_points": tech["victory_points"]})
        else:
            follow.extend(tech["action"])
            follow.extend(chain(p, action["space"]))
    return follow


def draw_known(pile: dict[str, Any]) -> str | None:
    """Draw the top tile of a pile whose bottom part is publicly known."""
    if not pile["draw_pile"]:
        return None
    pile["hidden"] = max(0, pile["hidden"] - 1)
    top: str = pile["draw_pile"].pop(0)
    return top


handler(
    "technology",
    describe="buy a technology",
    options=technology_options,
    possible=_technology_possible,
    resolve=_tech_resolve,
    answers=("refresh_technologies", "buy_technology"),
    validate=_tech_validate,
)


# return_technologies: "Place the discarded tiles at the bottom of the draw pile in an
# order of your choice." ``order`` runs from the tile drawn first again to the very bottom.


def _return_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "return_technologies", "order": list(order)}
        for order in itertools.permutations(effect["tiles"])
    ]


def _return_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    order = action.get("order")
    tiles = effect["tiles"]
    if not isinstance(order, list) or sorted(map(str, order)) != sorted(tiles):
        raise IllegalAction(
            "not_the_discarded_technologies",
            f"Put exactly the technologies you discarded ({', '.join(tiles)}) under the "
            "pile, each once, in the order you choose.",
        )


def _return_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    state["tech"][effect["level"]]["draw_pile"].extend(action["order"])
    return []


handler(
    "return_technologies",
    describe="put the discarded technologies under their pile in the order you choose",
    options=_return_options,
    resolve=_return_resolve,
    answers=("return_technologies",),
    validate=_return_validate,
    single_auto=True,
    declinable=False,
)


def _free_tech(effect: Effect) -> Effect:
    return {"icon": "technology", "level": effect["level"], "no_resources": True, "no_money": True}


handler(
    "free_technology",
    describe="take a technology of the indicated level for free",
    auto=lambda s, seat, e: [_free_tech(e)],
)


# factory: "gain a factory of any level; discard your next city marker as its cost"


def factory_options(state: State, seat: int, effect: Effect) -> list[Action]:
    p = player(state, seat)
    if effect.get("drawn"):
        return [
            {"type": "keep_factory", "factory": factory, **spot}
            for factory in effect["drawn"]
            for spot in placements(p, data.FACTORIES[factory]["level"])
        ]
    if p["city_markers"] < 1:
        return []
    return [
        {"type": "draw_factories", "level": level}
        for level in data.LEVELS
        if state["factories"][level]["draw_pile"] and placements(p, level)
    ]


def _factory_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    p = player(state, seat)
    if action["type"] == "draw_factories":
        if effect.get("drawn"):
            raise IllegalAction("factories_drawn", "Keep one of the 3 factories you drew.")
        if p["city_markers"] < 1:
            raise IllegalAction("no_city_marker", "A factory costs a city marker; you have none.")
        level = action.get("level")
        if level not in data.LEVELS or not state["factories"][level]["draw_pile"]:
            raise IllegalAction("pile_empty", "Choose a level whose factory pile is not empty.")
        if not placements(p, level):
            raise IllegalAction(
                "workshop_full", f"No space in your workshop takes a level {level} tile."
            )
        return
    if not effect.get("drawn"):
        raise IllegalAction("draw_first", "First choose a level and draw its 3 factories.")
    if action.get("factory") not in effect["drawn"]:
        raise IllegalAction("factory_not_drawn", "Keep one of the factories you drew.")
    check_placement(p, data.FACTORIES[action["factory"]]["level"], action)


def _factory_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    if action["type"] == "draw_factories":
        pile = state["factories"][action["level"]]
        drawn = [draw_known(pile) for _ in range(data.FACTORY_DRAW)]
        return [{**effect, "drawn": [f for f in drawn if f is not None], "level": action["level"]}]
    pile = state["factories"][effect["level"]]
    pile["draw_pile"].extend(f for f in effect["drawn"] if f != action["factory"])
    p["city_markers"] -= 1
    return build(p, "factory", action["factory"], action)


def factory_committed(effect: Effect) -> str | None:
    """Travel: "draw 3 factories from that stack, keep one and return the other two to the
    bottom of the pile, then discard your rightmost city marker as payment": once drawn,
    a factory is kept and paid for (docs/rules/impression.md)."""
    if effect.get("drawn"):
        return "You drew 3 factories: keep one; it costs your rightmost city marker."
    return None


def factory_fizzled(state: State, effect: Effect) -> None:
    """Drawn factories none of which fits any more (a pairing's technology filled the
    workshop meanwhile: "If all spaces in your workshop are occupied, you can no longer
    build a factory") go under their pile unpaid."""
    if effect.get("drawn"):
        state["factories"][effect["level"]]["draw_pile"].extend(effect["drawn"])


handler(
    "factory",
    describe="build a factory",
    options=factory_options,
    resolve=_factory_resolve,
    answers=("draw_factories", "keep_factory"),
    validate=_factory_validate,
    committed=factory_committed,
    fizzle=factory_fizzled,
)


# the choice after stopping in a city: "a trade action ... or build a factory"


def _stop_options(state: State, seat: int, effect: Effect) -> list[Action]:
    options: list[Action] = [{"type": "stop_action", "action": "trade"}]
    if factory_options(state, seat, {"icon": "factory"}):
        options.append({"type": "stop_action", "action": "build_factory"})
    return options


handler(
    "stop_action",
    describe="trade or build a factory in this city",
    options=_stop_options,
    resolve=lambda s, seat, e, a, rng: [
        {"icon": "trade"} if a["action"] == "trade" else {"icon": "factory"}
    ],
    answers=("stop_action",),
    error_code="no_factory_possible",
)


# travel and steps (Travel; the steps icon)


def travel_points(p: Player, effect: Effect) -> int:
    """A travel action has as many movement points as the workforce; the steps icon 1-3."""
    if effect["icon"] == "steps":
        return int(effect["count"])
    return int(p["workforce"])


def map_payments(
    state: State, seat: int, path: list[str], effect: Effect
) -> tuple[int, dict[int, int]]:
    """Marks to the supply and to other players for moving along ``path`` by ``effect``
    (a travel action, or the steps icon).

    Entering a coin space costs 1 mark, paid to every other player whose agent stands
    there (docs/rules/impression.md), else to the supply; nothing on a road with your own
    city markers at both ends, nor on a free travel. A travel-discount factory saves 1 of
    the supply's marks on a travel action, not on the steps icon ("not a real travel
    action").
    """
    supply = 0
    owners: dict[int, int] = {}
    if effect.get("free"):
        return 0, owners
    for node in path:
        road = data.COIN_ROAD.get(node)
        if road is None:
            continue
        if all(seat in state["city_markers"][city] for city in road):
            continue
        others = [s for s, where in enumerate(state["agents"]) if s != seat and where == node]
        if others:
            for other in others:
                owners[other] = owners.get(other, 0) + 1
        else:
            supply += 1
    supply = max(0, supply - travel_discount(state, seat, effect))
    return supply, owners


def travel_discount(state: State, seat: int, effect: Effect) -> int:
    """The marks a travel-discount factory saves on a move by ``effect``: on a paid travel
    action only ("1 mark less whenever you perform a travel action"; the steps icon "is not
    a real travel action")."""
    if effect["icon"] != "travel" or effect.get("free"):
        return 0
    return discount(player(state, seat), "travel")


def travel_routes(state: State, seat: int, effect: Effect) -> dict[tuple[int, str], list[str]]:
    """The cheapest route to every reachable space for each split of the movement points.

    A route may pass a space again and come back to its start: "You cannot visit the same
    shop twice" is printed for shop moves only (docs/rules/impression.md). Each length is
    grown from the one before, keeping per space the routes no other beats on both the
    marks owed to the supply and those owed to other players (a discount applies to the
    supply's share alone, so neither share can stand for the other).
    """
    p = player(state, seat)
    points = travel_points(p, effect)
    start = state["agents"][seat]
    free = bool(effect.get("free"))
    entry = {node: _entry_payment(state, seat, node, free) for node in data.MAP_NEIGHBOURS}
    cut = travel_discount(state, seat, effect)
    best: dict[tuple[str, int], tuple[int, list[str]]] = {}
    fronts: dict[str, dict[tuple[int, int], list[str]]] = {start: {(0, 0): []}}
    for length in range(1, points + 1):
        grown: dict[str, dict[tuple[int, int], list[str]]] = {}
        for node, front in fronts.items():
            for (supply, owed), path in front.items():
                for nxt in data.MAP_NEIGHBOURS[node]:
                    more_supply, more_owed = entry[nxt]
                    here = grown.setdefault(nxt, {})
                    here.setdefault((supply + more_supply, owed + more_owed), [*path, nxt])
        fronts = {node: _undominated(front) for node, front in grown.items()}
        for node, front in fronts.items():
            cost, path = min(
                ((max(0, supply - cut) + owed, path) for (supply, owed), path in front.items()),
                key=lambda priced: priced[0],
            )
            if cost <= p["marks"]:
                best[(node, length)] = (cost, path)
    room = data.TRACK_SECTIONS - state["track"][seat]["section"]
    routes: dict[tuple[int, str], list[str]] = {}
    for track_steps in range(0, min(points, room) + 1):
        costs: dict[str, int] = {}
        if track_steps:
            routes[(track_steps, start)] = []
            costs[start] = 0
        for (node, length), (cost, path) in sorted(best.items()):
            if length > points - track_steps:
                continue
            if node not in costs or cost < costs[node]:
                routes[(track_steps, node)] = path
                costs[node] = cost
    return routes


def _entry_payment(state: State, seat: int, node: str, free: bool) -> tuple[int, int]:
    """Marks (to the supply, to other players) for entering ``node``, as ``map_payments``."""
    road = data.COIN_ROAD.get(node)
    if free or road is None or all(seat in state["city_markers"][city] for city in road):
        return 0, 0
    others = sum(1 for s, where in enumerate(state["agents"]) if s != seat and where == node)
    return (0, others) if others else (1, 0)


def _undominated(front: dict[tuple[int, int], list[str]]) -> dict[tuple[int, int], list[str]]:
    """The routes whose (supply, other players) marks no other route beats on both."""
    return {
        key: path
        for key, path in front.items()
        if not any(o != key and o[0] <= key[0] and o[1] <= key[1] for o in front)
    }


def _route_cost(state: State, seat: int, path: list[str], effect: Effect) -> int:
    supply, owners = map_payments(state, seat, path, effect)
    return supply + sum(owners.values())


def _travel_possible(state: State, seat: int, effect: Effect) -> bool:
    """Some route exists: with a point to spend, a step on the order track while a section
    is left, or onto a next space the player can pay for (a longer route never costs less
    than its first step: the marks owed only grow along it)."""
    p = player(state, seat)
    if travel_points(p, effect) < 1:
        return False
    if state["track"][seat]["section"] < data.TRACK_SECTIONS:
        return True
    start = state["agents"][seat]
    return any(
        _route_cost(state, seat, [nxt], effect) <= p["marks"] for nxt in data.MAP_NEIGHBOURS[start]
    )


def _travel_options(state: State, seat: int, effect: Effect) -> list[Action]:
    return [
        {"type": "travel", "track_steps": steps, "path": path}
        for (steps, _node), path in travel_routes(state, seat, effect).items()
    ]


def _travel_validate(state: State, seat: int, effect: Effect, action: Action) -> None:
    p = player(state, seat)
    steps, path = action.get("track_steps"), action.get("path")
    if not isinstance(steps, int) or steps < 0 or not isinstance(path, list):
        raise IllegalAction("bad_route", "Give track_steps (0 or more) and a path of map spaces.")
    points = travel_points(p, effect)
    if steps + len(path) > points:
        raise IllegalAction(
            "too_many_steps", f"You have {points} movement points for the track and the map."
        )
    if state["track"][seat]["section"] + steps > data.TRACK_SECTIONS:
        raise IllegalAction("track_end", "Your agent cannot move past the last section.")
    if steps == 0 and not path:
        raise IllegalAction("empty_travel", "Move at least one step, or decline the travel.")
    node = state["agents"][seat]
    for nxt in path:  # spaces may be passed again (docs/rules/impression.md)
        if nxt not in data.MAP_NEIGHBOURS.get(node, []):
            raise IllegalAction("not_adjacent", f"{nxt} is not next to {node} on the map.")
        node = nxt
    cost = _route_cost(state, seat, path, effect)
    if cost > p["marks"]:
        raise IllegalAction(
            "insufficient_marks", f"This route costs {cost} marks; you have {p['marks']}."
        )


def _travel_resolve(
    state: State, seat: int, effect: Effect, action: Action, rng: random.Random
) -> list[Effect]:
    p = player(state, seat)
    steps, path = action["track_steps"], action["path"]
    if steps:
        state["track_arrivals"] += 1
        state["track"][seat]["section"] += steps
        state["track"][seat]["arrival"] = state["track_arrivals"]
    if not path:
        return []
    supply, owners = map_payments(state, seat, path, effect)
    p["marks"] -= supply
    for other, amount in owners.items():
        p["marks"] -= amount
        player(state, other)["marks"] += amount
    stop = path[-1]
    state["agents"][seat] = stop
    real = effect["icon"] == "travel"
    if stop not in data.COIN_ROAD:
        return arrive_in_city(state, seat, stop) + ([{"icon": "stop_action"}] if real else [])
    return [{"icon": "trade"}] if real else []


def arrive_in_city(state: State, seat: int, city: str) -> list[Effect]:
    """Stopping in a city: its disc if still there; on a first visit your leftmost city
    marker and the director one space right, with the reward it lands on (Travel)."""
    p = player(state, seat)
    follow = take_disc(state, seat, city) if city in state["map_discs"] else []
    if city == data.START_CITY or seat in state["city_markers"][city] or p["city_markers"] < 1:
        return follow
    state["city_markers"][city].append(seat)
    p["city_markers"] -= 1
    if p["director"] + 1 < len(data.DIRECTOR):
        p["director"] += 1
        follow.extend(data.DIRECTOR[p["director"]]["reward"])
    return follow


for _icon in ("travel", "steps"):
    handler(
        _icon,
        describe="travel" if _icon == "travel" else "move your agent some steps",
        options=_travel_options,
        possible=_travel_possible,
        resolve=_travel_resolve,
        answers=("travel",),
        validate=_travel_validate,
    )


# -- the queue ------------------------------------------------------------------------


def run(state: State, seat: int, rng: random.Random) -> None:
    """Resolve the seat's queue until it is empty or waits for a choice."""
    queue = state["pending"][seat]
    while queue:
        effect = queue[0]
        rule = HANDLERS[effect["icon"]]
        if rule.auto is not None:
            queue.pop(0)
            push(state, seat, rule.auto(state, seat, effect))
            continue
        assert rule.options is not None and rule.resolve is not None
        if not (rule.possible or rule.options)(state, seat, effect):
            queue.pop(0)  # nothing to choose: the effect fizzles
            if rule.fizzle is not None:
                rule.fizzle(state, effect)
            continue
        if rule.single_auto:
            options = rule.options(state, seat, effect)
            if len(options) == 1:
                queue.pop(0)
                push(state, seat, rule.resolve(state, seat, effect, options[0], rng))
                continue
        return


def prompt_options(state: State, seat: int) -> list[Action]:
    """The answers to the seat's waiting choice, ``decline`` included where it may be."""
    effect = state["pending"][seat][0]
    rule = HANDLERS[effect["icon"]]
    assert rule.options is not None
    options = rule.options(state, seat, effect)
    return options if rule.refusal(effect) else [*options, {"type": "decline"}]


def answer(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Validate the seat's answer to its waiting choice, then resolve it."""
    queue = state["pending"][seat]
    effect = queue[0]
    rule = HANDLERS[effect["icon"]]
    body = {key: value for key, value in action.items() if key != "seat"}
    if body["type"] == "decline":
        refusal = rule.refusal(effect)
        if refusal is not None:
            raise IllegalAction("choice_required", refusal)
        queue.pop(0)
        run(state, seat, rng)
        return
    if body["type"] not in rule.answers:
        raise IllegalAction(
            "choice_pending",
            f"First {rule.describe} (or decline it); {body['type']} must wait.",
        )
    if rule.validate is not None:
        rule.validate(state, seat, effect, body)
    else:
        assert rule.options is not None
        if body not in rule.options(state, seat, effect):
            raise IllegalAction(rule.error_code, f"That is not a way to {rule.describe} now.")
    assert rule.resolve is not None
    queue.pop(0)
    push(state, seat, rule.resolve(state, seat, effect, body, rng))
    run(state, seat, rng)


def start_effects(state: State, seat: int, effects: list[Effect], rng: random.Random) -> None:
    push(state, seat, effects)
    run(state, seat, rng)
