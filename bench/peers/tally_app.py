"""The API with the test-only Tally ruleset registered, for ``make bench-peers`` to play the
same game through Meeple Ledger as through boardgame.io (``gunicorn bench.peers.tally_app:app``)."""

from __future__ import annotations

from projections.ruleset import register
from service.app import create_app
from service.config import load_config
from tests.rulesets.tally import TALLY

register(TALLY)
app = create_app(load_config())
