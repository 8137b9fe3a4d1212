"""compose.yaml: valid against (the part it uses of) the Compose Specification's JSON Schema,
and running what the service needs the way docs/operations.md says. Docker is not run."""

from __future__ import annotations

import re
import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from service.config import _ENV_NAMES
from service.monitoring.metrics_dir import ROOT_VARIABLE
from service.workers.jobs import JobSettings

ROOT = Path(__file__).resolve().parents[2]

_STRING_OR_LIST = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
_LIST_OR_DICT = {
    "oneOf": [
        {
            "type": "object",
            "patternProperties": {
                ".+": {"type": ["string", "number", "boolean", "null"]},
            },
            "additionalProperties": False,
        },
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    ]
}

#: The definitions compose.yaml uses, as the Compose Specification's schema states them
#: (github.com/compose-spec/compose-spec, schema/compose-spec.json), with its rule that only
#: known keys and ``x-`` extensions may appear.
COMPOSE_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "properties": {
        "version": {"type": "string"},
        "name": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"},
        "services": {
            "type": "object",
            "patternProperties": {"^[a-zA-Z0-9._-]+$": {"$ref": "#/definitions/service"}},
            "additionalProperties": False,
        },
        "volumes": {
            "type": "object",
            "patternProperties": {
                "^[a-zA-Z0-9._-]+$": {"type": ["object", "null"]},
            },
            "additionalProperties": False,
        },
        "networks": {"type": "object"},
    },
    "required": ["services"],
    "patternProperties": {"^x-": {}},
    "additionalProperties": False,
    "definitions": {
        "service": {
            "type": "object",
            "properties": {
                "image": {"type": "string"},
                "build": {
                    "oneOf": [
                        {"type": "string"},
                        {
                            "type": "object",
                            "properties": {
                                "context": {"type": "string"},
                                "dockerfile": {"type": "string"},
                                "dockerfile_inline": {"type": "string"},
                                "args": _LIST_OR_DICT,
                                "target": {"type": "string"},
                            },
                            "patternProperties": {"^x-": {}},
                            "additionalProperties": False,
                        },
                    ]
                },
                "command": {"oneOf": [{"type": "null"}, *_STRING_OR_LIST["oneOf"]]},
                "entrypoint": {"oneOf": [{"type": "null"}, *_STRING_OR_LIST["oneOf"]]},
                "environment": _LIST_OR_DICT,
                "env_file": _STRING_OR_LIST,
                "ports": {
                    "type": "array",
                    "items": {
                        "oneOf": [{"type": "number"}, {"type": "string"}, {"type": "object"}]
                    },
                },
                "volumes": {
                    "type": "array",
                    "items": {"oneOf": [{"type": "string"}, {"type": "object"}]},
                },
                "depends_on": {
                    "oneOf": [
                        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                        {
                            "type": "object",
                            "additionalProperties": False,
                            "patternProperties": {
                                "^[a-zA-Z0-9._-]+$": {
                                    "type": "object",
                                    "properties": {
                                        "condition": {
                                            "enum": [
                                                "service_started",
                                                "service_healthy",
                                                "service_completed_successfully",
                                            ]
                                        },
                                        "restart": {"type": "boolean"},
                                        "required": {"type": "boolean"},
                                    },
                                    "required": ["condition"],
                                    "additionalProperties": False,
                                }
                            },
                        },
                    ]
                },
                "healthcheck": {
                    "type": "object",
                    "properties": {
                        "disable": {"type": "boolean"},
                        "interval": {"type": "string"},
                        "retries": {"type": "number"},
                        "test": _STRING_OR_LIST,
                        "timeout": {"type": "string"},
                        "start_period": {"type": "string"},
                        "start_interval": {"type": "string"},
                    },
                    "additionalProperties": False,
                },
                "restart": {"type": "string"},
                "deploy": {
                    "type": ["object", "null"],
                    "properties": {
                        "mode": {"type": "string"},
                        "replicas": {"type": "integer"},
                        "resources": {"type": "object"},
                    },
                    "additionalProperties": False,
                },
                "user": {"type": "string"},
                "working_dir": {"type": "string"},
                "stop_grace_period": {"type": "string"},
            },
            "patternProperties": {"^x-": {}},
            "additionalProperties": False,
        }
    },
}

_VARIABLE = re.compile(r"\$\{([A-Z_][A-Z0-9_]*)(?::?-([^}]*))?\}")


def interpolate(value: Any) -> Any:
    """What Compose makes of ``${NAME:-default}`` with nothing set in the environment."""
    if isinstance(value, str):
        return _VARIABLE.sub(lambda match: match.group(2) or "", value)
    if isinstance(value, list):
        return [interpolate(item) for item in value]
    if isinstance(value, dict):
        return {key: interpolate(item) for key, item in value.items()}
    return value


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return dict(interpolate(loaded))


def command_of(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return command.split() if isinstance(command, str) else [str(part) for part in command]


def option(command: list[str], name: str) -> str:
    """The value of ``--name value`` or ``--name=value`` in a command line."""
    for index, part in enumerate(command):
        if part == f"--{name}":
            return command[index + 1]
        if part.startswith(f"--{name}="):
            return part.split("=", 1)[1]
    raise AssertionError(f"--{name} is not set in {command}")


def test_compose_yaml_is_valid_against_the_compose_specification_schema(
    compose: dict[str, Any],
) -> None:
    jsonschema.validate(compose, COMPOSE_SCHEMA)


def test_the_schema_refuses_a_misspelt_service_key(compose: dict[str, Any]) -> None:
    broken = {**compose, "services": {"api": {**compose["services"]["api"], "enviroment": {}}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, COMPOSE_SCHEMA)


def test_it_runs_redis_the_api_and_a_worker(compose: dict[str, Any]) -> None:
    assert {"redis", "api", "worker"} <= set(compose["services"])


def test_redis_fsyncs_every_write_to_its_aof_and_never_evicts(compose: dict[str, Any]) -> None:
    command = command_of(compose["services"]["redis"])
    assert command[0] == "redis-server"
    assert option(command, "appendonly") == "yes"
    assert option(command, "appendfsync") == "always"
    assert option(command, "maxmemory-policy") == "noeviction"
    assert any(volume.endswith(":/data") for volume in compose["services"]["redis"]["volumes"])


def test_the_api_runs_the_app_factory_under_gunicorns_gevent_worker_for_streams(
    compose: dict[str, Any],
) -> None:
    from gunicorn.util import load_class
    from gunicorn.workers.ggevent import GeventWorker

    from service.http.serving import ProblemErrors

    command = command_of(compose["services"]["api"])
    assert command[0] == "gunicorn"
    # The worker class as gunicorn itself loads it: a gevent worker (a stream is a greenlet)
    # answering gunicorn's own refusals as problems (service.http.serving).
    worker_class = load_class(option(command, "worker-class"))
    assert issubclass(worker_class, GeventWorker) and issubclass(worker_class, ProblemErrors)
    assert int(option(command, "worker-connections")) >= 1000
    assert command[-1] == "service.app:create_app()"
    from service.app import create_app

    assert callable(create_app)


def test_the_worker_runs_meeple_worker_which_the_package_installs(
    compose: dict[str, Any],
) -> None:
    command = command_of(compose["services"]["worker"])
    assert command == ["meeple", "worker", "--queue", "steps", "--queue", "notifications"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["meeple"] == "service.cli:main"


def test_a_worker_of_its_own_serves_the_automatic_steps_and_nothing_else(
    compose: dict[str, Any],
) -> None:
    from service.cli import build_parser

    command = command_of(compose["services"]["steps-worker"])
    assert command[:2] == ["meeple", "worker"]
    assert build_parser().parse_args(command[1:]).queue == ["steps"]


def test_a_worker_of_its_own_serves_the_analyses_which_no_other_worker_takes(
    compose: dict[str, Any],
) -> None:
    from service.cli import build_parser

    command = command_of(compose["services"]["analyses-worker"])
    assert command[:2] == ["meeple", "worker"]
    assert build_parser().parse_args(command[1:]).queue == ["analyses"]
    for name in ("worker", "steps-worker"):
        queues = build_parser().parse_args(command_of(compose["services"][name])[1:]).queue
        assert "analyses" not in (queues or []), name


def test_bots_have_workers_of_their_own_that_serve_nothing_else(compose: dict[str, Any]) -> None:
    from service.cli import build_parser

    command = command_of(compose["services"]["bots-worker"])
    assert command[:2] == ["meeple", "worker"]
    assert build_parser().parse_args(command[1:]).queue == ["bots"]
    for name in ("worker", "steps-worker", "analyses-worker"):
        queues = build_parser().parse_args(command_of(compose["services"][name])[1:]).queue
        assert "bots" not in (queues or []), name


def test_api_and_worker_share_the_redis_store_and_queues_and_wait_for_redis(
    compose: dict[str, Any],
) -> None:
    for name in ("api", "worker", "steps-worker", "analyses-worker", "bots-worker"):
        service = compose["services"][name]
        environment = service["environment"]
        assert environment["MEEPLE_STORE_URL"].startswith("redis://redis:")
        assert environment["MEEPLE_REDIS_URL"].startswith("redis://redis:")
        assert service["depends_on"]["redis"]["condition"] == "service_healthy"


def test_every_meeple_variable_it_sets_is_one_the_service_reads(compose: dict[str, Any]) -> None:
    known = set(_ENV_NAMES.values()) | {f"MEEPLE_{f.name.upper()}" for f in fields(JobSettings)}
    known.add(ROOT_VARIABLE)  # prometheus-client's own, read by service.monitoring.metrics_dir
    for service in compose["services"].values():
        for name in service.get("environment", {}):
            assert name in known, name


def test_the_image_holds_every_package_the_distribution_ships(compose: dict[str, Any]) -> None:
    dockerfile = compose["services"]["api"]["build"]["dockerfile_inline"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]:
        package = pattern.rstrip("*")
        assert f"COPY {package} {package}" in dockerfile
        assert (ROOT / package / "__init__.py").exists()


def test_the_http_bench_runs_the_workers_that_take_steps_as_compose_does(
    compose: dict[str, Any],
) -> None:
    """``python -m bench http`` measures this deployment: each worker that serves the steps'
    queue, with the queues it serves, as many times as compose runs it."""
    from bench.bench_http import RQ_WORKERS
    from service.cli import build_parser

    taking_steps = []
    for service in compose["services"].values():
        command = command_of(service)
        if command[:2] != ["meeple", "worker"]:
            continue
        # No --queue: the default queues, steps first (service.workers.jobs.run_worker).
        queues = build_parser().parse_args(command[1:]).queue or ["steps", "notifications"]
        if "steps" in queues:
            taking_steps += [queues] * int(service.get("deploy", {}).get("replicas", 1))
    assert sorted(taking_steps) == sorted(RQ_WORKERS)
