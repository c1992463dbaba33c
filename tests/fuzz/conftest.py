"""Schema fuzzing: Schemathesis drives the API in-process against its own OpenAPI document
(docs/security.md, "Schema fuzzing"). The database is the test session's temporary SQLite
file (tests/conftest.py). The budget is small enough for CI; IAM_FUZZ_EXAMPLES raises it,
IAM_FUZZ_SEED changes the (otherwise fixed) seed and IAM_FUZZ_PATHS (a regular expression)
narrows the run to the paths it matches."""

from __future__ import annotations

import os

import pytest

from iam_console.api.app import OPENAPI_URL, api
from tests.api.conftest import sign_in
from tests.conftest import ADMIN_PASSWORD

EXAMPLES = int(os.environ.get("IAM_FUZZ_EXAMPLES", "8"))
SEED = int(os.environ.get("IAM_FUZZ_SEED", "20261123"))
PATHS = os.environ.get("IAM_FUZZ_PATHS", "")


def fuzz_config():
    """Reproducible: a fixed seed, derandomized generation, no example database; valid and
    invalid inputs both; Schemathesis's coverage phase off (its boundary cases for ~200
    operations would not fit the CI budget)."""
    import schemathesis

    return schemathesis.config.SchemathesisConfig.from_dict({
        "seed": SEED,
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "database": "none", "mode": "all"},
        "phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}},
    })


def api_schema():
    """The served document, read through the application itself (no database needed)."""
    import schemathesis

    schema = schemathesis.openapi.from_asgi(OPENAPI_URL, api, config=fuzz_config())
    return schema.include(path_regex=PATHS) if PATHS else schema


@pytest.fixture(scope="session")
def admin_keys(database) -> dict[str, str]:
    """An access key of the built-in admin: a global caller that no route can sign out
    (a session cookie would end at the first generated logout)."""
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    keys = admin.post("/api/add-user-keys", json={"owner": "built-in", "name": "admin"}).json()["data2"]
    return {"accessKey": keys["accessKey"], "accessSecret": keys["accessSecret"]}
