"""Impendium (Dragon Egg Games) as the ``impendium`` ruleset: 1 to 6 players.

Rules in ``rules.py`` (which rulebook section each part follows), legality in ``legal.py``,
redaction in ``view.py``, the end in ``scoring.py``, decisions in docs/rules/impendium.md.
"""

from __future__ import annotations

import random
from typing import Any

from projections.games.impendium import legal, rules, scoring, summary, view
from projections.games.impendium.actions import SCHEMAS
from projections.ruleset import Action, Ruleset, State, register


class Impendium(Ruleset):
    id = "impendium"
    title = "Impendium"
    min_players = 1
    max_players = 6
    # 2: the rules review (docs/rules/impendium.md): placed discs for projects, SUB tokens,
    # turns ending after an attack or trade, abilities at any time, actions held to their
    # schemas; 3: a returned diplomacy card is forgotten once drawn; 4: the held-out rules
    # review (docs/rules/impendium.md): cells and placed discs named only as the board
    # names them, hired mercenaries who win take the spoils for their hirer; 5: a SUB token
    # pays only what its player names (the ``substitute`` field), never a shortfall by itself
    rules_version = "5"
    #: "at any time": faction abilities (on any player's turn) and galactic diplomacy cards.
    free_action_types = frozenset(["use_faction_ability", "play_diplomacy"])
    options = {
        "variant": "competitive",
        "fast_galaxies": False,
        "round_limit": None,
        "turmoil": False,
    }
    option_descriptions = {
        "variant": (
            '"competitive" (default, 2-6 players): ends once a player reaches 25 VP or a '
            'galaxy of each colour exists, after one more turn each. "solo" (1 player): '
            "ends only when won (a galaxy of each colour and 25 VP) or lost (no colony on the "
            'map). "semi_cooperative": ends only when a galaxy of each colour exists; then '
            'every player with 20+ VP wins. "cooperative": ends only when won (a galaxy of '
            "each colour and 8 galaxies) or lost (fewer than 3 colonies per player on the "
            "map). The rulebook sets no other end for the solo, semi-cooperative and "
            "cooperative games, so they may go on without end: see round_limit."
        ),
        "fast_galaxies": (
            "false (default): a galaxy is 3 connected stars of one colour; true: 2, the "
            "rulebook's faster game (the solo game's Easy level)."
        ),
        "round_limit": (
            "null (default, off as in the rulebook) or a whole number from 1: the game ends "
            "after that round with the normal ranking; a solo game is then lost and a "
            "semi-cooperative or cooperative one won by nobody. The rulebook has no round "
            "limit: a competitive game ends by itself, but solo, semi-cooperative and "
            "cooperative games end only by reaching their goal (or, solo and cooperative, by "
            "losing), which may never happen; the limit is for timed play and simulations."
        ),
        "turmoil": (
            "false (default) or true: the Turmoil Expansion (raiders, neutron storm, "
            "mercenaries and merchants moving over the map)."
        ),
    }

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        """The state after the rulebook's dealing, before the players' placements."""
        return rules.setup(players, {**self.options, **options}, rng)

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        """Validate, then mutate; IllegalAction leaves the state unchanged."""
        rules.apply(state, action, rng)

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        """Every concrete legal action of ``seat`` now, free ones included."""
        return legal.legal_actions(state, seat)

    def describe_actions(self, state: State, seat: int) -> dict[str, Any]:
        """As the list says, but the spoils of a battle as a split of the loser's resources."""
        described = super().describe_actions(state, seat)
        if "take_spoils" in described:
            described["take_spoils"] = legal.describe_spoils(state, seat)
        return described

    def status(self, state: State) -> dict[str, Any]:
        """Round, phase, the seats the game waits for, the due automatic step, finished."""
        due = rules.due_system_step(state)
        to_act: list[int] = []
        phase = state["phase"]
        if due is None and not state["finished"]:
            if phase in ("setup_stars", "setup_colonies", "setup_arks"):
                to_act = [state["setup_queue"][0]]
            elif phase == "federation_resource":
                to_act = [s for s, taken in enumerate(state["federation_taken"]) if not taken]
            elif state["pending"]:
                to_act = [state["pending"][0]["seat"]]
            elif state["turn"] is not None:
                to_act = [state["turn"]["seat"]]
        return {
            "round": state["round"],
            "phase": phase,
            "to_act": to_act,
            "awaiting_system": due,
            "finished": state["finished"],
        }

    def system_action(self, state: State) -> Action | None:
        """generate_resources, activate_harbingers, end_of_round or final_scoring when due;
        with Turmoil also move_turmoil, raiders_battle and mercenary_battle."""
        due = rules.due_system_step(state)
        return {"type": due} if due else None

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """The table as ``seat`` sees it: no deck order, no other hand, no others' offers."""
        return view.view(state, seat)

    def result(self, state: State) -> dict[str, Any] | None:
        """Scores with their VP breakdown, the ranking and the variant's outcome."""
        return scoring.result(state)

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        """A copy with every deck order and everything hidden from ``seat`` redrawn."""
        return view.resample_hidden(state, seat, rng)

    def summarize(self, state: State, action: Action) -> str:
        """One line for a timeline."""
        return summary.summarize(state, action)

    def public_action(self, state: State, action: Action) -> Action | None:
        """A trade offer's terms and the diplomacy card sent back stay private."""
        if action.get("type") == "offer_trade":
            return {"type": "offer_trade", "target": action.get("target")}
        if action.get("type") == "keep_diplomacy":
            return {"type": "keep_diplomacy"}
        return None

    def reveals_hidden(self, before: State, action: Action) -> bool:
        """Automatic steps, dice rolls and card draws bring hidden information to light."""
        if action.get("seat") is None:
            return True
        return rules.draws_hidden(before, action)

    def action_schemas(self) -> dict[str, Any]:
        """action type -> marshmallow Schema class."""
        return dict(SCHEMAS)


IMPENDIUM = register(Impendium())
