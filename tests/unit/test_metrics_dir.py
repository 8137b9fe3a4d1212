"""Each process's metrics directory (service.monitoring.metrics_dir): claimed under the shared
root before prometheus_client is imported, and what dead processes of this host left there
removed at a start."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from service.monitoring.metrics_dir import remove_stale

ROOT = Path(__file__).resolve().parents[2]
HOST = socket.gethostname()


def test_a_start_removes_this_hosts_dead_processes_directories_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    dead = tmp_path / f"worker-{HOST}-999999999"
    mine_before = tmp_path / f"serve-{HOST}-{os.getpid()}"  # a restarted container's earlier life
    alive = tmp_path / f"serve-{HOST}-{os.getppid()}"
    other_host = tmp_path / "worker-another-host-999999999"
    unknown = tmp_path / "notes"
    for directory in (dead, mine_before, alive, other_host, unknown):
        directory.mkdir()
        (directory / "counter_1.db").write_bytes(b"")
    removed = remove_stale(tmp_path, HOST)
    assert sorted(removed) == sorted([dead, mine_before])
    assert {path.name for path in tmp_path.iterdir()} == {alive.name, other_host.name, "notes"}


CLAIM = """
import json, os, sys
from service.monitoring.metrics_dir import claim
own = claim(sys.argv[1])
import prometheus_client.values as values
print(json.dumps({"own": str(own), "root": os.environ["MEEPLE_METRICS_ROOT"],
                  "dir": os.environ["PROMETHEUS_MULTIPROC_DIR"],
                  "multiprocess": values.ValueClass.__name__ == "MmapedValue"}))
"""


def claimed(env: dict[str, str], cwd: Path, kind: str = "worker") -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MEEPLE_", "PROMETHEUS_"))}
    done = subprocess.run(
        [sys.executable, "-c", CLAIM, kind],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_a_process_claims_a_directory_of_its_own_under_the_root_it_was_given(
    tmp_path: Path,
) -> None:
    found = claimed({"PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "shared")}, tmp_path)
    assert found["root"] == str(tmp_path / "shared")
    assert found["dir"] == found["own"]
    assert Path(str(found["own"])).parent == tmp_path / "shared"
    assert Path(str(found["own"])).name.startswith(f"worker-{HOST}-")
    assert found["multiprocess"] is True


def test_a_process_started_by_a_claimed_one_claims_beside_it_not_inside_it(
    tmp_path: Path,
) -> None:
    parent = tmp_path / "var" / "metrics" / f"worker-{HOST}-1"
    env = {"MEEPLE_METRICS_ROOT": str(tmp_path / "var" / "metrics"),
           "PROMETHEUS_MULTIPROC_DIR": str(parent)}  # fmt: skip
    found = claimed(env, tmp_path)
    assert Path(str(found["own"])).parent == tmp_path / "var" / "metrics"


def test_without_a_root_the_default_is_var_metrics_under_the_working_directory(
    tmp_path: Path,
) -> None:
    found = claimed({}, tmp_path, "serve")
    assert found["root"] == str(tmp_path / "var" / "metrics")
    assert Path(str(found["own"])).name.startswith(f"serve-{HOST}-")
