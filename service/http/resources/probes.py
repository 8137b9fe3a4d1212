"""What an operator's tools ask (docs/operations.md, "Observing"): ``GET /metrics`` for
Prometheus, ``GET /ready`` for a load balancer or an orchestrator. ``GET /health`` (liveness,
service.http.resources.games) is beside them.

Neither is rate-limited. ``/metrics`` answers only clients on loopback or in
``MEEPLE_METRICS_ALLOW`` (the address ``MEEPLE_TRUSTED_PROXIES`` makes the client's; 403
``metrics_forbidden`` otherwise): it says how busy the service is, which is nobody else's
business.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from typing import Any

from flask import Blueprint, Response, jsonify, request

from service.config import metrics_networks
from service.http.errors import ApiError, known_problem
from service.http.shared import services
from service.monitoring import metrics

bp = Blueprint("probes", __name__)
log = logging.getLogger(__name__)


@bp.get("/metrics")
def get_metrics() -> Response:
    """The service's metrics in the Prometheus text format, every process's added up.
    ---
    get:
      operationId: getMetrics
      codes: {403: [metrics_forbidden]}
      tags: [service]
      summary: Metrics (Prometheus)
      description: >
        The Prometheus text exposition format (version 0.0.4) of every process of the
        deployment that shares the metrics directory (``PROMETHEUS_MULTIPROC_DIR``): the API's
        gunicorn workers and the RQ workers. Requests by route template and status, actions
        and automatic steps appended, step latency, jobs by outcome, webhook deliveries,
        open streams, rate-limit refusals, store appends, folds, and, read when scraped, the
        queues' depths and oldest jobs and the bots and analyses running and queued
        (docs/operations.md, "Metrics"). Only clients on loopback or in the networks of
        ``MEEPLE_METRICS_ALLOW`` may read it; others get 403 ``metrics_forbidden``. Not
        rate-limited.
      responses:
        200:
          description: The metrics.
          content:
            text/plain:
              schema:
                type: string
                description: Prometheus text format 0.0.4
              example: |
                # HELP meeple_actions_appended_total Seats' actions appended, by ruleset
                # TYPE meeple_actions_appended_total counter
                meeple_actions_appended_total{ruleset="gutenberg"} 42.0
        403: Forbidden
    """
    found = services()
    if not _may_read_metrics(found.config.metrics_allow, request.remote_addr):
        raise ApiError(
            403,
            "metrics_forbidden",
            "The metrics are served to loopback and to the networks of MEEPLE_METRICS_ALLOW.",
        )
    reader = getattr(found.jobs, "scraped", None)
    scraped = metrics.Scraped(reader) if reader is not None else None
    return Response(metrics.render(scraped), mimetype=None, content_type=metrics.CONTENT_TYPE)


@bp.get("/ready")
def get_ready() -> Response | tuple[Response, int]:
    """Whether the service can serve now: the store, Redis and the queues answer.
    ---
    get:
      operationId: getReady
      codes: {503: [not_ready]}
      tags: [service]
      summary: Readiness of the service
      description: >
        200 while the event store, the Redis of the queues (``MEEPLE_REDIS_URL``, when set)
        and the job queues answer; 503 ``not_ready`` while any of them does not, with
        ``checks`` saying which (true: answers). ``GET /health`` says whether the process
        lives and what it runs; this says whether to send it traffic.
      responses:
        200:
          description: Everything answers.
          content:
            application/json:
              schema: ReadySchema
        503: ServiceUnavailable
    """
    checks = readiness(services())
    if all(checks.values()):
        return jsonify({"status": "ready", "checks": checks})
    down = ", ".join(name for name, ok in checks.items() if not ok)
    return known_problem("not_ready", f"Not answering: {down}.", checks=checks)


def readiness(found: Any) -> dict[str, bool]:
    """store, redis (when the deployment has one for its queues), queues: whether each
    answers now (a failure is logged, never raised)."""
    checks = {"store": _answers("store", found.store.ping)}
    jobs = found.jobs
    if found.config.redis_url:
        checks["redis"] = _answers("redis", getattr(jobs, "ping", lambda: True))
    reachable = getattr(jobs, "queues_reachable", None)
    checks["queues"] = _answers("queues", reachable) if reachable is not None else True
    return checks


def _answers(what: str, check: Any) -> bool:
    try:
        return bool(check())
    except Exception as error:
        log.warning("readiness: %s does not answer (%s)", what, type(error).__name__)
        return False


@functools.lru_cache(maxsize=8)
def _networks(allow: str) -> tuple[Any, ...]:
    return metrics_networks(allow)


def _may_read_metrics(allow: str, remote_addr: str | None) -> bool:
    try:
        address = ipaddress.ip_address(remote_addr or "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in _networks(allow))
