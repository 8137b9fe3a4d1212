"""Webhooks through the API: registration and its auth, signed deliveries to a real HTTP
receiver on loopback that fails the first attempts, retries, and what each seat may see."""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask.testing import FlaskClient
from openapi_schema_validator import OAS30Validator

from service.application.webhooks import (
    SIGNATURE_HEADER,
    WEBHOOK_EVENTS,
    receiver_of,
    verify_signature,
)
from service.bootstrap import Services, bootstrap
from service.config import load_config
from service.workers import jobs as jobs_module
from tests.api.conftest import bearer, new_game
from tests.api.test_openapi import OPENAPI_FILE

ADMIN_KEY = "webhook-test-admin-key-0123"
SECRET = "a-secret-of-at-least-16-chars"


@dataclass
class Receiver:
    """An HTTP server on loopback that answers 500 to its first ``failures`` requests."""

    failures: int = 0
    received: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def bodies(self, accepted_only: bool = True) -> list[dict[str, Any]]:
        with self.lock:
            return [
                json.loads(hit["body"])
                for hit in self.received
                if hit["status"] == 200 or not accepted_only
            ]

    def wait_for(self, check: Callable[[list[dict[str, Any]]], bool], patience: float = 30) -> None:
        deadline = time.monotonic() + patience
        while not check(self.bodies()):
            assert time.monotonic() < deadline, f"the receiver got only {self.bodies()}"
            time.sleep(0.02)


@contextlib.contextmanager
def running_receiver() -> Iterator[Receiver]:
    """A Receiver serving on a free loopback port until the block ends."""
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with state.lock:
                status = 500 if len(state.received) < state.failures else 200
                state.received.append(
                    {"headers": dict(self.headers), "body": body, "status": status}
                )
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/meeple"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    config = load_config({}, store_url=f"sqlite:///{tmp_path}/meeple.db", admin_key=ADMIN_KEY)
    built = bootstrap(config)
    # Retries a few hundredths of a second apart, so the test waits little for them; the
    # receivers listen on loopback, which the operator's allow-list must let webhooks reach.
    built.jobs.settings = replace(
        built.jobs.settings,
        webhook_retry_base=0.02,
        sweep_interval=0.02,
        webhook_timeout=5,
        webhook_allow_hosts="127.0.0.1",
    )
    yield built
    built.close()


def register(
    client: FlaskClient, game: dict[str, Any], token: str, url: str, events: list[str] | None = None
) -> Any:
    body: dict[str, Any] = {"url": url, "secret": SECRET}
    if events is not None:
        body["events"] = events
    return client.post(f"/games/{game['id']}/webhooks", json=body, headers=bearer(token))


def act(client: FlaskClient, game: dict[str, Any], seat: int, action: dict[str, Any]) -> Any:
    token = game["seats"][seat]["token"]
    response = client.post(f"/games/{game['id']}/actions", json=action, headers=bearer(token))
    assert response.status_code == 201, response.json
    return response.json


def test_a_seat_registers_a_webhook_and_reads_it_back_without_its_secret(
    client: FlaskClient, receiver: Receiver
) -> None:
    game = new_game(client)
    created = register(client, game, game["seats"][0]["token"], receiver.url, ["your_turn"])
    assert created.status_code == 201
    assert created.json["owner"] == {"seat": 0}
    assert created.json["events"] == ["your_turn"]
    assert "secret" not in created.json
    listed = client.get(f"/games/{game['id']}/webhooks", headers=bearer(game["seats"][0]["token"]))
    assert [hook["id"] for hook in listed.json["webhooks"]] == [created.json["id"]]
    assert SECRET not in listed.get_data(as_text=True)


def test_webhooks_need_a_seat_token_or_the_admin_key(
    client: FlaskClient, receiver: Receiver
) -> None:
    game = new_game(client)
    other = new_game(client)
    body = {"url": receiver.url, "secret": SECRET}
    path = f"/games/{game['id']}/webhooks"
    assert client.post(path, json=body).status_code == 401
    assert client.get(path).status_code == 401
    foreign = bearer(other["seats"][0]["token"])
    assert client.post(path, json=body, headers=foreign).status_code == 401
    malformed = {"Authorization": "Bearer not a token"}
    assert client.post(path, json=body, headers=malformed).status_code == 401
    assert client.post(path, json=body, headers=bearer(ADMIN_KEY)).json["owner"] == {"admin": True}


def test_a_seat_sees_only_its_own_webhooks_and_the_admin_sees_all(
    client: FlaskClient, receiver: Receiver
) -> None:
    game = new_game(client)
    ann, bob = (seat["token"] for seat in game["seats"])
    mine = register(client, game, ann, receiver.url).json["id"]
    theirs = register(client, game, bob, receiver.url).json["id"]
    path = f"/games/{game['id']}/webhooks"
    assert [hook["id"] for hook in client.get(path, headers=bearer(ann)).json["webhooks"]] == [mine]
    listed = client.get(path, headers=bearer(ADMIN_KEY)).json["webhooks"]
    assert [hook["id"] for hook in listed] == [mine, theirs]
    assert client.delete(f"{path}/{theirs}", headers=bearer(ann)).status_code == 404
    assert client.delete(f"{path}/{mine}", headers=bearer(ann)).status_code == 204
    assert client.get(path, headers=bearer(ann)).json["webhooks"] == []


def test_a_webhooks_deliveries_take_the_share_of_the_client_that_registered_it(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game, other = new_game(client), new_game(client)
    body = {"url": receiver.url, "secret": SECRET}
    client_at = {"REMOTE_ADDR": "203.0.113.9"}
    for found, token in ((game, game["seats"][0]["token"]), (other, other["seats"][1]["token"])):
        path = f"/games/{found['id']}/webhooks"
        created = client.post(path, json=body, headers=bearer(token), environ_base=client_at)
        assert created.status_code == 201 and "lane" not in created.json
    client.post(f"/games/{game['id']}/webhooks", json=body, headers=bearer(ADMIN_KEY))
    lanes = [
        hook["lane"]
        for found in (game, other)
        for hook in services.jobs.state.webhooks(found["id"])
    ]
    # One client's webhooks share its lane, in any game for any seat; the admin's are apart.
    assert lanes == ["address:203.0.113.9", "admin", "address:203.0.113.9"]
    listed = client.get(f"/games/{game['id']}/webhooks", headers=bearer(ADMIN_KEY))
    assert "203.0.113.9" not in listed.get_data(as_text=True)  # a seat's address is its own


def test_the_listing_shows_a_paused_receiver_to_its_webhooks_owner_as_openapi_yaml_says(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url)
    path = f"/games/{game['id']}/webhooks"
    assert client.get(path, headers=bearer(ann)).json["webhooks"][0]["pause"] is None
    until = time.time() + 300
    paused = {"failures": 5, "reason": "timeout", "paused_until": until, "probe_until": None}
    services.jobs.state.update_receiver(receiver_of(receiver.url), lambda record: paused)
    listed = client.get(path, headers=bearer(ann)).json
    assert listed["webhooks"][0]["pause"] == {
        "state": "paused",
        "reason": "timeout",
        "failures": 5,
        "until": math.ceil(until),
    }
    spec = yaml.safe_load(OPENAPI_FILE.read_text())
    schema = {"$ref": "#/components/schemas/WebhookList", "components": spec["components"]}
    OAS30Validator(schema).validate(listed)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://127.0.0.1/x", "secret": SECRET}, "url"),
        ({"url": "not a url", "secret": SECRET}, "url"),
        ({"url": "http://user:pw@127.0.0.1/", "secret": SECRET}, "url"),
        ({"url": "http://127.0.0.1/", "secret": "short"}, "secret"),
        ({"url": "http://127.0.0.1/", "secret": SECRET, "events": ["everything"]}, "events"),
        ({"url": "http://127.0.0.1/", "secret": SECRET, "events": []}, "events"),
        ({"secret": SECRET}, "url"),
        ({"url": "http://127.0.0.1/", "secret": SECRET, "colour": "red"}, "colour"),
    ],
)
def test_a_bad_registration_is_refused_naming_the_field(
    client: FlaskClient, body: dict[str, Any], field: str
) -> None:
    game = new_game(client)
    response = client.post(
        f"/games/{game['id']}/webhooks", json=body, headers=bearer(game["seats"][0]["token"])
    )
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert field in response.json["errors"]


def test_malformed_json_is_refused(client: FlaskClient) -> None:
    game = new_game(client)
    response = client.post(
        f"/games/{game['id']}/webhooks",
        data="{not json",
        content_type="application/json",
        headers=bearer(game["seats"][0]["token"]),
    )
    assert response.status_code == 400


def test_deliveries_are_signed_retried_until_accepted_and_every_attempt_is_recorded(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    receiver.failures = 2
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url, ["action"])
    act(client, game, 0, {"type": "bid", "amount": 7})
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    assert services.jobs.wait_idle(30)  # the accepted attempt is recorded
    assert len(receiver.received) == 3
    for hit in receiver.received:
        header = hit["headers"][SIGNATURE_HEADER]
        assert verify_signature(header, SECRET, hit["body"])
        assert not verify_signature(header, "another-secret-entirely", hit["body"])
        assert not verify_signature(header, SECRET, hit["body"] + b" ")
        assert hit["headers"]["Meeple-Event"] == "action"
    delivered = receiver.bodies()[0]
    assert delivered["kind"] == "action"
    assert delivered["event"]["secret"]["action"] == {"type": "bid", "amount": 7}
    listed = client.get(f"/games/{game['id']}/webhooks", headers=bearer(ann)).json
    delivery = listed["webhooks"][0]["deliveries"][0]
    assert delivery["status"] == "delivered"
    assert [attempt["status"] for attempt in delivery["attempts"]] == [500, 500, 200]
    assert {attempt["outcome"] for attempt in delivery["attempts"]} == {"http_status"}


def test_a_delivery_is_given_up_after_the_last_attempt(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    services.jobs.settings = replace(services.jobs.settings, webhook_max_attempts=3)
    receiver.failures = 1000
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url, ["action"])
    act(client, game, 0, {"type": "bid", "amount": 1})
    path = f"/games/{game['id']}/webhooks"
    deadline = time.monotonic() + 30
    while True:
        deliveries = client.get(path, headers=bearer(ann)).json["webhooks"][0]["deliveries"]
        if deliveries and deliveries[0]["status"] != "pending":
            delivery = deliveries[0]
            break
        assert time.monotonic() < deadline, deliveries
        time.sleep(0.02)
    assert delivery["status"] == "failed"
    assert len(delivery["attempts"]) == 3
    assert delivery["next_attempt_at"] is None


def test_a_seats_webhook_sees_only_what_that_seat_may_see_and_its_turn(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game = new_game(client)
    bob = game["seats"][1]["token"]
    register(client, game, bob, receiver.url)
    act(client, game, 0, {"type": "bid", "amount": 9})
    act(client, game, 1, {"type": "bid", "amount": 4})
    # After both bids the reveal is automatic; then it is Ann's turn, not Bob's.
    receiver.wait_for(lambda bodies: any(body["kind"] == "system" for body in bodies))
    assert services.jobs.wait_idle(30)
    bodies = sorted(receiver.bodies(), key=lambda body: (body["seq"], body["kind"]))
    kinds = [(body["seq"], body["kind"]) for body in bodies]
    # Bob is still to bid after Ann's bid: your_turn after it (level-triggered).
    assert kinds == [(2, "action"), (2, "your_turn"), (3, "action"), (4, "system")]
    anns_bid, bobs_bid = bodies[0]["event"], bodies[2]["event"]
    assert anns_bid["redacted"] is True and anns_bid["secret"] is None
    assert bobs_bid["secret"]["action"]["amount"] == 4
    assert all(body["game_id"] == game["id"] for body in bodies)
    # Ann's secret bid reaches Bob's webhook only once revealed, in the public reveal.
    raw = b"".join(hit["body"] for hit in receiver.received)
    assert b'"amount":9' not in raw.split(b'"kind":"system"')[0]


def test_a_seats_webhook_ends_when_the_seat_changes_hands(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    """Bob registers a webhook, leaves, and Cleo takes his seat: nothing of Cleo's (her
    secret bid above all) reaches Bob's address, and his webhook is gone."""
    game = new_game(client)
    bob = game["seats"][1]["token"]
    register(client, game, bob, receiver.url)
    left = client.post(f"/games/{game['id']}/seats/1/leave", headers=bearer(bob))
    assert left.status_code == 200, left.json
    joined = client.post(f"/games/{game['id']}/seats/1/join", json={"name": "Cleo"})
    assert joined.status_code == 201, joined.json
    cleo = joined.json["token"]
    act(client, game, 0, {"type": "bid", "amount": 9})
    bid = {"type": "bid", "amount": 4}
    answer = client.post(f"/games/{game['id']}/actions", json=bid, headers=bearer(cleo))
    assert answer.status_code == 201, answer.json
    assert services.jobs.wait_idle(30)
    assert receiver.received == []
    listed = client.get(f"/games/{game['id']}/webhooks", headers=bearer(ADMIN_KEY))
    assert listed.status_code == 200 and listed.json["webhooks"] == []
    # Cleo registers her own and hears her own turn from then on.
    assert register(client, game, cleo, receiver.url).status_code == 201


def test_your_turn_tells_the_seat_that_became_awaited(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url, ["your_turn"])
    act(client, game, 0, {"type": "bid", "amount": 2})
    act(client, game, 1, {"type": "bid", "amount": 3})
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    notice = receiver.bodies()[0]
    assert notice["kind"] == "your_turn"
    assert notice["seat"] == 0
    assert notice["seq"] == 4  # Ann is awaited once the bids are revealed
    assert notice["status"]["to_act"] == [0]


def test_the_admins_webhook_hears_the_end_of_the_game_with_the_result(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game = new_game(client, options={"rounds": 1, "turns_per_round": 1})
    register(client, game, ADMIN_KEY, receiver.url, ["game_finished"])
    act(client, game, 0, {"type": "bid", "amount": 0})
    act(client, game, 1, {"type": "bid", "amount": 0})
    assert services.jobs.wait_idle(30)
    for seat in (0, 1):
        act(client, game, seat, {"type": "draw"})
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    finished = receiver.bodies()[0]
    assert finished["kind"] == "game_finished"
    assert finished["status"]["finished"] is True
    assert [row["seat"] for row in finished["result"]["scores"]] == [0, 1]


def test_every_delivery_is_what_openapi_yaml_says_a_webhook_receives(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    spec = yaml.safe_load(OPENAPI_FILE.read_text())
    callback = spec["paths"]["/games/{game_id}/webhooks"]["post"]["callbacks"]["delivery"]
    operation = callback["{$request.body#/url}"]["post"]
    body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
    headers = {p["name"]: p["schema"] for p in operation["parameters"] if p["in"] == "header"}
    validator = OAS30Validator({**body_schema, "components": spec["components"]})
    game = new_game(client, options={"rounds": 1, "turns_per_round": 1})
    register(client, game, ADMIN_KEY, receiver.url)
    register(client, game, game["seats"][1]["token"], receiver.url)
    act(client, game, 0, {"type": "bid", "amount": 0})
    act(client, game, 1, {"type": "bid", "amount": 0})
    assert services.jobs.wait_idle(30)
    for seat in (0, 1):
        act(client, game, seat, {"type": "draw"})
    receiver.wait_for(lambda bodies: any(body["kind"] == "game_finished" for body in bodies))
    assert services.jobs.wait_idle(30)
    kinds = set()
    for hit in receiver.received:
        body = json.loads(hit["body"])
        errors = [error.message for error in validator.iter_errors(body)]
        assert errors == [], (body, errors)
        kinds.add(body["kind"])
        for name, schema in headers.items():
            OAS30Validator(schema).validate(hit["headers"][name])
        assert hit["headers"]["Meeple-Event"] == body["kind"]
        assert hit["headers"]["Meeple-Delivery"] == body["delivery_id"]
    assert {"action", "system", "your_turn", "game_finished"} <= kinds
    mapping = body_schema["$ref"].rsplit("/", 1)[-1]
    assert set(spec["components"]["schemas"][mapping]["discriminator"]["mapping"]) == set(
        WEBHOOK_EVENTS
    )


def test_a_delivery_carries_the_game_after_its_event_and_whether_the_seat_must_act(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url, ["action", "system"])
    register(client, game, ADMIN_KEY, receiver.url, ["system"])
    act(client, game, 0, {"type": "bid", "amount": 9})
    act(client, game, 1, {"type": "bid", "amount": 4})
    receiver.wait_for(lambda bodies: sum(body["kind"] == "system" for body in bodies) == 2)
    assert services.jobs.wait_idle(30)
    mine = {body["seq"]: body for body in receiver.bodies() if "you" in body}
    assert mine[2]["status"]["to_act"] == [1]
    assert mine[2]["you"] == {"seat": 0, "must_act": False, "decision": {"types": []}}
    assert mine[3]["status"]["awaiting_system"] == "reveal_bids"
    assert mine[4]["status"]["to_act"] == [0] and mine[4]["you"]["must_act"] is True
    legal = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(ann)).json
    assert mine[4]["you"]["decision"] == legal["decision"]
    admins = [body for body in receiver.bodies() if "you" not in body]
    assert [body["seq"] for body in admins] == [4]  # the admin's: the status, no seat's turn
    assert admins[0]["status"] == mine[4]["status"]


def test_your_turn_is_sent_after_every_event_after_which_the_seat_must_act(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    """Level-triggered: Bob is still awaited after Ann's bid, and is told so again."""
    game = new_game(client)
    register(client, game, game["seats"][1]["token"], receiver.url, ["your_turn"])
    act(client, game, 0, {"type": "bid", "amount": 2})
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    notice = receiver.bodies()[0]
    assert (notice["kind"], notice["seq"], notice["seat"]) == ("your_turn", 2, 1)
    assert notice["you"]["must_act"] is True
    assert [kind["type"] for kind in notice["you"]["decision"]["types"]] == ["bid"]


def test_a_seat_refused_while_a_step_was_pending_hears_its_turn_once_the_step_lands(
    client: FlaskClient, services: Services, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    step = jobs_module.JOB_FUNCTIONS["system_step"]

    def held_step(*args: Any) -> Any:
        assert release.wait(30)
        return step(*args)

    monkeypatch.setitem(jobs_module.JOB_FUNCTIONS, "system_step", held_step)
    game = new_game(client)
    ann = game["seats"][0]["token"]
    register(client, game, ann, receiver.url, ["your_turn"])
    act(client, game, 0, {"type": "bid", "amount": 2})
    act(client, game, 1, {"type": "bid", "amount": 3})
    refused = client.post(
        f"/games/{game['id']}/actions", json={"type": "draw"}, headers=bearer(ann)
    )
    assert refused.status_code == 409 and refused.json["code"] == "awaiting_system_step"
    release.set()
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    assert services.jobs.wait_idle(30)
    notice = receiver.bodies()[0]
    assert (notice["kind"], notice["seq"], notice["seat"]) == ("your_turn", 4, 0)
    assert notice["status"]["awaiting_system"] is None and notice["you"]["must_act"] is True
    assert (
        client.post(
            f"/games/{game['id']}/actions", json={"type": "draw"}, headers=bearer(ann)
        ).status_code
        == 201
    )


def sweep_until(services: Services, done: Callable[[], bool]) -> None:
    """Drive the sweep by hand (as the workers' loop does) until ``done``."""
    deadline = time.monotonic() + 30
    while not done():
        assert time.monotonic() < deadline, "the sweep never got there"
        jobs_module.sweep(services)
        assert services.jobs.wait_idle(30)
        time.sleep(0.01)


def reminders(receiver: Receiver) -> list[dict[str, Any]]:
    return [body for body in receiver.bodies() if "reminder" in body]


def test_a_seat_that_does_not_act_is_reminded_a_bounded_number_of_times(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    services.jobs.settings = replace(
        services.jobs.settings, your_turn_reminder=0.01, your_turn_reminders=3
    )
    game = new_game(client)
    register(client, game, game["seats"][0]["token"], receiver.url, ["your_turn"])
    act(client, game, 0, {"type": "bid", "amount": 2})
    act(client, game, 1, {"type": "bid", "amount": 3})
    receiver.wait_for(lambda bodies: len(bodies) >= 1)  # your_turn after the reveal
    # The notice job stores the reminder after it starts the delivery: let it finish.
    assert services.jobs.wait_idle(30)
    state = services.jobs.state
    sweep_until(services, lambda: state.reminders_due_before(time.time() + 3600) == [])
    sent = reminders(receiver)
    assert [body["reminder"] for body in sent] == [1, 2, 3]
    for body in sent:
        assert (body["kind"], body["seq"], body["seat"]) == ("your_turn", 4, 0)
        assert body["you"]["must_act"] is True and body["status"]["to_act"] == [0]


def test_a_reminder_is_not_sent_once_the_seat_has_acted(
    client: FlaskClient, services: Services, receiver: Receiver
) -> None:
    services.jobs.settings = replace(services.jobs.settings, your_turn_reminder=3600)
    game = new_game(client)
    register(client, game, game["seats"][0]["token"], receiver.url, ["your_turn"])
    act(client, game, 0, {"type": "bid", "amount": 2})
    act(client, game, 1, {"type": "bid", "amount": 3})
    receiver.wait_for(lambda bodies: len(bodies) == 1)
    # The notice job stores the reminder after it starts the delivery: let it finish.
    assert services.jobs.wait_idle(30)
    state = services.jobs.state
    assert [r["version"] for r in state.reminders_due_before(time.time() + 7200)] == [4]
    act(client, game, 0, {"type": "draw"})  # Ann acts: Bob is to act, not Ann
    assert services.jobs.wait_idle(30)
    assert state.reminders_due_before(time.time() + 7200) == []
    jobs_module.sweep(services)
    assert services.jobs.wait_idle(30)
    assert reminders(receiver) == []
