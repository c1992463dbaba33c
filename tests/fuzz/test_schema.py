"""Every operation of /api/openapi.json, as the global admin and anonymously: no answer
is a server error, and every answer (status code and body) is one the document declares."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") != "true":  # under CI a missing schemathesis fails the run instead
    pytest.importorskip("schemathesis", reason="schemathesis is not installed (pip install -r requirements.txt)")

from fastapi.testclient import TestClient
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from iam_console.api.app import api
from tests.fuzz.conftest import api_schema

schema = api_schema()
CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]


@schema.parametrize()
def test_as_global_admin(case, admin_keys):
    case.query = {**(case.query or {}), **admin_keys}
    case.call_and_validate(checks=CHECKS)


@schema.parametrize()
def test_anonymously(case, database):
    case.call_and_validate(checks=CHECKS)


def test_the_admin_run_acted_as_the_admin_throughout(admin_keys, database):
    """Nothing the fuzzing sent revoked the admin's key: the run above was the global admin's."""
    answer = TestClient(api).get("/api/get-account", params=admin_keys).json()
    assert answer["status"] == "ok" and (answer["data"]["owner"], answer["data"]["name"]) == ("built-in", "admin")
