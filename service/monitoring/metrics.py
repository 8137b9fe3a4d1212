"""The service's Prometheus metrics (docs/operations.md, "Metrics"): what each process counts,
and the text ``GET /metrics`` answers.

Counters and histograms are counted where things happen (the HTTP edge, the jobs, the store's
appends, the folder, the hub); with a claimed metrics root (``metrics_dir``) every process
writes them to files of its own and ``render`` adds up every process's under the root, so
one scrape of any API process shows the whole deployment: its gunicorn workers and its RQ
workers. What is a state rather than a count (queue depths, the oldest job's age, bots and
analyses running and queued) is read from the queues when scraped (``Scraped``).

Labels are few and bounded: a route's template (never the path), a status, a ruleset, a
job's name, an outcome. No game id, token or address is ever a label.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from service.monitoring.metrics_dir import root_of

log = logging.getLogger(__name__)

#: The media type of the text ``render`` writes: the classic text format, which every
#: Prometheus reads.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# No ``*_created`` series (not kept in multiprocess mode anyway): one scrape reads the same
# in one process or many.
disable_created_metrics()

#: Latencies measured in milliseconds to seconds.
FAST_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
#: An automatic step waits for a worker: milliseconds, or the sweep's grace when a job is lost.
STEP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

HTTP_REQUESTS = Counter(
    "meeple_http_requests",
    "HTTP requests answered, by method, route template and status",
    ["method", "route", "status"],
)
HTTP_DURATION = Histogram(
    "meeple_http_request_duration_seconds",
    "Seconds from a request's arrival to the start of its answer (a stream: until it starts)",
    ["method", "route"],
)
ACTIONS = Counter("meeple_actions_appended", "Seats' actions appended, by ruleset", ["ruleset"])
STEPS = Counter("meeple_steps_appended", "Automatic steps appended, by ruleset", ["ruleset"])
STEP_LATENCY = Histogram(
    "meeple_step_latency_seconds",
    "Seconds from the append that made an automatic step due to the step's append (steps "
    "run by their job; a lost job's step, appended by the sweep, is not observed)",
    ["ruleset"],
    buckets=STEP_BUCKETS,
)
JOBS = Counter(
    "meeple_jobs", "Background jobs run, by job and outcome (ok, failed)", ["job", "outcome"]
)
WEBHOOK_DELIVERIES = Counter(
    "meeple_webhook_deliveries",
    "Webhook delivery attempts by outcome (delivered, http_error, timeout, connection_failed, "
    "forbidden, webhook_removed) and receiver class (public, allowed, none)",
    ["outcome", "receiver"],
)
OPEN_STREAMS = Gauge("meeple_open_streams", "Live streams open now", multiprocess_mode="livesum")
RATE_LIMITED = Counter(
    "meeple_rate_limit_refusals",
    "Requests refused 429 by a rate limit, by limit (its count's name)",
    ["limit"],
)
STORE_APPEND = Histogram(
    "meeple_store_append_seconds",
    "Seconds of one append to the event store, its side writes included, by store",
    ["store"],
    buckets=FAST_BUCKETS,
)
FOLDS = Counter(
    "meeple_folds",
    "Games loaded, by where the fold started: cache (this process's folded game), snapshot, "
    "scratch (the first event)",
    ["source"],
)


def count_fold(source: str) -> None:
    """The folder's observer (projections.fold.Folder): one load, from ``source``."""
    FOLDS.labels(source).inc()


def observe_job(name: str, ok: bool) -> None:
    JOBS.labels(name, "ok" if ok else "failed").inc()


def observe_append(store: str, seconds: float) -> None:
    STORE_APPEND.labels(store).observe(seconds)


def observe_appended(ruleset: str, event_types: Iterable[str]) -> None:
    """Events just appended to a game of ``ruleset`` (none replayed)."""
    for event_type in event_types:
        if event_type == "action":
            ACTIONS.labels(ruleset).inc()
        elif event_type == "system":
            STEPS.labels(ruleset).inc()


def observe_step_latency(ruleset: str, due_since: float) -> None:
    STEP_LATENCY.labels(ruleset).observe(max(0.0, time.time() - due_since))


def observe_delivery(outcome: str, receiver: str) -> None:
    WEBHOOK_DELIVERIES.labels(outcome, receiver).inc()


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    HTTP_REQUESTS.labels(method, route, str(status)).inc()
    HTTP_DURATION.labels(method, route).observe(seconds)


def refused(limit: str) -> None:
    RATE_LIMITED.labels(limit).inc()


def stream_opened() -> None:
    OPEN_STREAMS.inc()


def stream_closed() -> None:
    OPEN_STREAMS.dec()


class Scraped:
    """What is read from the queues when ``/metrics`` is scraped: ``read()`` gives, for each
    queue, its depth and the age of its oldest waiting job (None: unknown or empty), and the
    bots' and analyses' jobs running and queued."""

    def __init__(self, read: Callable[[], dict[str, Any]]) -> None:
        self.read = read

    def collect(self) -> Iterator[Metric]:
        readable = GaugeMetricFamily(
            "meeple_queues_readable",
            "Whether the queues could be read for this scrape (0: their Redis does not answer; "
            "the queue gauges are left out)",
        )
        try:
            found = self.read()
        except Exception as error:
            log.warning("metrics: the queues cannot be read (%s)", type(error).__name__)
            readable.add_metric([], 0)
            return iter([readable])
        readable.add_metric([], 1)
        depth = GaugeMetricFamily(
            "meeple_queue_depth", "Jobs waiting in each queue", labels=["queue"]
        )
        age = GaugeMetricFamily(
            "meeple_queue_oldest_job_age_seconds",
            "Seconds the oldest waiting job of each queue has waited (0: none waits)",
            labels=["queue"],
        )
        for queue, (count, oldest) in sorted(found.get("queues", {}).items()):
            depth.add_metric([queue], count)
            age.add_metric([queue], 0.0 if oldest is None else max(0.0, time.time() - oldest))
        compute = GaugeMetricFamily(
            "meeple_compute_jobs",
            "Bot turns and analyses running and queued (in their fair order)",
            labels=["kind", "state"],
        )
        for (kind, state), count in sorted(found.get("compute", {}).items()):
            compute.add_metric([kind, state], count)
        return iter([readable, depth, age, compute])


class _EveryProcess:
    """prometheus-client's multiprocess collector over every process directory under the
    root (``metrics_dir``)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def collect(self) -> Iterable[Metric]:
        files = glob.glob(os.path.join(self.root, "*", "*.db"))
        return MultiProcessCollector.merge(files, accumulate=True)


def render(scraped: Scraped | None = None) -> bytes:
    """The Prometheus text of every process's metrics (or this process's, when no root is
    claimed), then what ``scraped`` reads now."""
    root = root_of()
    if root is not None:
        registry = CollectorRegistry()
        registry.register(_EveryProcess(str(root)))
        text = generate_latest(registry)
    else:
        text = generate_latest(REGISTRY)
    if scraped is not None:
        now = CollectorRegistry()
        now.register(scraped)
        text += generate_latest(now)
    return text
