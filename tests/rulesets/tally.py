"""Tally: a tiny test-only game exercising every part of the ruleset contract.

Seats take turns; on its turn a seat either plays a card from its secret hand (adding its
value to the common tally and its own score) or draws a card. Before a round starts every
seat secretly names a number ("bid"); the bids are revealed together by an automatic step.
After every seat has had ``turns_per_round`` turns an automatic step scores the round.
The game ends after ``rounds`` rounds. Never registered as a product game.
"""

from __future__ import annotations

import random
from typing import Any

from marshmallow import Schema, fields, validate

from projections import components
from projections.ruleset import Action, IllegalAction, Ruleset, State


class Tally(Ruleset):
    id = "tally"
    title = "Tally (test only)"
    min_players = 1
    max_players = 4
    rules_version = "1"
    options = {"rounds": 3, "turns_per_round": 2}

    def setup(self, players: list[str], options: dict[str, Any], rng: random.Random) -> State:
        deck = components.new_deck([value for value in range(1, 6) for _ in range(4)], rng)
        hands = [components.draw(deck, 2) for _ in players]
        return {
            "players": list(players),
            "options": dict(options),
            "deck": deck,
            "hands": hands,
            "scores": [0] * len(players),
            "bids": [None] * len(players),
            "revealed_bids": None,
            "tally": 0,
            "round": 1,
            "phase": "bid",
            "turn": 0,
            "turns_taken": 0,
            "finished": False,
        }

    def apply(self, state: State, action: Action, rng: random.Random) -> None:
        if not isinstance(action, dict):
            raise IllegalAction("bad_action", "An action is an object with a type.")
        seat = action.get("seat")
        kind = action.get("type")
        if seat is None:
            return self._system(state, action, rng)
        if type(seat) is not int or not 0 <= seat < len(state["players"]):
            raise IllegalAction("no_such_seat", "That seat is not in this game.")
        fields_wanted = ACTION_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields_wanted is None:
            raise IllegalAction("unknown_action", f"Tally has no action {kind!r}.")
        # The shape its schema describes, checked directly: a schema load per action would
        # cost the fold bench, which uses Tally to measure the generic fold, most of its time.
        given = action.keys() - {"type", "seat"}
        if given != fields_wanted or any(type(action[name]) is not int for name in given):
            raise IllegalAction(
                "bad_action", f"A {kind} takes {sorted(fields_wanted)}, whole numbers."
            )
        if state["finished"]:
            raise IllegalAction("game_finished", "The game is over.")
        if kind == "bid":
            if state["phase"] != "bid":
                raise IllegalAction("phase_mismatch", "Bids are made before the round.")
            if state["bids"][seat] is not None:
                raise IllegalAction("already_bid", "You have already made your bid.")
            amount = action.get("amount")
            if not isinstance(amount, int) or not 0 <= amount <= 9:
                raise IllegalAction("bad_bid", "Bid a whole number from 0 to 9.")
            state["bids"][seat] = amount
            return None
        if state["phase"] != "turns":
            raise IllegalAction("phase_mismatch", "Wait for the bids to be revealed.")
        if seat != state["turn"]:
            raise IllegalAction("not_your_turn", "It is another seat's turn.")
        if kind == "play":
            card = action.get("card")
            if card not in state["hands"][seat]:
                raise IllegalAction("card_not_in_hand", "You can only play a card in your hand.")
            state["hands"][seat].remove(card)
            components.discard(state["deck"], [card])
            state["tally"] += card
            state["scores"][seat] += card
        elif kind == "draw":
            if not _can_draw(state):
                raise IllegalAction("deck_empty", "The deck is empty; play a card instead.")
            state["hands"][seat].extend(components.draw(state["deck"], 1, rng))
        elif kind == "pass":
            if state["hands"][seat] or _can_draw(state):
                raise IllegalAction("must_play_or_draw", "You may pass only with nothing to do.")
        else:
            raise IllegalAction("unknown_action", f"Tally has no action {kind!r}.")
        state["turns_taken"] += 1
        state["turn"] = components.next_seat(seat, len(state["players"]))
        return None

    def _system(self, state: State, action: Action, rng: random.Random) -> None:
        expected = self.system_action(state)
        if expected is None or expected["type"] != action.get("type"):
            raise IllegalAction("no_system_step", "No automatic step is due.")
        if action["type"] == "reveal_bids":
            state["revealed_bids"] = list(state["bids"])
            state["phase"] = "turns"
            return
        # score_round: the highest bid that is not above the tally scores 3.
        bids = state["revealed_bids"] or []
        fitting = [(bid, seat) for seat, bid in enumerate(bids) if bid <= state["tally"]]
        if fitting:
            state["scores"][max(fitting)[1]] += 3
        if state["round"] >= state["options"]["rounds"]:
            state["finished"] = True
            state["phase"] = "finished"
            return
        state["round"] += 1
        state["phase"] = "bid"
        state["bids"] = [None] * len(state["players"])
        state["revealed_bids"] = None
        state["turns_taken"] = 0

    def legal_actions(self, state: State, seat: int) -> list[Action]:
        if state["finished"]:
            return []
        if state["phase"] == "bid":
            return (
                []
                if state["bids"][seat] is not None
                else [{"type": "bid", "amount": amount} for amount in range(10)]
            )
        if state["phase"] != "turns" or seat != state["turn"] or self._round_over(state):
            return []
        actions: list[Action] = [
            {"type": "play", "card": c} for c in sorted(set(state["hands"][seat]))
        ]
        if _can_draw(state):
            actions.append({"type": "draw"})
        return actions or [{"type": "pass"}]

    def status(self, state: State) -> dict[str, Any]:
        system = self.system_action(state)
        if state["finished"]:
            to_act: list[int] = []
        elif state["phase"] == "bid":
            to_act = [seat for seat, bid in enumerate(state["bids"]) if bid is None]
        else:
            to_act = [] if system else [state["turn"]]
        return {
            "round": state["round"],
            "phase": state["phase"],
            "to_act": to_act,
            "awaiting_system": system["type"] if system else None,
            "finished": state["finished"],
        }

    def system_action(self, state: State) -> Action | None:
        if state["finished"]:
            return None
        if state["phase"] == "bid" and all(bid is not None for bid in state["bids"]):
            return {"type": "reveal_bids"}
        if state["phase"] == "turns" and self._round_over(state):
            return {"type": "score_round"}
        return None

    def _round_over(self, state: State) -> bool:
        needed = state["options"]["turns_per_round"] * len(state["players"])
        return bool(state["turns_taken"] >= needed)

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        return {
            "players": state["players"],
            "round": state["round"],
            "phase": state["phase"],
            "turn": state["turn"],
            "tally": state["tally"],
            "scores": state["scores"],
            "deck": components.deck_size(state["deck"]),
            "hand_sizes": [len(hand) for hand in state["hands"]],
            "hand": state["hands"][seat] if seat is not None else None,
            "bids_made": [bid is not None for bid in state["bids"]],
            "my_bid": state["bids"][seat] if seat is not None else None,
            "revealed_bids": state["revealed_bids"],
            "finished": state["finished"],
        }

    def result(self, state: State) -> dict[str, Any] | None:
        if not state["finished"]:
            return None
        scores = {seat: (score,) for seat, score in enumerate(state["scores"])}
        return {
            "scores": [
                {"seat": s, "total": v, "breakdown": {"cards_and_bids": v}}
                for s, v in enumerate(state["scores"])
            ],
            "ranking": components.ranking(scores),
        }

    def resample_hidden(self, state: State, seat: int, rng: random.Random) -> State:
        """Other hands dealt again from the deck and those hands (taken in sorted order, so
        only what ``seat`` sees and ``rng`` decide the deal); unrevealed bids redrawn."""
        from projections.fold import copy_state

        fresh = copy_state(state)
        unseen = list(fresh["deck"]["draw_pile"])  # the discard pile is face up
        for other, hand in enumerate(fresh["hands"]):
            if other != seat:
                unseen.extend(hand)
        unseen = components.shuffled(sorted(unseen), rng)
        for other, hand in enumerate(fresh["hands"]):
            if other != seat:
                fresh["hands"][other] = [unseen.pop() for _ in hand]
            if (
                other != seat
                and fresh["revealed_bids"] is None
                and fresh["bids"][other] is not None
            ):
                fresh["bids"][other] = rng.randrange(10)
        fresh["deck"]["draw_pile"] = unseen
        return fresh

    def summarize(self, state: State, action: Action) -> str:
        seat = action.get("seat")
        who = state["players"][seat] if seat is not None else "The game"
        if action["type"] == "play":
            return f"{who} played a {action['card']}"
        if action["type"] == "draw":
            return f"{who} drew a card"
        if action["type"] == "bid":
            return f"{who} made a secret bid"
        return f"{who}: {action['type'].replace('_', ' ')}"

    def public_action(self, state: State, action: Action) -> Action | None:
        if action["type"] == "bid":
            return {"type": "bid"}
        return None

    def action_schemas(self) -> dict[str, Any]:
        return {"bid": BidSchema, "play": PlaySchema, "draw": DrawSchema, "pass": PassSchema}

    def reveals_hidden(self, before: State, action: Action) -> bool:
        return action.get("seat") is None or action["type"] == "draw"


#: Each action's fields besides ``type``, all whole numbers (the schemas below say the same).
ACTION_FIELDS: dict[str, set[str]] = {
    "bid": {"amount"},
    "play": {"card"},
    "draw": set(),
    "pass": set(),
}


def _can_draw(state: State) -> bool:
    deck = state["deck"]
    return bool(deck["draw_pile"] or deck["discard_pile"])


class BidSchema(Schema):
    type = fields.String(required=True, validate=validate.Equal("bid"))
    amount = fields.Integer(required=True, strict=True, validate=validate.Range(0, 9))


class PlaySchema(Schema):
    type = fields.String(required=True, validate=validate.Equal("play"))
    card = fields.Integer(required=True, strict=True, validate=validate.Range(1, 5))


class DrawSchema(Schema):
    type = fields.String(required=True, validate=validate.Equal("draw"))


class PassSchema(Schema):
    type = fields.String(required=True, validate=validate.Equal("pass"))


TALLY = Tally()
