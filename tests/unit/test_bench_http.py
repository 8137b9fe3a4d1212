"""The HTTP bench's own arithmetic: the automatic steps its load makes due, and what the CPU
it measures allows (bench/bench_http.py; the bench itself runs in ``make bench``, not here)."""

from __future__ import annotations

import pytest

from bench.bench_http import Plan, Side, Tally, budget, game_plan


def test_a_plan_knows_how_many_automatic_steps_come_before_each_move() -> None:
    body, moves, steps = game_plan(0)
    from projections.simulate import play_random
    from service.http.openapi import product_rulesets

    ruleset = next(r for r in product_rulesets() if r.id == body["ruleset"])
    _, log = play_random(ruleset, body["players"], body["seed"], body["options"])
    kinds = [envelope["type"] for envelope in log.envelopes]

    assert len(steps) == len(moves) + 1
    assert steps[-1] == kinds.count("system") > 0
    # Before move i come exactly the steps the log holds before its i-th action.
    actions_seen = 0
    for index, kind in enumerate(kinds):
        if kind == "action":
            assert steps[actions_seen] == kinds[:index].count("system")
            actions_seen += 1


def test_the_steps_between_two_positions_are_the_ones_those_moves_made_due() -> None:
    moves = [(0, {"type": "bid"})] * 4
    # One step before move 2 (made due by move 1), two after the last move.
    plan = Plan("g", ["t"], moves, steps=[0, 0, 1, 1, 3])
    assert plan.steps_between(0, 2) == 1
    assert plan.steps_between(2, 4) == 2
    assert plan.steps_between(0, 4) == 3
    assert plan.steps_between(3, 3) == 0
    assert Plan("g", ["t"], moves).steps_between(0, 4) == 0


def test_the_budget_is_twice_a_bare_answer_and_its_client_less_our_client(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = Side(Tally(appended=1000, client_cpu=0.1), seconds=1.0)
    base.cpu = {"gunicorn": 0.4, "redis": 0.1}
    ours = Side(Tally(appended=100, client_cpu=0.03), seconds=1.0, steps=20)
    ours.cpu = {"gunicorn": 0.2, "redis": 0.04, "RQ workers": 0.06}

    budget(base, ours, per_job=0.0015)

    printed = capsys.readouterr().out
    # A bare answer 0.5 ms, its client 0.1; ours 3.0 ms, its client 0.3.
    assert "predicts the ratio 0.182" in printed
    assert "the ratio 0.5 allows: 0.90; ours spent 3.00" in printed
    # 0.2 steps per action x 1.5 ms per empty job on top of the bare answer.
    assert "a bare request 0.50 + 0.200 automatic steps" in printed
    assert "x RQ's own 1.50 per job (an empty job) = 0.80, which leaves 0.10" in printed
