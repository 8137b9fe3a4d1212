"""Gutenberg (rules/gutenberg.txt; decisions in docs/rules/gutenberg.md).

Which rulebook section each part follows:

- ``setup`` and the setup actions: "Setup" 1-14 (characters, the snake draft of orders,
  3 starting types).
- ``turn_gears``: "Turn Gears"; ``submit_plan``/``reveal_plans``/``move_marker``: "Plan"
  (and Johannes Gutenberg's power).
- the five action rows, in order: "Execute Plans" (Take Orders, Take Inks, Develop
  Specialties, Improve Printing Houses, Patronage); ``finish_action`` discards what is left.
- ``fulfill_orders``: "Fulfill Orders" (orders.py).
- ``end_of_round``: "End of Round"; ``final_scoring``: "End of Game" (scoring.py).
- free actions at any time of a round: ``buy_type`` ("Printing": cost table),
  ``activate_gear`` ("Gear Rewards", gears.py), ``swap_specialties`` (Plantinus).
- chained choices left by rewards (effects.py): ``keep_order``/``redraw_order``,
  ``advance_specialty``, ``take_ink`` (Patronage's inks; a reward's inks are drawn), and
  the characters' setup choices.
"""

from __future__ import annotations

import functools
import random
from itertools import combinations_with_replacement, permutations, product
from typing import Any

from projections import components, decisions
from projections.fold import copy_state
from projections.games.gutenberg import data, effects, gears, orders, scoring, view
from projections.games.gutenberg.actions import shape_errors
from projections.ruleset import Action, IllegalAction, Ruleset, State

ROWS = ("orders", "inks", "specialties", "gears", "patronage")
ROUNDS = 6
MAX_PER_ROW = (
    6  # German review: at most 6 markers per action (docs/rules/gutenberg.md, difference 4)
)
START_MARKERS = 7
START_GUILDERS = 10
PATRONAGE_REWARDS = ("order", "specialty", "guilders", "inks")
ROUND_PHASES = ("choose_wild_ink", "plan", "gutenberg", *ROWS, "fulfill", "round_end")
SYSTEM_TYPES = (
    "reveal_characters",
    "turn_gears",
    "reveal_plans",
    "finish_action",
    "end_of_round",
    "final_scoring",
)
PENDING_ACTIONS = {
    "keep_order": "order",
    "redraw_order": "order",
    "advance_specialty": "specialty",
    "take_ink": "inks",
    "choose_ungler_specialties": "ungler",
    "keep_gears": "guillard",
}
FREE_ACTIONS = ("buy_type", "activate_gear", "swap_specialties")
REDRAW_COST = 2
REDRAWS = {"printing": (2, 0), "refinement": (0, 2), "mixed": (1, 1)}


@functools.cache
def _plans(markers: int) -> tuple[tuple[int, ...], ...]:
    """Every allocation of up to ``markers`` initiative markers to the 5 rows (max 6 each)."""
    return tuple(
        rows for rows in product(range(MAX_PER_ROW + 1), repeat=len(ROWS)) if sum(rows) <= markers
    )


class Gutenberg(Ruleset):
    id = "gutenberg"
    title = "Gutenberg"
    min_players = 2
    max_players = 4
    # 2: free actions after the last fulfilment and during open choices;
    # 3: inks a reward shows are drawn from the bag, not chosen ("Inks from the bag").
    rules_version = "3"
    options = {"characters": True}
    free_action_types = frozenset(FREE_ACTIONS)

    # -- setup ("Setup" 1-14) -------------------------------------------------------

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        """Board, decks, bag, draft pool and players as "Setup" lays them out."""
        count = len(players)
        if not self.min_players <= count <= self.max_players:
            raise IllegalAction("player_count", "Gutenberg is for 2 to 4 players.")
        board_size = data.BOARD[str(count)]
        with_characters = bool({**self.options, **options}.get("characters", True))
        printing = components.new_deck(sorted(data.PRINTING), rng)
        refinement = components.new_deck(sorted(data.REFINEMENT), rng)
        draft = {
            "printing": components.draw(printing, board_size["draft_cards"]),
            "refinement": components.draw(refinement, board_size["draft_cards"]),
            "order": components.snake_order(0, count),
            "index": 0,
        }
        bag = components.new_bag(data.GAME["inks"])
        specialty = components.new_deck(sorted(data.SPECIALTY_CARDS), rng)
        gear_ids = sorted(
            g for g, gear in data.GEARS.items() if count > 2 or gear["lines"] == "grey"
        )
        gear_deck = components.new_deck(gear_ids, rng)
        patronage = components.shuffled(sorted(data.PATRONAGE), rng)
        unlock = board_size["patronage_unlock"]
        board = {
            "printing": components.draw(printing, board_size["printing_spaces"]),
            "refinement": components.draw(refinement, board_size["refinement_spaces"]),
            "inks": [components.bag_draw(bag, 3, rng) for _ in range(board_size["ink_sets"])],
            "specialty": components.draw(specialty, board_size["specialty_spaces"]),
            "gears": components.draw(gear_deck, board_size["gear_spaces"]),
            "patronage": [
                {"card": card, "unlock": round_}
                for card, round_ in zip(patronage, unlock, strict=False)
            ],
            "patronage_rewards": {reward: None for reward in PATRONAGE_REWARDS},
        }
        characters = components.shuffled(sorted(data.CHARACTERS), rng) if with_characters else []
        seats = [_new_player(seat, characters[2 * seat : 2 * seat + 2]) for seat in range(count)]
        return {
            "players": list(players),
            "options": {"characters": with_characters},
            "side": board_size["side"],
            "round": 1,
            "phase": "choose_character" if with_characters else "draft",
            # "Choose a 1st player": the order of ``players`` (docs/rules/gutenberg.md, "Setup").
            "first_player": 0,
            "decks": {
                "printing": printing,
                "refinement": refinement,
                "specialty": specialty,
                "gears": gear_deck,
            },
            "bag": bag,
            "board": board,
            "draft": draft,
            "patronage_box": sorted(patronage[len(unlock) :]),
            "character_box": sorted(characters[2 * count :]),
            "seats": seats,
            "plans_revealed": False,
            "queue": [],
            "turn": 0,
            "pending": [],
            "finished": False,
            "final": None,
        }

    # -- the contract -----------------------------------------------------------------

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        """Validate, then mutate; an IllegalAction leaves the state as it was.

        The action's shape (its schema's keys and JSON types, ``actions.shape_errors``) is
        checked before anything else, so a handler only ever sees well-typed values (a
        boolean is never a number); the handlers judge the values, with their own codes."""
        if not isinstance(action, dict):
            raise IllegalAction("malformed_action", "An action is an object with a type.")
        seat = action.get("seat")
        kind = action.get("type")
        if seat is None:
            self._system(state, action, rng)
            return
        if kind in SYSTEM_TYPES:
            raise IllegalAction("system_step_only", f"{kind} is an automatic step of the game.")
        if type(seat) is not int or not 0 <= seat < len(state["players"]):
            raise IllegalAction("no_such_seat", "That seat is not in this game.")
        if state["finished"]:
            raise IllegalAction("game_finished", "The game is over.")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise IllegalAction("unknown_action", f"Gutenberg has no action {kind!r}.")
        errors = shape_errors(action)
        if errors is not None:
            raise IllegalAction("malformed_action", f"That {kind} is malformed: {errors}.")
        due = self.system_action(state)
        if due is not None:
            raise IllegalAction(
                "awaiting_system", f"Wait for the automatic step ({due['type']}) to run."
            )
        _check_moment(state, seat, str(kind))
        handler(state, seat, action, rng)

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        """Every concrete action for ``seat``: its turn's choices first, then free actions."""
        if state["finished"] or self.system_action(state) is not None:
            return []
        if state["pending"]:
            head = state["pending"][0]
            actions = _pending_options(state, head) if head["seat"] == seat else []
        else:
            actions = _phase_options(state, seat)
        if state["phase"] in ROUND_PHASES:
            actions.extend(_free_options(state, seat))
        return actions

    def describe_actions(self, state: State, seat: int) -> dict[str, Any]:
        """As the list says, but a plan (787-2,723 of them), Guillard's gears (192) and the
        starting types described as a split and choices, exactly, without listing them."""
        choice = None
        if not state["finished"] and self.system_action(state) is None:
            choice = _described_choice(state, seat)
        if choice is None:
            return super().describe_actions(state, seat)
        found = {choice["type"]: choice}
        if state["phase"] in ROUND_PHASES:
            found.update(decisions.describe_list(_free_options(state, seat)))
        return found

    def status(self, state: State) -> dict[str, Any]:
        system = self.system_action(state)
        return {
            "round": state["round"],
            "phase": state["phase"],
            "to_act": [] if system or state["finished"] else _to_act(state),
            "awaiting_system": system["type"] if system else None,
            "finished": state["finished"],
        }

    def system_action(self, state: State) -> Action | None:
        """The automatic step due now: reveals, gear turning, discards, end of round, scoring."""
        phase = state["phase"]
        if state["finished"] or state["pending"]:
            return None
        seats = state["seats"]
        if phase == "choose_character" and all(p["character_choice"] for p in seats):
            return {"type": "reveal_characters"}
        if phase == "turn_gears":
            return {"type": "turn_gears"}
        if phase == "plan" and all(p["plan"] is not None for p in seats):
            return {"type": "reveal_plans"}
        if phase in ROWS and state["turn"] >= len(state["queue"]):
            return {"type": "finish_action", "action": phase}
        if phase == "round_end" and not _closing(state):
            return {"type": "end_of_round"}
        if phase == "final_scoring":
            return {"type": "final_scoring"}
        return None

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return view.view(state, seat, self.status(state))

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        return view.resample_hidden(state, seat, rng, _plans)

    def result(self, state: State) -> dict[str, Any] | None:
        return state["final"] if state["finished"] else None

    def public_action(self, state: State, action: Action) -> Action | None:
        """Plans and character choices stay secret until the reveal."""
        if action.get("type") in ("submit_plan", "choose_character"):
            return {"type": action["type"]}
        return None

    def reveals_hidden(self, before: State, action: Action) -> bool:
        """Automatic steps reveal; a seat's action reveals when it draws from a deck (an
        order or gears drawn for a reward) or from the bag (the inks a reward shows), directly
        or down a chain of rewards, and when it keeps some of the cards it drew (the others
        then see them). Every draw from the bag, and every reshuffle, takes the game's
        randomness, so a trial that consumes any has revealed something."""
        if action.get("seat") is None:
            return True
        trial = copy_state(before)
        luck = random.Random(0)
        untouched = luck.getstate()
        try:
            self.apply(trial, action, luck)
        except IllegalAction:
            return False
        drew_at_random = luck.getstate() != untouched
        return (
            drew_at_random
            or any(
                trial["decks"][name]["draw_pile"] != deck["draw_pile"]
                for name, deck in before["decks"].items()
            )
            or _shows_cards_drawn(before, trial)
        )

    def summarize(self, state: State, action: Action) -> str:
        return view.summarize(state, action)

    def summarize_own(self, state: State, action: Action) -> str:
        """Its own plan and character choice are no secret to the seat that makes them."""
        return view.summarize_own(state, action, ROWS)

    def action_schemas(self) -> dict[str, Any]:
        from projections.games.gutenberg.actions import SCHEMAS

        return dict(SCHEMAS)

    # -- automatic steps --------------------------------------------------------------

    def _system(self, state: State, action: Action, rng: random.Random) -> None:
        expected = self.system_action(state)
        if expected is None or expected != {k: v for k, v in action.items() if k != "seat"}:
            raise IllegalAction("no_system_step", "That automatic step is not due now.")
        _SYSTEM[expected["type"]](state, rng)


def _shows_cards_drawn(before: State, after: State) -> bool:
    """Whether a choice among cards only their drawer saw (an order's or Carola Guillard's
    gears) was resolved: the cards kept go in front of the player, the rest face up on the
    discard pile, so every other seat now sees what was drawn."""
    return any(
        pending["kind"] in view.DRAWN_KEYS and pending not in after["pending"]
        for pending in before["pending"]
    )


# -- players ------------------------------------------------------------------------------


def _new_player(seat: int, offer: list[str]) -> dict[str, Any]:
    """A player's pieces from "Setup" 14."""
    return {
        "guilders": START_GUILDERS,
        "fame": 0,
        "markers": START_MARKERS + seat,
        "types": {},
        "types_chosen": False,
        "inks": {},
        "orders": [],
        "specialties": {s: 0 for s in data.SPECIALTIES},
        "reward_level": 0,
        "gears": [None] * gears.AXLES,
        "gear_uses": [0] * gears.AXLES,
        "patronage": [],
        "character": None,
        "character_offer": list(offer),
        "character_choice": None,
        "plan": None,
        "wild_ink": None,
        "power_used": False,
    }


def _holder(state: State, character: str) -> int | None:
    for seat, player in enumerate(state["seats"]):
        if player["character"] == character:
            return seat
    return None


def _to_act(state: State) -> list[int]:
    if state["pending"]:
        return [state["pending"][0]["seat"]]
    phase = state["phase"]
    seats = state["seats"]
    if phase == "choose_character":
        return [s for s, p in enumerate(seats) if p["character_choice"] is None]
    if phase == "draft":
        return [state["draft"]["order"][state["draft"]["index"]]]
    if phase == "choose_types":
        return [s for s, p in enumerate(seats) if not p["types_chosen"]]
    if phase == "choose_wild_ink":
        return [s for s, p in enumerate(seats) if p["character"] == "caxton"]
    if phase == "plan":
        return [s for s, p in enumerate(seats) if p["plan"] is None]
    if phase == "gutenberg":
        holder = _holder(state, "gutenberg")
        return [] if holder is None else [holder]
    if phase in (*ROWS, "fulfill") and state["turn"] < len(state["queue"]):
        return [state["queue"][state["turn"]]]
    if phase == "round_end":
        return _closing(state)
    return []


def _closing(state: State) -> list[int]:
    """After the last fulfilment: the seats not done with the round that still have a free
    action to take (docs/rules/gutenberg.md, "Free actions")."""
    return [seat for seat in state["queue"] if _has_free_option(state, seat)]


def _check_moment(state: State, seat: int, kind: str) -> None:
    """Whether ``kind`` may be played by ``seat`` now: free actions at any time of a round;
    an open choice before any other action."""
    if kind in FREE_ACTIONS:
        if state["phase"] not in ROUND_PHASES:
            raise IllegalAction("not_during_setup", "Free actions are taken during a round.")
        return
    pending = state["pending"]
    if kind in PENDING_ACTIONS:
        if not pending or pending[0]["seat"] != seat or pending[0]["kind"] != PENDING_ACTIONS[kind]:
            raise IllegalAction("no_such_choice", "You have no open choice of that kind.")
        return
    if pending:  # docs/rules/gutenberg.md, "Chained choices"
        who = state["players"][pending[0]["seat"]]
        raise IllegalAction("choice_pending", f"Wait for {who} to finish a reward's choice.")
    if seat not in _to_act(state):
        raise IllegalAction("not_your_turn", "The game is not waiting for you to do that.")


# -- setup actions ----------------------------------------------------------------------


def _phase(state: State, *phases: str) -> None:
    if state["phase"] not in phases:
        raise IllegalAction(
            "phase_mismatch", f"That is not done now; the game is in {state['phase']}."
        )


def choose_character(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Keep 1 of the 2 character tiles drawn ("Setup" 14)."""
    _phase(state, "choose_character")
    player = state["seats"][seat]
    if action.get("character") not in player["character_offer"]:
        raise IllegalAction("character_not_drawn", "Keep one of the two characters you drew.")
    player["character_choice"] = action["character"]


def reveal_characters(state: State, rng: random.Random) -> None:
    """Chosen characters are shown; immediate powers (Guillard, Ungler) open their choices."""
    for seat, player in enumerate(state["seats"]):
        player["character"] = player["character_choice"]
        state["character_box"] = sorted(
            state["character_box"]
            + [c for c in player["character_offer"] if c != player["character"]]
        )
        player["character_offer"] = []
        player["character_choice"] = None
        if player["character"] == "guillard":
            drawn = components.draw(state["decks"]["gears"], 4, rng)
            if drawn:
                state["pending"].append({"seat": seat, "kind": "guillard", "gears": drawn})
        elif player["character"] == "ungler":
            state["pending"].append({"seat": seat, "kind": "ungler"})
    state["phase"] = "draft"


def draft_order(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Snake draft: 1 printing + 1 refinement card, in order then in reverse ("Setup" 14)."""
    _phase(state, "draft")
    draft = state["draft"]
    if action.get("printing") not in draft["printing"]:
        raise IllegalAction("card_not_offered", "Pick a printing card from the face-up options.")
    if action.get("refinement") not in draft["refinement"]:
        raise IllegalAction("card_not_offered", "Pick a refinement card from the face-up options.")
    draft["printing"].remove(action["printing"])
    draft["refinement"].remove(action["refinement"])
    state["seats"][seat]["orders"].append(
        {"printing": action["printing"], "refinement": action["refinement"]}
    )
    draft["index"] += 1
    if draft["index"] >= len(draft["order"]):
        # "Return the 4 unselected cards to their respective discards."
        components.discard(state["decks"]["printing"], draft["printing"])
        components.discard(state["decks"]["refinement"], draft["refinement"])
        draft["printing"], draft["refinement"] = [], []
        state["phase"] = "choose_types"


def choose_types(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Each player chooses 3 types from the pool ("Setup" 14)."""
    _phase(state, "choose_types")
    letters = action.get("letters")
    if (
        not isinstance(letters, list)
        or len(letters) != 3
        or any(letter not in data.TYPES for letter in letters)
    ):
        raise IllegalAction("three_types", f"Choose exactly 3 types from {', '.join(data.TYPES)}.")
    player = state["seats"][seat]
    for letter in letters:
        effects.add(player["types"], letter)
    player["types_chosen"] = True
    if all(p["types_chosen"] for p in state["seats"]):
        _begin_round(state)


def _begin_round(state: State) -> None:
    """After gears turned: Caxton names a wild ink at the start of the round, then plans."""
    state["phase"] = "choose_wild_ink" if _holder(state, "caxton") is not None else "plan"


def choose_wild_ink(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Caxton: an ink colour wild for this player this round."""
    _phase(state, "choose_wild_ink")
    if action.get("ink") not in data.INKS:
        raise IllegalAction("no_such_ink", f"Name one of the inks {', '.join(data.INKS)}.")
    state["seats"][seat]["wild_ink"] = action["ink"]
    state["phase"] = "plan"


# -- turn gears and plan --------------------------------------------------------------


def turn_gears(state: State, rng: random.Random) -> None:
    """Each player turns the top gear one sector clockwise (not in round 1)."""
    for player in state["seats"]:
        gears.turn_gears(player)
    _begin_round(state)


def submit_plan(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Secret allocation of initiative markers to the 5 rows ("Plan")."""
    _phase(state, "plan")
    player = state["seats"][seat]
    rows = action.get("rows")
    if (
        not isinstance(rows, list)
        or len(rows) != len(ROWS)
        or any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in rows)
    ):
        raise IllegalAction("bad_plan", "A plan gives a marker count for each of the 5 rows.")
    if any(n > MAX_PER_ROW for n in rows):
        raise IllegalAction("row_full", f"A row holds at most {MAX_PER_ROW} markers.")
    if sum(rows) > player["markers"]:
        raise IllegalAction(
            "too_many_markers", f"You have only {player['markers']} initiative markers."
        )
    player["plan"] = list(rows)


def reveal_plans(state: State, rng: random.Random) -> None:
    """All plans are revealed at once; Gutenberg may then move a marker."""
    state["plans_revealed"] = True
    if _holder(state, "gutenberg") is not None:
        state["phase"] = "gutenberg"
    else:
        _start_row(state, 0)


def move_marker(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Johannes Gutenberg: after the reveal, move 1 initiative marker to another action."""
    _phase(state, "gutenberg")
    plan = state["seats"][seat]["plan"]
    source, target = action.get("from_row"), action.get("to_row")
    if source not in ROWS or target not in ROWS or source == target:
        raise IllegalAction("bad_rows", f"Move a marker between two rows of {', '.join(ROWS)}.")
    if plan[ROWS.index(source)] == 0:
        raise IllegalAction("row_empty", "There is no marker in that row to move.")
    if plan[ROWS.index(target)] >= MAX_PER_ROW:
        raise IllegalAction("row_full", f"A row holds at most {MAX_PER_ROW} markers.")
    plan[ROWS.index(source)] -= 1
    plan[ROWS.index(target)] += 1
    _start_row(state, 0)


def _start_row(state: State, index: int) -> None:
    """Most markers act first; ties by player order; at least 1 marker to act ("Plan")."""
    order = components.clockwise_from(state["first_player"], len(state["players"]))
    acting = [s for s in order if state["seats"][s]["plan"][index] > 0]
    acting.sort(key=lambda s: (-state["seats"][s]["plan"][index], order.index(s)))
    state["phase"] = ROWS[index]
    state["queue"] = acting
    state["turn"] = 0


def pass_turn(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Decline this action (every row action, Gutenberg's move and fulfilling are optional);
    after the last fulfilment, say the seat is done with the round's free actions."""
    if state["phase"] == "gutenberg":
        _start_row(state, 0)
        return
    if state["phase"] == "round_end":
        state["queue"].remove(seat)
        return
    _phase(state, *ROWS, "fulfill")
    _next_turn(state)


def _next_turn(state: State) -> None:
    """The next seat in the queue; after the last fulfilment the round stays open for free
    actions until every seat that still has one is done ("Free actions",
    docs/rules/gutenberg.md)."""
    state["turn"] += 1
    if state["phase"] == "fulfill" and state["turn"] >= len(state["queue"]):
        state["phase"] = "round_end"
        state["queue"] = components.clockwise_from(state["first_player"], len(state["players"]))
        state["turn"] = 0


# -- the five actions ("Execute Plans") --------------------------------------------------


def take_order(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """1 printing + 1 refinement card from the board make an order; at most 4 held."""
    _phase(state, "orders")
    board = state["board"]
    player = state["seats"][seat]
    if action.get("printing") not in board["printing"] or action["printing"] is None:
        raise IllegalAction("card_not_on_board", "Take a printing card lying on the board.")
    if action.get("refinement") not in board["refinement"] or action["refinement"] is None:
        raise IllegalAction("card_not_on_board", "Take a refinement card lying on the board.")
    effects.check_slot_for_new_order(player, action.get("discard_slot"))
    if action.get("discard_slot") is not None:
        effects.discard_order(state, player, action["discard_slot"])
    board["printing"][board["printing"].index(action["printing"])] = None
    board["refinement"][board["refinement"].index(action["refinement"])] = None
    player["orders"].append({"printing": action["printing"], "refinement": action["refinement"]})
    _next_turn(state)


def take_inks(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Take 1-3 inks, left to right, from one set on the board ("Take Inks")."""
    _phase(state, "inks")
    player = state["seats"][seat]
    index, count = action.get("set"), action.get("count")
    sets = state["board"]["inks"]
    if not isinstance(index, int) or not 0 <= index < len(sets):
        raise IllegalAction("no_such_ink_set", f"Name an ink set from 0 to {len(sets) - 1}.")
    left = [ink for ink in sets[index] if ink is not None]
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= len(left):
        raise IllegalAction(
            "not_enough_inks", f"That set holds {len(left)} inks; take 1 to {len(left)}."
        )
    cost = effects.ink_cost(sets[index], count)
    if player["guilders"] < cost:
        raise IllegalAction(
            "not_enough_guilders",
            f"Taking {count} inks from this set costs {cost} guilders; you have "
            f"{player['guilders']}.",
        )
    player["guilders"] -= cost
    for position in effects.leftmost_inks(sets[index], count):
        effects.add(player["inks"], sets[index][position])
        sets[index][position] = None
    _next_turn(state)


def develop_specialty(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """A specialty card: +1 per symbol on its tracks, or +1 on any one track."""
    _phase(state, "specialties")
    board = state["board"]["specialty"]
    card = action.get("card")
    if card is None or card not in board:
        raise IllegalAction("card_not_on_board", "Choose a specialty card lying on the board.")
    mode, specialty = action.get("mode"), action.get("specialty")
    if mode == "symbols" and specialty is None:
        steps = [(s, 1) for s in data.SPECIALTY_CARDS[card]["symbols"]]
    elif mode == "single" and specialty in data.SPECIALTIES:  # any track: difference 10
        steps = [(specialty, 1)]
    else:
        raise IllegalAction(
            "bad_specialty_use",
            "Use the card's symbols (mode symbols, no specialty) or move one specialty of "
            "your choice (mode single, name it).",
        )
    board[board.index(card)] = None
    components.discard(state["decks"]["specialty"], [card])
    opened = []
    for name, count in steps:
        opened.extend(effects.advance_specialty(state, seat, name, count, rng))
    effects.open_choices(state, opened)
    _next_turn(state)


def install_gear(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Take a gear from the board onto the top free axle (or in place of an unused gear)."""
    _phase(state, "gears")
    player = state["seats"][seat]
    board = state["board"]["gears"]
    gear = action.get("gear")
    if gear is None or gear not in board:
        raise IllegalAction("gear_not_on_board", "Take a gear lying on the board.")
    axle = gears.check_install(player, action.get("rotation"), action.get("replace_axle"))
    if player["gears"][axle] is not None:
        components.discard(state["decks"]["gears"], [player["gears"][axle]["gear"]])
    board[board.index(gear)] = None
    player["gears"][axle] = {"gear": gear, "rotation": action["rotation"]}
    _next_turn(state)


def reposition_gear(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Instead of a new gear: remove one, rotate it, put it back."""
    _phase(state, "gears")
    player = state["seats"][seat]
    gears.check_reposition(player, action.get("axle"), action.get("rotation"))
    player["gears"][action["axle"]]["rotation"] = action["rotation"]
    _next_turn(state)


def patronage_reward(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """One of the four patronage rewards, blocked for the others this round."""
    _phase(state, "patronage")
    reward = action.get("reward")
    rewards = state["board"]["patronage_rewards"]
    if reward not in rewards:
        raise IllegalAction("no_such_reward", f"Choose one of {', '.join(PATRONAGE_REWARDS)}.")
    if rewards[reward] is not None:
        raise IllegalAction("reward_taken", "Another player's marker blocks that reward.")
    rewards[reward] = seat
    player = state["seats"][seat]
    if reward == "guilders":
        player["guilders"] += 3
    elif reward == "inks":
        effects.open_choices(state, effects.open_ink_choice(state, seat, 2))
    elif reward == "specialty":
        effects.open_choices(state, [{"seat": seat, "kind": "specialty"}])
    else:
        effects.open_choices(state, effects.open_order_choice(state, seat, rng))
    _next_turn(state)


def patronage_card_blocker(
    state: State, player: dict[str, Any], space: dict[str, Any]
) -> str | None:
    """Why the player cannot take the card on this space now (None: they can)."""
    if space["unlock"] > state["round"]:
        return "The round marker has not reached that patronage card yet."
    card = data.PATRONAGE[space["card"]]
    if any(player["specialties"][s] < level for s, level in card["specialties"].items()):
        return "Your specialties are below the card's levels."
    if not effects.covers(player["types"], card["types"]):
        return "You do not own the types the card shows."
    if effects.ink_payment(player, card["inks"]) is None:
        return "You lack the inks the card asks you to pay."
    return None


def take_patronage(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """A patronage card whose conditions are met; its inks go back to the bag."""
    _phase(state, "patronage")
    player = state["seats"][seat]
    space = next((s for s in state["board"]["patronage"] if s["card"] == action.get("card")), None)
    if space is None or space["card"] is None:
        raise IllegalAction("card_not_on_board", "Choose a patronage card lying on the board.")
    blocker = patronage_card_blocker(state, player, space)
    if blocker is not None:
        code = "patronage_locked" if space["unlock"] > state["round"] else "conditions_not_met"
        raise IllegalAction(code, blocker)
    payment = effects.ink_payment(player, data.PATRONAGE[space["card"]]["inks"])
    assert payment is not None
    effects.pay_inks(state, player, payment)
    player["patronage"].append(space["card"])
    space["card"] = None
    _next_turn(state)


def finish_action(state: State, rng: random.Random) -> None:
    """Once everyone took the action, what is left on the board is discarded."""
    phase = state["phase"]
    board = state["board"]
    if phase == "orders":
        for kind in ("printing", "refinement"):
            components.discard(state["decks"][kind], [c for c in board[kind] if c is not None])
            board[kind] = [None] * len(board[kind])
    elif phase == "inks":
        for ink_set in board["inks"]:
            components.bag_return(state["bag"], [ink for ink in ink_set if ink is not None])
        board["inks"] = [[None] * 3 for _ in board["inks"]]
    elif phase == "specialties":
        components.discard(state["decks"]["specialty"], [c for c in board["specialty"] if c])
        board["specialty"] = [None] * len(board["specialty"])
    elif phase == "gears":
        components.discard(state["decks"]["gears"], [g for g in board["gears"] if g])
        board["gears"] = [None] * len(board["gears"])
    index = ROWS.index(phase)
    if index + 1 < len(ROWS):
        _start_row(state, index + 1)
    else:
        state["phase"] = "fulfill"
        state["queue"] = components.clockwise_from(state["first_player"], len(state["players"]))
        state["turn"] = 0


def fulfill_orders(state: State, seat: int, action: Action, rng: random.Random) -> None:
    _phase(state, "fulfill")
    orders.fulfill(state, seat, action, rng)
    _next_turn(state)


# -- end of round and game ---------------------------------------------------------------


def torinus_assigns_all_inks(player: dict[str, Any]) -> bool:
    """Godofredus Torinus: every ink held fits a colour requirement of a current order."""
    if not player["inks"]:
        return False  # docs/rules/gutenberg.md, "Characters": no inks, no bonus
    need = effects.merged(*(data.REFINEMENT[o["refinement"]]["colours"] for o in player["orders"]))
    return effects.covers(need, player["inks"])


def end_of_round(state: State, rng: random.Random) -> None:
    """ "End of Round": refill, advance the marker, return markers, pass the first player."""
    for player in state["seats"]:
        if player["character"] == "torinus" and torinus_assigns_all_inks(player):
            player["fame"] += 3
    if state["round"] >= ROUNDS:
        state["phase"] = "final_scoring"
        return
    decks = state["decks"]
    for deck in decks.values():
        if not deck["draw_pile"] and deck["discard_pile"]:
            components.reshuffle_discards(deck, rng)
    board = state["board"]
    for kind, deck_name in (
        ("printing", "printing"),
        ("refinement", "refinement"),
        ("specialty", "specialty"),
        ("gears", "gears"),
    ):
        drawn = components.draw(decks[deck_name], len(board[kind]), rng)
        board[kind] = drawn + [None] * (len(board[kind]) - len(drawn))
    board["inks"] = [_ink_set(state, rng) for _ in board["inks"]]
    state["round"] += 1
    board["patronage_rewards"] = {reward: None for reward in PATRONAGE_REWARDS}
    for player in state["seats"]:
        player["gear_uses"] = [0] * gears.AXLES
        player["plan"] = None
        player["wild_ink"] = None
        player["power_used"] = False
    state["plans_revealed"] = False
    count = len(state["players"])
    passed_by = state["first_player"]
    state["first_player"] = components.next_seat(passed_by, count)
    for seat, player in enumerate(state["seats"]):
        if seat != passed_by:
            player["markers"] -= 1
            state["seats"][passed_by]["markers"] += 1
    state["queue"], state["turn"] = [], 0
    state["phase"] = "turn_gears"


def _ink_set(state: State, rng: random.Random) -> list[str | None]:
    drawn: list[str | None] = list(components.bag_draw(state["bag"], 3, rng))
    return drawn + [None] * (3 - len(drawn))


def final_scoring(state: State, rng: random.Random) -> None:
    state["final"] = scoring.final_result(state)
    state["finished"] = True
    state["phase"] = "finished"


# -- free actions -----------------------------------------------------------------------


def buy_type(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Buy a type at any time: one guilder more than the types owned."""
    player = state["seats"][seat]
    if action.get("letter") not in data.TYPES:
        raise IllegalAction("no_such_type", f"Name one of the types {', '.join(data.TYPES)}.")
    cost = effects.type_cost(player)
    if player["guilders"] < cost:
        raise IllegalAction(
            "not_enough_guilders",
            f"Owning {effects.total(player['types'])} types, the next costs {cost} guilders; "
            f"you have {player['guilders']}.",
        )
    player["guilders"] -= cost
    effects.add(player["types"], action["letter"])


def activate_gear(state: State, seat: int, action: Action, rng: random.Random) -> None:
    gears.activate(state, seat, action, rng)
    effects.end_ink_choices_if_bag_empty(state)  # a gear may take the bag's last ink


def swap_specialties(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Christophorus Plantinus: once per round swap the levels of 2 specialties."""
    player = state["seats"][seat]
    if player["character"] != "plantinus":
        raise IllegalAction("not_your_power", "Only Christophorus Plantinus swaps specialties.")
    if player["power_used"]:
        raise IllegalAction("power_used", "You already swapped specialties this round.")
    first, second = action.get("first"), action.get("second")
    if first not in data.SPECIALTIES or second not in data.SPECIALTIES or first == second:
        raise IllegalAction("bad_specialties", "Name two different specialties.")
    levels = player["specialties"]
    if levels[first] == levels[second]:
        raise IllegalAction("same_levels", "Those specialties are at the same level already.")
    levels[first], levels[second] = levels[second], levels[first]
    player["power_used"] = True


# -- pending choices -------------------------------------------------------------------


def _resolve(state: State) -> dict[str, Any]:
    result: dict[str, Any] = state["pending"].pop(0)
    return result


def keep_order(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Keep 1 drawn printing and 1 drawn refinement card; the rest are discarded."""
    head = state["pending"][0]
    player = state["seats"][seat]
    if action.get("printing") not in head["printing"]:
        raise IllegalAction("card_not_drawn", "Keep one of the printing cards you drew.")
    if action.get("refinement") not in head["refinement"]:
        raise IllegalAction("card_not_drawn", "Keep one of the refinement cards you drew.")
    effects.check_slot_for_new_order(player, action.get("discard_slot"))
    _resolve(state)
    if action.get("discard_slot") is not None:
        effects.discard_order(state, player, action["discard_slot"])
    for kind in ("printing", "refinement"):
        components.discard(state["decks"][kind], [c for c in head[kind] if c != action[kind]])
    player["orders"].append({"printing": action["printing"], "refinement": action["refinement"]})


def redraw_order(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Pay 2 guilders to draw 2 more cards: 2 printing, 2 refinement, or 1 of each."""
    head = state["pending"][0]
    player = state["seats"][seat]
    cards = action.get("cards")
    if cards not in REDRAWS:
        raise IllegalAction("bad_redraw", "Redraw printing, refinement or mixed cards.")
    if player["guilders"] < REDRAW_COST:
        raise IllegalAction("not_enough_guilders", "Drawing 2 more cards costs 2 guilders.")
    if not _can_redraw(state, str(cards)):
        raise IllegalAction("deck_empty", "That deck and its discards are out of cards.")
    player["guilders"] -= REDRAW_COST
    for kind, count in zip(("printing", "refinement"), REDRAWS[cards], strict=True):
        head[kind].extend(components.draw(state["decks"][kind], count, rng))


def _can_redraw(state: State, cards: str) -> bool:
    for kind, count in zip(("printing", "refinement"), REDRAWS[cards], strict=True):
        deck = state["decks"][kind]
        if len(deck["draw_pile"]) + len(deck["discard_pile"]) < count:
            return False
    return True


def advance_specialty(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """A reward's +1 on a specialty of the player's choice."""
    if action.get("specialty") not in data.SPECIALTIES:
        raise IllegalAction("no_such_specialty", f"Name one of {', '.join(data.SPECIALTIES)}.")
    _resolve(state)
    effects.open_choices(
        state, effects.advance_specialty(state, seat, action["specialty"], 1, rng), front=True
    )


def take_ink(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """One ink of the player's choice from the bag, for Patronage's "any 2 inks"."""
    head = state["pending"][0]
    colour = action.get("ink")
    if colour not in data.INKS or not effects.bag_has(state, colour):
        raise IllegalAction("ink_not_in_bag", "Choose an ink colour that is still in the bag.")
    effects.take_from_bag(state, state["seats"][seat], colour)
    head["count"] -= 1
    if head["count"] <= 0:
        _resolve(state)
    effects.end_ink_choices_if_bag_empty(state)


def choose_ungler_specialties(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Helena Ungler: one specialty to level I, another to II; reward disc to II + reward."""
    one, two = action.get("level_one"), action.get("level_two")
    if one not in data.SPECIALTIES or two not in data.SPECIALTIES or one == two:
        raise IllegalAction("bad_specialties", "Name two different specialties.")
    _resolve(state)
    player = state["seats"][seat]
    player["specialties"][one] = max(player["specialties"][one], 1)
    player["specialties"][two] = max(player["specialties"][two], 2)
    player["reward_level"] = max(player["reward_level"], 2)
    effects.open_choices(state, effects.grant(state, seat, data.REWARD_TRACK[2], rng), front=True)


def keep_gears(state: State, seat: int, action: Action, rng: random.Random) -> None:
    """Carola Guillard: keep 2 of the 4 gears drawn and install them, top-down."""
    head = state["pending"][0]
    kept, rotations = action.get("gears"), action.get("rotations")
    keep = min(2, len(head["gears"]))
    if (
        not isinstance(kept, list)
        or len(kept) != keep
        or len(set(kept)) != keep
        or any(g not in head["gears"] for g in kept)
    ):
        raise IllegalAction("gear_not_drawn", f"Keep {keep} different gears of those you drew.")
    if (
        not isinstance(rotations, list)
        or len(rotations) != keep
        or any(r not in range(data.SECTORS_PER_GEAR) for r in rotations)
    ):
        raise IllegalAction("bad_rotation", "Give each kept gear a rotation 0-3.")
    player = state["seats"][seat]
    if any(axle is not None for axle in player["gears"][:keep]):
        raise IllegalAction("axle_taken", "Your top axles already hold gears.")
    _resolve(state)
    for index, (gear, rotation) in enumerate(zip(kept, rotations, strict=True)):
        player["gears"][index] = {"gear": gear, "rotation": rotation}
    components.discard(state["decks"]["gears"], [g for g in head["gears"] if g not in kept])


# -- legal actions ----------------------------------------------------------------------


def _phase_options(state: State, seat: int) -> list[Action]:
    if seat not in _to_act(state):
        return []
    phase = state["phase"]
    player = state["seats"][seat]
    if phase == "choose_character":
        return [{"type": "choose_character", "character": c} for c in player["character_offer"]]
    if phase == "draft":
        draft = state["draft"]
        return [
            {"type": "draft_order", "printing": p, "refinement": r}
            for p in sorted(draft["printing"])
            for r in sorted(draft["refinement"])
        ]
    if phase == "choose_types":
        return [
            {"type": "choose_types", "letters": list(letters)}
            for letters in combinations_with_replacement(data.TYPES, 3)
        ]
    if phase == "choose_wild_ink":
        return [{"type": "choose_wild_ink", "ink": ink} for ink in data.INKS]
    if phase == "plan":
        return [{"type": "submit_plan", "rows": list(rows)} for rows in _plans(player["markers"])]
    if phase == "gutenberg":
        plan = player["plan"]
        return [
            {"type": "move_marker", "from_row": a, "to_row": b}
            for i, a in enumerate(ROWS)
            for j, b in enumerate(ROWS)
            if i != j and plan[i] > 0 and plan[j] < MAX_PER_ROW
        ] + [{"type": "pass"}]
    if phase == "round_end":
        return [{"type": "pass"}]  # done with the round's free actions
    return [*_row_options(state, player, phase), {"type": "pass"}]


def _row_options(state: State, player: dict[str, Any], phase: str) -> list[Action]:
    board = state["board"]
    if phase == "orders":
        slots = [None] if len(player["orders"]) < 4 else list(range(len(player["orders"])))
        return [
            {"type": "take_order", "printing": p, "refinement": r, "discard_slot": slot}
            for p in board["printing"]
            if p is not None
            for r in board["refinement"]
            if r is not None
            for slot in slots
        ]
    if phase == "inks":
        options = []
        for index, ink_set in enumerate(board["inks"]):
            left = sum(1 for ink in ink_set if ink is not None)
            for count in range(1, left + 1):
                if effects.ink_cost(ink_set, count) <= player["guilders"]:
                    options.append({"type": "take_inks", "set": index, "count": count})
        return options
    if phase == "specialties":
        return [
            {"type": "develop_specialty", "card": card, "mode": mode, "specialty": specialty}
            for card in board["specialty"]
            if card is not None
            for mode, specialty in [("symbols", None)] + [("single", s) for s in data.SPECIALTIES]
        ]
    if phase == "gears":
        return _gear_row_options(player, board["gears"])
    if phase == "patronage":
        taken = board["patronage_rewards"]
        options = [
            {"type": "patronage_reward", "reward": r} for r in PATRONAGE_REWARDS if taken[r] is None
        ]
        options.extend(
            {"type": "take_patronage", "card": space["card"]}
            for space in board["patronage"]
            if space["card"] is not None and patronage_card_blocker(state, player, space) is None
        )
        return options
    return orders.batch_options(player)


def _gear_row_options(player: dict[str, Any], board: list[str | None]) -> list[Action]:
    free = gears.first_free_axle(player)
    replace: list[int | None] = [None]
    if free is None:
        replace = [i for i in range(gears.AXLES) if not player["gear_uses"][i]]
    options: list[Action] = [
        {"type": "install_gear", "gear": gear, "rotation": rotation, "replace_axle": axle}
        for gear in board
        if gear is not None
        for rotation in range(data.SECTORS_PER_GEAR)
        for axle in replace
    ]
    for index, axle_state in enumerate(player["gears"]):
        if axle_state is None or player["gear_uses"][index]:
            continue
        options.extend(
            {"type": "reposition_gear", "axle": index, "rotation": r}
            for r in range(data.SECTORS_PER_GEAR)
            if r != axle_state["rotation"]
        )
    return options


def _has_free_option(state: State, seat: int) -> bool:
    """Whether ``_free_options`` would list anything (without listing it all)."""
    player = state["seats"][seat]
    if player["guilders"] >= effects.type_cost(player):
        return True
    swappable = len(set(player["specialties"].values())) > 1
    if player["character"] == "plantinus" and not player["power_used"] and swappable:
        return True
    return bool(gears.activation_options(state, seat))


def _free_options(state: State, seat: int) -> list[Action]:
    player = state["seats"][seat]
    options: list[Action] = []
    if player["guilders"] >= effects.type_cost(player):
        options.extend({"type": "buy_type", "letter": letter} for letter in data.TYPES)
    options.extend(gears.activation_options(state, seat))
    if player["character"] == "plantinus" and not player["power_used"]:
        levels = player["specialties"]
        options.extend(
            {"type": "swap_specialties", "first": a, "second": b}
            for i, a in enumerate(data.SPECIALTIES)
            for b in data.SPECIALTIES[i + 1 :]
            if levels[a] != levels[b]
        )
    return options


def _pending_options(state: State, head: dict[str, Any]) -> list[Action]:
    player = state["seats"][head["seat"]]
    kind = head["kind"]
    if kind == "order":
        slots = [None] if len(player["orders"]) < 4 else list(range(len(player["orders"])))
        options: list[Action] = [
            {"type": "keep_order", "printing": p, "refinement": r, "discard_slot": slot}
            for p in sorted(set(head["printing"]))
            for r in sorted(set(head["refinement"]))
            for slot in slots
        ]
        if player["guilders"] >= REDRAW_COST:
            options.extend(
                {"type": "redraw_order", "cards": cards}
                for cards in REDRAWS
                if _can_redraw(state, cards)
            )
        return options
    if kind == "specialty":
        return [{"type": "advance_specialty", "specialty": s} for s in data.SPECIALTIES]
    if kind == "inks":
        return [{"type": "take_ink", "ink": ink} for ink in sorted(state["bag"]["contents"])]
    if kind == "ungler":
        return [
            {"type": "choose_ungler_specialties", "level_one": a, "level_two": b}
            for a in data.SPECIALTIES
            for b in data.SPECIALTIES
            if a != b
        ]
    keep = min(2, len(head["gears"]))
    return [
        {"type": "keep_gears", "gears": list(kept), "rotations": list(rotations)}
        for kept in permutations(head["gears"], keep)
        for rotations in product(range(data.SECTORS_PER_GEAR), repeat=keep)
    ]


def _described_choice(state: State, seat: int) -> dict[str, Any] | None:
    """The description of ``seat``'s choice when it is a plan, Guillard's gears or the
    starting types (what ``_phase_options``/``_pending_options`` would list), else None."""
    pending = state["pending"]
    if pending:
        head = pending[0]
        if head["seat"] != seat or head["kind"] != "guillard":
            return None
        keep = min(2, len(head["gears"]))
        rotations = list(range(data.SECTORS_PER_GEAR))
        return decisions.described(
            "keep_gears",
            [
                decisions.choose("gears", head["gears"], keep, distinct=True, ordered=True),
                decisions.choose("rotations", rotations, keep, distinct=False, ordered=True),
            ],
            decisions.choose_count(len(head["gears"]), keep, distinct=True, ordered=True)
            * decisions.choose_count(len(rotations), keep, distinct=False, ordered=True),
        )
    if state["phase"] not in ("plan", "choose_types") or seat not in _to_act(state):
        return None
    if state["phase"] == "choose_types":
        return decisions.described(
            "choose_types",
            [decisions.choose("letters", data.TYPES, 3, distinct=False, ordered=False)],
            decisions.choose_count(len(data.TYPES), 3, distinct=False, ordered=False),
        )
    markers = state["seats"][seat]["markers"]
    return decisions.described(
        "submit_plan",
        [decisions.split("rows", ROWS, (0, MAX_PER_ROW), (0, markers))],
        len(_plans(markers)),
    )


_HANDLERS: dict[str, Any] = {
    "choose_character": choose_character,
    "draft_order": draft_order,
    "choose_types": choose_types,
    "choose_wild_ink": choose_wild_ink,
    "submit_plan": submit_plan,
    "move_marker": move_marker,
    "pass": pass_turn,
    "take_order": take_order,
    "take_inks": take_inks,
    "develop_specialty": develop_specialty,
    "install_gear": install_gear,
    "reposition_gear": reposition_gear,
    "patronage_reward": patronage_reward,
    "take_patronage": take_patronage,
    "fulfill_orders": fulfill_orders,
    "buy_type": buy_type,
    "activate_gear": activate_gear,
    "swap_specialties": swap_specialties,
    "keep_order": keep_order,
    "redraw_order": redraw_order,
    "advance_specialty": advance_specialty,
    "take_ink": take_ink,
    "choose_ungler_specialties": choose_ungler_specialties,
    "keep_gears": keep_gears,
}
_SYSTEM: dict[str, Any] = {
    "reveal_characters": reveal_characters,
    "turn_gears": turn_gears,
    "reveal_plans": reveal_plans,
    "finish_action": finish_action,
    "end_of_round": end_of_round,
    "final_scoring": final_scoring,
}

GUTENBERG = Gutenberg()
