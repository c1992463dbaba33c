"""DPoP (RFC 9449) through HTTP: tokens bound to the client's key at the token endpoint, used
with proofs at userinfo, described by introspection; the application's options (require DPoP,
require nonces); public clients' refresh tokens bound to the key; and the proofs that must be
refused (replayed, wrong htm or htu, stale or future iat, wrong ath, another key, malformed).
docs/api.md "Standards", docs/security.md "PAR, JAR and DPoP"."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import jwt
import pytest

from iam_console.oauth import dpop
from tests.api.par_jar_dpop_kit import (
    INTROSPECT_URL,
    PAR_URL,
    TOKEN_URL,
    USERINFO_URL,
    client,
    ec_key,
    jkt,
    proof,
    rsa_key,
    token_rows,
)
from tests.api.test_oauth import PASSWORD, REDIRECT, code_for, exchange, make_app, pkce, row_of
from tests.api.test_par_jar import code_of, pushed_code_request, sign_in


@pytest.fixture
def org(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com")
    return org.name


@pytest.fixture
def app_(org):
    return make_app(org)


def client_credentials(app, dpop_proof: str | None = None, **headers) -> tuple[int, dict, dict]:
    if dpop_proof is not None:
        headers["DPoP"] = dpop_proof
    response = client().post("/api/login/oauth/access_token", headers=headers, data={
        "grant_type": "client_credentials", "client_id": app.client_id, "client_secret": app.client_secret})
    return response.status_code, response.json(), response.headers


def password_grant(app, key) -> dict:
    response = client().post("/api/login/oauth/access_token", headers={"DPoP": proof(key, "POST", TOKEN_URL)},
                             data={"grant_type": "password", "client_id": app.client_id,
                                   "client_secret": app.client_secret, "username": "alice", "password": PASSWORD,
                                   "scope": "openid email"})
    assert response.status_code == 200, response.json()
    return response.json()


def userinfo(token: str, *, scheme: str = "DPoP", dpop_proof: str | None = None):
    headers = {"Authorization": f"{scheme} {token}"}
    if dpop_proof is not None:
        headers["DPoP"] = dpop_proof
    return client().get("/api/userinfo", headers=headers)


def introspect(app, token: str, **headers) -> dict:
    response = client().post("/api/login/oauth/introspect", data={"token": token}, headers=headers,
                             auth=(app.client_id, app.client_secret))
    assert response.status_code == 200, response.json()
    return response.json()


# --- binding ---

@pytest.mark.parametrize("make_key,alg", [(ec_key, "ES256"), (rsa_key, "RS256")])
def test_a_client_credentials_token_is_bound_to_the_proofs_key(app_, make_key, alg):
    key = make_key()
    status, answer, headers = client_credentials(app_, proof(key, "POST", TOKEN_URL, alg=alg))
    assert status == 200, answer
    assert answer["token_type"] == "DPoP"
    assert jwt.decode(answer["access_token"], options={"verify_signature": False})["cnf"] == {"jkt": jkt(key)}
    assert row_of(answer["access_token"]).d_po_p_jkt == jkt(key)
    assert headers[dpop.HEADER]  # a nonce the next proof may carry
    described = introspect(app_, answer["access_token"])
    assert described["active"] is True and described["token_type"] == "DPoP"
    assert described["cnf"] == {"jkt": jkt(key)}


def test_without_a_proof_the_token_is_a_bearer_token(app_):
    status, answer, headers = client_credentials(app_)
    assert status == 200 and answer["token_type"] == "Bearer"
    assert "cnf" not in jwt.decode(answer["access_token"], options={"verify_signature": False})
    assert dpop.HEADER not in headers
    assert "cnf" not in introspect(app_, answer["access_token"])


def test_userinfo_takes_a_dpop_token_with_a_proof_of_its_key(org, app_):
    key = ec_key()
    token = password_grant(app_, key)["access_token"]
    answer = userinfo(token, dpop_proof=proof(key, "GET", USERINFO_URL, access_token=token))
    assert answer.status_code == 200, answer.json()
    assert answer.json()["email"] == "alice@example.com"

    # as a Bearer token (here and as an API credential), without a proof, with another key's, for
    # another token, replayed: refused
    assert userinfo(token, scheme="Bearer").status_code == 401
    assert client().get("/api/get-account", headers={"Authorization": f"Bearer {token}"}).json()["status"] == "error"
    assert client().get("/api/user", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    bare = userinfo(token)
    assert bare.status_code == 401 and bare.headers["WWW-Authenticate"].startswith("DPoP ")
    assert 'error="invalid_dpop_proof"' in bare.headers["WWW-Authenticate"]
    foreign = userinfo(token, dpop_proof=proof(ec_key(), "GET", USERINFO_URL, access_token=token))
    assert foreign.status_code == 401 and foreign.headers["WWW-Authenticate"].startswith('DPoP error="invalid_token"')
    wrong_ath = userinfo(token, dpop_proof=proof(key, "GET", USERINFO_URL, access_token="another token"))
    assert wrong_ath.status_code == 401 and wrong_ath.json()["error"] == "invalid_dpop_proof"
    used = proof(key, "POST", USERINFO_URL, access_token=token)
    assert client().post("/api/userinfo", headers={"Authorization": f"DPoP {token}", "DPoP": used}).status_code == 200
    replayed = client().post("/api/userinfo", headers={"Authorization": f"DPoP {token}", "DPoP": used})
    assert replayed.status_code == 401 and "used before" in replayed.json()["error_description"]


def test_a_bearer_token_is_not_a_dpop_token(org, app_):
    _, answer, _ = client_credentials(app_)
    key = ec_key()
    token = answer["access_token"]
    refused = userinfo(token, dpop_proof=proof(key, "GET", USERINFO_URL, access_token=token))
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_token"


# --- bad proofs ---

def bad_proofs(key) -> dict[str, str]:
    now = int(time.time())
    good = proof(key, "POST", TOKEN_URL)
    header, body, _ = good.split(".")
    other = proof(ec_key(), "POST", TOKEN_URL).split(".")
    return {
        "wrong htm": proof(key, "GET", TOKEN_URL),
        "wrong htu": proof(key, "POST", "http://testserver/api/userinfo"),
        "another host": proof(key, "POST", "https://evil.example/api/login/oauth/access_token"),
        "stale iat": proof(key, "POST", TOKEN_URL, iat=now - 3600),
        "future iat": proof(key, "POST", TOKEN_URL, iat=now + 3600),
        "no jti": proof(key, "POST", TOKEN_URL, jti=None),
        "wrong typ": proof(key, "POST", TOKEN_URL, header={"typ": "JWT"}),
        "private key in the header": proof(key, "POST", TOKEN_URL, header={"jwk": {
            **jwt.algorithms.ECAlgorithm.to_jwk(key, as_dict=True)}}),
        "unsigned": jwt.encode({"jti": "x", "htm": "POST", "htu": TOKEN_URL, "iat": now}, None, algorithm="none",
                               headers={"typ": "dpop+jwt", "jwk": jwt.algorithms.ECAlgorithm.to_jwk(
                                   key.public_key(), as_dict=True)}),
        "signed by another key": f"{header}.{body}.{other[2]}",
        "not a JWT": "not-a-jwt",
        "two proofs": f"{good}, {proof(key, 'POST', TOKEN_URL)}",
    }


@pytest.mark.parametrize("case", ["wrong htm", "wrong htu", "another host", "stale iat", "future iat", "no jti",
                                  "wrong typ", "private key in the header", "unsigned", "signed by another key",
                                  "not a JWT", "two proofs"])
def test_bad_proofs_get_no_token(app_, case):
    before = token_rows()
    status, answer, _ = client_credentials(app_, bad_proofs(ec_key())[case])
    assert status == 400 and answer["error"] == "invalid_dpop_proof", (case, answer)
    assert token_rows() == before


def test_a_replayed_proof_gets_no_token(app_):
    key = ec_key()
    used = proof(key, "POST", TOKEN_URL)
    assert client_credentials(app_, used)[0] == 200
    before = token_rows()
    status, answer, _ = client_credentials(app_, used)
    assert status == 400 and answer["error"] == "invalid_dpop_proof" and "used before" in answer["error_description"]
    assert token_rows() == before


ANOTHER_WORKER = """
import json, sys
from fastapi.testclient import TestClient
from iam_console.api.app import api
job = json.loads(sys.stdin.read())
response = TestClient(api).post("/api/login/oauth/access_token", headers={"DPoP": job["proof"]}, data=job["form"])
print(json.dumps([response.status_code, response.json()]))
"""


def test_a_proof_used_at_one_worker_is_refused_at_another(app_):
    """Another process (its own memory, the same database, as a worker of a multi-worker server)
    uses the proof first; here it is a replay."""
    key = ec_key()
    used = proof(key, "POST", TOKEN_URL)
    form = {"grant_type": "client_credentials", "client_id": app_.client_id, "client_secret": app_.client_secret}
    worker = subprocess.run([sys.executable, "-c", ANOTHER_WORKER], input=json.dumps({"proof": used, "form": form}),
                            capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    assert worker.returncode == 0, worker.stderr
    status, answer = json.loads(worker.stdout.splitlines()[-1])
    assert status == 200 and answer["token_type"] == "DPoP", answer
    status, answer, _ = client_credentials(app_, used)
    assert status == 400 and "used before" in answer["error_description"]


def test_a_proof_sent_to_introspection_is_checked(app_):
    _, answer, _ = client_credentials(app_)
    response = client().post("/api/login/oauth/introspect", data={"token": answer["access_token"]},
                             headers={"DPoP": proof(ec_key(), "POST", TOKEN_URL)},
                             auth=(app_.client_id, app_.client_secret))
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof"
    assert introspect(app_, answer["access_token"], DPoP=proof(ec_key(), "POST", INTROSPECT_URL))["active"]


# --- the application's options ---

def test_an_application_may_require_dpop(org):
    app = make_app(org, require_dpop=True)
    before = token_rows()
    status, answer, _ = client_credentials(app)
    assert status == 400 and answer["error"] == "invalid_dpop_proof"
    assert token_rows() == before
    assert client_credentials(app, proof(ec_key(), "POST", TOKEN_URL))[1]["token_type"] == "DPoP"


def test_an_application_may_require_nonces(org):
    app = make_app(org, require_dpop_nonce=True)
    key = ec_key()
    status, answer, headers = client_credentials(app, proof(key, "POST", TOKEN_URL))
    assert status == 400 and answer["error"] == "use_dpop_nonce"
    nonce = headers[dpop.HEADER]
    status, answer, _ = client_credentials(app, proof(key, "POST", TOKEN_URL, nonce="1.forged"))
    assert status == 400 and answer["error"] == "use_dpop_nonce"
    status, answer, headers = client_credentials(app, proof(key, "POST", TOKEN_URL, nonce=nonce))
    assert status == 200 and answer["token_type"] == "DPoP"
    token = answer["access_token"]
    # at the resource too: a 401 with the challenge and a nonce
    refused = userinfo(token, dpop_proof=proof(key, "GET", USERINFO_URL, access_token=token))
    assert refused.status_code == 401 and refused.json()["error"] == "use_dpop_nonce"
    assert refused.headers["WWW-Authenticate"].startswith('DPoP error="use_dpop_nonce"')
    assert refused.headers[dpop.HEADER]


def test_a_nonce_of_a_past_window_expires(org, monkeypatch):
    app = make_app(org, require_dpop_nonce=True)
    key = ec_key()
    nonce = client_credentials(app, proof(key, "POST", TOKEN_URL))[2][dpop.HEADER]
    later = time.time() + 2 * dpop.NONCE_WINDOW
    monkeypatch.setattr(dpop.time, "time", lambda: later)
    status, answer, _ = client_credentials(app, proof(key, "POST", TOKEN_URL, nonce=nonce, iat=int(later)))
    assert status == 400 and answer["error"] == "use_dpop_nonce"


# --- codes and refresh tokens ---

def test_a_public_clients_refresh_token_is_bound_to_its_key(org, app_):
    key = ec_key()
    code, verifier = code_for(app_, org)
    response = client().post("/api/login/oauth/access_token", headers={"DPoP": proof(key, "POST", TOKEN_URL)},
                             data={"grant_type": "authorization_code", "client_id": app_.client_id, "code": code,
                                   "code_verifier": verifier})
    tokens = response.json()
    assert response.status_code == 200 and tokens["token_type"] == "DPoP", tokens
    assert introspect(app_, tokens["refresh_token"])["cnf"] == {"jkt": jkt(key)}

    def refresh(dpop_proof: str | None):
        return client().post("/api/login/oauth/access_token", headers={"DPoP": dpop_proof} if dpop_proof else {},
                             data={"grant_type": "refresh_token", "client_id": app_.client_id,
                                   "refresh_token": tokens["refresh_token"]})

    for refused in (refresh(None), refresh(proof(ec_key(), "POST", TOKEN_URL))):
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_dpop_proof"
    again = refresh(proof(key, "POST", TOKEN_URL))
    assert again.status_code == 200 and again.json()["token_type"] == "DPoP"
    assert row_of(again.json()["access_token"]).d_po_p_jkt == jkt(key)


def test_a_confidential_clients_refresh_token_is_not_bound(org, app_):
    key = ec_key()
    code, verifier = code_for(app_, org)
    response = client().post("/api/login/oauth/access_token", headers={"DPoP": proof(key, "POST", TOKEN_URL)},
                             data={"grant_type": "authorization_code", "client_id": app_.client_id, "code": code,
                                   "code_verifier": verifier, "client_secret": app_.client_secret})
    refreshed = client().post("/api/login/oauth/access_token", data={
        "grant_type": "refresh_token", "client_id": app_.client_id, "client_secret": app_.client_secret,
        "refresh_token": response.json()["refresh_token"]})
    assert refreshed.status_code == 200 and refreshed.json()["token_type"] == "Bearer"


def test_a_code_pushed_with_a_proof_is_bound_to_its_key(org, app_):
    key = ec_key()
    verifier, challenge = pkce()
    response = client().post("/api/login/oauth/par", headers={"DPoP": proof(key, "POST", PAR_URL)}, data={
        "client_id": app_.client_id, "client_secret": app_.client_secret, **pushed_code_request(challenge)})
    assert response.status_code == 201, response.json()
    query = {"client_id": app_.client_id, "request_uri": response.json()["request_uri"]}
    code = code_of(sign_in(org, app_, query))
    status, answer = exchange(app_, code, verifier, redirect_uri=REDIRECT)  # no proof
    assert status == 400 and answer["error"] == "invalid_dpop_proof"
    response = client().post("/api/login/oauth/access_token", headers={"DPoP": proof(key, "POST", TOKEN_URL)},
                             data={"grant_type": "authorization_code", "client_id": app_.client_id, "code": code,
                                   "code_verifier": verifier})
    assert response.status_code == 200 and response.json()["token_type"] == "DPoP"


def test_a_dpop_jkt_that_is_not_the_proofs_key_is_refused_at_the_push(app_):
    _, challenge = pkce()
    response = client().post("/api/login/oauth/par", headers={"DPoP": proof(ec_key(), "POST", PAR_URL)}, data={
        "client_id": app_.client_id, "client_secret": app_.client_secret,
        **pushed_code_request(challenge, dpop_jkt=jkt(ec_key()))})
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof"
