"""Configuration from MEEPLE_* variables, and the meeple command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from service.bootstrap import game_index_url
from service.cli import build_parser, main, served_url
from service.config import ConfigError, load_config

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_the_defaults_need_nothing_but_a_working_directory() -> None:
    config = load_config({})
    assert config.store_url == "sqlite:///var/meeple.db"
    assert config.redis_url is None
    assert config.admin_key is None
    assert config.snapshot_interval == 100


def test_meeple_variables_configure_the_service_and_empty_ones_count_as_unset() -> None:
    config = load_config(
        {
            "MEEPLE_STORE_URL": "redis://db:6379/0",
            "MEEPLE_REDIS_URL": "redis://queue:6379/1",
            "MEEPLE_ADMIN_KEY": "k",
            "MEEPLE_SNAPSHOT_INTERVAL": "50",
            "MEEPLE_MAX_BODY_BYTES": "",
        }
    )
    assert config.store_url == "redis://db:6379/0"
    assert config.redis_url == "redis://queue:6379/1"
    assert config.admin_key == "k"
    assert config.snapshot_interval == 50
    assert config.max_body_bytes == 64 * 1024


def test_overrides_win_and_nonsense_is_refused_by_name() -> None:
    assert load_config({"MEEPLE_ADMIN_KEY": "a"}, admin_key="b").admin_key == "b"
    with pytest.raises(ConfigError, match="MEEPLE_SNAPSHOT_INTERVAL"):
        load_config({"MEEPLE_SNAPSHOT_INTERVAL": "often"})
    with pytest.raises(ConfigError, match="MEEPLE_SNAPSHOT_INTERVAL"):
        load_config({}, snapshot_interval=0)
    with pytest.raises(ConfigError, match="colour"):
        load_config({}, colour="red")


def test_the_game_index_lives_beside_the_event_store() -> None:
    assert game_index_url(load_config({})) == "sqlite:///var/meeple.index.db"
    absolute = load_config({}, store_url="sqlite:////srv/data/events.db")
    assert game_index_url(absolute) == "sqlite:////srv/data/events.index.db"
    on_redis = load_config({}, store_url="redis://db:6379/0")
    assert game_index_url(on_redis) == "redis://db:6379/0"


def test_meeple_openapi_prints_the_committed_openapi_yaml(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["openapi"]) == 0
    assert capsys.readouterr().out == OPENAPI_FILE.read_text()


def test_meeple_serve_defaults_to_loopback_port_8000() -> None:
    args = build_parser().parse_args(["serve"])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    args = build_parser().parse_args(["serve", "--host", "0.0.0.0", "--port", "9000"])
    assert (args.host, args.port) == ("0.0.0.0", 9000)


@pytest.mark.parametrize(
    "port", ["0", "65536", "-1", "80a", "\uff18\uff10\uff18\uff10", "\u0668\u0660", " 80", ""]
)
def test_meeple_serve_refuses_a_port_that_is_not_one(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        build_parser().parse_args(["serve", "--port", port])
    assert refused.value.code == 2
    assert "a port is a number from 1 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("host", "port", "url"),
    [
        ("127.0.0.1", 8000, "http://127.0.0.1:8000"),
        ("0.0.0.0", 8080, "http://127.0.0.1:8080"),
        ("::", 9000, "http://[::1]:9000"),
        ("::1", 9000, "http://[::1]:9000"),
        ("games.local", 80, "http://games.local:80"),
    ],
)
def test_the_served_address_is_the_one_a_client_on_this_machine_reaches(
    host: str, port: int, url: str
) -> None:
    assert served_url(host, port) == url


def test_make_run_serves_where_host_and_port_say() -> None:
    """``make run PORT=8123 HOST=0.0.0.0`` (README): the Makefile hands both to ``meeple serve``."""
    root = Path(__file__).resolve().parents[2]
    printed = subprocess.run(
        ["make", "--dry-run", "--always-make", "run", "PORT=8123", "HOST=0.0.0.0",
         f"VENV={sys.prefix}"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert f"{sys.prefix}/bin/meeple serve --host 0.0.0.0 --port 8123" in printed.splitlines()
    defaults = subprocess.run(
        ["make", "--dry-run", "--always-make", "run", f"VENV={sys.prefix}"],
        cwd=root, capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"},
    ).stdout  # fmt: skip
    assert f"{sys.prefix}/bin/meeple serve --host 127.0.0.1 --port 8000" in defaults.splitlines()


def test_meeple_has_the_worker_and_the_log_commands() -> None:
    parser = build_parser()
    for argv in (["worker"], ["verify", "game.jsonl"], ["replay", "game.jsonl"]):
        assert callable(parser.parse_args(argv).handler)
