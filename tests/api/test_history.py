"""Undo, redo, branches, the timeline, audits and exports over HTTP, with every kind of
asker: no token, a seat (its own or the wrong one), a branch's token, and the admin."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from projections.audit import audit, parse_jsonl
from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import Config
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle
from tests.rulesets.tally import TALLY

ADMIN = bearer(ADMIN_KEY)
NOBODY: dict[str, str] = {}
BAD_TOKEN = bearer("not-a-token-of-this-game")


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def seat(game: dict[str, Any], number: int) -> dict[str, str]:
    return bearer(game["seats"][number]["token"])


def act(client: FlaskClient, game: dict[str, Any], number: int, action: dict[str, Any]) -> Any:
    response = client.post(f"/games/{game['id']}/actions", json=action, headers=seat(game, number))
    assert response.status_code == 201, response.json
    return response.json


def to_turns(client: FlaskClient, services: Services, **options: Any) -> dict[str, Any]:
    """A game of Ann and Bob whose bids are in and revealed: Ann is to play."""
    game = new_game(client, options=options)
    act(client, game, 0, {"type": "bid", "amount": 2})
    act(client, game, 1, {"type": "bid", "amount": 7})
    settle(services)
    return game


def ann_plays(client: FlaskClient, game: dict[str, Any]) -> dict[str, Any]:
    hand = client.get(f"/games/{game['id']}/state", headers=seat(game, 0)).json["state"]["hand"]
    return act(client, game, 0, {"type": "play", "card": hand[0]})


def finished_game(client: FlaskClient, services: Services) -> dict[str, Any]:
    game = to_turns(client, services, rounds=1, turns_per_round=1)
    ann_plays(client, game)
    act(client, game, 1, {"type": "draw"})
    settle(services)
    assert client.get(f"/games/{game['id']}").json["status"]["finished"]
    return game


def branch(client: FlaskClient, game: dict[str, Any], headers: dict[str, str], **body: Any) -> Any:
    return client.post(f"/games/{game['id']}/branches", json=body, headers=headers)


def problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.json
    assert response.mimetype == "application/problem+json"
    assert response.json["code"] == code


# -- undo and redo ------------------------------------------------------------------------


def test_a_seat_undoes_its_own_action_and_the_state_is_as_before(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    before = client.get(f"/games/{game['id']}/state", headers=seat(game, 0)).json["state"]
    ann_plays(client, game)
    response = client.post(f"/games/{game['id']}/undo", headers=seat(game, 0))
    assert response.status_code == 201, response.json
    assert response.json["state"] == before
    assert response.headers["ETag"] == f'"{response.json["version"]}"'
    events = client.get(f"/games/{game['id']}/events").json["events"]
    assert events[-1]["type"] == "undone" and events[-1]["actor"] == {"seat": 0}


def test_redo_puts_the_same_action_back(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    after = ann_plays(client, game)["state"]
    client.post(f"/games/{game['id']}/undo", headers=seat(game, 0))
    problem(client.post(f"/games/{game['id']}/redo", headers=seat(game, 1)), 422, "not_your_action")
    response = client.post(f"/games/{game['id']}/redo", headers=seat(game, 0))
    assert response.status_code == 201
    assert response.json["state"] == after


def test_undo_and_redo_cannot_grow_a_game_past_its_allowance(config: Config) -> None:
    # An undo storm (undo, redo, undo... within every rate limit) once grew one game by
    # 19,747 events in 25 s. A game's log may hold undo_allowance events beyond its steps,
    # and undo_allowance_per_step more for each step it holds.
    services = bootstrap(replace(config, undo_allowance=6, undo_allowance_per_step=1))
    client = create_app(services=services).test_client()
    game = to_turns(client, services)
    ann_plays(client, game)
    path = f"/games/{game['id']}"
    version = client.get(path).json["version"]
    held = 4  # two bids, the reveal, Ann's play
    # The header (game_created) counts; each undo or redo adds one event.
    room = 6 + held - (version - held)
    assert room > 2
    moves = ["undo", "redo"] * room
    for move in moves[: room - 1]:
        answer = client.post(f"{path}/{move}", headers=seat(game, 0))
        assert answer.status_code == 201, answer.json
    # A request of several steps is refused whole when it would cross the allowance.
    whole = client.post(f"{path}/{moves[room - 1]}?steps=2", headers=seat(game, 0))
    problem(whole, 422, "undo_allowance_spent")
    answer = client.post(f"{path}/{moves[room - 1]}", headers=seat(game, 0))
    assert answer.status_code == 201, answer.json
    refused = client.post(f"{path}/{moves[room]}", headers=seat(game, 0))
    problem(refused, 422, "undo_allowance_spent")
    assert refused.json["allowance"] == 6 + held
    assert client.get(path).json["version"] == version + room, "the refusals append nothing"
    services.close()


@pytest.mark.parametrize("path", ["undo", "redo"])
def test_undo_and_redo_ask_for_a_seat(client: FlaskClient, services: Services, path: str) -> None:
    game = to_turns(client, services)
    ann_plays(client, game)
    url = f"/games/{game['id']}/{path}"
    problem(client.post(url, headers=NOBODY), 401, "missing_token")
    problem(client.post(url, headers=BAD_TOKEN), 401, "invalid_token")
    problem(client.post(url, headers=ADMIN), 403, "seat_required")


def test_undo_of_another_seats_action_is_refused(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    ann_plays(client, game)
    problem(client.post(f"/games/{game['id']}/undo", headers=seat(game, 1)), 422, "not_your_action")


def test_undo_after_an_automatic_step_is_refused(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    problem(client.post(f"/games/{game['id']}/undo", headers=seat(game, 0)), 422, "turn_over")


def test_undo_of_a_card_draw_is_refused(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    act(client, game, 0, {"type": "draw"})
    response = client.post(f"/games/{game['id']}/undo", headers=seat(game, 0))
    problem(response, 422, "hidden_information_revealed")


def test_nothing_to_redo_is_refused(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    problem(client.post(f"/games/{game['id']}/redo", headers=seat(game, 0)), 422, "nothing_to_redo")


def test_undo_pinned_to_a_stale_version_is_a_conflict(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    played = ann_plays(client, game)
    headers = {**seat(game, 0), "If-Match": f'"{played["version"] - 1}"'}
    problem(client.post(f"/games/{game['id']}/undo", headers=headers), 409, "version_conflict")


def test_a_retried_undo_returns_the_first_answer_and_appends_nothing(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    ann_plays(client, game)
    headers = {**seat(game, 0), "Idempotency-Key": "undo-1"}
    first = client.post(f"/games/{game['id']}/undo", headers=headers)
    again = client.post(f"/games/{game['id']}/undo", headers=headers)
    assert again.status_code == 201 and again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    assert services.store.version(game["id"]) == first.json["version"]


def test_a_games_seat_tokens_do_not_act_in_its_branch(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=7).json
    problem(client.post(f"/games/{made['id']}/undo", headers=seat(game, 0)), 401, "invalid_token")


def test_a_branch_token_may_undo_any_step_of_its_branch(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=7).json
    holder = bearer(made["token"])
    # the final scoring, Bob's draw, Ann's play: at once, or the scoring would run again
    response = client.post(f"/games/{made['id']}/undo?steps=3", headers=holder)
    assert response.status_code == 201, response.json
    settle(services)
    status = client.get(f"/games/{made['id']}").json["status"]
    assert status["phase"] == "turns" and status["to_act"] == [0]
    assert client.post(f"/games/{made['id']}/undo", headers=holder).status_code == 201
    problem(client.post(f"/games/{game['id']}/undo", headers=holder), 401, "invalid_token")


# -- branches -----------------------------------------------------------------------------


def test_a_seat_branches_an_unfinished_game_with_the_others_secrets_redrawn(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    response = branch(client, game, seat(game, 1), at=4)
    assert response.status_code == 201, response.json
    made = response.json
    assert made["sealed"] and made["reseeded"] and made["redrawn_for_seat"] == 1
    assert "seat 1 could not see" in made["notice"]
    assert response.headers["Location"].endswith(f"/games/{made['id']}")
    summary = client.get(f"/games/{made['id']}").json
    assert summary["version"] == 5 and summary["seed"] is None


def test_the_admin_branches_an_unfinished_game_always_with_new_luck(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, ADMIN, at=4).json
    assert made["sealed"] and made["reseeded"] and made["redrawn_for_seat"] is None


def test_the_admin_names_the_seat_whose_view_an_unfinished_games_branch_keeps(
    client: FlaskClient, services: Services
) -> None:
    """A branch of an unfinished game is always reseeded, so the seat the admin names is
    honoured without asking for a reseed (BranchRequestSchema's ``seat``)."""
    game = to_turns(client, services)
    made = branch(client, game, ADMIN, at=4, seat=1).json
    assert made["sealed"] and made["reseeded"] and made["redrawn_for_seat"] == 1
    assert "seat 1 could not see" in made["notice"]


def test_only_seats_and_the_admin_may_branch_before_the_end(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    problem(branch(client, game, NOBODY, at=2), 401, "missing_token")
    problem(branch(client, game, BAD_TOKEN, at=2), 401, "invalid_token")


def test_anyone_may_branch_a_finished_game_and_replay_it_exactly(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=4).json
    assert not made["sealed"] and not made["reseeded"] and made["notice"] is None
    holder = bearer(made["token"])
    source_events = client.get(f"/games/{game['id']}/events").json["events"]
    for event in source_events[4:]:
        if event["type"] == "action":
            seat_number = event["actor"]["seat"]
            response = client.post(
                f"/games/{made['id']}/seats/{seat_number}/actions",
                json=event["data"]["action"],
                headers=holder,
            )
            assert response.status_code == 201, response.json
        settle(services)
    mine = client.get(f"/games/{made['id']}").json
    theirs = client.get(f"/games/{game['id']}").json
    assert mine["result"] == theirs["result"] and mine["status"]["finished"]


def test_a_branch_of_a_branch_is_listed_under_its_source(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    first = branch(client, game, ADMIN, at=6, reseed=True, seat=0).json
    assert first["reseeded"] and first["redrawn_for_seat"] == 0
    second = branch(client, {"id": first["id"]}, bearer(first["token"]), at=7)
    assert second.status_code == 201, second.json
    listed = client.get(f"/games/{game['id']}/branches").json["branches"]
    assert [entry["id"] for entry in listed] == [first["id"]]
    assert listed[0]["at"] == 6 and listed[0]["redrawn_for_seat"] == 0
    nested = client.get(f"/games/{first['id']}/branches", headers=ADMIN).json["branches"]
    assert [entry["id"] for entry in nested] == [second.json["id"]]


def test_a_branch_point_outside_the_game_is_refused(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    problem(branch(client, game, seat(game, 0), at=99), 422, "branch_point_out_of_range")
    problem(branch(client, game, seat(game, 0), at=0), 422, "invalid_body")
    # A branch's first events are its header (the marker and the copied past): no point
    # inside it is an event to branch at (it once answered 500).
    made = branch(client, game, seat(game, 0), at=1).json
    holder = bearer(made["token"])
    inside = branch(client, {"id": made["id"]}, holder, at=1)
    problem(inside, 422, "branch_point_out_of_range")
    assert client.get(f"/games/{made['id']}/branches", headers=holder).json["branches"] == []


def test_a_seat_to_redraw_for_needs_a_reseed_once_the_game_has_ended(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    problem(branch(client, game, NOBODY, at=4, seat=1), 422, "redraw_needs_reseed")
    made = branch(client, game, NOBODY, at=4, seat=1, reseed=True).json
    assert made["reseeded"] and made["redrawn_for_seat"] == 1


def test_listing_branches_refuses_a_bad_token(client: FlaskClient, services: Services) -> None:
    game = to_turns(client, services)
    problem(client.get(f"/games/{game['id']}/branches", headers=BAD_TOKEN), 401, "invalid_token")
    assert client.get(f"/games/{game['id']}/branches", headers=seat(game, 0)).json == {
        "branches": []
    }


def test_a_sealed_branch_cannot_undo_behind_its_branch_point(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    response = client.post(f"/games/{made['id']}/undo", headers=bearer(made["token"]))
    problem(response, 422, "before_branch_point")


def test_a_branch_token_plays_every_seat_and_no_seat_token_does(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    holder = bearer(made["token"])
    legal = client.get(f"/games/{made['id']}/seats/0/legal-actions", headers=holder).json
    assert legal["seat"] == 0 and legal["actions"]
    view = client.get(f"/games/{made['id']}/seats/1/state", headers=holder).json
    assert view["seat"] == 1 and view["state"]["hand"] is not None
    url = f"/games/{made['id']}/seats/0/actions"
    problem(client.post(url, json=legal["actions"][0], headers=seat(game, 0)), 401, "invalid_token")
    problem(client.post(url, json=legal["actions"][0], headers=NOBODY), 401, "missing_token")
    problem(client.post(url, json=legal["actions"][0], headers=ADMIN), 403, "seat_required")
    assert client.post(url, json=legal["actions"][0], headers=holder).status_code == 201
    problem(
        client.get(f"/games/{game['id']}/seats/1/state", headers=seat(game, 0)),
        403,
        "not_your_seat",
    )


# -- time travel --------------------------------------------------------------------------


def test_the_state_at_n_is_what_the_viewer_could_see_then(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    ann_plays(client, game)
    then = client.get(f"/games/{game['id']}/state?at=4", headers=seat(game, 1))
    assert then.status_code == 200, then.json
    assert then.json["version"] == 4 and then.json["seat"] == 1
    assert then.json["status"]["phase"] == "turns"
    assert then.json["state"]["hand_sizes"] == [2, 2]
    spectator = client.get(f"/games/{game['id']}/state?at=2").json
    assert spectator["state"]["hand"] is None and spectator["state"]["bids_made"] == [True, False]
    assert client.get(f"/games/{game['id']}/state?at=5", headers=ADMIN).status_code == 200
    problem(client.get(f"/games/{game['id']}/state?at=5", headers=BAD_TOKEN), 401, "invalid_token")
    problem(client.get(f"/games/{game['id']}/state?at=6"), 422, "invalid_query")
    problem(client.get(f"/games/{game['id']}/state?at=x"), 422, "invalid_query")
    # Digits that are not ASCII: "²" once answered 500, and "٣" was read as 3.
    for digit in ("²", "٣"):
        problem(client.get(f"/games/{game['id']}/state?at={digit}"), 422, "invalid_query")


def test_a_sealed_branch_shows_its_copied_past_to_the_admin_alone(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    url = f"/games/{made['id']}/state"
    problem(client.get(f"{url}?at=3", headers=bearer(made["token"])), 403, "sealed_history")
    assert client.get(f"{url}?at=3", headers=ADMIN).status_code == 200
    assert client.get(f"{url}?at=5", headers=bearer(made["token"])).status_code == 200
    seat_url = f"/games/{made['id']}/seats/1/state"
    problem(client.get(f"{seat_url}?at=3", headers=bearer(made["token"])), 403, "sealed_history")
    then = client.get(f"{seat_url}?at=5", headers=bearer(made["token"])).json
    assert then["version"] == 5 and then["seat"] == 1 and then["state"]["hand"] is not None


def test_the_timeline_lists_every_event_with_a_line_and_the_scores(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    for headers in (NOBODY, seat(game, 1), ADMIN):
        body = client.get(f"/games/{game['id']}/timeline", headers=headers).json
        assert [entry["seq"] for entry in body["events"]] == list(range(1, body["version"] + 1))
        assert body["next_after"] is None
    entries = body["events"]
    assert entries[0]["summary"] == "Tally (test only) set up for Ann, Bob"
    assert entries[1]["summary"] == "Ann made a secret bid"
    assert entries[-1]["scores"] == client.get(f"/games/{game['id']}/state").json["state"]["scores"]
    page = client.get(f"/games/{game['id']}/timeline?after=2&limit=2").json
    assert [entry["seq"] for entry in page["events"]] == [3, 4] and page["next_after"] == 4
    problem(client.get(f"/games/{game['id']}/timeline", headers=BAD_TOKEN), 401, "invalid_token")
    problem(client.get(f"/games/{game['id']}/timeline?limit=0"), 422, "invalid_query")


def test_the_timeline_of_a_branch_names_its_source(client: FlaskClient, services: Services) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=5).json
    body = client.get(f"/games/{made['id']}/timeline", headers=bearer(made["token"])).json
    assert body["events"][0]["summary"].startswith(f"Branched from game {game['id']} after event 5")
    assert len(body["events"]) == 6


# -- audit and export ---------------------------------------------------------------------


def test_the_audit_of_a_sound_game_is_ok_for_everyone(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    for headers in (NOBODY, seat(game, 0), ADMIN):
        report = client.get(f"/games/{game['id']}/audit", headers=headers).json
        assert report["ok"] and report["finished"] and report["seed_checked"]
        assert report["system_steps_checked"] == 2 and report["seq"] is None
    problem(client.get(f"/games/{game['id']}/audit", headers=BAD_TOKEN), 401, "invalid_token")


def test_the_audit_of_a_branch_checks_its_copy_of_the_source(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=6).json
    settle(services)  # the round is over at 6: the branch scores it on its own
    report = client.get(f"/games/{made['id']}/audit", headers=bearer(made["token"])).json
    assert report["ok"] and report["source_checked"] and report["finished"]
    assert report["events"] == 8 and report["system_steps_checked"] == 2


def test_the_export_of_a_finished_game_verifies_offline(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    response = client.get(f"/games/{game['id']}/export")
    assert response.status_code == 200 and response.mimetype == "application/jsonl"
    assert audit(parse_jsonl(response.data)).seed_checked


def test_the_full_log_of_an_unfinished_game_is_for_the_admin_alone(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    for headers in (NOBODY, seat(game, 0)):
        problem(
            client.get(f"/games/{game['id']}/export", headers=headers), 403, "game_not_finished"
        )
    problem(client.get(f"/games/{game['id']}/export", headers=BAD_TOKEN), 401, "invalid_token")
    exported = client.get(f"/games/{game['id']}/export", headers=ADMIN)
    assert exported.status_code == 200 and audit(parse_jsonl(exported.data)).ok
    holder = bearer(made["token"])
    problem(client.get(f"/games/{made['id']}/export", headers=holder), 403, "game_not_finished")


def test_a_game_played_under_other_rules_is_refused_clearly(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = finished_game(client, services)
    monkeypatch.setattr(type(TALLY), "rules_version", "2-changed")
    services.folder.forget(game["id"])
    for path in ("audit", "timeline", "export"):
        response = client.get(f"/games/{game['id']}/{path}", headers=ADMIN)
        problem(response, 409, "rules_version_mismatch")
        assert "rules 1, this build has 2-changed" in response.json["detail"]


def play_branch_to_the_end(client: FlaskClient, services: Services, made: dict[str, Any]) -> None:
    holder = bearer(made["token"])
    for _ in range(20):
        settle(services)
        status = client.get(f"/games/{made['id']}").json["status"]
        if status["finished"]:
            return
        number = status["to_act"][0]
        url = f"/games/{made['id']}/seats/{number}"
        action = client.get(f"{url}/legal-actions", headers=holder).json["actions"][0]
        assert client.post(f"{url}/actions", json=action, headers=holder).status_code == 201
    raise AssertionError("the branch did not end")


def test_a_sealed_branch_is_exported_only_once_its_source_has_ended_too(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services, rounds=1, turns_per_round=1)
    made = branch(client, game, seat(game, 0), at=4).json
    play_branch_to_the_end(client, services, made)
    url = f"/games/{made['id']}/export"
    problem(client.get(url, headers=bearer(made["token"])), 403, "sealed_history")
    problem(client.get(url), 403, "sealed_history")
    assert client.get(url, headers=ADMIN).status_code == 200
    ann_plays(client, game)
    act(client, game, 1, {"type": "draw"})
    settle(services)
    exported = client.get(url)
    assert exported.status_code == 200 and audit(parse_jsonl(exported.data)).seed_checked


def test_a_branch_token_lists_its_own_branches(client: FlaskClient, services: Services) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=5).json
    listed = client.get(f"/games/{made['id']}/branches", headers=bearer(made["token"]))
    assert listed.status_code == 200 and listed.json == {"branches": []}


def test_a_finished_sealed_branch_still_withholds_its_sources_secrets(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services, rounds=1, turns_per_round=1)
    made = branch(client, game, seat(game, 0), at=4).json
    holder = bearer(made["token"])
    for number in (0, 1):
        url = f"/games/{made['id']}/seats/{number}"
        legal = client.get(f"{url}/legal-actions", headers=holder).json["actions"]
        assert client.post(f"{url}/actions", json=legal[0], headers=holder).status_code == 201
    settle(services)
    assert client.get(f"/games/{made['id']}").json["status"]["finished"]
    for headers in (NOBODY,):
        events = client.get(f"/games/{made['id']}/events", headers=headers).json["events"]
        copied = [event for event in events if 1 < event["seq"] <= 5 and event.get("redacted")]
        assert len(copied) == 3, "the source's seed and both secret bids stay sealed"
        assert all(event["secret"] is None for event in copied)
    everything = client.get(f"/games/{made['id']}/events", headers=ADMIN).json["events"]
    assert not any(event.get("redacted") for event in everything)
    assert everything[2]["secret"]["action"] == {"type": "bid", "amount": 2}


def test_a_branch_holder_speaks_on_the_main_endpoints_for_the_one_seat_awaited(
    client: FlaskClient, services: Services
) -> None:
    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    holder = bearer(made["token"])
    turn = client.get(f"/games/{made['id']}/state", headers=holder).json
    assert turn["seat"] is not None and turn["state"]["hand"] is not None
    legal = client.get(f"/games/{made['id']}/legal-actions", headers=holder).json
    assert legal["seat"] == turn["seat"] and legal["actions"]
    posted = client.post(f"/games/{made['id']}/actions", json=legal["actions"][0], headers=holder)
    assert posted.status_code == 201, posted.json
    events = client.get(f"/games/{made['id']}/events", headers=holder).json["events"]
    sealed = [event for event in events if event["seq"] <= 5 and event.get("redacted")]
    # the branch's seed, the source's seed and both secret bids
    assert len(sealed) == 4, "the branch's seed and the source's secrets stay sealed"


def test_a_branch_holder_must_name_a_seat_when_several_are_awaited(
    client: FlaskClient, services: Services
) -> None:
    game = finished_game(client, services)
    made = branch(client, game, NOBODY, at=1).json
    holder = bearer(made["token"])
    assert client.get(f"/games/{made['id']}/legal-actions", headers=holder).json["actions"] == []
    bid = {"type": "bid", "amount": 4}
    problem(
        client.post(f"/games/{made['id']}/actions", json=bid, headers=holder), 403, "seat_required"
    )
    for number in (0, 1):
        url = f"/games/{made['id']}/seats/{number}/actions"
        assert client.post(url, json=bid, headers=holder).status_code == 201
    events = client.get(f"/games/{made['id']}/events", headers=holder).json["events"]
    assert events[0]["type"] == "branched_from" and events[0]["redacted"], "no seed for the holder"
    bids = [event for event in events if event["seq"] > 2 and event["type"] == "action"]
    assert [event["secret"]["action"] for event in bids] == [bid, bid]
    spectator = client.get(f"/games/{made['id']}/events").json["events"]
    assert all(event["secret"] is None for event in spectator if event["seq"] > 2)
