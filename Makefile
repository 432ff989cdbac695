# Two set-up commands: `make demo` and `make test`. Both install into .venv, idempotently.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS ?= dev,trainer
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)-$(subst $(comma),_,$(EXTRAS))
comma  := ,

.PHONY: install test demo lint clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	rm -f $(VENV)/.installed-*
	touch $@

test: $(STAMP)
	$(BIN)/python -m pytest -m "not gpu" $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

demo: $(STAMP)
	$(BIN)/envfactory demo

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
