"""The id_token of an upstream OpenID Connect provider, verified at the callback against the
issuer's keys (a local stand-in signs it and serves /jwks): a good token signs in with its
claims; a bad signature, audience, expiry, nonce, issuer or algorithm refuses the sign-in with
nothing written; an unknown key id fetches the keys once more."""

from __future__ import annotations

import dataclasses
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import OctKey, RSAKey
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.federation import id_tokens, upstream
from tests.api.test_federation_api import GOOGLE_USER, begin, error_of, setup
from tests.upstream_stub import UpstreamStub

GOOGLE = "https://accounts.google.com"


@pytest.fixture(autouse=True)
def fresh_keys():
    id_tokens.forget_keys()
    yield
    id_tokens.forget_keys()


@pytest.fixture
def google(database, monkeypatch):
    with UpstreamStub(user=GOOGLE_USER) as stub:
        keys = dataclasses.replace(upstream.settings, google_jwks=stub.base + "/jwks")
        monkeypatch.setattr(upstream, "settings", keys)
        yield stub


def users_of(org_name: str) -> list[m.User]:
    with session_scope() as db:
        return list(db.exec(select(m.User).where(m.User.owner == org_name)).all())


def started(client, app, provider) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(begin(client, app, provider)).query).items()}


def callback(client, query):
    return client.get("/callback", params={"code": "the-code", "state": query["state"]}, follow_redirects=False)


def test_a_good_id_token_signs_in_with_its_claims(make_org, google):
    org, app, provider = setup(make_org, google, "Google")
    client = TestClient(api)
    query = started(client, app, provider)
    # the verified email wins over the user info's
    google.id_token = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", query["nonce"],
                                                              email="verified@example.com"))
    answer = callback(client, query)
    assert answer.headers["location"] == "/", error_of(answer.headers["location"])
    [user] = users_of(org.name)
    assert user.third_party_ids == {"google": "108234"} and user.email == "verified@example.com"
    assert len(google.to("/jwks")) == 1


@pytest.mark.parametrize(("change", "message"), [
    ("signature", "the ID token has an invalid signature"),
    ("aud", "the ID token is not for this client"),
    ("exp", "the ID token has expired"),
    ("nonce", "the ID token does not carry the nonce of this sign-in"),
    ("iss", "the ID token was issued by 'https://evil.example.com'"),
    ("hmac", "the ID token is signed with an algorithm that is not accepted"),
    ("azp", "has several audiences and was not issued to this client"),
    ("future", "the ID token was issued in the future"),
    ("sub", "the user info and the ID token name different subjects"),
])
def test_a_bad_id_token_refuses_the_sign_in_and_writes_nothing(make_org, google, change, message):
    org, app, provider = setup(make_org, google, "Google")
    client = TestClient(api)
    query = started(client, app, provider)
    claims = google.signer.claims(GOOGLE, "upstream-client", query["nonce"])
    now = int(time.time())
    over = {"aud": {"aud": "another-client"}, "exp": {"exp": now - 600, "iat": now - 1200},
            "nonce": {"nonce": "another-nonce"}, "iss": {"iss": "https://evil.example.com"},
            "azp": {"aud": ["upstream-client", "another-client"], "azp": "another-client"},
            "future": {"iat": now + 3600}, "sub": {"sub": "someone-else"}}.get(change, {})
    claims.update(over)
    if change == "signature":  # another key, naming the stand-in's key id
        token = google.signer.sign(claims, key=RSAKey.generate_key(2048), kid=google.signer.keys[0].kid)
    elif change == "hmac":
        token = google.signer.sign(claims, key=OctKey.import_key("upstream-secret-upstream-secret-32"), alg="HS256")
    else:
        token = google.signer.sign(claims)
    google.id_token = token
    answer = callback(client, query)
    assert message in error_of(answer.headers["location"])
    assert users_of(org.name) == []
    assert "iam_session" not in client.cookies


def test_an_unknown_key_id_fetches_the_keys_once_more(make_org, google):
    org, app, provider = setup(make_org, google, "Google")
    client = TestClient(api)
    query = started(client, app, provider)
    google.id_token = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", query["nonce"]))
    assert callback(client, query).headers["location"] == "/"
    google.signer.rotate()  # the issuer signs with a new key: the cached set lacks it
    browser = TestClient(api)
    query = started(browser, app, provider)
    google.id_token = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", query["nonce"]))
    assert callback(browser, query).headers["location"] == "/"
    assert len(google.to("/jwks")) == 2
    # a made-up key id right after: no third fetch (at most one per minute), and a refusal
    browser = TestClient(api)
    query = started(browser, app, provider)
    google.id_token = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", query["nonce"]),
                                         kid="made-up")
    assert "signed by an unknown key" in error_of(callback(browser, query).headers["location"])
    assert len(google.to("/jwks")) == 2 and len(users_of(org.name)) == 1


def test_custom_provider_by_discovery_verifies_with_its_jwks_uri(make_org):
    with UpstreamStub(user={"sub": "c-1", "preferred_username": "cleo", "email": "cleo@example.com"}) as stub:
        stub.discovery = {"issuer": stub.base, "authorization_endpoint": stub.base + "/authorize",
                          "token_endpoint": stub.base + "/token", "userinfo_endpoint": stub.base + "/userinfo",
                          "jwks_uri": stub.base + "/jwks"}
        org, app, provider = setup(make_org, stub, "Custom", custom_auth_url="", custom_token_url="",
                                   custom_user_info_url="", issuer_url=stub.base, scopes="openid email")
        client = TestClient(api)
        query = started(client, app, provider)
        stub.id_token = stub.signer.sign(stub.signer.claims(stub.base, "upstream-client", "wrong-nonce", sub="c-1"))
        assert "nonce" in error_of(callback(client, query).headers["location"])
        query = started(client, app, provider)
        stub.id_token = stub.signer.sign(stub.signer.claims(stub.base, "upstream-client", query["nonce"], sub="c-1"))
        assert callback(client, query).headers["location"] == "/"
    [user] = users_of(org.name)
    assert user.third_party_ids == {"custom": "c-1"} and user.name == "cleo"


def test_without_an_id_token_the_user_info_speaks(make_org, google):
    org, app, provider = setup(make_org, google, "Google")
    client = TestClient(api)
    assert callback(client, started(client, app, provider)).headers["location"] == "/"
    assert google.to("/jwks") == [] and users_of(org.name)[0].email == "gina@example.com"


def test_verify_refuses_what_is_not_a_signed_jwt():
    expected = id_tokens.Expected("https://keys.example.com/jwks", (GOOGLE,), "client")
    for token in ("", "abc", "a.b.c", "x" * 20000, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."):
        with pytest.raises(id_tokens.ServiceError):
            id_tokens.verify(token, expected)
