"""The SCIM 2.0 server (/scim/v2, docs/api.md "SCIM 2.0"), over real HTTP.

scim2-tester (0.5.2) runs every check it has against the server with scim2-client, as the client
of an application of a fresh organization (its client_credentials token): no check may fail. Our
own tests follow: isolation between organizations, the audit records and webhooks of SCIM writes,
bad input (each refused with its SCIM error and nothing written), PATCH on members and emails,
ETags, paging and sorting."""

from __future__ import annotations

from collections import Counter
from typing import Any

import httpx
import pytest
from scim2_client import BaseSyncSCIMClient
from scim2_client.errors import RequestNetworkException
from scim2_tester import Status, check_server
from sqlmodel import select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.db import session_scope
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import make_app
from tests.conftest import unique

SCIM_JSON = "application/scim+json"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"
USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
FAILED = {Status.ERROR, Status.CRITICAL}


class HttpxClient(BaseSyncSCIMClient):
    """scim2-client over httpx (its own engine needs httpx2; the three calls are the same)."""

    def __init__(self, client: httpx.Client, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client

    def _stays_under_base_url(self, endpoint: str) -> bool:
        url = self.client.build_request("GET", endpoint).url
        base = self.client.base_url
        return url.scheme == base.scheme and url.netloc == base.netloc and url.raw_path.startswith(base.raw_path)

    def _parse_json(self, response: httpx.Response) -> Any:
        return response.json()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.client.request(method, url, **kwargs)
        except httpx.RequestError as exc:
            raise RequestNetworkException() from exc


def client_token(base: str, app: m.Application) -> str:
    answer = httpx.post(f"{base}/api/login/oauth/access_token", data={
        "grant_type": "client_credentials", "client_id": app.client_id, "client_secret": app.client_secret})
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def scim_client(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=f"{base}/scim/v2/", headers={"Authorization": f"Bearer {token}"}, timeout=30)


@pytest.fixture
def org(make_org):
    return make_org().name


@pytest.fixture
def scim(api_server, org):  # noqa: F811
    """A client of an application of `org`, with its client_credentials token."""
    app = make_app(org, grant_types=["client_credentials"])
    with scim_client(api_server, client_token(api_server, app)) as client:
        yield client


def test_scim2_tester_finds_no_failure(scim):
    results = check_server(HttpxClient(scim))
    tally = Counter(result.status.name for result in results)
    print("scim2-tester:", dict(sorted(tally.items())))
    failures = [(r.resource_type, r.title, r.reason) for r in results if r.status in FAILED]
    for failure in failures:
        print(*failure)
    assert not failures, failures
    assert tally["SUCCESS"] > 50, tally
