"""Who may undo and redo what (DESIGN.md, "Time, undo, branch, audit"): the one place of the rule.

In a normal game a seat may undo only its own actions of its current turn, and only while
nothing hidden has been revealed since (a card drawn, a plan revealed, a die rolled):

- undo always takes back the *last* effective step, so "of its current turn" means the
  trailing run of that seat's own actions: any other seat's action or an automatic step
  after them ends the turn, and they can no longer be undone;
- a step that revealed hidden information (recorded with the step as ``reveals_hidden``,
  decided by the ruleset when the step was taken) can never be undone, so undo never crosses
  it.

Redo puts back exactly the last undone step (same position in the effective history, hence
the same cards); a seat may redo only its own undone action. In a sandbox (branch) game the
holder of the sandbox token acts for every seat and may undo and redo any step.
"""

from __future__ import annotations

from events.envelope import Envelope, NewEvent
from projections.fold import Game
from projections.ruleset import IllegalAction


def undo_event(game: Game, last_step: Envelope | None, seat: int | None) -> NewEvent:
    """The ``undone`` event for the last effective step, or IllegalAction saying why not.

    ``seat`` is the requesting seat (None for a sandbox token or the admin acting for all).
    """
    if last_step is None or not game.effective:
        raise IllegalAction("nothing_to_undo", "There is no step to undo.")
    if last_step["seq"] != game.effective[-1]:
        raise ValueError("last_step must be the last effective step")
    if not game.meta.get("sandbox"):
        _check_normal_game_undo(last_step, seat)
    return NewEvent(
        type="undone",
        data={"seq": last_step["seq"]},
        actor={"seat": seat} if seat is not None else {"system": "sandbox"},
    )


def redo_event(game: Game, undone_step: Envelope | None, seat: int | None) -> NewEvent:
    """The ``redone`` event for the last undone step, or IllegalAction saying why not."""
    if undone_step is None or not game.redo:
        raise IllegalAction("nothing_to_redo", "There is no undone step to redo.")
    if undone_step["seq"] != game.redo[-1]:
        raise ValueError("undone_step must be the top of the redo stack")
    if not game.meta.get("sandbox") and undone_step["actor"].get("seat") != seat:
        raise IllegalAction("not_your_action", "You can only redo your own undone action.")
    return NewEvent(
        type="redone",
        data={"seq": undone_step["seq"]},
        actor={"seat": seat} if seat is not None else {"system": "sandbox"},
    )


def _check_normal_game_undo(last_step: Envelope, seat: int | None) -> None:
    if last_step["type"] != "action":
        raise IllegalAction(
            "turn_over",
            "An automatic step has happened since your last action; it can no longer be undone.",
        )
    if last_step["actor"].get("seat") != seat:
        raise IllegalAction(
            "not_your_action",
            "The last action is not yours: you can only undo your own actions of your turn.",
        )
    if last_step["data"].get("reveals_hidden", True):
        raise IllegalAction(
            "hidden_information_revealed",
            "That action revealed hidden information (a card, a plan, a die); it stands.",
        )
