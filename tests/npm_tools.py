"""The npm tools the tests run (@redocly/cli, openapi-typescript, openapi-fetch, typescript),
pinned to exact versions in tests/package.json and tests/package-lock.json.

``npm_bin()`` installs them into tests/node_modules (ignored by git) with ``npm ci`` the first
time, or when a pinned version changed, and returns node_modules/.bin. One test process
installs at a time (a file lock: pytest-xdist runs several). The tests never skip: without
node or npm, or when the install fails, they fail saying why.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parent
NODE_MODULES = TESTS / "node_modules"
LOCK = TESTS / ".npm-install.lock"


def pinned() -> dict[str, str]:
    """Each tool's exact version, from tests/package.json."""
    versions: dict[str, str] = json.loads((TESTS / "package.json").read_text())["devDependencies"]
    for name, version in versions.items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"pin an exact version of {name}"
    return versions


def _installed(name: str) -> str | None:
    manifest = NODE_MODULES / name / "package.json"
    return json.loads(manifest.read_text())["version"] if manifest.exists() else None


def _missing() -> list[str]:
    return [f"{n}@{v}" for n, v in pinned().items() if _installed(n) != v]


def npm_bin() -> Path:
    """tests/node_modules/.bin with every pinned tool installed."""
    assert shutil.which("node") is not None, "node is not on PATH: install Node.js (20 or newer)"
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        missing = _missing()
        if missing:
            npm = shutil.which("npm")
            assert npm is not None, f"npm is not on PATH: install Node.js to get {missing}"
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund"],
                cwd=TESTS,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0 and not _missing(), (
                f"npm ci could not install {missing} into {NODE_MODULES}:\n"
                f"{done.stdout}\n{done.stderr}"
            )
    return NODE_MODULES / ".bin"
