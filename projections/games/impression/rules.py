"""Impression for 2-4 players (rules/impression.txt), as a reducer over plain JSON state.

Which rulebook section each part follows:

- ``setup``: Setup 1-9 (trading tiles, technologies, factories, city discs, orders with
  5/3/1 of each type removed, contracts, lead letters, supply, shops by player count);
  then ``place_tradesman``: the players place their tradesmen (the rulebook does not say
  where they start; docs/rules/impression.md).
- Action Phase (two turns each): ``shop`` (A. Shop), ``reset`` (B. Reset) and the
  Optional Actions (``signboard_*``, ``activate_contract``, ``use_city_disc``); every room
  and icon action is an effect of effects.py. ``pair_city_tile`` (the pair icon) is taken
  "at any time", by any seat in any phase.
- Order and Contract Phase: ``buy_order``, ``buy_contract``, ``pass_buying`` in reverse
  order of the order track.
- Production Phase: ``advance_order`` / ``end_production``, then the automatic
  ``pay_wages``.
- Preparation Phase: the automatic ``preparation`` (player order, refills, tradesmen,
  capacity); Game End: the last optional actions, then the automatic ``final_scoring``.

Decisions where the rulebook is silent are recorded in docs/rules/impression.md.
"""

from __future__ import annotations

import functools
import random
from typing import Any

from projections import components
from projections.fold import copy_state
from projections.games.impression import actions, data, effects, scoring, view
from projections.games.impression.effects import player
from projections.ruleset import Action, IllegalAction, Ruleset, State

SYSTEM_STEPS = {
    "wages": "pay_wages",
    "preparation": "preparation",
    "final_scoring": "final_scoring",
}
TURN_PHASES = ("placement", "action", "final_optionals")
MAX_PATH = 8  # longer shop routes never cost less capacity on a 4x4 city (see docs)
SIGNBOARD_NEEDS = {"white": 1, "red": 2, "blue": 2}


class Impression(Ruleset):
    id = "impression"
    title = "Impression"
    min_players = 2
    max_players = 4
    # 2: tradesmen placed by the players, two orders chosen by them; 3: the rules review
    # (docs/rules/impression.md): drawn factories kept, 10 type I orders, travel may revisit,
    # pairing at any time, Reset moves only standing tradesmen; 4: the travel discount not
    # on the steps icon, an assistant's own reward, face-up tiles on a path, chains reaching
    # a letter their actions bring; 5: a travel room at every player count (the Counting
    # house and the Paper mill change places)
    rules_version = "5"
    options = {}  # Impression has no options
    #: "Optional Actions" (before or after the Shop or Reset action) and the pair icon's
    #: "at any time" pairing.
    free_action_types = frozenset(
        {f"signboard_{colour}" for colour in SIGNBOARD_NEEDS}
        | {"activate_contract", "use_city_disc", "pair_city_tile"}
    )

    # -- setup ------------------------------------------------------------------------

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        """Setup 1-9, then the starting values and player order (docs/rules/impression.md)."""
        count = len(players)
        if not self.min_players <= count <= self.max_players:
            raise IllegalAction("player_count", "Impression is for 2 to 4 players.")
        trading: dict[str, Any] = components.new_deck(data.TRADING_TILES, rng)
        trading["display"] = components.draw(trading, data.TRADING_DATA["display_size"])
        tech: dict[str, Any] = {}
        for level in data.LEVELS:
            pile = components.shuffled(
                [t for t, tile in data.TECHNOLOGIES.items() if tile["level"] == level], rng
            )
            rows = data.TECH_DATA["display_rows"]
            tech[level] = {
                "draw_pile": pile[rows:],
                "hidden": len(pile) - rows,
                "display": pile[:rows],
            }
        factories = {
            level: {
                "draw_pile": components.shuffled(
                    [f for f, tile in data.FACTORIES.items() if tile["level"] == level], rng
                ),
                "hidden": 9,
            }
            for level in data.LEVELS
        }
        discs = components.shuffled(data.DISCS, rng)
        map_discs = {city: discs.pop() for city in data.GREY_CITIES}
        removed_count = data.ORDER_DATA["removed_per_level"][str(count)]
        piles: dict[str, list[str]] = {}
        removed: dict[str, list[str]] = {}
        for level in data.LEVELS:
            pile = components.shuffled(
                [o for o, t in data.ORDERS.items() if t["level"] == level], rng
            )
            removed[level], piles[level] = pile[:removed_count], pile[removed_count:]
        orders = {
            "piles": piles,
            "removed": removed,
            "display": [None] * 5,
            "discard_pile": [],
            "taken": 0,
        }
        contracts: dict[str, Any] = components.new_deck(data.CONTRACTS, rng)
        contracts["display"] = components.draw(contracts, data.CONTRACT_DATA["display_size"])
        contracts["taken"] = 0
        letters: dict[str, Any] = components.new_deck(data.LEAD_LETTERS, rng)
        letters["desk"] = components.draw(letters, data.LEAD_LETTER_DATA["desk_size"])
        shops = data.shops_in_play(count)
        neighbours = data.shop_neighbours(shops)
        streets = sorted(
            {data.street(a, b) for a in shops for b in neighbours[a]},
            key=lambda s: [int(part[1:]) for part in s.split("-")],
        )
        state: State = {
            "players": list(players),
            "round": 1,
            "phase": "placement",
            "order": components.shuffled(range(count), rng),
            "turn": {"index": 0, "pass": 1, "main_done": False, "swapped": []},
            "buying": None,
            "production_done": [False] * count,
            "pending": [[] for _ in players],
            "shops": shops,
            "street_names": streets,
            "streets": {},
            "trading": trading,
            "tech": tech,
            "factories": factories,
            "map_discs": map_discs,
            "boxed_discs": discs,
            "orders": orders,
            "contracts": contracts,
            "letters": letters,
            "agents": [data.START_CITY] * count,
            "city_markers": {city: [] for city in data.CITIES},
            "track": [{"section": 0, "arrival": 0} for _ in players],
            "track_arrivals": 0,
            "seats": [self._new_player(seat) for seat in range(count)],
            "final_scores": None,
            "finished": False,
        }
        effects.refill_orders(state, rng)
        return state

    @staticmethod
    def _new_player(seat: int) -> dict[str, Any]:
        start = data.START
        return {
            "seat": seat,
            "marks": start["marks"],
            "paper": start["paper"],
            "lead": start["lead"],
            "ink": start["ink"],
            "vp": 0,
            "workforce": start["workforce"],
            "capacity": start["capacity"],
            "tradesmen": [],  # placed by the players (place_tradesman)
            "assistants": start["assistants"],
            "assistant_levels": [],
            "city_markers": start["city_markers"],
            "director": 0,
            "stacks": [[], []],
            "board": [None] * 9,
            "slots": [
                {"active": False, "contract": None, "filled_before": False} for _ in range(4)
            ],
            "contracts": [],
            "letters_under": {},
            "orders_waiting": [],
            "line": [None] * 4,
            "completed": [],
            "signboards": [],
            "discs": [],
            "pairing": False,
            "workshop": {space: {"down": None, "up": None} for space in data.WORKSHOP},
            "budget": 0,
        }

    # -- status -----------------------------------------------------------------------

    def status(self, state: State) -> dict[str, Any]:
        system = self.system_action(state)
        return {
            "round": state["round"],
            "phase": state["phase"],
            "to_act": [] if system else self._to_act(state),
            "awaiting_system": system["type"] if system else None,
            "finished": state["finished"],
        }

    def _to_act(self, state: State) -> list[int]:
        """The seats the phase waits for, then any other seat with a choice waiting (a
        pairing off turn may start one)."""
        seats = self._phase_to_act(state)
        return seats + [
            seat for seat, queue in enumerate(state["pending"]) if queue and seat not in seats
        ]

    def _phase_to_act(self, state: State) -> list[int]:
        phase = state["phase"]
        if phase in TURN_PHASES:
            return [self._turn_seat(state)]
        if phase == "orders":
            buying = state["buying"]
            return [buying["queue"][buying["index"]]]
        if phase == "production":
            return [
                seat
                for seat, done in enumerate(state["production_done"])
                if not done or state["pending"][seat]
            ]
        return []

    def system_action(self, state: State) -> Action | None:
        """The phase's automatic step, once no seat has a choice waiting."""
        return {"type": SYSTEM_STEPS[state["phase"]]} if self._system_due(state) else None

    @staticmethod
    def _system_due(state: State) -> bool:
        return (
            state["phase"] in SYSTEM_STEPS and not state["finished"] and not any(state["pending"])
        )

    def _may_act(self, state: State, seat: int) -> bool:
        """Whether ``seat`` is in ``to_act`` (without building the list)."""
        return bool(state["pending"][seat]) or seat in self._phase_to_act(state)

    @staticmethod
    def _turn_seat(state: State) -> int:
        return int(state["order"][state["turn"]["index"]])

    # -- legal actions ----------------------------------------------------------------

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state["finished"] or self.system_action(state):
            return []
        return [*self._seat_actions(state, seat), *self._pairings(state, seat)]

    def _seat_actions(self, state: State, seat: int) -> list[Action]:
        if seat not in self._to_act(state):
            return []
        if state["pending"][seat]:
            return effects.prompt_options(state, seat)
        phase = state["phase"]
        if phase == "orders":
            return self._buying_actions(state, seat)
        if phase == "production":
            legal: list[Action] = [
                {"type": "advance_order", "order": order} for order in self._producible(state, seat)
            ]
            return [*legal, {"type": "end_production"}]
        if phase == "placement":
            return self._placements(state, seat)
        legal = []
        if phase == "action" and not state["turn"]["main_done"]:
            legal.extend(self._shop_moves(state, seat))
            legal.extend(self._resets(state, seat))
        else:
            legal.append({"type": "end_turn"})
        legal.extend(self._optional_actions(state, seat))
        return legal

    def _buying_actions(self, state: State, seat: int) -> list[Action]:
        buying = state["buying"]
        legal: list[Action] = []
        for kind in ("order", "contract"):
            if buying[f"{kind}_bought"]:
                continue
            display = state["orders" if kind == "order" else "contracts"]["display"]
            for slot in range(len(display)):
                if effects.buy_problem(state, seat, kind, slot, False) is None:
                    legal.append({"type": f"buy_{kind}", "slot": slot})
        return [*legal, {"type": "pass_buying"}]

    # -- apply ------------------------------------------------------------------------

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        """Validate, then mutate; an IllegalAction leaves the state as it was.

        The action's shape is checked against its marshmallow schema before anything else,
        so the rules only ever see the keys and JSON types they expect (a boolean is never
        a number); each value is then judged by the rule it breaks."""
        if not isinstance(action, dict):
            raise IllegalAction("malformed_action", "An action is an object with a type.")
        seat = action.get("seat")
        kind = action.get("type")
        if seat is None:
            return self._system(state, action, rng)
        if kind in SYSTEM_STEPS.values():
            raise IllegalAction("system_only", f"{kind} is an automatic step, not a player's.")
        if state["finished"]:
            raise IllegalAction("game_finished", "The game is over.")
        if type(seat) is not int or not 0 <= seat < len(state["players"]):
            raise IllegalAction("unknown_seat", "There is no such seat in this game.")
        if not isinstance(kind, str) or kind not in actions.ACTION_TYPES:
            raise IllegalAction("unknown_action", f"Impression has no action {kind!r}.")
        errors = actions.shape_errors(action)
        if errors is not None:
            raise IllegalAction("malformed_action", f"That {kind} is malformed: {errors}.")
        if self._system_due(state):
            raise IllegalAction("not_your_turn", "It is not your turn to act.")
        if kind == "pair_city_tile":
            self.pair_city_tile(state, seat, action, rng)
        elif not self._may_act(state, seat):
            raise IllegalAction("not_your_turn", "It is not your turn to act.")
        elif state["pending"][seat]:
            effects.answer(state, seat, action, rng)
        elif kind == "decline":
            raise IllegalAction("nothing_to_decline", "No choice is waiting for you.")
        elif state["phase"] == "orders":
            self._buying(state, seat, action)
        elif state["phase"] == "production":
            self._production(state, seat, action, rng)
        elif state["phase"] == "placement":
            self.place_tradesman(state, seat, action)
        else:
            self._turn(state, seat, action, rng)
        self._after(state, seat)
        return None

    def _after(self, state: State, seat: int) -> None:
        """Production ends for a seat that cannot advance any order any more."""
        if state["phase"] == "production" and not state["pending"][seat]:
            if not self._producible(state, seat):
                state["production_done"][seat] = True
            if all(state["production_done"]) and not any(state["pending"]):
                state["phase"] = "wages"

    # -- placing the tradesmen ------------------------------------------------------------

    def _placements(self, state: State, seat: int) -> list[Action]:
        taken = {man["shop"] for man in player(state, seat)["tradesmen"]}
        return [
            {"type": "place_tradesman", "shop": shop}
            for shop in state["shops"]
            if shop not in taken
        ]

    def place_tradesman(self, state: State, seat: int, action: Action) -> None:
        """Before the first round each player, in player order, stands a tradesman upright
        in room II of a shop, then a second one in another shop (a decision: the rulebook
        does not say where tradesmen start; docs/rules/impression.md)."""
        if action["type"] != "place_tradesman":
            raise IllegalAction(
                "wrong_phase", "First every player places their two tradesmen in the city."
            )
        shop = action.get("shop")
        if shop not in state["shops"]:
            raise IllegalAction(
                "unknown_shop", f"Place your tradesman in a shop in play: {state['shops']}."
            )
        p = player(state, seat)
        if any(man["shop"] == shop for man in p["tradesmen"]):
            raise IllegalAction(
                "own_tradesman_there", "Each player may have only 1 tradesman per shop."
            )
        p["tradesmen"].append({"shop": shop, "room": "II", "upright": True})
        turn = state["turn"]
        turn["index"] += 1
        if turn["index"] < len(state["order"]):
            return
        turn["index"] = 0
        if turn["pass"] == 1:
            turn["pass"] = 2
            return
        turn["pass"] = 1
        state["phase"] = "action"

    # -- Action Phase -------------------------------------------------------------------

    def _turn(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        kind = action["type"]
        turn = state["turn"]
        if kind in ("shop", "reset"):
            if state["phase"] != "action":
                raise IllegalAction("only_optional_actions", "Only optional actions remain now.")
            if turn["main_done"]:
                raise IllegalAction(
                    "main_action_done", "You already took your Shop or Reset action."
                )
            if kind == "shop":
                self.shop(state, seat, action, rng)
            else:
                self.reset(state, seat, action, rng)
            turn["main_done"] = True
        elif kind == "end_turn":
            if state["phase"] == "action" and not turn["main_done"]:
                raise IllegalAction("main_action_missing", "Take a Shop or Reset action first.")
            self._end_turn(state)
        elif kind in actions.OPTIONAL_TYPES:
            self.optional_action(state, seat, action, rng)
        else:
            raise IllegalAction("wrong_phase", f"{kind} is not possible on your turn.")

    def _end_turn(self, state: State) -> None:
        turn = state["turn"]
        turn.update(index=turn["index"] + 1, main_done=False, swapped=[])
        if turn["index"] < len(state["order"]):
            return
        if state["phase"] == "final_optionals":
            state["phase"] = "final_scoring"
            return
        turn["index"] = 0
        if turn["pass"] == 1:
            turn["pass"] = 2
            return
        self._start_buying(state)

    def _movement_points(self, state: State, seat: int) -> int:
        return data.MOVEMENT_POINTS[state["order"].index(seat)]

    def _shop_moves(self, state: State, seat: int) -> list[Action]:
        """A. Shop: the cheapest route of each upright room-II tradesman to each shop."""
        p = player(state, seat)
        points = self._movement_points(state, seat)
        own = {name for name, street in state["streets"].items() if street["owner"] == seat}
        legal: list[Action] = []
        for index, man in enumerate(p["tradesmen"]):
            if not (man["upright"] and man["room"] == "II"):
                continue
            blocked = {other["shop"] for other in p["tradesmen"] if other is not man}
            best = _cheapest_routes(tuple(state["shops"]), man["shop"], frozenset(own), points)
            for node, (cost, path) in sorted(best.items()):
                if cost > p["capacity"] or node in blocked:
                    continue
                for room in ("I", "II"):
                    legal.append(
                        {"type": "shop", "tradesman": index, "path": list(path), "room": room}
                    )
        return legal

    def shop(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        """A. Shop: move an upright tradesman from room II exactly the order marker's steps
        (capacity pays each step of difference), lay it down and take the room's action."""
        p = player(state, seat)
        index, path, room = action.get("tradesman"), action.get("path"), action.get("room")
        if index not in (0, 1):
            raise IllegalAction("unknown_tradesman", "Choose tradesman 0 or 1.")
        man = p["tradesmen"][index]
        if not man["upright"]:
            raise IllegalAction("tradesman_lying", "That tradesman has already acted this round.")
        if man["room"] != "II":
            raise IllegalAction(
                "not_in_room_two", "Only a tradesman standing in a room II may move."
            )
        if room not in ("I", "II"):
            raise IllegalAction("unknown_room", "Stop in room I or room II.")
        if not isinstance(path, list) or not path:
            raise IllegalAction(
                "empty_path", "Move at least one shop; you can never end where you started."
            )
        neighbours = data.shop_neighbours(state["shops"])
        own = {name for name, street in state["streets"].items() if street["owner"] == seat}
        node, seen, free = man["shop"], {man["shop"]}, 0
        for nxt in path:
            if nxt not in neighbours.get(node, []):
                raise IllegalAction(
                    "not_orthogonal", f"{nxt} is not a shop orthogonally next to {node}."
                )
            if nxt in seen:
                raise IllegalAction(
                    "shop_revisited", "You cannot visit the same shop twice in a move."
                )
            seen.add(nxt)
            free += data.street(node, nxt) in own
            node = nxt
        other = p["tradesmen"][1 - index]
        if other["shop"] == node:
            raise IllegalAction(
                "own_tradesman_there", "Each player may have only 1 tradesman per shop."
            )
        points = self._movement_points(state, seat)
        cost = _step_cost(len(path), free, points)
        if cost > p["capacity"]:
            raise IllegalAction(
                "insufficient_capacity",
                f"Your order marker gives {points} steps; {cost} steps of difference cost "
                f"{cost} capacity and you have {p['capacity']}.",
            )
        p["capacity"] -= cost
        effects.enter_room(state, seat, index, node, room)
        man["upright"] = False
        follow: list[effects.Effect] = []
        for street_name, street in state["streets"].items():
            if street["owner"] != seat and node in street_name.split("-"):
                owner = player(state, street["owner"])
                if street["reward"] == "capacity":
                    effects.change_capacity(owner, 1)
                else:
                    effects.gain_goods(owner, {street["reward"]: 1})
        follow.extend(data.SHOPS[node][f"room_{room}"])
        effects.start_effects(state, seat, follow, rng)

    def _resets(self, state: State, seat: int) -> list[Action]:
        desk = state["letters"]["desk"]
        slots: list[int | None] = [i for i, letter in enumerate(desk) if letter is not None]
        if not slots:
            slots = [None]
        uprights = [i for i, man in enumerate(player(state, seat)["tradesmen"]) if man["upright"]]
        return [
            {"type": "reset", "slot": slot, "keep": keep, "lay_down": lay}
            for slot in slots
            for keep in (None, *effects.free_stacks(player(state, seat)))
            for lay in uprights
            if slot is not None or keep is None
        ]

    def reset(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        """B. Reset: take a desk letter (keep it on a stack or discard it for its resources),
        refill the desk, move the tradesmen standing (upright) in a room I down to room II,
        lay one down, then take the room II actions of those that moved. A tradesman lying
        in a room I has acted this phase and stays (docs/rules/impression.md)."""
        p = player(state, seat)
        desk = state["letters"]["desk"]
        slot, keep, lay = action.get("slot"), action.get("keep"), action.get("lay_down")
        if slot is None:
            if any(letter is not None for letter in desk):
                raise IllegalAction("choose_letter", "Take one of the lead letters on the desk.")
        elif not isinstance(slot, int) or not 0 <= slot < len(desk) or desk[slot] is None:
            raise IllegalAction(
                "empty_desk_space", "Take a lead letter from an occupied desk space."
            )
        if keep not in (None, 0, 1) or (slot is None and keep is not None):
            raise IllegalAction(
                "unknown_stack", "Keep the letter on stack 0 or 1, or discard it (keep: null)."
            )
        if keep is not None and keep not in effects.free_stacks(p):
            raise IllegalAction(
                "free_space_first",
                "Put the letter on your empty space: you cover a letter only when both "
                "spaces hold one.",
            )
        if lay not in (0, 1) or not p["tradesmen"][lay]["upright"]:
            raise IllegalAction("tradesman_lying", "Lay down one of your upright tradesmen.")
        follow: list[effects.Effect] = []
        if slot is not None:
            letter = desk[slot]
            desk[slot] = None
            if keep is None:
                components.discard(state["letters"], [letter])
                effects.gain_goods(p, data.LEAD_LETTERS[letter]["gain"])
                follow.extend(effects.fire(p, "reset_discard"))
            else:
                follow.extend(effects.keep_letter(p, letter, keep))
            effects.refill_desk(state, rng)
        follow.extend(effects.fire(p, "reset"))
        moved = [i for i, man in enumerate(p["tradesmen"]) if man["room"] == "I" and man["upright"]]
        for index in moved:
            effects.enter_room(state, seat, index, p["tradesmen"][index]["shop"], "II")
        p["tradesmen"][lay]["upright"] = False
        rooms = [data.SHOPS[p["tradesmen"][index]["shop"]]["room_II"] for index in moved]
        if len(moved) == 2 and rooms[0] != rooms[1]:
            # two different room II actions: the player chooses which comes first
            follow.append({"icon": "room_two_order", "tradesmen": moved})
        else:
            follow.extend(effect for room in rooms for effect in room)
        effects.start_effects(state, seat, follow, rng)

    # -- Optional Actions ------------------------------------------------------------

    def _optional_actions(self, state: State, seat: int) -> list[Action]:
        p = player(state, seat)
        legal: list[Action] = []
        for colour, need in SIGNBOARD_NEEDS.items():
            if len(_usable_signboards(p, colour)) >= need:
                legal.append({"type": f"signboard_{colour}"})
        in_slots = [slot["contract"] for slot in p["slots"]]
        for index, slot in enumerate(p["slots"]):
            if not slot["active"]:
                continue
            for contract in p["contracts"]:
                if contract not in in_slots and contract not in state["turn"]["swapped"]:
                    legal.append({"type": "activate_contract", "contract": contract, "slot": index})
        for disc in p["discs"]:
            if not disc["used"] and "reward" in data.DISCS[disc["id"]]:
                legal.append({"type": "use_city_disc", "disc": disc["id"]})
        return legal

    def optional_action(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        """Optional Actions: signboards, activating a contract, a city disc."""
        p = player(state, seat)
        kind = action["type"]
        follow: list[effects.Effect] = []
        if kind.startswith("signboard_"):
            colour = kind.removeprefix("signboard_")
            usable = _usable_signboards(p, colour)
            need = SIGNBOARD_NEEDS[colour]
            if len(usable) < need:
                raise IllegalAction(
                    "not_enough_signboards",
                    f"A {colour} signboard action uses {need} unused {colour} signboard(s) "
                    "from orders completed before this Action phase or from city tiles.",
                )
            for board in usable[:need]:
                board["used"] = True
            follow.append(
                effects.SIGNBOARD_EFFECTS[
                    {"white": "workforce", "red": "travel", "blue": "technology"}[colour]
                ]
            )
        elif kind == "activate_contract":
            follow.extend(self._activate_contract(state, p, action))
        elif kind == "use_city_disc":
            disc = _find_disc(p, action.get("disc"))
            if disc is None or disc["used"] or "reward" not in data.DISCS[disc["id"]]:
                raise IllegalAction(
                    "disc_not_usable", "Use one of your unused city discs that shows a reward."
                )
            disc["used"] = True
            follow.extend(data.DISCS[disc["id"]]["reward"])
        effects.start_effects(state, seat, follow, rng)

    def _activate_contract(self, state: State, p: dict[str, Any], action: Action) -> list[Any]:
        contract, index = action.get("contract"), action.get("slot")
        if not isinstance(index, int) or not 0 <= index < 4 or not p["slots"][index]["active"]:
            raise IllegalAction(
                "slot_inactive", "Complete that slot's formation on your composing sticks first."
            )
        if contract not in p["contracts"]:
            raise IllegalAction("contract_not_owned", "Activate a contract you bought.")
        if contract in [slot["contract"] for slot in p["slots"]]:
            raise IllegalAction("contract_already_active", "That contract is already active.")
        if contract in state["turn"]["swapped"]:
            raise IllegalAction(
                "contract_just_replaced", "A contract replaced this turn returns on a later turn."
            )
        slot = p["slots"][index]
        if slot["contract"] is not None:
            state["turn"]["swapped"].append(slot["contract"])
        slot["contract"] = contract
        if slot["filled_before"]:
            return []  # a replacement does not earn the covered action again
        slot["filled_before"] = True
        return list(data.SLOTS[index]["bonus"])

    # -- the pair icon: "at any time" -------------------------------------------------

    def _pairings(self, state: State, seat: int) -> list[Action]:
        p = player(state, seat)
        if not p["pairing"]:
            return []
        paired = {cell["paired"] for cell in p["board"] if cell is not None}
        return [
            {"type": "pair_city_tile", "disc": disc["id"], "cell": index}
            for disc in p["discs"]
            if disc["id"] not in paired
            for index, cell in enumerate(p["board"])
            if cell is not None and cell["paired"] is None
        ]

    def pair_city_tile(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        """Pair icon: "pair a city tile with a lead letter on your composing board at any
        time" - on any seat's turn, in any phase, even while a choice of yours waits (a
        bonus it earns comes first; docs/rules/impression.md)."""
        effects.start_effects(state, seat, self._pair(player(state, seat), action), rng)

    def _pair(self, p: dict[str, Any], action: Action) -> list[Any]:
        if not p["pairing"]:
            raise IllegalAction("no_pair_icon", "Pairing needs a covered pair icon.")
        disc = _find_disc(p, action.get("disc"))
        if disc is None:
            raise IllegalAction("disc_not_owned", "Pair one of your own city tiles.")
        if any(cell is not None and cell["paired"] == disc["id"] for cell in p["board"]):
            raise IllegalAction("disc_already_paired", "That city tile is already paired.")
        index = action.get("cell")
        if not isinstance(index, int) or not 0 <= index < 9 or p["board"][index] is None:
            raise IllegalAction(
                "no_letter_there", "Pair the city tile with a letter on your sticks."
            )
        cell = p["board"][index]
        if cell["paired"] is not None:
            raise IllegalAction("letter_already_paired", "1 city tile per lead letter.")
        cell["paired"] = disc["id"]
        printed = data.STICKS[index // 3][index % 3]
        if not cell["bonus_taken"] and data.DISCS[disc["id"]]["letter"] == printed["letter"]:
            cell["bonus_taken"] = True  # the pair example: "A" with "B" and city tile "A"
            return list(printed["bonus"])
        return []

    # -- Order and Contract Phase ------------------------------------------------------

    def _start_buying(self, state: State) -> None:
        """Buying happens leftmost agent first: lowest section, and within a section the
        later arrival (slots fill from the right); the start section in reverse order."""

        def leftmost_first(seat: int) -> tuple[int, int]:
            track = state["track"][seat]
            if track["section"] == 0:
                return (0, -state["order"].index(seat))
            return (track["section"], -track["arrival"])

        queue = sorted(range(len(state["players"])), key=leftmost_first)
        state["phase"] = "orders"
        state["buying"] = {
            "queue": queue,
            "index": 0,
            "order_bought": False,
            "contract_bought": False,
        }

    def _buying(self, state: State, seat: int, action: Action) -> None:
        kind = action["type"]
        buying = state["buying"]
        if kind == "pass_buying":
            self._next_buyer(state)
            return
        if kind not in ("buy_order", "buy_contract"):
            raise IllegalAction("wrong_phase", f"{kind} is not possible while buying orders.")
        what = kind.removeprefix("buy_")
        if buying[f"{what}_bought"]:
            raise IllegalAction(f"{what}_already_bought", f"You may buy 1 {what} per phase.")
        problem = effects.buy_problem(state, seat, what, action.get("slot"), False)
        if problem is not None:
            raise problem
        effects.buy(state, seat, what, action["slot"], False)
        buying[f"{what}_bought"] = True
        if buying["order_bought"] and buying["contract_bought"]:
            self._next_buyer(state)

    def _next_buyer(self, state: State) -> None:
        buying = state["buying"]
        buying.update(index=buying["index"] + 1, order_bought=False, contract_bought=False)
        if buying["index"] < len(buying["queue"]):
            return
        state["buying"] = None
        state["phase"] = "production"
        for seat, p in enumerate(state["seats"]):
            p["budget"] = p["capacity"]
            state["production_done"][seat] = not self._producible(state, seat)
        if all(state["production_done"]):
            state["phase"] = "wages"

    # -- Production Phase ---------------------------------------------------------------

    def _producible(self, state: State, seat: int) -> list[str]:
        p = player(state, seat)
        if p["budget"] < 1 or p["capacity"] < 1:
            return []
        return effects.advanceable(p, pay=True)

    def _production(self, state: State, seat: int, action: Action, rng: random.Random) -> None:
        """Production Phase: each stage advanced costs its resources and 1 capacity (the
        marker earns the space it enters), up to the capacity held when production began."""
        kind = action["type"]
        if kind == "end_production":
            state["production_done"][seat] = True
            return
        if kind != "advance_order":
            raise IllegalAction("wrong_phase", f"{kind} is not possible during production.")
        p = player(state, seat)
        if p["budget"] < 1 or p["capacity"] < 1:
            raise IllegalAction("no_capacity_left", "You have no capacity left to advance orders.")
        problem = effects.advance_problem(p, str(action.get("order")), pay=True)
        if problem is not None:
            raise problem
        p["budget"] -= 1
        follow = effects.change_capacity(p, -1, reward=True)
        follow.extend(effects.advance_order(p, action["order"], pay=True))
        effects.start_effects(state, seat, follow, rng)

    # -- automatic steps --------------------------------------------------------------

    def _system(self, state: State, action: Action, rng: random.Random) -> None:
        expected = self.system_action(state)
        if expected is None or {**expected, "seat": None} != {"seat": None, **action}:
            raise IllegalAction("no_system_step", "No such automatic step is due.")
        if expected["type"] == "pay_wages":
            self.pay_wages(state)
        elif expected["type"] == "preparation":
            self.preparation(state, rng)
        else:
            state["final_scores"] = scoring.final_scores(state)
            state["phase"] = "finished"
            state["finished"] = True

    def pay_wages(self, state: State) -> None:
        """End of production: 1 mark per 2 workforce; each unpaid mark costs 1 workforce."""
        for p in state["seats"]:
            due = p["workforce"] // 2
            paid = min(due, p["marks"])
            p["marks"] -= paid
            effects.change_workforce(p, -(due - paid))
        state["phase"] = "preparation"

    def preparation(self, state: State, rng: random.Random) -> None:
        """Preparation Phase: player order, refills (ending the game when no order is
        left), tradesmen upright, capacity catching up with workforce."""
        state["order"] = next_player_order(state)
        for track in state["track"]:
            track.update(section=0, arrival=0)
        state["track_arrivals"] = 0
        count = len(state["players"])
        orders, contracts = state["orders"], state["contracts"]
        _discard_cheapest(orders["display"], orders["discard_pile"], count, orders["taken"])
        _discard_cheapest(
            contracts["display"], contracts["discard_pile"], count, contracts["taken"]
        )
        orders["taken"] = contracts["taken"] = 0
        effects.refill_orders(state, rng)
        effects.refill_contracts(state, rng)
        for p in state["seats"]:
            for board in p["signboards"]:
                board["usable"] = True
        state["turn"] = {"index": 0, "pass": 1, "main_done": False, "swapped": []}
        if all(slot is None for slot in orders["display"]):
            state["phase"] = "final_optionals"  # Game End: the preparation is aborted
            return
        for p in state["seats"]:
            for man in p["tradesmen"]:
                man["upright"] = True
            if p["capacity"] < p["workforce"]:
                p["capacity"] = p["workforce"]
        state["round"] += 1
        state["phase"] = "action"

    # -- views, results, hidden information ------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return view.public_view(state, seat, self.legal_actions if seat is not None else None)

    def result(self, state: State) -> dict[str, Any] | None:
        if not state["finished"]:
            return None
        return scoring.result(state)

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        return view.resample(copy_state(state), rng)

    def reveals_hidden(self, before: State, action: Action) -> bool:
        return action.get("seat") is None or action["type"] not in actions.NEVER_DRAW

    def summarize(self, state: State, action: Action) -> str:
        return view.summarize(state, action)

    def action_schemas(self) -> dict[str, Any]:
        return dict(actions.SCHEMAS)


@functools.lru_cache(maxsize=4096)
def _cheapest_routes(
    shops: tuple[str, ...], start: str, own: frozenset[str], points: int
) -> dict[str, tuple[int, list[str]]]:
    """The cheapest route (in capacity) from ``start`` to every other shop (read only)."""
    neighbours = data.shop_neighbours(list(shops))
    best: dict[str, tuple[int, list[str]]] = {}

    def walk(node: str, path: list[str], free: int) -> None:
        if path:
            cost = _step_cost(len(path), free, points)
            if node not in best or cost < best[node][0]:
                best[node] = (cost, list(path))
        if len(path) >= MAX_PATH:
            return
        for nxt in neighbours[node]:
            if nxt != start and nxt not in path:
                path.append(nxt)
                walk(nxt, path, free + (data.street(node, nxt) in own))
                path.pop()

    walk(start, [], 0)
    return best


def _step_cost(length: int, free: int, points: int) -> int:
    """Capacity paid for a route: counted steps may be any number from ``length - free``
    (own assistants' streets are free) to ``length``; each step off the marker costs 1."""
    low = length - free
    if low <= points <= length:
        return 0
    return min(abs(low - points), abs(length - points))


def _usable_signboards(p: dict[str, Any], colour: str) -> list[dict[str, Any]]:
    return [b for b in p["signboards"] if b["colour"] == colour and b["usable"] and not b["used"]]


def _find_disc(p: dict[str, Any], disc_id: Any) -> dict[str, Any] | None:
    return next((disc for disc in p["discs"] if disc["id"] == disc_id), None)


def _discard_cheapest(display: list[Any], discard: list[Any], count: int, taken: int) -> None:
    """Preparation: if fewer spaces emptied this round than players, discard from the
    cheapest spaces; then push what remains to the cheapest spaces."""
    missing = count - taken
    for index in range(len(display)):
        if missing <= 0:
            break
        if display[index] is not None:
            discard.append(display[index])
            display[index] = None
            missing -= 1
    remaining = [tile for tile in display if tile is not None]
    display[:] = remaining + [None] * (len(display) - len(remaining))


def next_player_order(state: State) -> list[int]:
    """Preparation: advanced agents first (furthest first, earlier arrival first: slots
    fill from the right); then the others in their order with the front player last."""
    advanced = [seat for seat in state["order"] if state["track"][seat]["section"] > 0]
    advanced.sort(key=lambda s: (-state["track"][s]["section"], state["track"][s]["arrival"]))
    staying = [seat for seat in state["order"] if state["track"][seat]["section"] == 0]
    if staying and staying[0] == state["order"][0]:
        staying = staying[1:] + staying[:1]
    return advanced + staying
