"""Branches: a new log that starts with ``branched_from`` and a copy of the source's events."""

from __future__ import annotations

import pytest

from events.envelope import Envelope
from projections.audit import audit, audit_branch_source
from projections.fold import Game, ReplayError, decide_action, decide_system, fold, refold
from projections.history import BranchPlan, branch_events, sealed_secret, undo_event
from projections.ruleset import IllegalAction
from projections.simulate import MemoryLog, new_game, play_random, step
from tests.rulesets.tally import TALLY


def finished_source() -> tuple[Game, MemoryLog]:
    return play_random(TALLY, ["Ann", "Bob"], seed="branch-src", game_id="src")


def make_branch(
    source: list[Envelope], at: int, game_id: str = "br", **options: object
) -> tuple[Game, MemoryLog, BranchPlan]:
    defaults: dict[str, object] = {
        "new_seed": f"new-seed-{game_id}",
        "sandbox_token_hash": "h" * 64,
        "source_finished": True,
    }
    plan = branch_events(source, at, **{**defaults, **options})  # type: ignore[arg-type]
    log = MemoryLog(game_id)
    for event in plan.events:
        log.append(event)
    return fold(log.envelopes), log, plan


def replay_rest(game: Game, log: MemoryLog, source: list[Envelope], at: int) -> None:
    """Append the source's events after ``at`` to the branch, as the branch's own."""
    for envelope in source[at:]:
        kind = envelope["type"]
        if kind == "action":
            event = decide_action(game, envelope["actor"]["seat"], _action(envelope))[0]
        elif kind == "system":
            event = decide_system(game)[0]  # type: ignore[index]
        else:
            raise AssertionError(f"unexpected {kind}")
        step(game, log, event)


def _action(envelope: Envelope) -> dict:
    secret = envelope["secret"] or {}
    return dict(secret.get("action", envelope["data"]["action"]))


def test_a_branch_begins_with_branched_from_naming_the_source_and_its_hash() -> None:
    _, source = finished_source()
    game, log, _ = make_branch(source.envelopes, 7)
    marker = log.envelopes[0]
    assert marker["type"] == "branched_from"
    assert marker["data"]["source"] == "src" and marker["data"]["at"] == 7
    assert marker["data"]["source_hash"] == source.envelopes[6]["hash"]
    assert [e["type"] for e in log.envelopes[1:]] == [e["type"] for e in source.envelopes[:7]]
    assert game.version == 8
    assert game.meta["sandbox"] is True and game.meta["seat_token_hashes"] == []


def test_the_branch_at_n_has_the_state_of_the_source_after_n() -> None:
    _, source = finished_source()
    game, _, _ = make_branch(source.envelopes, 12)
    assert game.state == fold(source.envelopes, upto=12).state


def test_without_reseed_the_same_actions_reproduce_the_source_exactly() -> None:
    final, source = finished_source()
    game, log, _ = make_branch(source.envelopes, 9)
    replay_rest(game, log, source.envelopes, 9)
    assert game.state == final.state
    assert fold(log.envelopes).state == final.state


def test_with_reseed_later_draws_differ() -> None:
    game, source = new_game(TALLY, ["Ann", "Bob"], seed="luck", game_id="src")
    for seat in (0, 1):
        step(game, source, decide_action(game, seat, {"type": "bid", "amount": 1})[0])
    step(game, source, decide_system(game)[0])  # type: ignore[index]
    at = len(source.envelopes)
    for _ in range(6):
        step(game, source, decide_action(game, game.state["turn"], {"type": "draw"})[0])
    same, same_log, _ = make_branch(source.envelopes, at, "same")
    other, other_log, plan = make_branch(source.envelopes, at, "other", reseed=True, resample_for=0)
    assert plan.reseeded and plan.resampled_seat == 0
    assert other.state["hands"][0] == same.state["hands"][0]
    for branch, log in ((same, same_log), (other, other_log)):
        for _ in range(6):
            step(branch, log, decide_action(branch, branch.state["turn"], {"type": "draw"})[0])
    assert same.state["hands"] == game.state["hands"]
    assert other.state["hands"] != game.state["hands"]


def test_a_seats_branch_of_an_unfinished_game_redraws_what_that_seat_could_not_see() -> None:
    game, source = new_game(TALLY, ["Ann", "Bob", "Cy"], seed="live", game_id="src")
    for seat, amount in ((0, 4), (1, 7)):
        step(game, source, decide_action(game, seat, {"type": "bid", "amount": amount})[0])
    at = len(source.envelopes)
    branch, _, plan = make_branch(
        source.envelopes, at, source_finished=False, seat=0, new_seed="fresh"
    )
    assert plan.sealed and plan.reseeded and plan.resampled_seat == 0
    assert TALLY.view(branch.state, 0) == TALLY.view(game.state, 0)
    assert branch.state["hands"][1:] != game.state["hands"][1:]
    assert branch.state["bids"][0] == 4 and branch.state["bids"][2] is None


def test_a_branch_of_an_unfinished_game_is_always_reseeded() -> None:
    _, source = new_game(TALLY, ["Ann", "Bob"], seed="live", game_id="src")
    _, _, plan = make_branch(source.envelopes, 1, source_finished=False, admin=True)
    assert plan.reseeded and plan.resampled_seat is None and plan.sealed


def test_the_copied_secrets_of_a_sealed_branch_stay_sealed() -> None:
    game, source = new_game(TALLY, ["Ann", "Bob"], seed="live", game_id="src")
    step(game, source, decide_action(game, 1, {"type": "bid", "amount": 3})[0])
    branch, log, _ = make_branch(source.envelopes, 2, source_finished=False, seat=0)
    assert sealed_secret(branch.meta, 2) and sealed_secret(branch.meta, 3)
    step(branch, log, decide_action(branch, 0, {"type": "bid", "amount": 5})[0])
    assert not sealed_secret(branch.meta, 4)


def test_a_sealed_branch_cannot_undo_behind_its_branch_point() -> None:
    game, source = new_game(TALLY, ["Ann", "Bob"], seed="live", game_id="src")
    step(game, source, decide_action(game, 1, {"type": "bid", "amount": 3})[0])
    branch, log, _ = make_branch(source.envelopes, 2, source_finished=False, seat=0)
    with pytest.raises(IllegalAction) as refused:
        undo_event(branch, log.envelopes[branch.effective[-1] - 1], seat=None)
    assert refused.value.code == "before_branch_point"


def test_a_branch_of_a_finished_game_may_undo_the_copied_moves() -> None:
    _, source = finished_source()
    branch, log, _ = make_branch(source.envelopes, 10)
    for _ in range(3):
        last = log.envelopes[branch.effective[-1] - 1]
        step(branch, log, undo_event(branch, last, seat=None))
    at_ten = fold(source.envelopes, upto=10)
    by_seq = {envelope["seq"]: envelope for envelope in source.envelopes}
    assert branch.state == refold(by_seq, at_ten.effective[:-3])
    assert fold(log.envelopes).state == branch.state


def test_undo_never_crosses_the_point_where_a_branch_redrew_hidden_information() -> None:
    _, source = finished_source()
    branch, log, _ = make_branch(source.envelopes, 10, reseed=True, resample_for=1)
    with pytest.raises(IllegalAction) as refused:
        undo_event(branch, log.envelopes[branch.effective[-1] - 1], seat=None)
    assert refused.value.code == "before_branch_point"


def test_undo_and_redo_copied_into_a_branch_still_name_their_steps() -> None:
    game, source = new_game(TALLY, ["Ann", "Bob"], seed="undo-copy", game_id="src")
    game.meta["sandbox"] = True
    for seat in (0, 1):
        step(game, source, decide_action(game, seat, {"type": "bid", "amount": 2})[0])
    step(game, source, undo_event(game, source.envelopes[-1], seat=None))
    step(game, source, decide_action(game, 1, {"type": "bid", "amount": 5})[0])
    branch, _, _ = make_branch(source.envelopes, len(source.envelopes))
    assert branch.state == game.state
    again, _, _ = make_branch(make_branch(source.envelopes, 4)[1].envelopes, 5, "br2")
    assert again.state == fold(source.envelopes, upto=4).state


def test_a_branch_of_a_branch_reproduces_the_source_too() -> None:
    final, source = finished_source()
    first, first_log, _ = make_branch(source.envelopes, 15, "b1")
    replay_rest(first, first_log, source.envelopes, 15)
    second, second_log, _ = make_branch(first_log.envelopes, 20, "b2")
    assert second.version == 21 and second.meta["branch"]["header"] == 3
    replay_rest(second, second_log, first_log.envelopes, 20)
    assert second.state == final.state


def test_a_branch_point_outside_the_log_is_refused() -> None:
    _, source = finished_source()
    for at in (0, len(source.envelopes) + 1):
        with pytest.raises(IllegalAction) as refused:
            make_branch(source.envelopes, at)
        assert refused.value.code == "branch_point_out_of_range"


def test_a_branch_log_passes_the_audit_and_matches_its_source() -> None:
    _, source = finished_source()
    branch, log, _ = make_branch(source.envelopes, 11)
    replay_rest(branch, log, source.envelopes, 11)
    report = audit(log.envelopes)
    assert report.ok and report.finished and report.seed_checked, report
    assert audit_branch_source(log.envelopes, source.envelopes).ok


def test_a_branch_that_changed_a_copied_event_does_not_match_its_source() -> None:
    _, source = finished_source()
    _, log, _ = make_branch(source.envelopes, 11)
    tampered = [dict(e) for e in source.envelopes]
    tampered[4]["recorded_at"] = "2000-01-01T00:00:00Z"
    report = audit_branch_source(log.envelopes, tampered)
    assert not report.ok and report.seq == 1


def test_a_branch_header_cut_short_cannot_be_folded() -> None:
    _, source = finished_source()
    _, log, _ = make_branch(source.envelopes, 5)
    with pytest.raises(ReplayError):
        fold(log.envelopes[:1])
