# Skyline. The README's two commands: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=

.PHONY: run test lint typecheck schema bench clean install install-dev screenshots mutants \
	translations

$(VENV)/.ok-run: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Skyline needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	@touch $@

$(VENV)/.ok-dev: pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Skyline needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@ $(VENV)/.ok-run

install: $(VENV)/.ok-run
install-dev: $(VENV)/.ok-dev

## Start the server on the embedded store (no Redis needed).
run: $(VENV)/.ok-run
	$(VENV)/bin/skyline serve

## Install dev dependencies and run every check and test.
test: $(VENV)/.ok-dev
	@$(PY) tests/redis_notice.py
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy --strict service
	$(VENV)/bin/skyline export-schema --check
	$(VENV)/bin/pytest -n auto -q $(PYTEST_ARGS)

lint: $(VENV)/.ok-dev
	$(VENV)/bin/ruff check .

typecheck: $(VENV)/.ok-dev
	$(VENV)/bin/mypy --strict service

## Rewrite openapi/openapi.json and schema.graphql from the code (commit the result).
schema: $(VENV)/.ok-dev
	$(VENV)/bin/skyline export-schema

## Languages: extract the messages (service/i18n/locales/messages.pot), merge them into the
## Czech and German catalogues (skyline.po), compile those (skyline.mo). Translate what is new
## or fuzzy in the .po files, then run it again (tests/i18n fail until then).
translations: $(VENV)/.ok-dev
	$(PY) -m service.i18n.tool extract update compile

## A small mutation campaign (planted bugs the tests must catch; not part of `make test`).
mutants: $(VENV)/.ok-dev
	$(PY) -m mutation

bench: $(VENV)/.ok-dev
	$(PY) -m bench

## Rewrite docs/screenshots/ from the browser tests (headless Chromium).
screenshots: $(VENV)/.ok-dev
	SKYLINE_UPDATE_SCREENSHOTS=1 $(VENV)/bin/pytest tests/browser -q

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
