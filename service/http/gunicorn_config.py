"""gunicorn's settings for the API as compose.yaml runs it (``--config
python:service.http.gunicorn_config``), the same ``meeple serve`` sets itself: the metrics
directory claimed in the master before any worker starts (service.monitoring.metrics_dir), a
worker's live gauges forgotten when it exits, and the log lines MEEPLE_LOG_FORMAT asks for
(``json``: gunicorn's own lines as JSON and no access log, the app writing one line per
request; ``plain``: gunicorn's access log on standard output).

Nothing here imports prometheus_client or the app: both are loaded in the workers, after the
directory is claimed.
"""

from __future__ import annotations

from typing import Any

from service.config import load_config
from service.monitoring.logs import gunicorn_log_config
from service.monitoring.metrics_dir import claim, process_exited

# Read (and every setting checked) before gunicorn binds its port.
if load_config().log_format == "json":
    logconfig_dict = gunicorn_log_config()
else:
    accesslog = "-"


def on_starting(server: Any) -> None:
    claim("serve")


def child_exit(server: Any, worker: Any) -> None:
    process_exited(worker.pid)
