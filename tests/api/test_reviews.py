"""``/games/{id}/reviews`` through the Flask client, jobs in-process (docs/analysis.md, Game
review): every decision of the seat judged, a weak seat marked more than a strong one, and a
live game's review blind to what the seat could not see."""

from __future__ import annotations

import json
from typing import Any

from flask.testing import FlaskClient

from projections.ruleset import get_ruleset
from service.bootstrap import Services
from tests.api.conftest import ADMIN_KEY, bearer, settle

#: Small budgets: a test review takes seconds.
BUDGET = {"playouts": 30, "evaluations": 8}


def review(client: FlaskClient, game_id: str, services: Services, token: str | None = None,
           **body: Any) -> dict[str, Any]:  # fmt: skip
    headers = bearer(token) if token else {}
    asked = client.post(f"/games/{game_id}/reviews", json={**BUDGET, **body}, headers=headers)
    assert asked.status_code in (200, 202), asked.json
    settle(services)
    done = client.get(asked.headers["Location"], headers=headers)
    assert done.status_code == 200 and done.json["status"] == "done", done.json
    return dict(done.json)


def bot_game(client: FlaskClient, services: Services, seed: str) -> dict[str, Any]:
    """A finished game of Tally: a random bot at seat 0, an MCTS bot at seat 1."""
    players = [{"bot": {"agent": "random"}}, {"bot": {"agent": "mcts", "playouts": 60}}]
    body = {"ruleset": "tally", "players": players, "seed": seed, "options": {"rounds": 6}}
    created = client.post("/games", json=body, headers=bearer(ADMIN_KEY))
    assert created.status_code == 201, created.json
    game_id = created.json["id"]
    for _ in range(200):
        if client.get(f"/games/{game_id}").json["status"]["finished"]:
            return dict(created.json)
        settle(services)
    raise AssertionError("the bots never finished")


def seat_actions(client: FlaskClient, game_id: str, seat: int) -> list[int]:
    events = client.get(f"/games/{game_id}/events?limit=500").json["events"]
    return [e["seq"] for e in events if e["type"] == "action" and e["actor"].get("seat") == seat]


def test_a_finished_games_review_covers_every_decision_of_the_seat(
    client: FlaskClient, services: Services
) -> None:
    game = bot_game(client, services, "review-1")
    done = review(client, game["id"], services, seat=1)  # no token: the game is over
    result = done["result"]
    assert result["complete"] and result["seat"] == 1
    assert [m["seq"] for m in result["moves"]] == seat_actions(client, game["id"], 1)
    for move in result["moves"]:
        assert move["played"]["type"] in ("bid", "play", "draw", "pass")
        assert move["best"]["type"] in ("bid", "play", "draw", "pass")
        assert move["played_summary"] and move["best_summary"]
        for worth in (move["before"], move["after"]):
            assert 0 <= worth["win"] <= 1 and isinstance(worth["margin"], float)
        assert move["loss"] >= 0 and move["mark"] in (None, "inaccuracy", "mistake", "blunder")
        assert 0 <= move["accuracy"] <= 100
    version = client.get(f"/games/{game['id']}").json["version"]
    seqs = [point["seq"] for point in result["evaluations"]]
    assert seqs == list(range(1, version + 1)), "an evaluation after every event"
    assert result["evaluations"][-1]["proven"], "the final result is no estimate"
    assert 0 <= result["accuracy"] <= 100
    assert set(result["marks"]) == {"inaccuracy", "mistake", "blunder"}
    # Computed once: asking again (anyone) gets the same review at once.
    again = client.post(f"/games/{game['id']}/reviews", json={**BUDGET, "seat": 1})
    assert again.status_code == 200 and again.json["id"] == done["id"]


def test_a_random_seat_is_marked_more_than_an_mcts_seat_of_the_same_game(
    client: FlaskClient, services: Services
) -> None:
    game = bot_game(client, services, "review-2")
    weak = review(client, game["id"], services, seat=0)["result"]
    strong = review(client, game["id"], services, seat=1)["result"]

    def bad(result: dict[str, Any]) -> int:
        return int(result["marks"]["mistake"] + result["marks"]["blunder"])

    assert bad(weak) > bad(strong), (weak["marks"], strong["marks"])
    assert weak["accuracy"] < strong["accuracy"]


def twin_games(client: FlaskClient, services: Services) -> tuple[dict[str, Any], ...]:
    """Two Tally games (seeds chosen with the admin key) where seat 0 holds the same hand
    but seat 1's hand and the deck differ."""
    tally = get_ruleset("tally")
    by_view: dict[str, tuple[dict[str, Any], Any]] = {}
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
            return by_view[view][0], game
        by_view[view] = (game, state)
    raise AssertionError("no two deals gave seat 0 the same hand")


def act(client: FlaskClient, services: Services, game: dict[str, Any], seat: int,
        action: dict[str, Any]) -> None:  # fmt: skip
    headers = bearer(game["seats"][seat]["token"])
    posted = client.post(f"/games/{game['id']}/actions", json=action, headers=headers)
    assert posted.status_code == 201, posted.json
    settle(services)


def test_a_live_review_redrawn_with_different_hidden_information_gives_identical_marks(
    client: FlaskClient, services: Services
) -> None:
    twins = twin_games(client, services)
    hand = services.folder.load(twins[0]["id"]).state["hands"][0]
    # The same public moves in both: seat 0 plays its (same) cards, seat 1 draws unseen ones.
    for game in twins:
        act(client, services, game, 0, {"type": "bid", "amount": 2})
        act(client, services, game, 1, {"type": "bid", "amount": 5})
        act(client, services, game, 0, {"type": "play", "card": hand[0]})
        act(client, services, game, 1, {"type": "draw"})
        act(client, services, game, 0, {"type": "play", "card": hand[1]})
    states = [services.folder.load(game["id"]).state for game in twins]
    assert states[0]["hands"][1] != states[1]["hands"][1] or states[0]["deck"] != states[1]["deck"]
    reviews = [review(client, g["id"], services, g["seats"][0]["token"])["result"] for g in twins]
    assert [m["seq"] for m in reviews[0]["moves"]] == [m["seq"] for m in reviews[1]["moves"]]
    assert len(reviews[0]["moves"]) == 3
    assert [m["mark"] for m in reviews[0]["moves"]] == [m["mark"] for m in reviews[1]["moves"]]
    assert reviews[0] == reviews[1], "every figure the same: nothing unseen reached the review"
    # While the game is played the review is seat 0's secret.
    other = client.post(
        f"/games/{twins[0]['id']}/reviews",
        json={"seat": 0},
        headers=bearer(twins[0]["seats"][1]["token"]),
    )
    assert (other.status_code, other.json["code"]) == (403, "not_your_seat")
    assert client.post(f"/games/{twins[0]['id']}/reviews", json={"seat": 0}).status_code == 401


def test_a_sealed_branch_of_a_live_game_is_reviewed_by_the_admin_alone(
    client: FlaskClient, services: Services
) -> None:
    from tests.api.test_history import branch, seat, to_turns

    game = to_turns(client, services)
    made = branch(client, game, seat(game, 0), at=4).json
    # The branch's holder holds every seat, but its first events keep Bob's secrets.
    refused = client.post(
        f"/games/{made['id']}/reviews", json={**BUDGET, "seat": 1}, headers=bearer(made["token"])
    )
    assert (refused.status_code, refused.json["code"]) == (403, "sealed_history")
    done = review(client, made["id"], services, ADMIN_KEY, seat=1)
    assert done["result"]["complete"]
