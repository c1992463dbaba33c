# `make run` serves the console on http://localhost:$(IAM_PORT); `make test` runs the whole suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUN_VERSION := 1.4.5
export PATH := $(CURDIR)/bunpkg/node_modules/.bin:$(CURDIR)/$(VENV)/bin:$(PATH)
export REFLEX_TELEMETRY_ENABLED := false

.PHONY: run test setup bun migrate lint clean

$(VENV)/.installed: requirements.txt
	test -d $(VENV) || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

# Reflex downloads bun from GitHub, which is out of reach here: take it from npm
# into bunpkg/ unless a working bun is already on PATH.
bun:
	@bun --version >/dev/null 2>&1 || { \
		echo "Installing bun $(BUN_VERSION) from the npm registry into bunpkg/"; \
		mkdir -p bunpkg && npm install --prefix bunpkg --no-audit --no-fund --silent bun@$(BUN_VERSION); }
	@bun --version >/dev/null

setup: $(VENV)/.installed bun

migrate: setup
	$(PY) -m iam_console.startup

run: migrate
	reflex run --env prod

lint: setup
	$(VENV)/bin/ruff check .

test: migrate lint
	$(PY) -m pytest -q tests/unit tests/api
	$(PY) -m pytest -q tests/e2e

clean:
	rm -rf .web .states
