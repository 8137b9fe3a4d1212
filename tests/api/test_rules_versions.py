"""A game is folded only under the rules it was played under; otherwise a clear refusal."""

from __future__ import annotations

import pytest
from flask.testing import FlaskClient

from service.bootstrap import Services
from tests.api.conftest import bearer, new_game, settle
from tests.rulesets.tally import Tally


@pytest.mark.parametrize("path", ["", "/state", "/legal-actions", "/events", "/timeline"])
def test_a_game_played_under_other_rules_is_refused_not_folded_through_new_ones(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    game = new_game(client)
    settle(services)
    monkeypatch.setattr(Tally, "rules_version", "2")
    services.folder.forget(game["id"])
    response = client.get(f"/games/{game['id']}{path}", headers=bearer(game["seats"][0]["token"]))
    assert response.status_code == 409, response.json
    assert response.mimetype == "application/problem+json"
    assert response.json["code"] == "rules_version_mismatch"
    assert "tally rules 1, this build has 2" in response.json["detail"]
