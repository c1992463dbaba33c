"""The refresh grant (OAuth 2.0 Security BCP, refresh token rotation): a confidential
client authenticates to refresh; a chain begun without the client's secret (PKCE only, the
device flow) is a public client's and refreshes without; a rotated refresh token presented
again revokes its whole family, the pairs it was rotated into included."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.oauth import oauth
from tests.api.test_oauth import PASSWORD, app_, code_for, exchange, token_call, world  # noqa: F401


def password_tokens(app: m.Application) -> dict:
    status, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                                username="alice", password=PASSWORD)
    assert status == 200, tokens
    return tokens


def code_tokens_with_secret(app: m.Application, org: str) -> dict:
    code, verifier = code_for(app, org)
    status, tokens = exchange(app, code, verifier, client_secret=app.client_secret)
    assert status == 200, tokens
    return tokens


def public_code_tokens(app: m.Application, org: str) -> dict:
    code, verifier = code_for(app, org)
    status, tokens = exchange(app, code, verifier)  # PKCE, no secret: the client acts as a public one
    assert status == 200, tokens
    return tokens


def device_tokens(app: m.Application, org: str) -> dict:
    started = TestClient(api).post("/api/device-auth", data={"client_id": app.client_id}).json()
    with session_scope() as db:
        alice = db.exec(select(m.User).where(m.User.owner == org, m.User.name == "alice")).one()
        oauth.decide_device(db, alice, started["user_code"], approve=True)
    status, tokens = token_call(grant_type=oauth.DEVICE_GRANT, client_id=app.client_id,
                                device_code=started["device_code"])
    assert status == 200, tokens
    return tokens


def refresh(app: m.Application, refresh_token: str, *, secret: bool = True) -> tuple[int, dict]:
    credentials = {"client_secret": app.client_secret} if secret else {}
    return token_call(grant_type="refresh_token", refresh_token=refresh_token, client_id=app.client_id,
                      **credentials)


def access_works(token: str) -> bool:
    return TestClient(api).get("/api/userinfo", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def introspected(app: m.Application, token: str) -> bool:
    return TestClient(api).post("/api/login/oauth/introspect", data={"token": token},
                                auth=(app.client_id, app.client_secret)).json()["active"]


CONFIDENTIAL: dict[str, Callable[[m.Application, str], dict]] = {
    "password grant": lambda app, org: password_tokens(app),
    "code exchanged with the secret": code_tokens_with_secret,
}
PUBLIC: dict[str, Callable[[m.Application, str], dict]] = {
    "code exchanged with PKCE only": public_code_tokens,
    "device flow without a secret": device_tokens,
}


# --- client authentication ---

@pytest.mark.parametrize("begun_by", list(CONFIDENTIAL))
def test_a_confidential_client_must_authenticate_to_refresh(world, app_, begun_by):  # noqa: F811
    tokens = CONFIDENTIAL[begun_by](app_, world[0].name)
    response = TestClient(api).post("/api/login/oauth/refresh_token", data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": app_.client_id})
    assert response.status_code == 401 and response.json()["error"] == "invalid_client", response.json()
    assert response.headers["www-authenticate"] == 'Basic realm="OAuth2"'
    assert refresh(app_, tokens["refresh_token"], secret=False)[0] == 401
    # the refused attempts spent nothing: with HTTP Basic the same token refreshes
    response = TestClient(api).post("/api/login/oauth/access_token", auth=(app_.client_id, app_.client_secret),
                                    data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
    assert response.status_code == 200, response.json()
    # and the chain stays confidential
    assert refresh(app_, response.json()["refresh_token"], secret=False)[0] == 401


@pytest.mark.parametrize("begun_by", list(PUBLIC))
def test_a_public_client_refreshes_without_a_secret(world, app_, begun_by):  # noqa: F811
    tokens = PUBLIC[begun_by](app_, world[0].name)
    status, second = refresh(app_, tokens["refresh_token"], secret=False)
    assert status == 200 and access_works(second["access_token"]), second
    status, third = refresh(app_, second["refresh_token"], secret=False)
    assert status == 200 and access_works(third["access_token"]), third
    # a secret, when sent, must be right
    status, wrong = token_call(grant_type="refresh_token", refresh_token=third["refresh_token"],
                               client_id=app_.client_id, client_secret="wrong")
    assert (status, wrong["error"]) == (401, "invalid_client")


# --- replay ---

@pytest.mark.parametrize("begun_by", [*CONFIDENTIAL, *PUBLIC])
def test_replaying_a_rotated_refresh_token_revokes_the_whole_family(world, app_, begun_by):  # noqa: F811
    org = world[0].name
    secret = begun_by in CONFIDENTIAL
    first = {**CONFIDENTIAL, **PUBLIC}[begun_by](app_, org)
    elsewhere = password_tokens(app_)  # another family of the same user
    status, second = refresh(app_, first["refresh_token"], secret=secret)
    assert status == 200, second
    status, third = refresh(app_, second["refresh_token"], secret=secret)
    assert status == 200, third
    assert access_works(third["access_token"]) and introspected(app_, third["refresh_token"])

    status, replay = refresh(app_, first["refresh_token"], secret=secret)  # the attacker's (or the client's) copy
    assert (status, replay["error"]) == (400, "invalid_grant"), replay

    for pair in (second, third):  # what it was rotated into, and what that was rotated into
        assert not access_works(pair["access_token"])
        assert not introspected(app_, pair["access_token"]) and not introspected(app_, pair["refresh_token"])
    assert refresh(app_, third["refresh_token"], secret=secret)[1]["error"] == "invalid_grant"
    # another sign-in's tokens live on
    assert access_works(elsewhere["access_token"])
    assert refresh(app_, elsewhere["refresh_token"])[0] == 200


def test_a_replayed_code_revokes_the_pairs_rotated_from_it(world, app_):  # noqa: F811
    code, verifier = code_for(app_, world[0].name)
    status, first = exchange(app_, code, verifier, client_secret=app_.client_secret)
    assert status == 200, first
    status, second = refresh(app_, first["refresh_token"])
    assert status == 200 and access_works(second["access_token"])
    status, replay = exchange(app_, code, verifier, client_secret=app_.client_secret)
    assert (status, replay["error"]) == (400, "invalid_grant")
    assert not access_works(second["access_token"])
    assert refresh(app_, second["refresh_token"])[1]["error"] == "invalid_grant"


def test_a_family_is_one_chain_of_rows(world, app_):  # noqa: F811
    first = password_tokens(app_)
    _, second = refresh(app_, first["refresh_token"])
    other = password_tokens(app_)
    with session_scope() as db:
        def row(tokens: dict) -> m.Token:
            return db.exec(select(m.Token).where(
                m.Token.access_token_hash == oauth.digest(tokens["access_token"]))).one()
        assert row(first).family == row(first).name == row(second).family
        assert row(other).family == row(other).name != row(first).family
        assert not row(first).public_client
