"""What ``undo?steps=k`` and the audit cost through the API, counted with spies (not timed):
on a long branch, undoing 100 steps applies about one snapshot interval of steps (a rebuild
where it ends, one more if it crosses a multiple of the interval), not 100 refolds; a second
audit of the same version computes nothing, the next version's is computed afresh."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from events.envelope import NewEvent
from service.bootstrap import Services
from service.http.resources import audits as audit_views
from tests.api.conftest import bearer, settle
from tests.unit.test_costs import Applies, played

INTERVAL = 100


@pytest.fixture
def applies(monkeypatch: pytest.MonkeyPatch) -> Applies:
    return Applies(monkeypatch)


def long_branch(client: FlaskClient, services: Services) -> tuple[str, dict[str, str]]:
    """A branch (and its holder's headers) of a finished ~480-event Tally game."""
    log = played()
    services.store.append(log.game_id, [NewEvent.copy_of(e) for e in log.envelopes], 0)
    made = client.post(f"/games/{log.game_id}/branches", json={"at": len(log.envelopes)})
    assert made.status_code == 201, made.json
    return made.json["id"], bearer(made.json["token"])


def test_undoing_a_hundred_steps_applies_about_one_snapshot_interval(
    client: FlaskClient, services: Services, applies: Applies
) -> None:
    branch, holder = long_branch(client, services)
    assert client.get(f"/games/{branch}/state").status_code == 200
    settle(services)

    def undo() -> Any:
        answer = client.post(f"/games/{branch}/undo?steps=100", headers=holder)
        settle(services)
        return answer

    answer, count = applies.during(undo)

    assert answer.status_code == 201, answer.json
    assert count <= 2 * INTERVAL
    redone, count = applies.during(
        lambda: client.post(f"/games/{branch}/redo?steps=100", headers=holder)
    )
    assert redone.status_code == 201, redone.json
    assert count <= 100 + 2 * INTERVAL


def test_a_second_audit_of_the_same_version_does_not_fold_again(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch, holder = long_branch(client, services)
    audits: list[int] = []
    original = audit_views.audit

    def counted(envelopes: Any) -> Any:
        audits.append(len(envelopes))
        return original(envelopes)

    monkeypatch.setattr(audit_views, "audit", counted)
    first = client.get(f"/games/{branch}/audit")
    second = client.get(f"/games/{branch}/audit")
    assert first.status_code == second.status_code == 200
    assert first.json == second.json and first.json["ok"] and first.json["source_checked"]
    assert len(audits) == 1

    assert client.post(f"/games/{branch}/undo", headers=holder).status_code == 201
    settle(services)
    third = client.get(f"/games/{branch}/audit")
    # the undo, and the automatic step it took back, run again by the jobs
    assert third.json["ok"] and third.json["events"] > first.json["events"]
    assert len(audits) == 2


def test_pages_of_events_and_timeline_chain_by_next_after_over_the_whole_log(
    client: FlaskClient, services: Services
) -> None:
    branch, _ = long_branch(client, services)
    version = client.get(f"/games/{branch}").json["version"]
    for what in ("events", "timeline"):
        seqs: list[int] = []
        after: int | None = 0
        while after is not None:
            page = client.get(f"/games/{branch}/{what}?after={after}&limit=150").json
            seqs.extend(entry["seq"] for entry in page["events"])
            after = page["next_after"]
        assert seqs == list(range(1, version + 1)), what
