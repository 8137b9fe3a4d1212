"""The committed openapi.yaml passes Redocly's recommended rules with no error.

@redocly/cli is pinned in tests/package.json and installed into tests/node_modules (ignored
by git) by ``npm ci``/``npm install`` the first time; the test never skips: without node,
npm or the package it fails saying why.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
OPENAPI_FILE = TESTS.parent / "openapi.yaml"
REDOCLY = TESTS / "node_modules" / ".bin" / "redocly"


def _pinned_version() -> str:
    return str(json.loads((TESTS / "package.json").read_text())["devDependencies"]["@redocly/cli"])


def _redocly() -> Path:
    version = _pinned_version()
    installed = TESTS / "node_modules" / "@redocly" / "cli" / "package.json"
    if installed.exists() and json.loads(installed.read_text())["version"] == version:
        return REDOCLY
    npm = shutil.which("npm")
    assert npm is not None, "npm is not on PATH: install Node.js to lint openapi.yaml"
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--no-save", f"@redocly/cli@{version}"],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0 and REDOCLY.exists(), (
        f"npm could not install @redocly/cli@{version} into tests/node_modules:\n"
        f"{done.stdout}\n{done.stderr}"
    )
    return REDOCLY


def test_redocly_recommended_rules_find_no_error_in_openapi_yaml() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", _pinned_version()), "pin an exact version"
    done = subprocess.run(
        [str(_redocly()), "lint", str(OPENAPI_FILE), "--format=json", "--extends=recommended"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(done.stdout[done.stdout.index("{") :])
    errors = [
        f"{problem['ruleId']}: {problem['message']} ({problem['location'][0]['pointer']})"
        for problem in report["problems"]
        if problem["severity"] == "error"
    ]
    assert errors == [], "\n".join(errors)
    assert report["totals"]["errors"] == 0
