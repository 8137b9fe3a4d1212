"""legal-actions says whether undo and redo would succeed now (issue 32: a page offers undo
only when the service would take it), decided as POST .../undo and .../redo decide."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services
from tests.api.conftest import bearer, settle
from tests.api.test_history import act, ann_plays, branch, finished_game, seat, to_turns


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def offers(client: FlaskClient, path: str, headers: dict[str, str]) -> dict[str, Any]:
    answer = client.get(f"{path}/legal-actions", headers=headers)
    assert answer.status_code == 200, answer.json
    return {"undo": answer.json["undo"], "redo": answer.json["redo"]}


def test_a_seat_is_offered_the_undo_of_its_own_action_and_the_other_seat_is_not(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    path = f"/games/{game['id']}"
    ann_plays(client, game)
    assert offers(client, path, seat(game, 0)) == {
        "undo": {"allowed": True, "steps": 1, "code": None},
        "redo": {"allowed": False, "steps": None, "code": "nothing_to_redo"},
    }
    assert offers(client, path, seat(game, 1))["undo"] == {
        "allowed": False,
        "steps": None,
        "code": "not_your_action",
    }
    assert client.post(f"{path}/undo", headers=seat(game, 0)).status_code == 201
    assert offers(client, path, seat(game, 0))["redo"] == {
        "allowed": True,
        "steps": 1,
        "code": None,
    }
    assert offers(client, path, seat(game, 1))["redo"]["code"] == "not_your_action"


def test_no_undo_is_offered_after_an_automatic_step_and_the_service_refuses_it_alike(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)  # the bids' reveal, an automatic step, came last
    path = f"/games/{game['id']}"
    offer = offers(client, path, seat(game, 0))["undo"]
    assert offer == {"allowed": False, "steps": None, "code": "turn_over"}
    refused = client.post(f"{path}/undo", headers=seat(game, 0))
    assert refused.status_code == 422 and refused.json["code"] == offer["code"]


def test_no_undo_is_offered_across_a_card_draw(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    act(client, game, 0, {"type": "draw"})
    offer = offers(client, f"/games/{game['id']}", seat(game, 0))["undo"]
    assert offer["code"] == "hidden_information_revealed"


def test_a_spectator_is_offered_neither(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    ann_plays(client, game)
    found = offers(client, f"/games/{game['id']}", {})
    assert found["undo"]["allowed"] is False and found["undo"]["code"] == "missing_token"
    assert found["redo"]["allowed"] is False


def test_a_branch_holder_is_offered_the_last_move_with_the_automatic_steps_after_it(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, {}, at=7).json
    holder = bearer(made["token"])
    path = f"/games/{made['id']}"
    # Bob's draw and the final scoring after it: undoing the scoring alone would rerun it.
    offer = offers(client, f"{path}/seats/0", holder)["undo"]
    assert offer == {"allowed": True, "steps": 2, "code": None}
    done = client.post(f"{path}/undo?steps={offer['steps']}", headers=holder)
    assert done.status_code == 201, done.json
    settle(services)
    assert offers(client, f"{path}/seats/1", holder)["redo"]["allowed"] is True
