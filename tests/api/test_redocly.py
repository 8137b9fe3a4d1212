"""The committed openapi.yaml passes Redocly's recommended rules with no error.

@redocly/cli is pinned in tests/package.json and installed into tests/node_modules (ignored
by git) by tests/npm_tools.py the first time; the test never skips: without node, npm or the
package it fails saying why.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.npm_tools import npm_bin

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "openapi.yaml"


def test_redocly_recommended_rules_find_no_error_in_openapi_yaml() -> None:
    done = subprocess.run(
        [
            str(npm_bin() / "redocly"),
            "lint",
            str(OPENAPI_FILE),
            "--format=json",
            "--extends=recommended",
        ],
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
    print(f"redocly: {report['totals']['errors']} errors, {report['totals']['warnings']} warnings")
    assert errors == [], "\n".join(errors)
    assert report["totals"]["errors"] == 0
