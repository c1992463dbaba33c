"""Token exchange (RFC 8693) through the token endpoint: delegation (`act`), audience and scope
narrowing, the application's list of audiences, isolation between organizations, and bad input
that writes nothing (oauth/exchange.py)."""

from __future__ import annotations

import jwt
import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import lookup
from iam_console.db import session_scope
from iam_console.oauth import oauth
from tests.api.test_oauth import ALL_GRANTS, PASSWORD, decode, make_app, token_call

EXCHANGE = oauth.EXCHANGE_GRANT
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
RESOURCE = "https://api.example.com/orders"


@pytest.fixture
def org(make_org, make_user):
    organization = make_org()
    make_user(owner=organization.name, name="alice", password=PASSWORD, email="alice@example.com")
    return organization.name


def exchanger(org: str, audiences: list[str] | None = None, **fields) -> m.Application:
    return make_app(org, grant_types=[*ALL_GRANTS, EXCHANGE], token_exchange_audiences=audiences or [], **fields)


def user_token(app: m.Application, scope: str = "openid profile") -> str:
    status, body = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                              username="alice", password=PASSWORD, scope=scope)
    assert status == 200, body
    return body["access_token"]


def app_token(app: m.Application) -> str:
    status, body = token_call(grant_type="client_credentials", client_id=app.client_id,
                              client_secret=app.client_secret)
    assert status == 200, body
    return body["access_token"]


def exchange(client: m.Application, subject: str, **extra) -> tuple[int, dict]:
    return token_call(**{"grant_type": EXCHANGE, "client_id": client.client_id, "client_secret": client.client_secret,
                         "subject_token": subject, "subject_token_type": ACCESS, **extra})


def claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def token_rows(org: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.Token).where(m.Token.organization == org)).one()


def test_an_exchange_narrows_audience_and_scope_and_never_outlives_its_subject(org):
    downstream = make_app(org)
    client = exchanger(org, [downstream.client_id])
    subject = user_token(client)  # lives 2 hours
    client.expire_in_hours = 500  # the client's own tokens live longer than the subject token now
    with session_scope() as db:
        db.add(client)
    lookup.forget()
    status, body = exchange(client, subject, audience=downstream.client_id, scope="openid")
    assert status == 200, body
    assert body["issued_token_type"] == ACCESS and body["token_type"] == "Bearer" and body["scope"] == "openid"
    assert "refresh_token" not in body and "id_token" not in body
    issued = decode(body["access_token"], downstream.client_id)
    assert issued["aud"] == [downstream.client_id] and issued["azp"] == client.client_id
    assert issued["sub"] == claims(subject)["sub"] and "act" not in issued
    assert issued["exp"] <= claims(subject)["exp"] and body["expires_in"] <= 2 * 3600
    # the downstream application's relying party reads it through introspection
    answer = TestClient(api).post("/api/login/oauth/introspect", data={"token": body["access_token"]},
                                  auth=(downstream.client_id, downstream.client_secret)).json()
    assert answer["active"] is True and answer["scope"] == "openid" and answer["aud"] == [downstream.client_id]
    # no audience asked: the client's own, and the subject token's scope
    status, body = exchange(client, subject)
    assert status == 200 and claims(body["access_token"])["aud"] == [client.client_id]
    assert body["scope"] == "openid profile"


def test_an_actor_token_gives_act_and_a_chain_nests_the_actors(org):
    second = exchanger(org)
    first = exchanger(org, [second.client_id])
    second.token_exchange_audiences = [first.client_id]
    with session_scope() as db:
        db.add(second)
    status, body = exchange(first, user_token(first), actor_token=app_token(first), actor_token_type=ACCESS,
                            audience=second.client_id)
    assert status == 200, body
    once = body["access_token"]
    assert claims(once)["act"] == {"sub": f"admin/{first.name}"}
    status, body = exchange(second, once, actor_token=app_token(second), actor_token_type=ACCESS)
    assert status == 200, body
    assert claims(body["access_token"])["act"] == {"sub": f"admin/{second.name}",
                                                   "act": {"sub": f"admin/{first.name}"}}
    introspected = TestClient(api).post("/api/login/oauth/introspect", data={"token": body["access_token"]},
                                        auth=(second.client_id, second.client_secret)).json()
    assert introspected["act"]["act"] == {"sub": f"admin/{first.name}"}
    # without an actor token the delegation stays in the token: no exchange drops it
    status, body = exchange(second, once, audience=first.client_id)
    assert status == 200 and claims(body["access_token"])["act"] == {"sub": f"admin/{first.name}"}


def test_a_chain_of_more_than_five_actors_is_refused(org):
    one, two = exchanger(org), exchanger(org)
    for app, other in ((one, two), (two, one)):
        app.token_exchange_audiences = [other.client_id]
        with session_scope() as db:
            db.add(app)
    token, holder, other = user_token(one), one, two
    for _ in range(5):
        status, body = exchange(holder, token, actor_token=app_token(holder), actor_token_type=ACCESS,
                                audience=other.client_id)
        assert status == 200, body
        token, holder, other = body["access_token"], other, holder
    status, body = exchange(holder, token, actor_token=app_token(holder), actor_token_type=ACCESS,
                            audience=other.client_id)
    assert (status, body["error"]) == (400, "invalid_request") and "chain" in body["error_description"]


def test_resource_joins_aud_only_when_the_application_lists_it(org, make_org):
    client = exchanger(org, [RESOURCE])
    subject = user_token(client)
    status, body = exchange(client, subject, resource=RESOURCE)
    assert status == 200 and claims(body["access_token"])["aud"] == [RESOURCE]
    for asked in ({"resource": "https://other.example.com/"}, {"audience": make_app(org).client_id}):
        before = token_rows(org)
        status, body = exchange(client, subject, **asked)
        assert (status, body["error"]) == (400, "invalid_target"), asked
        assert token_rows(org) == before


def test_never_broader_scope_than_the_subject_token(org):
    client = exchanger(org)
    subject = user_token(client, "openid")
    before = token_rows(org)
    status, body = exchange(client, subject, scope="openid profile")
    assert (status, body["error"]) == (400, "invalid_scope")
    assert token_rows(org) == before


def test_another_organizations_client_is_refused(org, make_org, make_user):
    other = make_org().name
    make_user(owner=other, name="alice", password=PASSWORD)
    subject = user_token(exchanger(org))
    foreign = exchanger(other)
    status, body = exchange(foreign, subject)
    assert (status, body["error"]) == (400, "invalid_grant") and "organization" in body["error_description"]
    # nor does an application list another organization's client as an audience
    mine = exchanger(org, [foreign.client_id])
    status, body = exchange(mine, user_token(mine), audience=foreign.client_id)
    assert (status, body["error"]) == (400, "invalid_target")
    # and an actor token of another organization is refused
    status, body = exchange(mine, user_token(mine), actor_token=app_token(foreign), actor_token_type=ACCESS)
    assert (status, body["error"]) == (400, "invalid_grant")


def test_the_grant_must_be_listed_and_the_subject_token_meant_for_the_client(org):
    plain = make_app(org)
    subject = user_token(plain)
    status, body = exchange(plain, subject)
    assert (status, body["error"]) == (400, "unauthorized_client")
    bystander = exchanger(org)
    status, body = exchange(bystander, subject)
    assert (status, body["error"]) == (400, "invalid_grant") and "not issued to this client" in \
        body["error_description"]
    status, body = token_call(grant_type=EXCHANGE, client_id=bystander.client_id, client_secret="wrong",
                              subject_token=subject, subject_token_type=ACCESS)
    assert (status, body["error"]) == (401, "invalid_client")


def test_dead_and_malformed_tokens_are_refused_and_nothing_is_written(org):
    client = exchanger(org)
    subject = user_token(client)
    cases = [
        ({"subject_token": ""}, "invalid_request"),
        ({"subject_token_type": "urn:ietf:params:oauth:token-type:saml2"}, "invalid_request"),
        ({"requested_token_type": "urn:ietf:params:oauth:token-type:refresh_token"}, "invalid_request"),
        ({"subject_token": subject + "x"}, "invalid_grant"),
        ({"subject_token": "not-a-token"}, "invalid_grant"),
        ({"actor_token_type": ACCESS}, "invalid_request"),
        ({"actor_token": "nope", "actor_token_type": ACCESS}, "invalid_grant"),
        ({"scope": "openid bad\"scope"}, "invalid_scope"),
        ({"resource": "https://api.example.com/#frag"}, "invalid_target"),
    ]
    before = token_rows(org)
    for extra, error in cases:
        status, body = exchange(client, **{"subject": extra.pop("subject_token", subject)}, **extra)
        assert (status, body["error"]) == (400, error), (extra, body)
    assert token_rows(org) == before
    TestClient(api).post("/api/login/oauth/revoke", data={"token": subject}, auth=(client.client_id,
                                                                                  client.client_secret))
    status, body = exchange(client, subject)
    assert (status, body["error"]) == (400, "invalid_grant")


def test_application_tokens_are_no_subject(org):
    client = exchanger(org)
    status, body = exchange(client, app_token(client))
    assert (status, body["error"]) == (400, "invalid_grant") and "user" in body["error_description"]


def test_discovery_advertises_the_grant_and_applications_store_their_audiences(admin, org):
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        assert EXCHANGE in TestClient(api).get(path).json()["grant_types_supported"]
    app = make_app(org)
    record = admin.get("/api/get-application", params={"id": f"admin/{app.name}"}).json()["data"]
    record |= {"grantTypes": [EXCHANGE], "tokenExchangeAudiences": [RESOURCE], "failedSigninLimit": 5,
               "failedSigninFrozenTime": 15}
    answer = admin.post("/api/update-application", params={"id": f"admin/{app.name}"}, json=record).json()
    assert answer["status"] == "ok", answer
    stored = admin.get("/api/get-application", params={"id": f"admin/{app.name}"}).json()["data"]
    assert stored["grantTypes"] == [EXCHANGE] and stored["tokenExchangeAudiences"] == [RESOURCE]
    refused = admin.post("/api/update-application", params={"id": f"admin/{app.name}"},
                         json=record | {"tokenExchangeAudiences": ["x" * 300]}).json()
    assert refused["status"] == "error" and "Token exchange audiences" in refused["msg"]
