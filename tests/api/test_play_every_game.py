"""Every game this build hosts can be created and played to its end through HTTP alone,
by following legal-actions, with the automatic steps run by the in-process job runner."""

from __future__ import annotations

import random

import pytest
from flask.testing import FlaskClient

from projections.ruleset import Ruleset, all_rulesets
from service.bootstrap import Services
from tests.api.playing import play_to_the_end


@pytest.mark.parametrize("ruleset", all_rulesets(), ids=lambda ruleset: ruleset.id)
def test_a_whole_game_is_played_through_http_by_following_legal_actions(
    client: FlaskClient, services: Services, ruleset: Ruleset
) -> None:
    summary = play_to_the_end(client, services, ruleset, random.Random(f"http-{ruleset.id}"))
    assert summary["status"]["finished"] is True
    assert summary["status"]["to_act"] == []
    assert summary["result"]["ranking"]
    assert summary["seed"] is not None
    events = client.get(f"/games/{summary['id']}/events?limit=1000").json["events"]
    assert all(not event.get("redacted") for event in events)
    assert events[0]["secret"]["seed"] == summary["seed"]
    assert summary["version"] == services.store.version(summary["id"])
