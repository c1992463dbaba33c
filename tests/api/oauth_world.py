"""What the SDK OAuth suites (test_sdk_oauth.py, test_sdk_node_oauth.py) share: an
organization with the user alice, an application of it allowed the four grants the
SDKs use, the X.509 PEM of its cert read from the database, and an authorization
code obtained the way Casdoor's sign-in page does (no SDK call
produces one)."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from sqlmodel import select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.db import session_scope
from tests.api.test_oauth import PASSWORD, REDIRECT, make_app

SDK_GRANTS = ["authorization_code", "password", "client_credentials", "refresh_token"]
USER = "alice"


@dataclass(frozen=True)
class World:
    """An organization, its user alice, and an application with its cert's certificate."""

    org: str
    app: m.Application
    certificate: str

    @property
    def user_id(self) -> str:
        return f"{self.org}/{USER}"


def certificate_of(cert: str) -> str:
    """The `certificate` column (X.509 PEM) of the shared cert admin/<cert>."""
    with session_scope() as db:
        row = db.exec(select(m.Cert).where(m.Cert.owner == b.ADMIN_OWNER, m.Cert.name == cert)).one()
        return row.certificate


def build_world(make_org, make_user, *, cert: str = b.BUILT_IN_CERT, **app_fields) -> World:
    org = make_org()
    make_user(owner=org.name, name=USER, password=PASSWORD, email="alice@example.com", display_name="Alice")
    return add_app(org.name, cert=cert, **app_fields)


def add_app(org: str, *, cert: str = b.BUILT_IN_CERT, **app_fields) -> World:
    """Another application of the organization `org`."""
    app = make_app(org, cert=cert, grant_types=SDK_GRANTS, redirect_uris=[REDIRECT], **app_fields)
    return World(org, app, certificate_of(cert))


def authorization_code(api_server: str, world: World, *, scope: str = "openid profile email",
                       state: str = "st-sdk", nonce: str = "n-sdk") -> str:
    """POST /api/login?clientId&responseType=code&redirectUri&scope&state with the sign-in
    body, as Casdoor's SPA does; no PKCE, so the SDK's client_secret authenticates the exchange."""
    response = httpx.post(f"{api_server}/api/login", params={
        "clientId": world.app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": scope,
        "state": state, "nonce": nonce,
    }, json={"application": world.app.name, "organization": world.org, "username": USER, "password": PASSWORD,
             "type": "code"})
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "ok", answer
    code = answer["data"]
    assert answer["data2"] == f"{REDIRECT}?code={code}&state={state}", answer
    return code
