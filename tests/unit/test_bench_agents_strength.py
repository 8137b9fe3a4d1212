"""``make bench-agents`` (bench/agents_strength.py): its lines, bounds and arguments."""

from __future__ import annotations

import random

import pytest

from bench import agents_strength
from projections.ruleset import get_ruleset


def test_a_line_gives_the_win_rate_its_interval_and_its_seconds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--game", "gutenberg", "--games", "1", "--playouts", "1", "--jobs", "1"]
    assert agents_strength.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "MCTS (1 playouts a move) at 2 players, 1 games a line"
    assert [line.split()[:4] for line in lines[1:]] == [
        ["gutenberg", "mcts", "vs", "random"],
        ["gutenberg", "mcts", "vs", "greedy"],
    ]
    for line in lines[1:]:
        assert "(95% CI " in line and line.endswith(" s]") and "cut" not in line


def test_opponent_chooses_the_lines(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--game", "impression", "--opponent", "greedy", "--games", "1", "--playouts", "1"]
    assert agents_strength.main([*argv, "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:4] for line in lines[1:]] == [["impression", "mcts", "vs", "greedy"]]
    with pytest.raises(SystemExit) as stopped:
        agents_strength.main(["--opponent", "mcts"])
    assert stopped.value.code == 2


def test_games_a_bound_cut_short_are_counted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        agents_strength, "BOUNDS", {"gutenberg": agents_strength.Bounds(max_steps=4)}
    )
    assert agents_strength.mcts_share("gutenberg", "random", 1, 0).cut
    argv = ["--game", "gutenberg", "--games", "2", "--playouts", "1", "--jobs", "1"]
    assert agents_strength.main(argv) == 0
    for line in capsys.readouterr().out.splitlines()[1:]:
        assert line.endswith(" s, 2 cut]"), line


def test_impendium_is_played_to_a_round_limit_the_ruleset_accepts() -> None:
    bounds = agents_strength.BOUNDS["impendium"]
    ruleset = get_ruleset("impendium")
    state = ruleset.setup(["P1", "P2"], {**ruleset.options, **bounds.options}, random.Random(0))
    assert state["options"]["round_limit"] == bounds.options["round_limit"]


@pytest.mark.parametrize("flag", ["--games", "--playouts", "--jobs"])
def test_counts_must_be_at_least_one(flag: str) -> None:
    with pytest.raises(SystemExit) as stopped:
        agents_strength.main([flag, "0"])
    assert stopped.value.code == 2
