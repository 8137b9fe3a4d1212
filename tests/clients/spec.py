"""What the client tests read from the committed openapi.yaml."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

OPENAPI_FILE = Path(__file__).resolve().parents[2] / "openapi.yaml"
SPEC: dict[str, Any] = yaml.safe_load(OPENAPI_FILE.read_text())


def legal_actions_are_typed() -> bool:
    """Whether legal-action items name the actions' schema (docs/api.md, The typed play loop)
    rather than being free-form objects: until they do, posting one back verbatim fails a type
    check."""
    items = SPEC["components"]["schemas"]["LegalActions"]["properties"]["actions"]["items"]
    return "$ref" in json.dumps(items)
