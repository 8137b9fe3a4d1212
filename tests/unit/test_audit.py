"""Audits of whole logs: plain games, branches, logs played under other rules, and
``meeple verify`` on a branch's exported log."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from events.envelope import Envelope, event_hash
from projections.audit import audit, to_jsonl
from projections.history import branch_events
from projections.simulate import MemoryLog, play_random
from service.cli.log import add_commands
from tests.rulesets.tally import TALLY


def finished() -> list[Envelope]:
    return play_random(TALLY, ["Ann", "Bob"], seed="audit-seed", game_id="src")[1].envelopes


def branch_of(source: list[Envelope], at: int, **options: object) -> list[Envelope]:
    plan = branch_events(
        source,
        at,
        new_seed="branch-seed",
        sandbox_token_hash="0" * 64,
        source_finished=True,
        **options,  # type: ignore[arg-type]
    )
    log = MemoryLog("branch")
    for event in plan.events:
        log.append(event)
    return log.envelopes


def rechained(envelopes: list[Envelope]) -> list[Envelope]:
    """The same log with every hash recomputed, as a forger who edits events would do."""
    out = []
    prev = "0" * 64
    for envelope in envelopes:
        envelope = {**envelope, "prev_hash": prev}
        envelope["hash"] = event_hash(envelope)
        prev = envelope["hash"]
        out.append(envelope)
    return out


def test_a_finished_game_passes_with_its_seed_checked() -> None:
    report = audit(finished())
    assert report.ok and report.finished and report.seed_checked


def test_a_log_played_under_other_rules_is_refused_naming_the_rules() -> None:
    envelopes = [dict(e) for e in finished()]
    envelopes[0]["data"] = {**envelopes[0]["data"], "rules_version": "0-old"}
    report = audit(rechained(envelopes))
    assert not report.ok and report.seq == 1
    assert "rules 0-old" in (report.reason or "")


def test_a_rechained_log_with_a_changed_automatic_step_fails_at_that_step() -> None:
    envelopes = [dict(e) for e in finished()]
    index = next(i for i, e in enumerate(envelopes) if e["type"] == "system")
    envelopes[index]["data"] = {**envelopes[index]["data"], "public_hash": "f" * 64}
    report = audit(rechained(envelopes))
    assert not report.ok and report.seq == index + 1


def test_a_rechained_log_with_a_wrong_seed_fails_at_game_created() -> None:
    envelopes = [dict(e) for e in finished()]
    envelopes[0]["secret"] = {**envelopes[0]["secret"], "seed": "not-the-seed"}
    report = audit(rechained(envelopes))
    assert not report.ok and report.seq is not None


def test_a_branch_log_passes_and_a_branch_of_a_branch_too() -> None:
    source = finished()
    first = branch_of(source, 20)
    assert audit(first).ok
    assert audit(branch_of(first, 15)).ok


def test_a_branch_whose_new_seed_does_not_match_its_commitment_fails_once_finished() -> None:
    source = finished()
    log = [dict(e) for e in branch_of(source, len(source), reseed=True)]
    log[0]["secret"] = {**log[0]["secret"], "seed": "swapped"}
    report = audit(rechained(log))
    assert not report.ok and report.seq == 1 and "commitment" in (report.reason or "")


def test_meeple_verify_checks_a_branch_log_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "branch.jsonl"
    path.write_bytes(to_jsonl(branch_of(finished(), 12)))
    parser = argparse.ArgumentParser(prog="meeple")
    add_commands(parser.add_subparsers(required=True))
    args = parser.parse_args(["verify", str(path)])
    assert args.handler(args) == 0
    assert capsys.readouterr().out.startswith("ok: ")
