"""What an unfinished position is worth to each seat: the game's own evaluation, kept in the
game's package (``projections/games/<id>/evaluation.py``: the score breakdown as if the game
ended now, plus the game's few most telling features), else the public scores."""

from __future__ import annotations

from collections.abc import Callable

from projections.games.gutenberg import evaluation as gutenberg
from projections.games.impendium import evaluation as impendium
from projections.games.impression import evaluation as impression
from projections.games.restoration import evaluation as restoration
from projections.history import public_scores
from projections.ruleset import Ruleset, State

Evaluation = Callable[[State], list[float]]

EVALUATIONS: dict[str, Evaluation] = {
    "gutenberg": gutenberg.evaluate,
    "impendium": impendium.evaluate,
    "impression": impression.evaluate,
    "restoration": restoration.evaluate,
}


def evaluate(ruleset: Ruleset, state: State) -> list[float]:
    """Each seat's estimated final score (higher is better)."""
    own = EVALUATIONS.get(ruleset.id)
    if own is not None:
        return own(state)
    scores = public_scores(ruleset, state) or []
    count = len(state.get("players") or scores)
    return [float(score or 0) for score in scores] if scores else [0.0] * count
