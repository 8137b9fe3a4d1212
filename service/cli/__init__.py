"""The ``meeple`` command: serve the API, run a worker, print openapi.yaml, and the log
commands of service.cli.log (simulate, export, import, replay, verify) and of
service.cli.agents (analyze, tournament)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import ipaddress
import os
import sys
from collections.abc import Sequence
from typing import Any

from service.cli import agents as cli_agents
from service.config import load_config

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Connections one ``meeple serve`` holds open at once (each live stream is one).
DEFAULT_CONNECTIONS = 10_000


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="meeple", description="Meeple Ledger: an event-sourced game-state service."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = subparsers.add_parser("serve", help="serve the REST API (MEEPLE_* configure it)")
    serve.add_argument("--host", default=DEFAULT_HOST, help=f"default {DEFAULT_HOST}")
    serve.add_argument(
        "--port", type=port_number, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}"
    )
    serve.add_argument(
        "--connections",
        type=int,
        default=DEFAULT_CONNECTIONS,
        help=f"connections served at once, live streams included (default {DEFAULT_CONNECTIONS})",
    )
    serve.set_defaults(handler=run_serve)

    worker = subparsers.add_parser("worker", help="run an RQ worker (needs MEEPLE_REDIS_URL)")
    worker.add_argument(
        "--queue",
        action="append",
        choices=["steps", "notifications", "bots", "analyses"],
        help="serve only this queue (repeatable). Without it, a worker process per group: "
        "steps, notifications (two), bots (two), analyses (so a step never waits behind a "
        "bot, an analysis or a delivery, and no owner holds a whole queue)",
    )
    worker.set_defaults(handler=run_worker)

    openapi = subparsers.add_parser("openapi", help="print openapi.yaml, generated from the code")
    openapi.set_defaults(handler=run_openapi)

    if importlib.util.find_spec("service.cli.log") is not None:
        importlib.import_module("service.cli.log").add_commands(subparsers)
    cli_agents.add_commands(subparsers)
    return parser


def port_number(text: str) -> int:
    """A TCP port to serve on (1-65535), as ``--port`` and ``make run PORT=`` give it."""
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"a port is a number from 1 to 65535, not {text!r}")
    return int(text)


def served_url(host: str, port: int) -> str:
    """The base URL of a server bound to ``host``:``port``, as a client on this machine
    reaches it: a wildcard address (0.0.0.0, ::) is reached on the loopback address."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"http://{host}:{port}"
    if address.is_unspecified:
        address = ipaddress.ip_address("::1" if address.version == 6 else "127.0.0.1")
    shown = f"[{address}]" if address.version == 6 else str(address)
    return f"http://{shown}:{port}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.handler(args)
    return result


def run_serve(args: argparse.Namespace) -> int:
    """The API under gunicorn: one worker process, so the embedded default's in-process jobs
    and SQLite pool live in one process (compose runs more of them). Its worker class is
    gevent's (``service.http.gevent_worker``): a request is a greenlet, so thousands of open live
    streams cost memory, not request capacity (docs/operations.md, "Live streams")."""
    from gunicorn.app.base import BaseApplication

    class EmbeddedServer(BaseApplication):
        def load_config(self) -> None:
            self.cfg.set("bind", f"{args.host}:{args.port}")
            self.cfg.set("workers", 1)
            self.cfg.set("worker_class", "service.http.gevent_worker.StreamingWorker")
            self.cfg.set("worker_connections", args.connections)
            # No request is killed for taking long: the process also runs the jobs.
            self.cfg.set("timeout", 0)
            if json_lines:
                # One JSON line per request is the app's (service.http.observing).
                self.cfg.set("logconfig_dict", gunicorn_log_config())
            else:
                self.cfg.set("accesslog", "-")
            # A worker's live gauges (open streams) end with it.
            self.cfg.set("child_exit", lambda server, worker: process_exited(worker.pid))
            if "control_socket_disable" in self.cfg.settings:  # gunicorn 25.1 and newer
                # One fixed socket path per user would clash between two servers.
                self.cfg.set("control_socket_disable", True)

        def load(self) -> object:
            # In the worker, after gevent has patched the standard library: the app's
            # threads, locks and sockets are gevent's from the start.
            from service.app import create_app

            return create_app(load_config(**overrides))

    from service.monitoring.logs import announce, gunicorn_log_config
    from service.monitoring.metrics_dir import claim, process_exited

    config = load_config()  # a bad setting stops the server before it binds its port
    json_lines = config.log_format == "json"
    # Before the workers import prometheus_client: they count into files of this server's.
    claim("serve")
    url = served_url(args.host, args.port)
    # The served spec and /docs name the address served, unless MEEPLE_PUBLIC_URL names the
    # one clients reach (a proxy in front, another host name).
    overrides: dict[str, Any] = (
        {} if os.environ.get("MEEPLE_PUBLIC_URL", "").strip() else {"public_url": url}
    )
    announce(f"Meeple Ledger on {url} (docs: {url}/docs)", config.log_format)
    EmbeddedServer().run()
    return 0


def run_worker(args: argparse.Namespace) -> int:
    config = load_config()
    if not config.redis_url:
        raise SystemExit("meeple worker needs MEEPLE_REDIS_URL (the Redis that holds the queues)")
    if not args.queue:
        from service.workers.supervisor import supervise

        # Each of its processes claims its own metrics directory.
        return supervise(log_format=config.log_format)
    from service.monitoring.metrics_dir import claim

    # Before the service is imported (and prometheus_client with it): its counts go to files
    # of this worker's (service.monitoring.metrics_dir).
    claim("worker")
    from service.bootstrap import run_worker as start_worker

    names = {"steps": "steps", "notifications": "notify", "bots": "bots", "analyses": "analyses"}
    return int(start_worker(config, queues=[names[queue] for queue in args.queue]) or 0)


def run_openapi(args: argparse.Namespace) -> int:
    sys.stdout.write(openapi_text())
    return 0


def openapi_text() -> str:
    """openapi.yaml as this build generates it: the product games' actions, no test ones.

    The app is built on a throwaway in-memory-free setup: nothing is opened but a temporary
    SQLite file, since only the routes and schemas matter here.
    """
    import tempfile

    from service.app import create_app
    from service.bootstrap import bootstrap
    from service.http.openapi import product_rulesets, spec_yaml

    with tempfile.TemporaryDirectory() as directory:
        config = load_config({}, store_url=f"sqlite:///{directory}/openapi.db")
        services = bootstrap(config, jobs=_NoJobs())
        try:
            app = create_app(services=services)
            return spec_yaml(app, product_rulesets())
        finally:
            services.close()


class _NoJobs:
    """Generating the spec appends nothing, so it needs no job runner."""

    def after_append(self, game_id: str, version: int, game: object = None) -> None:
        raise RuntimeError("no jobs while generating openapi.yaml")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
