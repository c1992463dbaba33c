"""The browser tests of the tickets extension run on the product's browser fixtures (the real
server built and started once, Chromium, the accounts of organization acme): tests/e2e/conftest.py
of the repository."""

from tests.e2e.conftest import *  # noqa: F403
