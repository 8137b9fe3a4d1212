"""Answers go gzipped to clients that accept it (issue 32): the web app's files and JSON;
never a stream, a small body, or to a client that does not ask."""

from __future__ import annotations

import gzip
import json

import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.app import create_app
from service.bootstrap import Services
from tests.api.conftest import new_game

GZIP = {"Accept-Encoding": "gzip, deflate, br"}


@pytest.fixture
def app(services: Services) -> Flask:
    return create_app(services=services)


def test_the_web_apps_script_goes_gzipped_to_a_browser_that_accepts_it(client: FlaskClient) -> None:
    plain = client.get("/static/app/game.js")
    packed = client.get("/static/app/game.js", headers=GZIP)
    assert plain.status_code == packed.status_code == 200
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.data) == plain.data
    assert len(packed.data) < len(plain.data) / 2
    plain.close()
    packed.close()


def test_a_json_answer_goes_gzipped_and_reads_the_same(client: FlaskClient) -> None:
    game = new_game(client)
    packed = client.get(f"/games/{game['id']}/timeline", headers=GZIP)
    plain = client.get(f"/games/{game['id']}/timeline")
    assert packed.headers.get("Content-Encoding") == "gzip" or len(plain.data) < 500
    body = gzip.decompress(packed.data) if "Content-Encoding" in packed.headers else packed.data
    assert json.loads(body) == plain.json
    rulesets = client.get("/rulesets", headers=GZIP)
    assert rulesets.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(rulesets.data)) == client.get("/rulesets").json


def test_no_gzip_for_a_client_that_refuses_it(client: FlaskClient) -> None:
    answer = client.get("/rulesets", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert "Content-Encoding" not in answer.headers


def test_a_live_stream_is_never_gzipped(client: FlaskClient) -> None:
    game = new_game(client)
    answer = client.get(f"/games/{game['id']}/stream?after=0", headers=GZIP, buffered=False)
    assert answer.status_code == 200
    assert "Content-Encoding" not in answer.headers
    answer.close()
