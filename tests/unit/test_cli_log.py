"""The log commands: simulate, replay and verify work offline on JSON Lines files."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from projections.audit import to_jsonl
from projections.simulate import play_random
from service.cli.log import add_commands
from tests.rulesets.tally import TALLY


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="meeple")
    add_commands(parser.add_subparsers(required=True))
    args = parser.parse_args(list(argv))
    return int(args.handler(args))


@pytest.fixture
def finished_log(tmp_path: Path) -> Path:
    _, log = play_random(TALLY, ["Ann", "Bob", "Cy"], seed="cli-seed", game_id="g-cli")
    path = tmp_path / "game.jsonl"
    path.write_bytes(to_jsonl(log.envelopes))
    return path


def test_simulate_writes_complete_logs_that_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sims.jsonl"
    assert (
        run("simulate", "tally", "--players", "3", "--seed", "s", "--games", "3", "--out", str(out))
        == 0
    )
    printed = capsys.readouterr().out
    assert "3 games" in printed and "first places" in printed
    lines = out.read_bytes().splitlines(keepends=True)
    first = [json.loads(line) for line in lines if json.loads(line)["seq"] == 1]
    assert len(first) == 3
    game_one = b"".join(line for line in lines if json.loads(line)["game_id"] == "sim-tally-1")
    single = tmp_path / "one.jsonl"
    single.write_bytes(game_one)
    assert run("verify", str(single)) == 0


def test_simulate_refuses_a_player_count_the_game_does_not_take(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run("simulate", "tally", "--players", "9", "--seed", "s") == 2
    assert "takes 1-4 players" in capsys.readouterr().err


def test_verify_accepts_a_sound_finished_log(
    finished_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("verify", str(finished_log)) == 0
    assert "seed matches its commitment" in capsys.readouterr().out


def test_verify_catches_one_byte_changed_anywhere(
    finished_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = finished_log.read_bytes()
    line_starts = [0] + [i + 1 for i, byte in enumerate(original) if byte == ord("\n")]
    tampered = tmp_path / "tampered.jsonl"
    # Every byte of the first two events and of the last, and every 7th byte elsewhere.
    positions = sorted(
        set(range(0, line_starts[2]))
        | set(range(line_starts[-2], len(original)))
        | set(range(0, len(original), 7))
    )
    for position in positions:
        changed = bytearray(original)
        changed[position] = (changed[position] + 1) % 256
        tampered.write_bytes(bytes(changed))
        assert run("verify", str(tampered)) == 1, f"byte {position} changed went unnoticed"
        expected_seq = sum(1 for start in line_starts[1:] if start <= position) + 1
        reported = capsys.readouterr().out
        assert reported.startswith("seq "), reported
        assert int(reported.split()[1].rstrip(":")) <= expected_seq


def test_verify_names_a_removed_event(
    finished_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = finished_log.read_bytes().splitlines(keepends=True)
    gapped = tmp_path / "gapped.jsonl"
    gapped.write_bytes(b"".join(lines[:4] + lines[5:]))
    assert run("verify", str(gapped)) == 1
    assert capsys.readouterr().out.startswith("seq 5:")


def test_replay_prints_the_state_at_any_event(
    finished_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("replay", str(finished_log), "--at", "3", "--seat", "1") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["version"] == 3
    assert printed["view"]["hand"] is not None
    assert run("replay", str(finished_log)) == 0
    final = json.loads(capsys.readouterr().out)
    assert final["status"]["finished"] is True and final["result"]["ranking"]


def test_import_then_export_gives_back_the_same_bytes(
    finished_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert run("import", str(finished_log), "--store", store) == 0
    assert "imported g-cli" in capsys.readouterr().out
    exported = tmp_path / "exported.jsonl"
    assert run("export", "g-cli", "--store", store, "--out", str(exported)) == 0
    assert exported.read_bytes() == finished_log.read_bytes()
    assert run("import", str(finished_log), "--store", store) == 1
    assert "already in the store" in capsys.readouterr().err


def test_import_refuses_an_unsound_log(
    finished_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = finished_log.read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:3] + lines[4:]))
    store = f"sqlite:///{tmp_path / 'store.db'}"
    assert run("import", str(broken), "--store", store) == 1
    assert "unsound" in capsys.readouterr().err
    assert run("export", "g-cli", "--store", store) == 1
