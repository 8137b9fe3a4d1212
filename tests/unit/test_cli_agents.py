"""``meeple analyze`` and ``meeple tournament``: agents at work on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from projections.audit import to_jsonl
from projections.ruleset import get_ruleset
from projections.simulate import play_random
from service.cli import main


@pytest.fixture(scope="module")
def gutenberg_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """A logged game of Gutenberg, and a point in it where a seat has a decision."""
    ruleset = get_ruleset("gutenberg")
    decisions: list[tuple[int, int]] = []

    def note(game: object, envelope: dict) -> None:
        state = game.state  # type: ignore[attr-defined]
        for seat in ruleset.status(state)["to_act"]:
            if len(ruleset.legal_actions(state, seat)) > 1:
                decisions.append((envelope["seq"], seat))

    _, log = play_random(ruleset, ["Ann", "Bob"], seed="cli-analyze", on_step=note)
    path = tmp_path_factory.mktemp("logs") / "game.jsonl"
    path.write_bytes(to_jsonl(log.envelopes))
    at, seat = decisions[len(decisions) // 2]
    return path, at, seat


def test_analyze_prints_each_candidate_with_its_win_rate_and_the_pick(
    gutenberg_log: tuple[Path, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    path, at, seat = gutenberg_log
    argv = ["analyze", str(path), "--at", str(at), "--seat", str(seat), "--playouts", "20"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert f"seat {seat} after event {at}" in first
    assert "win rate" in first and "20 playouts; * the pick: {" in first
    pick = json.loads(first.split("* the pick: ", 1)[1].splitlines()[0])
    assert pick["type"]
    assert main(argv) == 0
    assert capsys.readouterr().out == first, "the same seed gives the same analysis"


def test_analyze_refuses_a_seat_without_a_decision_or_a_point_outside_the_log(
    gutenberg_log: tuple[Path, int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    path, at, seat = gutenberg_log
    assert main(["analyze", str(path), "--at", "100000", "--seat", "0"]) == 2
    assert main(["analyze", str(path), "--at", str(at), "--seat", "7"]) == 2
    assert main(["analyze", str(path), "--at", str(at), "--seat", str(seat), "--playouts", "0"])
    assert "meeple:" in capsys.readouterr().err


def test_a_tournament_prints_every_agents_win_rate_with_an_interval(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["tournament", "gutenberg", "--agents", "greedy,random", "--games", "4"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Gutenberg, 4 games, seats rotating" in out
    rows = [line for line in out.splitlines() if "win rate" in line]
    assert [row.split()[1] for row in rows] == ["greedy", "random"]
    shares = [float(row.split("wins")[1].split()[0]) for row in rows]
    assert sum(shares) == pytest.approx(4.0)
    assert all("95% CI" in row for row in rows)


def test_a_tournament_needs_a_known_game_and_agents_it_can_seat(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["tournament", "chess"]) == 2
    assert main(["tournament", "gutenberg", "--agents", "random"]) == 2
    assert main(["tournament", "gutenberg", "--agents", "random,oracle"]) == 2
    assert "meeple:" in capsys.readouterr().err
