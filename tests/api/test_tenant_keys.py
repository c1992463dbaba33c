"""Keys across organizations (issue 10, item 4), over a real socket (tests/api/sdk_server.py).

An organization's admin holds the private keys of their organization's certs (download-cert).
A relying party of another organization's application that follows discovery as OpenID Connect
describes it (the discovery document's `issuer` and `jwks_uri`, its own client id as `aud`;
PyJWT's PyJWKClient picks the key by the token's `kid`) must never accept a token signed with
such a key: neither through the global discovery document nor through its application's own,
whatever `kid` the forger writes, and not when the forger's cert has the name of a cert the
server signs with (given duplicate `kid`s, a relying party takes the first key listed, so a
name taken first wins). The server's own checks (Bearer calls, userinfo, introspection,
logout, refresh) take a token's key from the token's application, whatever its `kid` says."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import casdoor
import httpx
import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from joserfc.jwk import ECKey, RSAKey
from sqlmodel import select

from iam_console import models as m
from iam_console.core.builtin import ADMIN_OWNER, BUILT_IN_CERT, BUILT_IN_ORG
from iam_console.db import session_scope
from iam_console.oauth import jwt_tokens, oauth
from iam_console.settings import settings
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import PASSWORD, make_app, thumbprint
from tests.conftest import unique

ADMIN_PASSWORD = "Tenant-keys-1"
USER = "alice"


def reachable(server: str, url: str) -> str:
    """A URL of the server's public origin (IAM_ORIGIN, http://testserver in the tests) at the
    test server's socket, where DNS would send a relying party."""
    assert url.startswith(settings.origin + "/"), url
    return server + url[len(settings.origin):]


def global_discovery() -> str:
    return f"{settings.origin}/.well-known/openid-configuration"


def application_discovery(application: str) -> str:
    return f"{settings.origin}/.well-known/{quote(application, safe='')}/openid-configuration"


class RelyingParty:
    """An application's relying party: configured with a discovery URL and its client id, nothing
    else; it reads the discovery document once and keeps the key set, as PyJWKClient does."""

    def __init__(self, server: str, discovery_url: str, client_id: str) -> None:
        response = httpx.get(reachable(server, discovery_url))
        assert response.status_code == 200, (discovery_url, response.status_code, response.text)
        self.document, self.client_id = response.json(), client_id
        self.jwks_uri = reachable(server, self.document["jwks_uri"])
        self.keys = jwt.PyJWKClient(self.jwks_uri)

    def kids(self) -> set[str]:
        return {key["kid"] for key in httpx.get(self.jwks_uri).json()["keys"]}

    def accepts(self, token: str) -> bool:
        try:
            key = self.keys.get_signing_key_from_jwt(token)
            jwt.decode(token, key, algorithms=self.document["id_token_signing_alg_values_supported"],
                       audience=self.client_id, issuer=self.document["issuer"])
        except jwt.PyJWTError:
            return False
        return True


@dataclass(frozen=True)
class Tenant:
    """An organization and its admin, signed in over the socket."""

    org: str
    admin: httpx.Client

    def add_cert(self, name: str, algorithm: str = "RS256") -> None:
        answer = self.admin.post("/api/add-cert", json={
            "owner": self.org, "name": name, "displayName": name, "scope": "JWT", "type": "x509",
            "cryptoAlgorithm": algorithm, "bitSize": 0 if algorithm.startswith("ES") else 2048,
            "expireInYears": 1, "certificate": "", "privateKey": ""}).json()
        assert answer["data"] == "Affected", answer

    def download(self, name: str, which: str) -> str:
        response = self.admin.get("/api/download-cert", params={"id": f"{self.org}/{name}", "file": which})
        assert response.status_code == 200 and "-----BEGIN" in response.text, response.text
        return response.text

    def hold(self, name: str) -> HeldKey:
        """A cert the admin adds in their organization, and its private key as they download it."""
        self.add_cert(name)
        return HeldKey(name, self.download(name, "certificate"), self.download(name, "privateKey"))


@dataclass(frozen=True)
class HeldKey:
    name: str
    certificate: str
    private_key: str

    def sign(self, audience: str, kid: str) -> str:
        """An access token (the id_token, as in Casdoor) for `audience`, with this server as issuer."""
        now = int(time.time())
        claims = {"iss": settings.origin, "sub": "forged", "aud": [audience], "azp": audience, "iat": now,
                  "nbf": now, "exp": now + 3600, "tokenType": "access-token", "owner": BUILT_IN_ORG,
                  "name": "admin", "isAdmin": True}
        return jwt.encode(claims, self.private_key, algorithm="RS256", headers={"kid": kid})


@pytest.fixture
def tenants(make_org, make_user, api_server) -> Iterator[tuple[Tenant, Tenant]]:  # noqa: F811
    """Organization A, whose admin forges, and organization B, whose application's relying party is the target."""
    signed_in = []
    for _ in range(2):
        org = make_org().name
        make_user(owner=org, name="boss", password=ADMIN_PASSWORD, is_admin=True)
        # the console's Origin, as its page sends with a write (the CSRF guard asks for it)
        client = httpx.Client(base_url=api_server, headers={"Origin": settings.origin})
        answer = client.post("/api/login", json={"organization": org, "username": "boss",
                                                 "password": ADMIN_PASSWORD}).json()
        assert answer["status"] == "ok", answer
        signed_in.append(Tenant(org, client))
    yield signed_in[0], signed_in[1]
    for tenant in signed_in:
        tenant.admin.close()


def password_tokens(server: str, app: m.Application) -> dict:
    response = httpx.post(f"{server}/api/login/oauth/access_token", data={
        "grant_type": "password", "client_id": app.client_id, "client_secret": app.client_secret,
        "username": USER, "password": PASSWORD, "scope": "openid profile"})
    assert response.status_code == 200, response.text
    return response.json()


# --- relying parties ---

@pytest.mark.parametrize("discovery", ["global", "application"])
@pytest.mark.parametrize("signing_cert", ["shared", "own"])
def test_no_relying_party_trusts_a_key_another_organizations_admin_holds(
        tenants, make_user, api_server, discovery, signing_cert):  # noqa: F811
    a, b = tenants
    b_cert = unique("cert-b")
    # A's admin holds keys: a cert of their own, one named like the server's built-in cert,
    # and (before B adds it) one with the name of the cert B's application signs with
    held = [a.hold(unique("cert-a")), a.hold(BUILT_IN_CERT)]
    if signing_cert == "own":
        held.append(a.hold(b_cert))
        b.add_cert(b_cert)
    app = make_app(b.org, cert=b_cert if signing_cert == "own" else BUILT_IN_CERT)
    make_user(owner=b.org, name=USER, password=PASSWORD)
    url = global_discovery() if discovery == "global" else application_discovery(app.name)
    relying_party = RelyingParty(api_server, url, app.client_id)

    # the relying party works: the server's tokens verify wherever their key is published (the
    # global key set holds shared and built-in keys only, an application's key set its own)
    genuine = password_tokens(api_server, app)["id_token"]
    assert relying_party.accepts(genuine) is (discovery == "application" or signing_cert == "shared")

    for key in held:
        for kid in {key.name, thumbprint(key.certificate), *relying_party.kids()}:
            assert not relying_party.accepts(key.sign(app.client_id, kid)), (key.name, kid)


def test_the_global_key_set_holds_the_shared_and_built_in_keys_once_each(tenants, api_server):  # noqa: F811
    a, _ = tenants
    a.hold(unique("cert-a"))
    a.hold(BUILT_IN_CERT)
    keys = httpx.get(f"{api_server}/.well-known/jwks").json()["keys"]
    with session_scope() as db:
        published = db.exec(select(m.Cert.certificate).where(
            m.Cert.owner.in_((ADMIN_OWNER, BUILT_IN_ORG)), m.Cert.scope == "JWT", m.Cert.type == "x509",
            m.Cert.certificate != "")).all()
    kids = [key["kid"] for key in keys]
    assert sorted(kids) == sorted({thumbprint(certificate) for certificate in published})
    for key in keys:
        assert (RSAKey if key["kty"] == "RSA" else ECKey).import_key(key).thumbprint() == key["kid"]


# --- an application's own discovery document and key set ---

def test_an_applications_discovery_document_and_key_set(tenants, make_user, api_server):  # noqa: F811
    _, b = tenants
    name = unique("cert-b")
    b.add_cert(name)
    app = make_app(b.org, cert=name, custom_scopes=[{"scope": "photos.read", "displayName": "Photos"}])
    make_user(owner=b.org, name=USER, password=PASSWORD)
    general = httpx.get(f"{api_server}/.well-known/openid-configuration").json()
    response = httpx.get(f"{api_server}/.well-known/{app.name}/openid-configuration",
                         headers={"Origin": "https://rp.example"})
    assert response.status_code == 200 and response.headers["access-control-allow-origin"] == "*"
    own = response.json()
    assert own["issuer"] == general["issuer"] == settings.origin  # the `iss` of every token
    assert own["jwks_uri"] == f"{settings.origin}/.well-known/{app.name}/jwks"
    assert own["scopes_supported"] == [*general["scopes_supported"], "photos.read"]
    # registration and client metadata documents follow the organization's opt-in (docs/api.md
    # "Standards"): the general document names them when any organization opted in, as another
    # test's may have; this organization has not
    assert "registration_endpoint" not in own and "client_id_metadata_document_supported" not in own
    differing = ("jwks_uri", "scopes_supported", "registration_endpoint", "client_id_metadata_document_supported")
    assert {k: v for k, v in own.items() if k not in differing} == {
        k: v for k, v in general.items() if k not in differing}

    certificate = b.download(name, "certificate")
    kid = thumbprint(certificate)
    response = httpx.get(reachable(api_server, own["jwks_uri"]))
    assert response.headers["access-control-allow-origin"] == "*"
    der = x509.load_pem_x509_certificate(certificate.encode()).public_bytes(serialization.Encoding.DER)
    [key] = response.json()["keys"]
    assert (key["kid"], key["kty"], key["alg"], key["use"]) == (kid, "RSA", "RS256", "sig")
    assert key["x5c"] == [base64.standard_b64encode(der).decode()]

    tokens = password_tokens(api_server, app)
    assert jwt.get_unverified_header(tokens["access_token"]) == {"alg": "RS256", "kid": kid, "typ": "JWT"}
    assert jwt.get_unverified_header(tokens["refresh_token"])["kid"] == kid
    # the official SDK verifies with the application's certificate, as before
    sdk = casdoor.CasdoorSDK(endpoint=api_server, client_id=app.client_id, client_secret=app.client_secret,
                             certificate=certificate, org_name=b.org, application_name=app.name,
                             front_endpoint=api_server)
    assert sdk.parse_jwt_token(tokens["access_token"])["name"] == USER


def test_an_unknown_application_has_no_discovery_document_or_key_set(api_server):  # noqa: F811
    for path in ("openid-configuration", "jwks"):
        response = httpx.get(f"{api_server}/.well-known/no-such-app/{path}")
        assert response.status_code == 404, path
        assert response.json() == {"error": "not_found",
                                   "error_description": "The application: admin/no-such-app does not exist"}


# --- the server's own checks ---

@pytest.mark.parametrize("change", ["token re-pointed", "application's cert replaced", "application's cert now EC"])
def test_the_server_refuses_a_token_its_applications_cert_did_not_sign(
        tenants, make_user, api_server, change):  # noqa: F811
    _, b = tenants
    name = unique("cert-b")
    b.add_cert(name)
    app = make_app(b.org, cert=name)
    make_user(owner=b.org, name=USER, password=PASSWORD)
    tokens = password_tokens(api_server, app)
    access, refresh = tokens["access_token"], tokens["refresh_token"]
    bearer = {"Authorization": f"Bearer {access}"}
    assert httpx.get(f"{api_server}/api/userinfo", headers=bearer).status_code == 200

    if change == "token re-pointed":
        # the row names another application (signing with cert-built-in): its cert did not sign the token
        client = make_app(b.org)
        with session_scope() as db:
            row = db.exec(select(m.Token).where(m.Token.access_token_hash == oauth.digest(access))).one()
            row.application = client.name
            db.add(row)
    else:
        # B's admin gives the application another cert: what the old one signed is not its application's
        client, other = app, unique("cert-b")
        b.add_cert(other, "ES256" if change.endswith("EC") else "RS256")
        current = b.admin.get("/api/get-application", params={"id": f"admin/{app.name}"}).json()["data"]
        answer = b.admin.post("/api/update-application", params={"id": f"admin/{app.name}", "columns": "cert"},
                              json={**current, "cert": other}).json()
        assert answer["data"] == "Affected", answer

    assert httpx.get(f"{api_server}/api/userinfo", headers=bearer).status_code == 401
    assert httpx.get(f"{api_server}/api/get-account", headers=bearer).json()["status"] == "error"
    credentials = (client.client_id, client.client_secret)
    for token in (access, refresh):
        answer = httpx.post(f"{api_server}/api/login/oauth/introspect", data={"token": token}, auth=credentials)
        assert answer.json() == {"active": False}
    refreshed = httpx.post(f"{api_server}/api/login/oauth/access_token", data={
        "grant_type": "refresh_token", "refresh_token": refresh, "client_id": client.client_id,
        "client_secret": client.client_secret})
    assert (refreshed.status_code, refreshed.json()["error"]) == (400, "invalid_grant")
    logout = httpx.get(f"{api_server}/api/logout", params={"id_token_hint": access}).json()
    assert logout["status"] == "error", logout


def test_tokens_issued_with_the_cert_name_as_kid_still_work_at_the_server(
        tenants, make_user, api_server, monkeypatch):  # noqa: F811
    """Tokens from before keys were named by thumbprint (`kid` = the cert's name) live on at the
    server until they expire; refreshing them gives tokens with the thumbprint."""
    _, b = tenants
    name = unique("cert-b")
    b.add_cert(name)
    app = make_app(b.org, cert=name)
    make_user(owner=b.org, name=USER, password=PASSWORD)
    with monkeypatch.context() as before:
        before.setattr(jwt_tokens, "key_id", lambda cert: cert.name)  # what the server wrote then
        old = password_tokens(api_server, app)
    assert {jwt.get_unverified_header(old[k])["kid"] for k in ("access_token", "refresh_token")} == {name}

    assert httpx.get(f"{api_server}/api/userinfo",
                     headers={"Authorization": f"Bearer {old['access_token']}"}).json()["preferred_username"] == USER
    introspected = httpx.post(f"{api_server}/api/login/oauth/introspect", data={"token": old["access_token"]},
                              auth=(app.client_id, app.client_secret)).json()
    assert introspected["active"] is True
    # a relying party choosing keys by kid has none for the old name: it refreshes
    relying_party = RelyingParty(api_server, application_discovery(app.name), app.client_id)
    assert not relying_party.accepts(old["id_token"])
    refreshed = httpx.post(f"{api_server}/api/login/oauth/access_token", data={
        "grant_type": "refresh_token", "refresh_token": old["refresh_token"], "client_id": app.client_id,
        "client_secret": app.client_secret})
    assert refreshed.status_code == 200, refreshed.text
    kid = thumbprint(b.download(name, "certificate"))
    assert jwt.get_unverified_header(refreshed.json()["access_token"])["kid"] == kid
    assert relying_party.accepts(refreshed.json()["id_token"])
