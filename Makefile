# `make run` serves the console on http://localhost:$(IAM_PORT); `make test` runs the whole suite.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUN_VERSION := 1.4.5
NODE_SDK := tests/node/node_modules
export PATH := $(CURDIR)/bunpkg/node_modules/.bin:$(CURDIR)/$(VENV)/bin:$(PATH)
export REFLEX_TELEMETRY_ENABLED := false

.PHONY: run test setup bun node-sdk migrate lint clean

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

# tests/api/test_sdk_node.py drives the API with casdoor-nodejs-sdk, installed from the lock file
# into tests/node/node_modules; without npm that suite skips (and fails under CI).
$(NODE_SDK): tests/node/package.json tests/node/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/node --no-audit --no-fund --silent && touch $@; \
	else echo "npm not found: tests/api/test_sdk_node.py will be skipped"; fi

node-sdk: $(NODE_SDK)

migrate: setup
	$(PY) -m iam_console.startup

run: migrate
	reflex run --env prod

lint: setup
	$(VENV)/bin/ruff check .

test: migrate lint $(NODE_SDK)
	$(PY) -m pytest -q tests/unit tests/api
	$(PY) -m pytest -q tests/fuzz
	$(PY) -m pytest -q tests/e2e

clean:
	rm -rf .web .states
