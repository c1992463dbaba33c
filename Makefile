# `make run` builds the front end and serves the console on http://localhost:$(IAM_PORT) (the production
# command, docs/deployment.md); `make test` runs the whole suite.
# The suites run in two lanes at once (tests/suites.py); the browser suites (tests/e2e, then
# tests/e2e_scaffold, then the extensions') run one after the other: each server's build rewrites
# .web, which the one before serves.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
BUN_VERSION := 1.4.5
UV_VERSION := 0.13.9
NODE_SDK := tests/node/node_modules
# the extensions kept in this repository (extensions/<name>/, each a pip-installable project with
# its own tests/): `make setup` installs each editable into .venv, `make test` runs their tests
EXTENSIONS := $(patsubst %/pyproject.toml,%,$(wildcard extensions/*/pyproject.toml))
export PATH := $(CURDIR)/bunpkg/node_modules/.bin:$(CURDIR)/$(VENV)/bin:$(PATH)
export REFLEX_TELEMETRY_ENABLED := false

.PHONY: run build test setup bun node-sdk migrate lint clean

# `make run` prints what helps a newcomer: each step as it starts, the build's progress (without
# Reflex's misleading lines: iam_console/serve.py build_line), the generated admin password once,
# and the URL to sign in at. Make's own command lines are not echoed (@).
# uv (from PyPI) installs them in seconds where pip takes minutes; pip does it if uv cannot
$(VENV)/.installed: requirements.txt
	@test -d $(VENV) || python3 -m venv $(VENV)
	@echo "Installing the Python packages of requirements.txt into $(VENV)"
	@{ $(VENV)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION) && \
		UV_NATIVE_TLS=1 $(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python -r requirements.txt; } || \
		$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# editable: a change to an extension's code is live without reinstalling; its entry point
# (iam_console.extensions) is what makes the server load it (docs/extending.md)
$(VENV)/.extensions: $(VENV)/.installed $(addsuffix /pyproject.toml,$(EXTENSIONS))
	@for extension in $(EXTENSIONS); do \
		echo "Installing the extension $$extension into $(VENV) (editable)"; \
		{ UV_NATIVE_TLS=1 $(VENV)/bin/uv pip install --quiet --python $(VENV)/bin/python -e $$extension 2>/dev/null || \
			$(VENV)/bin/pip install --quiet --disable-pip-version-check -e $$extension; } || exit 1; \
	done
	@touch $@

# Reflex downloads bun from GitHub, which is out of reach here: take it from npm
# into bunpkg/ unless a working bun is already on PATH.
bun:
	@bun --version >/dev/null 2>&1 || { \
		echo "Installing bun $(BUN_VERSION) from the npm registry into bunpkg/"; \
		mkdir -p bunpkg && npm install --prefix bunpkg --no-audit --no-fund --silent bun@$(BUN_VERSION); }
	@bun --version >/dev/null

setup: $(VENV)/.installed $(VENV)/.extensions bun

# tests/api/test_sdk_node.py drives the API with casdoor-nodejs-sdk, and tests/e2e/axe.py injects
# axe-core; both are installed from the lock file into tests/node/node_modules. Without npm the SDK
# suite skips (and fails under CI) and the browser tests' accessibility checks fail.
$(NODE_SDK): tests/node/package.json tests/node/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix tests/node --no-audit --no-fund --silent && touch $@; \
	else echo "npm not found: tests/api/test_sdk_node.py will be skipped"; fi

node-sdk: $(NODE_SDK)

migrate: setup
	@echo "Migrating the database and creating the first-start data"
	@$(PY) -m iam_console.startup

# the front end, compiled and built for IAM_ORIGIN into .web/build/client
build: migrate
	@echo "Building the front end (a minute or two; less the next time)"
	@$(PY) -m iam_console.serve build

# one process serves the built pages, the websocket and /api/* (IAM_WORKERS, with REDIS_URL, for more)
run: build
	@$(PY) -m iam_console.serve

lint: setup
	$(VENV)/bin/ruff check .

test: migrate lint $(NODE_SDK)
	$(PY) -m tests.suites $(PYTEST_ARGS)

clean:
	rm -rf .web .states
