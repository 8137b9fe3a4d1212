"""Restoration's running public score (the timeline's and the score chart's): the
Achievement Points on the table during play, never a Manager card in a hand, and the final
totals once the game is over."""

from __future__ import annotations

from typing import Any

import pytest

from projections.fold import copy_state
from projections.games.restoration import data, scoring
from projections.games.restoration.game import RESTORATION
from projections.history import public_scores
from projections.simulate import play_random
from tests.unit.restoration.table import table

#: the Manager card worth the most Achievement Points at the end
RICHEST_MANAGER = max(data.MANAGERS, key=lambda card: data.MANAGERS[card]["ap"])


def played(seed: str, players: int = 2) -> list[tuple[list[Any], dict[str, Any]]]:
    """Each step of a random game: the timeline's scores after it and the state then."""
    steps: list[tuple[list[Any], dict[str, Any]]] = []
    names = [f"P{seat}" for seat in range(players)]
    play_random(
        RESTORATION,
        names,
        seed,
        on_step=lambda game, _: steps.append(
            (public_scores(RESTORATION, game.state) or [], copy_state(game.state))
        ),
    )
    return steps


def test_the_table_score_counts_every_game_end_line_but_the_managers_in_hand() -> None:
    state = table(2)
    player = state["seats"][0]
    player["reputation"] = 4
    player["board_artisans"] = 2
    player["upgrades_kept"] = 1
    player["hand"] = [RICHEST_MANAGER]
    lines = scoring.breakdown(player)
    assert lines["manager_cards"] > 0
    expected = sum(lines.values()) - lines["manager_cards"]
    assert scoring.table_points(player) == expected
    assert RESTORATION.scores(state)[0] == expected
    assert public_scores(RESTORATION, state) == [expected, scoring.table_points(state["seats"][1])]


@pytest.mark.parametrize("seed", ["scores-a", "scores-b"])
def test_no_hidden_card_moves_the_running_score(seed: str) -> None:
    # Whatever the hands and the decks hold, the score during play is the same: it is
    # computed from the table alone.
    for scores, state in played(seed):
        if state["finished"]:
            continue
        hidden = copy_state(state)
        for player in hidden["seats"]:
            player["hand"] = [RICHEST_MANAGER] * (len(player["hand"]) + 2)
        hidden["managers"]["deck"]["draw_pile"].reverse()
        hidden["construction"]["pile"].reverse()
        assert RESTORATION.scores(hidden) == scores


@pytest.mark.parametrize("seed", ["scores-a", "scores-b"])
def test_the_running_score_rises_during_play_and_ends_at_the_result(seed: str) -> None:
    steps = played(seed)
    during = [scores for scores, state in steps if not state["finished"]]
    assert all(len(scores) == 2 and all(isinstance(s, int) for s in scores) for scores in during)
    first, last_in_play = during[0], during[-1]
    # Points come on the table during play, not only at the end.
    assert sum(last_in_play) > sum(first)
    # ... and already in the first half of the game.
    assert any(sum(scores) > sum(first) for scores in during[: len(during) // 2])
    distinct = {tuple(scores) for scores in during}
    assert len(distinct) > 2
    final_scores, final_state = steps[-1]
    assert final_state["finished"]
    result = RESTORATION.result(final_state)
    assert result is not None
    assert final_scores == [entry["total"] for entry in result["scores"]]
    # The last step reveals the hands: the final totals add the Manager cards to the table.
    for seat, player in enumerate(final_state["seats"]):
        lines = scoring.breakdown(player)
        assert final_scores[seat] == scoring.table_points(player) + lines["manager_cards"]
