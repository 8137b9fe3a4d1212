"""Rate limits against a real ``meeple serve``: anonymous creation and branching per client
address, actions, undo/redo and branches per token. A client over its limit gets 429
``rate_limited`` with ``Retry-After`` and the RateLimit headers; other clients go on.

The limits are set low here (``MEEPLE_RATE_LIMIT_*``, per hour so that no window ends during
a test) so a few requests reach them; the defaults are in docs/operations.md. Another address
is 127.0.0.2: the whole of 127/8 is loopback, so a client can speak from it to a server bound
to 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from service.application.auth import token_hash
from service.config import ConfigError, load_config
from service.http.limits import RULES, token_key
from tests.redis_servers import RedisServer
from tests.security.conftest import MEEPLE, Answer, LiveServer, _answer

OTHER_ADDRESS = "127.0.0.2"
ADMIN_KEY = "security-test-admin-key"


def call_from(
    address: str, server: LiveServer, method: str, path: str, body: Any = None, **headers: str
) -> Answer:
    """One request from ``address`` (a loopback address of this machine)."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", server.port, timeout=30, source_address=(address, 0)
    )
    try:
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=data, headers=headers)
        response = connection.getresponse()
        return _answer(response.status, dict(response.getheaders()), response.read())
    finally:
        connection.close()


def new_game_body() -> dict[str, Any]:
    return {"ruleset": "gutenberg", "players": ["Ann", "Bob"]}


def assert_rate_limited(answer: Answer, limit: int) -> None:
    """A 429 problem that says when to come back and what the limit is."""
    assert answer.status == 429, answer
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.code == "rate_limited"
    assert 1 <= int(answer.headers["retry-after"]) <= 3600
    assert answer.headers["x-ratelimit-limit"] == str(limit)
    assert answer.headers["x-ratelimit-remaining"] == "0"
    assert int(answer.headers["x-ratelimit-reset"]) > 0
    assert "retry" in answer.body["detail"].lower()


def test_anonymous_creation_is_limited_per_address(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_GAMES="3/hour", MEEPLE_ADMIN_KEY=ADMIN_KEY)
    for remaining in (2, 1, 0):
        answer = server.call("POST", "/games", new_game_body())
        assert answer.status == 201, answer
        assert answer.headers["x-ratelimit-limit"] == "3"
        assert answer.headers["x-ratelimit-remaining"] == str(remaining)
    assert_rate_limited(server.call("POST", "/games", new_game_body()), 3)
    # Without a trusted proxy, X-Forwarded-For is the client's own say-so: it changes nothing.
    forged = server.call(
        "POST", "/games", new_game_body(), headers={"X-Forwarded-For": "203.0.113.9"}
    )
    assert_rate_limited(forged, 3)
    # Another address has its own count; reading is never limited, nor is the admin key.
    assert call_from(OTHER_ADDRESS, server, "POST", "/games", new_game_body()).status == 201
    assert server.call("GET", "/games").status == 200
    admin = server.call("POST", "/games", new_game_body(), token=ADMIN_KEY)
    assert admin.status == 201 and "x-ratelimit-limit" not in admin.headers


def test_behind_a_trusted_proxy_each_client_has_its_own_count(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_GAMES="2/hour", MEEPLE_TRUSTED_PROXIES="1")
    ann = {"X-Forwarded-For": "203.0.113.1"}
    for _ in range(2):
        assert server.call("POST", "/games", new_game_body(), headers=ann).status == 201
    assert_rate_limited(server.call("POST", "/games", new_game_body(), headers=ann), 2)
    # The proxy appends the address it saw: what the client wrote before it is ignored.
    spoofing = {"X-Forwarded-For": "198.51.100.7, 203.0.113.1"}
    assert_rate_limited(server.call("POST", "/games", new_game_body(), headers=spoofing), 2)
    bob = {"X-Forwarded-For": "203.0.113.2"}
    assert server.call("POST", "/games", new_game_body(), headers=bob).status == 201


def test_games_with_open_or_bot_seats_have_a_stricter_limit_per_address(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_LOBBY_GAMES="2/hour", MEEPLE_RATE_LIMIT_GAMES="10/hour")
    lobby = {"ruleset": "gutenberg", "players": ["Ann", {"open": True}]}
    bots = {"ruleset": "gutenberg", "players": ["Ann", {"bot": {"agent": "random"}}]}
    assert server.call("POST", "/games", lobby).status == 201
    assert server.call("POST", "/games", bots).status == 201
    assert_rate_limited(server.call("POST", "/games", lobby), 2)
    assert_rate_limited(server.call("POST", "/games", bots), 2)
    # Games of named players only are counted by the games' limit alone.
    assert server.call("POST", "/games", new_game_body()).status == 201


def test_joining_and_the_other_seat_requests_are_limited_per_address(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_SEATS="2/hour")
    seats = [{"open": True}, {"open": True}, {"open": True}]
    game = server.call("POST", "/games", {"ruleset": "restoration", "players": seats}).body["id"]
    assert server.call("POST", f"/games/{game}/seats/0/join", {"name": "Ann"}).status == 201
    assert server.call("POST", f"/games/{game}/seats/1/join", {"name": "Bob"}).status == 201
    assert_rate_limited(server.call("POST", f"/games/{game}/seats/2/join", {"name": "Cy"}), 2)
    path = f"/games/{game}/seats/2/join"
    assert call_from(OTHER_ADDRESS, server, "POST", path, {"name": "Cy"}).status == 201


def test_anonymous_history_reads_are_limited_per_address_together(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_HISTORY_READS="3/hour")
    game = server.call("POST", "/games", {"ruleset": "gutenberg", "players": ["A", "B"]}).body
    paths = [f"/games/{game['id']}/{part}" for part in ("events", "timeline", "audit")]
    for path in paths:
        assert server.call("GET", path).status == 200
    # The three share one count: the export (and any of them again) is over it.
    assert_rate_limited(server.call("GET", f"/games/{game['id']}/export"), 3)
    assert_rate_limited(server.call("GET", paths[0]), 3)
    # The game itself and its state are not history reads; a seat's reads are not counted;
    # another address has its own count.
    assert server.call("GET", f"/games/{game['id']}/state").status == 200
    token = game["seats"][0]["token"]
    assert server.call("GET", paths[0], token=token).status == 200
    assert call_from(OTHER_ADDRESS, server, "GET", paths[2]).status == 200


def finished_game(directory: Path) -> str:
    """A finished game in the store a server in ``directory`` opens (the embedded default)."""
    log = directory / "finished.jsonl"
    subprocess.run(
        [str(MEEPLE), "simulate", "gutenberg", "--players", "2", "--seed", "s", "--out", str(log)],
        check=True,
        capture_output=True,
    )
    store = f"sqlite:///{directory}/var/meeple.db"
    subprocess.run([str(MEEPLE), "import", str(log), "--store", store], check=True)
    return str(json.loads(log.read_text().splitlines()[0])["game_id"])


def test_anonymous_branching_is_limited_per_address(
    live_server: Callable[..., LiveServer], tmp_path: Path
) -> None:
    game_id = finished_game(tmp_path)
    server = live_server(MEEPLE_RATE_LIMIT_BRANCHES="2/hour")
    path = f"/games/{game_id}/branches"
    for _ in range(2):
        assert server.call("POST", path, {"at": 10}).status == 201
    assert_rate_limited(server.call("POST", path, {"at": 10}), 2)
    assert len(server.call("GET", path).body["branches"]) == 2
    assert call_from(OTHER_ADDRESS, server, "POST", path, {"at": 10}).status == 201


def test_branching_with_a_token_is_limited_per_token(
    live_server: Callable[..., LiveServer],
) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_TOKEN_BRANCHES="1/hour")
    game = server.create_game()
    path = f"/games/{game['id']}/branches"
    ann, bob = (seat["token"] for seat in game["seats"])
    assert server.call("POST", path, {"at": 1}, token=ann).status == 201
    assert_rate_limited(server.call("POST", path, {"at": 1}, token=ann), 1)
    assert server.call("POST", path, {"at": 1}, token=bob).status == 201


def first_legal_action(server: LiveServer, game_id: str, token: str) -> dict[str, Any]:
    answer = server.call("GET", f"/games/{game_id}/legal-actions", token=token)
    assert answer.status == 200, answer
    actions: list[dict[str, Any]] = answer.body["actions"]
    return actions[0]


def test_actions_are_limited_per_token(live_server: Callable[..., LiveServer]) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_ACTIONS="2/hour")
    game = server.create_game()
    game_id, tokens = game["id"], [seat["token"] for seat in game["seats"]]
    path = f"/games/{game_id}/actions"
    to_act = server.call("GET", f"/games/{game_id}").body["status"]["to_act"]
    mover, other = (tokens[to_act[0]], tokens[1 - to_act[0]])
    action = first_legal_action(server, game_id, mover)
    # Every request counts, whatever the rules say of it.
    assert server.call("POST", path, {"type": "no such action"}, token=mover).status == 422
    assert server.call("POST", path, action, token=mover).status == 201
    version = server.call("GET", f"/games/{game_id}").body["version"]
    assert_rate_limited(server.call("POST", path, action, token=mover), 2)
    # The count is the token's, from any address; another token has its own.
    answer = call_from(OTHER_ADDRESS, server, "POST", path, action, Authorization=f"Bearer {mover}")
    assert answer.status == 429
    assert server.call("POST", path, action, token=other).status != 429
    assert server.call("GET", f"/games/{game_id}").body["version"] >= version


def test_undo_and_redo_share_a_limit_per_token(live_server: Callable[..., LiveServer]) -> None:
    server = live_server(MEEPLE_RATE_LIMIT_UNDO="2/hour")
    game = server.create_game()
    ann, bob = (seat["token"] for seat in game["seats"])
    undo, redo = f"/games/{game['id']}/undo", f"/games/{game['id']}/redo"
    assert server.call("POST", undo, token=ann).status == 422  # nothing to undo yet
    assert server.call("POST", redo, token=ann).status == 422
    assert_rate_limited(server.call("POST", undo, token=ann), 2)
    assert server.call("POST", undo, token=bob).status == 422
    # Actions have a count of their own.
    action = server.call("POST", f"/games/{game['id']}/actions", {"type": "x"}, token=ann)
    assert action.status == 422


def test_limits_can_be_switched_off(live_server: Callable[..., LiveServer]) -> None:
    server = live_server(MEEPLE_RATE_LIMITS="off", MEEPLE_RATE_LIMIT_GAMES="1/hour")
    for _ in range(3):
        answer = server.call("POST", "/games", new_game_body())
        assert answer.status == 201
        assert "x-ratelimit-limit" not in answer.headers


def test_servers_sharing_a_redis_share_one_count_kept_under_token_hashes(
    live_server: Callable[..., LiveServer],
    make_redis_server: Callable[..., RedisServer],
    tmp_path: Path,
) -> None:
    redis_server = make_redis_server(tmp_path / "redis")
    base = redis_server.url.rsplit("/", 1)[0]
    settings = {
        "MEEPLE_STORE_URL": f"{base}/0",
        "MEEPLE_REDIS_URL": f"{base}/1",
        "MEEPLE_RATE_LIMIT_GAMES": "3/hour",
        "MEEPLE_RATE_LIMIT_ACTIONS": "1/hour",
    }
    first, second = live_server(**settings), live_server(**settings)
    game = first.create_game()
    second.create_game()
    assert first.call("POST", "/games", new_game_body()).status == 201
    assert_rate_limited(second.call("POST", "/games", new_game_body()), 3)
    assert_rate_limited(first.call("POST", "/games", new_game_body()), 3)

    token = game["seats"][0]["token"]
    path = f"/games/{game['id']}/actions"
    assert first.call("POST", path, {"type": "x"}, token=token).status == 422
    assert_rate_limited(second.call("POST", path, {"type": "x"}, token=token), 1)
    with redis.Redis.from_url(f"{base}/1", decode_responses=True) as client:
        keys = [key for key in client.scan_iter(count=1000) if "rate" in key.lower()]
    assert keys, "the limits are kept in Redis"
    assert not any(token in key or token_hash(token) in key for key in keys)
    assert any(token_key(token) in key for key in keys), keys


def test_limit_settings_are_checked_at_start() -> None:
    config = load_config({"MEEPLE_RATE_LIMIT_ACTIONS": "5/second;100/minute"})
    assert config.rate_limit_actions == "5/second;100/minute" and config.rate_limits
    assert not load_config({"MEEPLE_RATE_LIMITS": "off"}).rate_limits
    for env in (
        {"MEEPLE_RATE_LIMIT_GAMES": "lots"},
        {"MEEPLE_RATE_LIMIT_UNDO": "5 per fortnight"},
        {"MEEPLE_RATE_LIMITS": "sometimes"},
        {"MEEPLE_TRUSTED_PROXIES": "-1"},
        {"MEEPLE_MAX_JSON_DEPTH": "1"},
    ):
        with pytest.raises(ConfigError):
            load_config(env)


def test_the_documented_defaults_are_the_defaults() -> None:
    root = Path(__file__).resolve().parents[2]
    operations = (root / "docs" / "operations.md").read_text()
    compose = (root / "compose.yaml").read_text()
    defaults = load_config({})
    for setting in [rule.setting for rule in RULES] + ["rate_limit_invalid_tokens"]:
        variable = f"MEEPLE_{setting.upper()}"
        value = getattr(defaults, setting)
        assert f"| `{variable}` | `{value}` |" in operations, variable
        assert f"{variable}: ${{{variable}:-{value}}}" in compose, variable
