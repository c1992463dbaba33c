"""Every operation of /api/openapi.json, as the global admin and anonymously: no answer
is a server error, and every answer (status code and body) is one the document declares."""

from __future__ import annotations

from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

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
