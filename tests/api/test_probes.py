"""GET /metrics and GET /ready, the request id and the JSON lines, through the Flask client on
the embedded default (docs/operations.md, "Metrics", "Logs", "Probes"). The whole deployment
(gunicorn, an RQ worker, one metrics directory) is tests/e2e/test_observing_rq.py."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from service.bootstrap import Services, bootstrap
from service.config import ConfigError, load_config
from service.monitoring.logs import JsonFormatter
from tests.api.conftest import bearer, new_game, settle

OUTSIDE = {"REMOTE_ADDR": "203.0.113.9"}


def samples(client: FlaskClient) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.content_type == "text/plain; version=0.0.4; charset=utf-8"
    found = {}
    for family in text_string_to_metric_families(response.get_data(as_text=True)):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def play(
    client: FlaskClient, services: Services, game: dict[str, Any], headers: dict[str, str]
) -> Any:
    """The seat to act posts its first legal action; the answer."""
    settle(services)
    status = client.get(f"/games/{game['id']}").json["status"]
    token = game["seats"][status["to_act"][0]]["token"]
    legal = client.get(f"/games/{game['id']}/legal-actions", headers=bearer(token)).json
    answer = client.post(
        f"/games/{game['id']}/actions",
        json=legal["actions"][0],
        headers={**bearer(token), **headers},
    )
    assert answer.status_code == 201, answer.json
    return answer


def test_metrics_count_an_action_by_its_ruleset_and_its_request_by_route_template(
    client: FlaskClient, services: Services
) -> None:
    game = new_game(client)
    before = samples(client)
    play(client, services, game, {})
    settle(services)
    after = samples(client)
    actions = "meeple_actions_appended_total"
    assert value(after, actions, ruleset="tally") == value(before, actions, ruleset="tally") + 1
    requests = "meeple_http_requests_total"
    labels = {"method": "POST", "route": "/games/<game_id>/actions", "status": "201"}
    assert value(after, requests, **labels) == value(before, requests, **labels) + 1
    assert not any(game["id"] in label for (_, has) in after for _, label in has)
    depth = {
        labels: count for (name, labels), count in after.items() if name == "meeple_queue_depth"
    }
    assert {dict(labels)["queue"] for labels in depth} == {"steps", "notifications", "bots",
                                                            "analyses"}  # fmt: skip


def test_metrics_are_refused_to_an_address_outside_loopback_and_the_allowed_networks(
    client: FlaskClient,
) -> None:
    refused = client.get("/metrics", environ_base=OUTSIDE)
    assert refused.status_code == 403
    assert refused.content_type == "application/problem+json"
    assert refused.json["code"] == "metrics_forbidden"
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200


def test_an_allowed_network_may_read_the_metrics(tmp_path: Path) -> None:
    config = load_config(
        {"MEEPLE_METRICS_ALLOW": "10.0.0.0/8, 203.0.113.0/24"},
        store_url=f"sqlite:///{tmp_path}/meeple.db",
    )
    services = bootstrap(config)
    try:
        client = create_app(services=services).test_client()
        assert client.get("/metrics", environ_base=OUTSIDE).status_code == 200
        assert client.get("/metrics", environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200
        elsewhere = client.get("/metrics", environ_base={"REMOTE_ADDR": "198.51.100.1"})
        assert elsewhere.status_code == 403
    finally:
        services.close()


def test_behind_a_trusted_proxy_the_forwarded_client_address_decides(tmp_path: Path) -> None:
    config = load_config(
        {"MEEPLE_TRUSTED_PROXIES": "1"}, store_url=f"sqlite:///{tmp_path}/meeple.db"
    )
    services = bootstrap(config)
    try:
        client = create_app(services=services).test_client()
        # The proxy runs on this machine; the client it forwards for does not.
        forwarded = client.get("/metrics", headers={"X-Forwarded-For": "203.0.113.9"})
        assert forwarded.status_code == 403
        assert forwarded.json["code"] == "metrics_forbidden"
        assert client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 200
    finally:
        services.close()


def test_without_trusted_proxies_a_forwarded_address_is_the_clients_own_claim(
    client: FlaskClient,
) -> None:
    claimed = client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}, environ_base=OUTSIDE)
    assert claimed.status_code == 403


def test_a_malformed_metrics_allow_list_stops_the_service_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEEPLE_METRICS_ALLOW"):
        load_config({"MEEPLE_METRICS_ALLOW": "10.0.0.0/8, intranet"})
    with pytest.raises(ConfigError, match="MEEPLE_LOG_FORMAT"):
        load_config({"MEEPLE_LOG_FORMAT": "xml"})


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("3f2b9c1e-7d4a-4c5e-9a1b-2c3d4e5f6a7b", True),
        ("Root=1-67891233-abcdef012345678912345678", False),  # "=" is not kept
        ("a" * 128, True),
        ("a" * 129, False),
        ("two words", False),
        ('"quoted";x=1', False),
        ("tab\there", False),
        ("", False),
    ],
)
def test_a_valid_request_id_comes_back_and_any_other_is_replaced(
    client: FlaskClient, sent: str, kept: bool
) -> None:
    answer = client.get("/health", headers={"X-Request-ID": sent} if sent else {})
    returned = answer.headers["X-Request-ID"]
    assert (returned == sent) is kept
    assert 1 <= len(returned) <= 128 and returned.replace("-", "").isalnum()


def test_ready_answers_200_while_the_store_and_queues_answer_and_503_when_one_does_not(
    client: FlaskClient, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = client.get("/ready")
    assert ready.status_code == 200
    assert ready.json == {"status": "ready", "checks": {"store": True, "queues": True}}
    monkeypatch.setattr(services.store, "ping", lambda: False)
    down = client.get("/ready")
    assert down.status_code == 503
    assert down.content_type == "application/problem+json"
    assert down.json["code"] == "not_ready"
    assert down.json["checks"] == {"store": False, "queues": True}


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The JSON lines the requests' and jobs' loggers write meanwhile."""
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(JsonFormatter())
    loggers = [logging.getLogger(name) for name in ("meeple.request", "meeple.job")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    yield written
    for logger, level in zip(loggers, levels, strict=True):
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_json_lines_carry_the_request_id_into_the_step_the_request_made_due(
    tmp_path: Path, json_lines: io.StringIO
) -> None:
    config = load_config(
        {"MEEPLE_LOG_FORMAT": "json"}, store_url=f"sqlite:///{tmp_path}/meeple.db",
        rate_limits=False,
    )  # fmt: skip
    services = bootstrap(config)
    try:
        client = create_app(services=services).test_client()
        game = new_game(client)
        stepped = None
        for number in range(10):
            answer = play(client, services, game, {"X-Request-ID": f"req-{number}"})
            if answer.json["status"].get("awaiting_system"):
                stepped = f"req-{number}"
                break
        assert stepped is not None, "no action made an automatic step due"
        settle(services)
    finally:
        services.close()
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    requests = [line for line in lines if line.get("kind") == "request"]
    mine = next(line for line in requests if line["request_id"] == stepped)
    assert mine["route"] == "/games/<game_id>/actions" and mine["status"] == 201
    assert mine["method"] == "POST" and mine["path"] == f"/games/{game['id']}/actions"
    jobs = [line for line in lines if line.get("kind") == "job"]
    assert {"job": "system_step", "request_id": stepped, "outcome": "ok",
            "game_id": game["id"]}.items() <= next(
        line for line in jobs if line["job"] == "system_step" and line["request_id"] == stepped
    ).items()  # fmt: skip
    text = json_lines.getvalue()
    assert all(seat["token"] not in text for seat in game["seats"])
