"""``/games/{id}/analyses`` through the Flask client, jobs in-process (docs/analysis.md, Analyses
over HTTP): results, shared identical requests, secrecy while a game is played, caps, cancellation
and the live stream's ``analysis`` messages."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from projections.agents import analysis as agents_analysis
from projections.agents.budget import Budget
from projections.ruleset import get_ruleset
from service.bootstrap import Services
from service.workers import analyses, compute
from tests.api.conftest import ADMIN_KEY, bearer, new_game, settle
from tests.api.playing import play_to_the_end

real_analyze = agents_analysis.analyze


def ask(client: FlaskClient, game_id: str, token: str | None = None, **body: Any) -> TestResponse:
    headers = bearer(token) if token else {}
    return client.post(f"/games/{game_id}/analyses", json=body, headers=headers)


def read(client: FlaskClient, location: str, token: str | None = None) -> TestResponse:
    return client.get(location, headers=bearer(token) if token else {})


def wait_for(check: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait until ``check()`` holds (what a job does in its own time); fail past ``timeout``."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "the analysis job never got there"
        time.sleep(0.02)


class Gate:
    """Stands in for the search: runs until opened (or cancelled), then searches 5 playouts."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.calls = 0

    def analyze(self, ruleset: Any, state: Any, seat: int, budget: Budget, seed: str,
                progress: Any = None, cancelled: Any = None) -> Any:  # fmt: skip
        self.calls += 1
        done = 0
        while not self.opened.wait(0.01) and not cancelled():
            done += 1
            progress(done)
        return real_analyze(
            ruleset, state, seat, Budget(iterations=5), seed, progress=progress,
            cancelled=cancelled,
        )  # fmt: skip


def search_here(services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the searches in this process (the embedded default runs them in child processes,
    which a stand-in set here would not reach)."""
    monkeypatch.setattr(
        services.jobs,
        "compute",
        lambda queue, name, args, seconds, on_progress=None: compute.run_here(
            name, args, on_progress
        ),
    )


@pytest.fixture
def gate(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    search_here(services, monkeypatch)
    monkeypatch.setattr(analyses, "analyze", held.analyze)
    yield held
    held.opened.set()


def settings_of(services: Services, **changes: Any) -> None:
    services.jobs.settings = replace(services.jobs.settings, **changes)


def test_a_seat_weighs_its_candidates_and_reads_the_pick(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    token = game["seats"][0]["token"]
    response = ask(client, game["id"], token, playouts=40)
    assert response.status_code == 202, response.json
    location = response.headers["Location"]
    assert location == f"/games/{game['id']}/analyses/{response.json['id']}"
    assert response.json["status"] == "queued"
    assert response.json["progress"] == {"done": 0, "total": 40}
    assert (response.json["at"], response.json["seat"]) == (1, 0)
    settle(services)
    done = read(client, location, token)
    assert done.status_code == 200
    analysis = done.json
    assert analysis["status"] == "done"
    assert analysis["progress"] == {"done": 40, "total": 40}
    result = analysis["result"]
    assert result["playouts"] == 40 and result["complete"]
    legal = [{"type": "bid", "amount": amount} for amount in range(10)]
    assert result["pick"] in legal
    candidates = result["candidates"]
    assert sum(c["playouts"] for c in candidates) == 40
    assert [c["playouts"] for c in candidates] == sorted(
        (c["playouts"] for c in candidates), reverse=True
    )
    assert candidates[0]["action"] == result["pick"]
    for candidate in candidates:
        assert candidate["action"] in legal
        low, high = candidate["win_interval"]
        assert 0 <= low <= candidate["win_rate"] <= high <= 1
        if candidate["playouts"] >= 2:
            low, high = candidate["score_interval"]
            assert low <= candidate["mean_score"] <= high
        assert isinstance(candidate["summary"], str)


def test_identical_requests_share_one_analysis_and_different_ones_do_not(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    searches: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        searches.append(args[4])
        return real_analyze(*args, **kwargs)

    search_here(services, monkeypatch)
    monkeypatch.setattr(analyses, "analyze", counted)
    game = new_game(client)
    token = game["seats"][0]["token"]
    first = ask(client, game["id"], token, playouts=20, seed="s")
    settle(services)
    again = ask(client, game["id"], token, playouts=20, seed="s", at=1, seat=0)
    assert again.status_code == 200
    assert again.headers["Location"] == first.headers["Location"]
    assert again.json["status"] == "done"
    assert len(searches) == 1
    other = ask(client, game["id"], token, playouts=20, seed="t")
    assert other.status_code == 202
    assert other.headers["Location"] != first.headers["Location"]
    settle(services)
    assert len(searches) == 2


def test_while_a_game_is_played_only_the_seat_may_analyse_or_read_its_decision(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    seat0, seat1 = (seat["token"] for seat in game["seats"])
    anonymous = ask(client, game["id"], seat=0, playouts=5)
    assert anonymous.status_code == 401
    assert anonymous.json["code"] == "missing_token"
    other = ask(client, game["id"], seat1, seat=0, playouts=5)
    assert other.status_code == 403
    assert other.json["code"] == "not_your_seat"
    location = ask(client, game["id"], seat0, playouts=5).headers["Location"]
    settle(services)
    assert read(client, location, seat0).status_code == 200
    assert read(client, location).json["code"] == "missing_token"
    hidden = read(client, location, seat1)
    assert hidden.status_code == 404 and hidden.json["code"] == "not_found"
    for cancel in (client.delete(location, headers=bearer(seat1)), client.delete(location)):
        assert cancel.status_code in (401, 404)
    assert read(client, location, ADMIN_KEY).status_code == 200


def test_two_games_that_differ_only_in_what_the_seat_cannot_see_get_the_same_analysis(
    client: FlaskClient, services: Services
) -> None:
    """The proof of secrecy over HTTP: two Tally games (seeds chosen with the admin key)
    where seat 0 holds the same hand but seat 1's hand and the deck differ; seat 0's
    analyses under one seed are identical, so nothing it could not see reached the search."""
    tally = get_ruleset("tally")
    by_view: dict[str, tuple[str, Any]] = {}
    twins = None
    for number in range(400):
        created = client.post(
            "/games",
            json={"ruleset": "tally", "players": ["Ann", "Bob"], "seed": f"twin-{number}"},
            headers=bearer(ADMIN_KEY),
        )
        assert created.status_code == 201, created.json
        game = created.json
        state = services.folder.load(game["id"]).state
        view = json.dumps(tally.view(state, 0), sort_keys=True)
        if view in by_view and by_view[view][1] != state:
            twins = (by_view[view][0], game)
            break
        by_view[view] = (game, state)
    assert twins is not None, "no two deals gave seat 0 the same hand"
    results = []
    for game in twins:
        response = ask(client, game["id"], game["seats"][0]["token"], playouts=60, seed="x")
        settle(services)
        results.append(read(client, response.headers["Location"], game["seats"][0]["token"]))
    assert results[0].json["status"] == results[1].json["status"] == "done"
    assert results[0].json["result"] == results[1].json["result"]


def test_a_finished_game_may_be_analysed_by_anyone(client: FlaskClient, services: Services) -> None:
    import random

    summary = play_to_the_end(client, services, get_ruleset("tally"), random.Random(3))
    game_id = summary["id"]
    unnamed = ask(client, game_id, playouts=5)
    assert unnamed.status_code == 422 and unnamed.json["errors"] == {"seat": ["Required."]}
    over = ask(client, game_id, seat=0, playouts=5)
    assert over.status_code == 422 and over.json["code"] == "no_decision"
    response = ask(client, game_id, seat=1, at=1, playouts=10)
    assert response.status_code == 202, response.json
    settle(services)
    analysis = read(client, response.headers["Location"]).json
    assert analysis["status"] == "done" and analysis["seat"] == 1
    assert analysis["result"]["playouts"] == 10


def test_bad_requests_are_refused_with_their_codes(client: FlaskClient, services: Services) -> None:
    game = new_game(client)
    token = game["seats"][0]["token"]
    settings = services.jobs.settings
    cases = [
        ({"playouts": settings.analysis_max_playouts + 1}, 422, "budget_too_large"),
        ({"seconds": settings.analysis_max_seconds + 1}, 422, "budget_too_large"),
        ({"playouts": 0}, 422, "invalid_body"),
        ({"playouts": "many"}, 422, "invalid_body"),
        ({"at": 2}, 422, "invalid_body"),
        ({"seat": 5}, 403, "not_your_seat"),
        ({"budget": 3}, 422, "invalid_body"),
        ({"seed": "a b"}, 422, "invalid_body"),
    ]
    for body, status, code in cases:
        response = ask(client, game["id"], token, **body)
        assert (response.status_code, response.json["code"]) == (status, code), body
    admin = ask(client, game["id"], ADMIN_KEY, seat=5)
    assert (admin.status_code, admin.json["code"]) == (422, "no_such_seat")
    missing = read(client, f"/games/{game['id']}/analyses/0123abcd", token)
    assert missing.status_code == 404


def test_a_seat_with_nothing_to_decide_gets_no_decision(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    seat0, seat1 = (seat["token"] for seat in game["seats"])
    assert (
        client.post(
            f"/games/{game['id']}/actions", json={"type": "bid", "amount": 3}, headers=bearer(seat0)
        ).status_code
        == 201
    )
    response = ask(client, game["id"], seat0, playouts=5)
    assert (response.status_code, response.json["code"]) == (422, "no_decision")
    assert ask(client, game["id"], seat1, playouts=5).status_code == 202
    settle(services)


def test_a_running_analysis_reports_progress_and_is_cancelled(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    game = new_game(client)
    token = game["seats"][0]["token"]
    location = ask(client, game["id"], token, playouts=50).headers["Location"]
    wait_for(lambda: read(client, location, token).json["progress"]["done"] > 0)
    running = read(client, location, token).json
    assert running["status"] == "running" and running["progress"]["total"] == 50
    cancelled = client.delete(location, headers=bearer(token))
    assert cancelled.status_code == 200 and cancelled.json["status"] == "cancelled"
    settle(services)
    after = read(client, location, token).json
    assert after["status"] == "cancelled"
    assert after["result"] is not None and after["result"]["complete"] is False
    # Cancelling again changes nothing; asking again starts it anew.
    assert client.post(location + "/cancel", headers=bearer(token)).json["status"] == "cancelled"
    gate.opened.set()
    again = ask(client, game["id"], token, playouts=50)
    assert again.status_code == 202 and again.headers["Location"] == location
    settle(services)
    assert read(client, location, token).json["status"] == "done"
    assert gate.calls == 2


def test_an_analysis_whose_worker_died_reads_as_failed_and_is_started_anew(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    # A lease of a tenth of a second: the running search outlives it, as a dead worker's would.
    settings_of(services, analysis_lease=0.1 - services.jobs.settings.analysis_max_seconds)
    game = new_game(client)
    token = game["seats"][0]["token"]
    location = ask(client, game["id"], token, playouts=5).headers["Location"]
    wait_for(lambda: gate.calls == 1)  # running, past its lease before long
    wait_for(lambda: read(client, location, token).json["status"] == "failed")
    assert read(client, location, token).json["error"] == "The analysis stopped; ask again."
    settings_of(services, analysis_lease=600.0)
    again = ask(client, game["id"], token, playouts=5)
    assert again.status_code == 202 and again.json["status"] == "queued"
    gate.opened.set()
    settle(services)
    analysis = read(client, location, token).json
    assert analysis["status"] == "done" and analysis["result"]["playouts"] == 5
    assert gate.calls == 2


def test_unfinished_analyses_are_capped_per_requester_per_seat_and_in_all(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    settings_of(services, analyses_per_requester=1, analyses_per_game=1, analyses_total=3)
    first, second = new_game(client), new_game(client)
    a0, a1 = (seat["token"] for seat in first["seats"])
    b0, b1 = (seat["token"] for seat in second["seats"])
    assert ask(client, first["id"], a0, seed="1").status_code == 202
    mine = ask(client, first["id"], a0, seed="2")
    assert (mine.status_code, mine.json["code"]) == (429, "too_many_analyses")
    assert int(mine.headers["Retry-After"]) >= 1
    seat_full = ask(client, first["id"], ADMIN_KEY, seat=0, seed="3")
    assert seat_full.status_code == 429 and "Seat 0 of this game" in seat_full.json["detail"]
    # Seat 0's analysis fills seat 0's cap alone: seat 1 is not told of it.
    assert ask(client, first["id"], a1).status_code == 202
    assert ask(client, second["id"], b0).status_code == 202
    service_full = ask(client, second["id"], b1)
    assert service_full.status_code == 429 and "The service" in service_full.json["detail"]
    # The same request again is no new analysis: it is shared, not refused.
    assert ask(client, first["id"], a0, seed="1").status_code == 202
    gate.opened.set()
    settle(services)
    assert ask(client, first["id"], a0, seed="2").status_code == 202
    settle(services)


def test_a_result_expires(client: FlaskClient, services: Services) -> None:
    settings_of(services, analysis_ttl=0.2)
    game = new_game(client)
    token = game["seats"][0]["token"]
    location = ask(client, game["id"], token, playouts=5).headers["Location"]
    settle(services)
    wait_for(lambda: read(client, location, token).status_code == 404)


def test_the_seats_live_stream_tells_its_progress_and_no_other_stream_does(
    client: FlaskClient, services: Services
) -> None:
    settings_of(services, stream_heartbeat=0.05, stream_check_interval=0.05)
    game = new_game(client)
    seat0, seat1 = (seat["token"] for seat in game["seats"])
    streams = {
        name: iter(
            client.get(f"/games/{game['id']}/stream", headers=headers, buffered=False).response
        )
        for name, headers in (("seat0", bearer(seat0)), ("seat1", bearer(seat1)), ("none", {}))
    }
    for stream in streams.values():
        assert next(stream).startswith(b"retry:")
        assert next(stream).startswith(b"event: turn\n")  # whose turn it is, first
    response = ask(client, game["id"], seat0, playouts=20)
    settle(services)
    told = next(streams["seat0"]).decode()
    assert told.startswith("event: analysis\n")
    notes = [json.loads(line[len("data: ") :]) for line in told.splitlines() if line[:5] == "data:"]
    assert notes[-1] == {
        "id": response.json["id"],
        "seat": 0,
        "at": 1,
        "status": "done",
        "progress": {"done": 20, "total": 20},
    }
    for name in ("seat1", "none"):
        assert next(streams[name]) == b": heartbeat\n\n", name
    for stream in streams.values():
        stream.close()  # type: ignore[attr-defined]


def test_a_queued_analysis_says_where_it_stands_in_the_queue(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    settings_of(services, analyses_per_requester=5, analyses_per_game=5)
    game = new_game(client)
    token = game["seats"][0]["token"]
    running = ask(client, game["id"], token, playouts=40, seed="first")
    wait_for(lambda: read(client, running.headers["Location"], token).json["status"] == "running")
    second = ask(client, game["id"], token, playouts=40, seed="second")
    third = ask(client, game["id"], token, playouts=40, seed="third")
    assert (second.json["status"], second.json["queue_position"]) == ("queued", 1)
    assert (third.json["status"], third.json["queue_position"]) == ("queued", 2)
    assert read(client, running.headers["Location"], token).json["queue_position"] is None
    gate.opened.set()
    settle(services)
    for asked in (running, second, third):
        done = read(client, asked.headers["Location"], token).json
        assert (done["status"], done["queue_position"]) == ("done", None)


def test_a_seats_analysis_never_tells_its_rival_through_the_per_game_cap(
    client: FlaskClient, services: Services, gate: Gate
) -> None:
    settings_of(services, analyses_per_requester=5, analyses_per_owner=10, analyses_per_game=2)
    game = new_game(client)
    seat0, seat1 = (seat["token"] for seat in game["seats"])
    assert [ask(client, game["id"], seat0, seed=s).status_code for s in "12"] == [202, 202]
    assert ask(client, game["id"], seat0, seed="3").status_code == 429
    # Whatever seat 0 runs, seat 1 gets what it would get in a game where nobody analyses.
    assert [ask(client, game["id"], seat1, seed=s).status_code for s in "12"] == [202, 202]
    refused = ask(client, game["id"], seat1, seed="3")
    assert refused.status_code == 429 and "Seat 1 of this game" in refused.json["detail"]
    gate.opened.set()
    settle(services)


def test_the_cli_and_the_api_give_the_same_figures_for_the_same_request(
    client: FlaskClient, services: Services, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from service.cli import main

    game = new_game(client)
    token = game["seats"][0]["token"]
    response = ask(client, game["id"], token, playouts=30, seed="same")
    settle(services)
    over_http = read(client, response.headers["Location"], token).json["result"]
    log = client.get(f"/games/{game['id']}/export", headers=bearer(ADMIN_KEY))
    assert log.status_code == 200
    path = tmp_path / "game.jsonl"
    path.write_bytes(log.data)
    at = str(response.json["at"])
    argv = ["analyze", str(path), "--at", at, "--seat", "0", "--playouts", "30", "--seed", "same"]
    assert main([*argv, "--json"]) == 0
    on_the_command_line = json.loads(capsys.readouterr().out)
    assert on_the_command_line == over_http
    assert main([*argv[:-2], "--seed", "other", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) != over_http, "the seed counts"
