"""Where each process writes its metrics (prometheus-client's multiprocess mode).

prometheus-client keeps a process's counts in memory-mapped files in the directory named by
``PROMETHEUS_MULTIPROC_DIR``, one file per kind of metric and process id, and ``/metrics``
adds up every file it finds. A deployment shares one *root* directory (compose: a volume
every container mounts; by hand: ``var/metrics`` under the working directory, beside the
embedded store, so a ``meeple worker`` started there is counted by the server there too).
Each server and each worker process (``claim``) writes into a directory of its own under the
root, named ``<kind>-<host>-<pid>``: process ids of two containers may be the same, their
host names are not.

At its start a server or a worker removes what earlier processes of its host left under the
root (their pid is gone, or is its own: a restarted container), so counts restart with the
service rather than adding up dead processes' forever. The choice between in-memory and
file-backed metrics is made by prometheus-client when it is first imported, so ``claim``
runs before anything imports it (the CLI's and gunicorn's first steps).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import sys
from collections.abc import MutableMapping
from pathlib import Path

#: prometheus-client's own setting: the root here (each process's own directory below it).
ROOT_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
#: Set by ``claim`` for the processes this one starts (its root, whatever it was told).
CLAIMED_ROOT = "MEEPLE_METRICS_ROOT"
#: The root when nothing names one: relative to the working directory, as the default store.
DEFAULT_ROOT = "var/metrics"
#: A process's own directory under the root.
_OWN = re.compile(r"^(?P<kind>serve|worker)-(?P<host>.+)-(?P<pid>\d+)$")


def root_of(env: MutableMapping[str, str] = os.environ) -> Path | None:
    """The root this process's ``/metrics`` adds up, None when no process claimed one (the
    app built in a test: its metrics are this process's alone)."""
    root = env.get(CLAIMED_ROOT)
    return Path(root) if root else None


def claim(kind: str, env: MutableMapping[str, str] = os.environ) -> Path:
    """Give this process (``serve``: a server and its gunicorn workers; ``worker``: one RQ
    worker) a directory of its own under the root, after removing what dead processes of
    this host left there; sets ``PROMETHEUS_MULTIPROC_DIR`` to it for this process and the
    ones it starts. Its path."""
    if "prometheus_client" in sys.modules:
        raise RuntimeError("claim the metrics directory before prometheus_client is imported")
    root = Path(env.get(CLAIMED_ROOT) or env.get(ROOT_VARIABLE) or DEFAULT_ROOT).absolute()
    root.mkdir(parents=True, exist_ok=True)
    host = socket.gethostname()
    remove_stale(root, host)
    own = root / f"{kind}-{host}-{os.getpid()}"
    own.mkdir(exist_ok=True)
    env[CLAIMED_ROOT] = str(root)
    env[ROOT_VARIABLE] = str(own)
    return own


def remove_stale(root: Path, host: str) -> list[Path]:
    """Remove the directories under ``root`` of this host's processes that are gone (or whose
    pid is this process's: left by an earlier life of a restarted container); those removed."""
    removed = []
    for directory in sorted(root.iterdir()):
        found = _OWN.match(directory.name)
        if not directory.is_dir() or found is None or found["host"] != host:
            continue
        pid = int(found["pid"])
        if pid == os.getpid() or not _alive(pid):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def process_exited(pid: int) -> None:
    """A gunicorn worker of this server ended: its live gauges (open streams) count no more
    (its counters stay: what it counted happened)."""
    if os.environ.get(CLAIMED_ROOT):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
