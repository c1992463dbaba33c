"""The tickets extension's tests run on the product's fixtures (a temporary SQLite database,
the first-start data, the browser-like test client): tests/conftest.py of the repository."""

from tests.conftest import *  # noqa: F403
