# Two set-up commands: `make demo` and `make test`. Both install into .venv, idempotently.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS ?= dev,trainer
comma  := ,
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)-$(subst $(comma),_,$(EXTRAS))

.PHONY: install test test-compose test-faults test-seeds durations demo lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	rm -f $(VENV)/.installed-*
	touch $@

# TEST_WORKERS=N runs the tests on N pytest-xdist worker processes, a whole test file per
# worker at a time (--dist loadfile: a module's shared fixtures are built once), the
# longest files first (tests/durations.json, tests/file_order.py; --no-loadscope-reorder
# keeps that order); each worker has its own Docker run id, Temporal dev servers,
# PostgreSQL schemas and homes.
# The default, 2, is what CI runs (docs/testing.md); 0 runs them in one process.
TEST_WORKERS ?= 2
XDIST := $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)

# PostgreSQL tests need ENVFACTORY_TEST_POSTGRES_URL; when unset, start a throwaway local
# cluster (scripts/start-postgres.sh installs Debian's postgresql if it is missing). A
# cluster that does not start stops here: the store tests would otherwise be skipped.
test: $(STAMP)
	@bash scripts/host-deps.sh test
	@if [ -z "$$ENVFACTORY_TEST_POSTGRES_URL" ]; then \
	  pg="$$(bash scripts/start-postgres.sh)" && eval "$$pg" || { echo "make test: PostgreSQL did not start \
	(log: $${PG_TEST_DATA:-/tmp/pgdata}.log); set ENVFACTORY_TEST_POSTGRES_URL to a server of yours" >&2; exit 1; }; \
	fi; \
	$(BIN)/python -m pytest -m "not gpu and not compose and not faults and not seeds" $(XDIST) $(PYTEST_ARGS)

# The four example seeds end to end, as `make demo` runs them without the trainer
# (tests/examples): fails naming each seed that is not published and its failing rows.
test-seeds: $(STAMP)
	@bash scripts/host-deps.sh demo
	$(BIN)/python -m pytest -m seeds $(PYTEST_ARGS)

# The table of the slowest tests in docs/testing.md and the files' weights that order
# them for the workers (tests/durations.json), from a run of the README's selection (or
# from a log of one: make durations DURATIONS_LOG=/tmp/ci.log).
durations: $(STAMP)
	$(BIN)/python scripts/test_durations.py --weights tests/durations.json $(if $(DURATIONS_LOG),--log $(DURATIONS_LOG),-- -m "not gpu and not compose and not faults and not seeds")

# The compose stack end to end (scripts/compose-e2e.sh): images, stack, one seed published.
test-compose: $(STAMP)
	@bash scripts/host-deps.sh test
	$(BIN)/python -m pytest -m compose $(PYTEST_ARGS)

# Faults on the real stack (docs/pipeline.md): a worker SIGKILLed mid-gate, the Docker
# engine refusing calls, PostgreSQL restarted mid-pipeline.
test-faults: $(STAMP)
	@bash scripts/host-deps.sh test
	@eval "$$(bash scripts/start-postgres.sh)"; $(BIN)/python -m pytest -m faults $(PYTEST_ARGS)

# ruff (lint and format), the import contracts (.importlinter), what they cannot state (no import cycle, every
# package in a layer: scripts/check_imports.py), strict mypy ([tool.mypy] in pyproject), and the tables
# generated from code (the probes in docs/verifiers.md, the settings in README.md: scripts/gen_docs.py).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python scripts/check_imports.py
	$(BIN)/mypy
	$(BIN)/python scripts/gen_docs.py --check

demo: $(STAMP)
	@bash scripts/host-deps.sh demo
	$(BIN)/envfactory demo

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
