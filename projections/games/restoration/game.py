"""Restoration as a Ruleset: the contract members, each delegating to the module that owns
that part of the rulebook (board.py setup, rules.py play, scoring.py audit and game end,
view.py redaction, actions.py request schemas)."""

from __future__ import annotations

import random
from typing import Any

from projections.games.restoration import actions, board, data, rules, scoring, view
from projections.ruleset import Action, IllegalAction, Ruleset, State


class Restoration(Ruleset):
    id = "restoration"
    title = "Restoration"
    min_players = 2
    max_players = 4
    #: 2: rules review, docs/rules/restoration.md: intersections, transfer, order of C and D.
    #: 3: second rules review, docs/rules/restoration.md: a completed project is built on no
    #: more while its completion is resolved.
    #: 4: docs/rules/restoration.md, "Development Board" and "Special Actions": the Technology
    #: track scores only on its scoring spaces; a Transfer in the middle of a movement turn
    #: makes its rest at the new position, moving every workshop connected to it.
    rules_version = "4"
    options = {"arrangement": "first_game"}
    #: "Throughout your turn, you may use Manager cards at any time".
    free_action_types = frozenset(["play_manager"])

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        """The table after "Setup the Game" (and "2 Players Setup")."""
        if not self.min_players <= len(players) <= self.max_players:
            raise IllegalAction("player_count", "Restoration is played by 2 to 4 players.")
        return board.setup_state(players, {**self.options, **options}, rng)

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        """Validate, then mutate; an illegal action raises before anything changes, whatever
        it holds: the seat and the action's shape (its schema) are checked first."""
        if not isinstance(action, dict):
            raise IllegalAction("invalid_action", "An action is an object with a 'type'.")
        seat = action.get("seat")
        kind = action.get("type")
        if isinstance(kind, str) and kind in rules.SYSTEM_TYPES:
            if seat is not None:
                raise IllegalAction(
                    "system_step_only", f"{kind} is an automatic step the service performs."
                )
            if len(action) > ("seat" in action) + 1:
                raise IllegalAction("invalid_action", f"The automatic step {kind} takes nothing.")
            rules.run_system(state, kind, rng)
        else:
            if not isinstance(kind, str) or kind not in rules.HANDLERS:
                raise IllegalAction("unknown_action", f"Restoration has no action {kind!r}.")
            if type(seat) is not int or not 0 <= seat < len(state["players"]):
                raise IllegalAction("no_such_seat", f"{kind} is taken by a seat of this game.")
            actions.check_shape(action)
            if state["finished"]:
                raise IllegalAction("game_finished", "The game is over.")
            due = rules.system_due(state)
            if due is not None:
                raise IllegalAction(
                    "awaiting_system", f"Wait for the automatic step {due} to be performed."
                )
            check, do = rules.HANDLERS[kind]
            check(state, seat, action)
            do(state, seat, action, rng)
        rules.settle(state)

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now: the answers to its decision, else its turn."""
        if state["finished"] or rules.system_due(state) is not None:
            return []
        phase = state["phase"]
        if phase == "setup":
            candidates = [{"type": "unlock_research", "position": rid} for rid in data.RESEARCH]
            return [a for a in candidates if rules.passes(state, seat, a)]
        if state["pending"]:
            decision = state["pending"][0]
            if decision["seat"] != seat:
                # Another player decides during this seat's turn (a completion choice):
                # the turn's Manager cards stay playable ("as long as it is on your turn").
                return rules.manager_plays(state, seat)
            found = rules.decision_options(state, decision)
            if decision.get("optional"):
                found.append({"type": "skip_action"})
            return found + rules.manager_plays(state, seat)
        if phase == "keep":
            if not state["keep_queue"] or state["keep_queue"][0] != seat:
                return []
            keeps = [
                {"type": "keep_worker", "location": loc} for loc in rules.keepable(state, seat)
            ]
            return [a for a in keeps if rules.passes(state, seat, a)] + [
                {"type": "collect_workers"}
            ]
        turn = state["turn"]
        if phase != "construction" or turn is None or turn["seat"] != seat:
            return []
        found = rules.placements(state, seat) if not turn["placed"] else []
        moving = rules.workshops_to_move(state)
        if turn["placed"] and moving:
            found += [{"type": "move", "workshop": workshop} for workshop in moving]
        elif turn["placed"] or not found:
            found.append({"type": "end_turn"})
        return found + rules.manager_plays(state, seat)

    def status(self, state: State) -> dict[str, Any]:
        due = rules.system_due(state)
        to_act: list[int] = []
        if state["finished"] or due is not None:
            to_act = []
        elif state["pending"]:
            to_act = [state["pending"][0]["seat"]]
        elif state["phase"] == "setup":
            to_act = [
                seat
                for seat, player in enumerate(state["seats"])
                if not any(slot["unlocked"] for slot in player["research"].values())
            ]
        elif state["phase"] == "construction" and state["turn"] is not None:
            to_act = [state["turn"]["seat"]]
        elif state["phase"] == "keep" and state["keep_queue"]:
            to_act = [state["keep_queue"][0]]
        return {
            "round": state["round"],
            "phase": state["phase"],
            "to_act": to_act,
            "awaiting_system": due,
            "finished": state["finished"],
        }

    def system_action(self, state: State) -> Action | None:
        due = rules.system_due(state)
        return {"type": due} if due is not None else None

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return view.view(state, seat)

    def result(self, state: State) -> dict[str, Any] | None:
        final: dict[str, Any] | None = state["final"]
        return final

    def scores(self, state: State) -> list[int]:
        """The running public score of the timeline (projections/history.py): the
        Achievement Points on the table during play (no Manager card in a hand), the final
        totals once the game is over."""
        return scoring.public_scores(state)

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        return view.resample_hidden(state, seat, rng)

    def reveals_hidden(self, before: State, action: Action) -> bool:
        """Automatic steps reveal (events, tiles, supply cards); of a seat's actions only a
        draw from the top of the Manager deck does."""
        if action.get("seat") is None:
            return True
        return action.get("type") == "take_manager" and action.get("source") == "deck"

    def action_schemas(self) -> dict[str, Any]:
        return dict(actions.SCHEMAS)

    def summarize(self, state: State, action: Action) -> str:
        """One line for the timeline; never names a card drawn from the deck."""
        seat = action.get("seat")
        kind = str(action.get("type"))
        if seat is None:
            return _SYSTEM_LINES.get(kind, f"Automatic step: {kind.replace('_', ' ')}")
        who = rules.name_of(state, seat)
        line = _SEAT_LINES.get(kind)
        return f"{who} {line(state, action) if line else kind.replace('_', ' ')}"


def _place_line(state: State, action: Action) -> str:
    what = "an Artisan" if action.get("artisan") else "a worker"
    cost = 0
    if action.get("seat") is not None and action.get("position") in {
        *state["positions"],
        *data.RESEARCH,
    }:
        cost = rules.placement_cost(state, action["seat"], action["position"])
    paid = f", paying {cost} reputation" if cost else ""
    return f"placed {what} at {action.get('position')}{paid}"


def _move_line(state: State, action: Action) -> str:
    workshop = str(action.get("workshop"))
    if workshop not in state["workshops"]:
        return f"moved the token of workshop {workshop}"
    spaces = data.BOARDS[workshop]["spaces"]
    landed = spaces[(state["workshops"][workshop]["token"] + 1) % len(spaces)]
    return f"moved the {data.BOARDS[workshop]['name']} ({workshop}) token to a {landed} space"


def _tile_name(tile: Any) -> str:
    return f"{data.TILES[tile]['name']} ({tile})" if tile in data.TILES else str(tile)


def _manager_line(state: State, action: Action) -> str:
    if action.get("source") == "deck":
        return "drew a Manager card from the top of the deck"
    card = data.MANAGERS.get(str(action.get("manager")), {}).get("name", action.get("manager"))
    return f"took a {card} from the Manager supply"


def _play_line(state: State, action: Action) -> str:
    card = data.MANAGERS.get(str(action.get("manager")), {}).get("name", action.get("manager"))
    if action.get("effect") == "B":
        return f"played a {card} for one extra movement (effect B)"
    return f"played a {card} for its effect A"


_SEAT_LINES: dict[str, Any] = {
    "unlock_research": lambda s, a: f"unlocked research position {a.get('position')}",
    "place_worker": _place_line,
    "move": _move_line,
    "end_turn": lambda s, a: "ended their turn",
    "play_manager": _play_line,
    "start_construction": lambda s, a: f"started constructing {_tile_name(a.get('tile'))}",
    "continue_construction": lambda s, a: (
        f"advanced on {_tile_name(a.get('tile'))} from space {a.get('space')}"
    ),
    "completion_choice": lambda s, a: (
        "paid 1 reputation to take their worker back from the completed construction"
        if a.get("choice") == "take_back"
        else "sent their worker from the completed construction to the Rest area"
    ),
    "develop": lambda s, a: f"advanced one level on the {a.get('track')} track",
    "take_manager": _manager_line,
    "transfer": lambda s, a: f"swapped the workers {a.get('first')} and {a.get('second')}",
    "adjust_reputation": lambda s, a: f"moved their reputation {a.get('direction')} by 1",
    "place_upgrade": lambda s, a: (
        "kept an Upgrade token aside"
        if a.get("target") == "keep"
        else f"placed an Upgrade token on {a.get('target')}"
    ),
    "skip_action": lambda s, a: "let the action go",
    "keep_worker": lambda s, a: f"paid 1 reputation to keep the worker at {a.get('location')}",
    "collect_workers": lambda s, a: "collected the rest of their workers",
}

_SYSTEM_LINES = {
    "reveal_event": "The round's Event tile is revealed",
    "refill_manager_supply": "The Manager supply is refilled to 4 different types",
    "reveal_construction_tile": "A new Construction tile is revealed",
    "audit": "The Audit: influence in every workshop and the lowest reputation are checked",
    "end_of_round": "Every worker not kept in place returns to its owner's board",
    "final_scoring": "Final scoring: the Achievement Points are counted",
}


RESTORATION = Restoration()
