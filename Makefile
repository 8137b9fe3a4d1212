# Each target is a one-liner a newcomer can read. `make run` and `make test` set up .venv themselves.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench bench-agents bench-peers soak failover openapi worker clean

$(BIN)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

#: where `make run` serves: `make run PORT=8080` (or HOST=0.0.0.0 for other machines)
HOST ?= 127.0.0.1
PORT ?= 8000

run: $(BIN)/.installed ## serve the API on the embedded default (SQLite under ./var, jobs in-process)
	$(BIN)/meeple serve --host $(HOST) --port $(PORT)

worker: $(BIN)/.installed ## RQ workers, a process per queue group: steps, notifications (2), bots (2), analyses (needs MEEPLE_REDIS_URL)
	$(BIN)/meeple worker

test: $(BIN)/.installed ## the whole suite; Redis tests start their own redis-server, browser tests drive chromium
	bash tests/ensure-redis-server.sh
	bash tests/ensure-chromium.sh
	$(BIN)/python -m pytest -n 2 --dist loadfile

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy events projections service bench

bench: $(BIN)/.installed
	bash tests/ensure-redis-server.sh
	$(BIN)/python -m bench

bench-agents: $(BIN)/.installed ## MCTS against random and greedy, 100 games a game, then the evaluations' calibration; not part of CI
	$(BIN)/python -m bench.agents_strength
	$(BIN)/python -m bench.calibration

bench-peers: $(BIN)/.installed ## beside boardgame.io and eventsourcing, installed into a throwaway folder; not part of CI
	$(BIN)/python -m bench.peers

failover: $(BIN)/.installed ## SIGKILL the Redis primary under load, Sentinel fails over: acknowledged actions lost with MEEPLE_REDIS_MIN_REPLICAS=1 and without
	bash tests/ensure-redis-server.sh
	$(BIN)/python -m bench failover

#: random games per player count and ruleset in `make soak` (CI plays 50): `make soak SOAK_GAMES=2000` goes twice as deep
SOAK_GAMES ?= 1000

soak: $(BIN)/.installed ## thousands of random playouts per game, and a whole game of each in the browser; not part of CI
	MEEPLE_SOAK_GAMES=$(SOAK_GAMES) MEEPLE_WEB_WHOLE_GAMES=all $(BIN)/python -m pytest tests/sim tests/e2e/test_web_whole_games.py -q -n 2 --dist worksteal --timeout 0

openapi: $(BIN)/.installed ## regenerate openapi.yaml from the marshmallow schemas
	$(BIN)/meeple openapi > openapi.yaml

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
