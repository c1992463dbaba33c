"""openid-client 6.9.0 (a certified OpenID Connect relying party), unchanged, against the real HTTP
server: every client authentication method at the token, introspection and revocation endpoints,
and the authentication request parameters (max_age, prompt=login, acr_values, claims).

tests/node/oidc_client_auth.mjs keeps one openid-client configuration per test in one node
process, one request per line; the sign-in between building the authorization URL and the
callback is the authorize page's own call (POST /api/login with the request in the query).
The issuer is the configured origin (http://testserver); the driver's fetch goes to the test
server instead.

Needs node and `make node-sdk` (skipped without them, except under CI=true)."""

from __future__ import annotations

import json
import secrets
import subprocess
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import pyotp
import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import ECKey, RSAKey
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.api.callers import SESSION_COOKIE
from iam_console.db import session_scope
from iam_console.i18n import LANGUAGE_NAMES
from iam_console.oauth import oauth
from iam_console.settings import settings
from iam_console.signin import auth
from tests.api.conftest import sign_in
from tests.api.node_packages import node_with
from tests.api.oauth_world import USER, World, build_world
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_mfa import enable_app
from tests.api.test_oauth import PASSWORD, REDIRECT
from tests.api.test_sdk_node import NODE_DIR, NODE_TIMEOUT_SECONDS

DRIVER = NODE_DIR / "oidc_client_auth.mjs"
OPENID_CLIENT_VERSION = "6.9.0"
# a secret RFC 6749 §2.3.1 makes client_secret_basic form-encode
AWKWARD_SECRET = "a+b/c=d%e&f:g h" + secrets.token_hex(8)


@pytest.fixture(scope="module")
def node_executable() -> str:
    return node_with("openid-client", OPENID_CLIENT_VERSION)


class RelyingParty:
    """One node process running oidc_client_auth.mjs; each call is one line each way."""

    def __init__(self, node: str) -> None:
        self.process = subprocess.Popen([node, str(DRIVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, cwd=NODE_DIR)

    def call(self, op: str, **job: Any) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"op": op, **job}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, self.process.stderr.read() if self.process.stderr else "node ended"
        return json.loads(line)

    def value(self, op: str, **job: Any) -> Any:
        answer = self.call(op, **job)
        assert answer["ok"], answer
        return answer["value"]

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=NODE_TIMEOUT_SECONDS)


@pytest.fixture
def relying_party(node_executable) -> Iterator[RelyingParty]:
    party = RelyingParty(node_executable)
    yield party
    party.close()


def configure(party: RelyingParty, server: str, world: World, method: str, *, secret: str | None = None,
              jwk: dict | None = None, assertion: dict | None = None) -> dict[str, Any]:
    return party.value("configure", issuer=settings.origin, server=server, clientId=world.app.client_id,
                       metadata={"redirect_uris": [REDIRECT]},
                       auth={"method": method, "secret": world.app.client_secret if secret is None else secret,
                             "jwk": jwk}, assertion=assertion)


def signed_in_callback(server: str, url: str, *, client: httpx.Client | None = None,
                       passcode: str = "") -> str:
    """What the authorize page does with the URL openid-client built: the sign-in posted with the
    request in the query (and the second factor, when owed); the URL the browser is sent to."""
    query = dict(parse_qsl(urlsplit(url).query))
    client = client or httpx.Client(base_url=server)
    answer = client.post("/api/login", params=query, json={"username": USER, "password": PASSWORD}).json()
    if passcode:
        assert answer["data"] == auth.NEXT_MFA, answer
        answer = client.post("/api/login", params=query, json={"passcode": passcode, "mfaType": "app"}).json()
    assert answer["status"] == "ok", answer
    assert answer["data2"].startswith(REDIRECT), answer
    return answer["data2"]


def code_flow(party: RelyingParty, server: str, **parameters: Any) -> dict[str, Any]:
    url = party.value("authorizationUrl", redirectUri=REDIRECT, parameters=parameters)
    callback = signed_in_callback(server, url)
    return party.value("callback", url=callback, **({"maxAge": int(parameters["max_age"])}
                                                    if "max_age" in parameters else {}))


def rsa_jwk() -> tuple[dict, dict]:
    """(private JWK for the client, public JWK Set to register)."""
    key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(4), "alg": "RS256"})
    return key.as_dict(private=True), {"keys": [key.as_dict(private=False)]}


def ec_jwk() -> tuple[dict, dict]:
    key = ECKey.generate_key("P-256", parameters={"kid": secrets.token_hex(4), "alg": "ES256"})
    return key.as_dict(private=True), {"keys": [key.as_dict(private=False)]}


class KeySetServer:
    """A stand-in for a client's jwks_uri on the loopback (listed in IAM_OUTBOUND_ALLOW by the
    tests' conftest): serves one JWK Set and counts the fetches."""

    def __init__(self, key_set: dict) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.fetches += 1
                body = json.dumps(owner.key_set).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.key_set, self.fetches = key_set, 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks/{secrets.token_hex(4)}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def key_set_server() -> Iterator[KeySetServer]:
    server = KeySetServer({"keys": []})
    yield server
    server.close()


def tokens_of(app: m.Application) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.Token).where(m.Token.application == app.name)).one()


# --- discovery ---

def test_discovery_advertises_the_methods_and_parameters_served(relying_party, api_server, make_org,  # noqa: F811
                                                                make_user):
    world = build_world(make_org, make_user)
    metadata = configure(relying_party, api_server, world, "client_secret_basic")
    methods = {"client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt"}
    assert set(metadata["token_endpoint_auth_methods_supported"]) == methods | {"none"}
    for endpoint in ("token", "introspection", "revocation"):
        assert methods <= set(metadata[f"{endpoint}_endpoint_auth_methods_supported"])
        assert {"RS256", "ES256", "HS256"} <= set(metadata[f"{endpoint}_endpoint_auth_signing_alg_values_supported"])
    assert metadata["acr_values_supported"] == ["1", "2"]
    assert metadata["claims_parameter_supported"] is True
    assert metadata["ui_locales_supported"] == list(LANGUAGE_NAMES) and "zh" in LANGUAGE_NAMES
    assert {"auth_time", "acr", "given_name", "phone_number"} <= set(metadata["claims_supported"])
    rfc8414 = httpx.get(f"{api_server}/.well-known/oauth-authorization-server").json()
    assert {k: rfc8414[k] for k in metadata if k in rfc8414} == {k: v for k, v in metadata.items() if k in rfc8414}


# --- client authentication ---

@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "client_secret_jwt",
                                    "private_key_jwt"])
def test_each_method_at_the_token_introspection_and_revocation_endpoints(relying_party, api_server,  # noqa: F811
                                                                         make_org, make_user, method):
    private, public = rsa_jwk()
    world = build_world(make_org, make_user, token_endpoint_auth_method=method,
                        jwks=public if method == "private_key_jwt" else {})
    configure(relying_party, api_server, world, method, jwk=private)
    answer = code_flow(relying_party, api_server)
    tokens, claims = answer["tokens"], answer["claims"]
    assert claims["aud"] == [world.app.client_id] and claims["nonce"]
    refreshed = relying_party.value("refresh", refreshToken=tokens["refresh_token"])["tokens"]
    introspected = relying_party.value("introspect", token=refreshed["access_token"])
    assert introspected["active"] is True and introspected["client_id"] == world.app.client_id
    relying_party.value("revoke", token=refreshed["access_token"])
    assert relying_party.value("introspect", token=refreshed["access_token"]) == {"active": False}
    own = relying_party.value("clientCredentials")["tokens"]
    assert own["token_type"].lower() == "bearer" and "refresh_token" not in own


def test_private_key_jwt_with_keys_at_a_jwks_uri(relying_party, api_server, make_org, make_user,  # noqa: F811
                                                 key_set_server):
    """An EC key served at the application's jwks_uri, fetched once through the outbound guard
    and then taken from the cache; an assertion may name the token endpoint as its audience."""
    private, public = ec_jwk()
    key_set_server.key_set = public
    world = build_world(make_org, make_user, token_endpoint_auth_method="private_key_jwt",
                        jwks_uri=key_set_server.url)
    configure(relying_party, api_server, world, "private_key_jwt", jwk=private,
              assertion={"aud": "token_endpoint"})
    assert relying_party.value("clientCredentials")["tokens"]["access_token"]
    assert relying_party.value("clientCredentials")["tokens"]["access_token"]
    assert key_set_server.fetches == 1


def test_client_secret_basic_form_encodes_an_awkward_secret(relying_party, api_server, make_org,  # noqa: F811
                                                           make_user):
    """RFC 6749 §2.3.1: openid-client form-encodes the id and secret before joining them; the same
    secret works under client_secret_post."""
    world = build_world(make_org, make_user, client_secret=AWKWARD_SECRET)
    configure(relying_party, api_server, world, "client_secret_basic")
    assert relying_party.value("clientCredentials")["tokens"]["access_token"]
    post = RelyingParty(relying_party.process.args[0])
    try:
        configure(post, api_server, world, "client_secret_post")
        assert post.value("clientCredentials")["tokens"]["access_token"]
    finally:
        post.close()


def _refused(answer: dict[str, Any]) -> None:
    assert answer["ok"] is False and answer["status"] == 401 and answer["error"] == "invalid_client", answer


@pytest.mark.parametrize(("registered", "used"), [
    ("private_key_jwt", "client_secret_basic"), ("private_key_jwt", "client_secret_jwt"),
    ("client_secret_jwt", "client_secret_post"), ("client_secret_basic", "client_secret_post"),
    ("", "client_secret_jwt"), ("", "private_key_jwt"), ("none", "client_secret_basic"),
])
def test_another_method_than_the_applications_is_refused(relying_party, api_server, make_org, make_user,  # noqa: F811
                                                         registered, used):
    private, public = rsa_jwk()
    world = build_world(make_org, make_user, token_endpoint_auth_method=registered, jwks=public)
    configure(relying_party, api_server, world, used, jwk=private)
    _refused(relying_party.call("clientCredentials"))
    _refused(relying_party.call("introspect", token="anything"))
    _refused(relying_party.call("revoke", token="anything"))
    assert tokens_of(world.app) == 0


@pytest.mark.parametrize("assertion", [
    {"aud": "https://elsewhere.example.com"},  # another audience
    {"exp": 3600},  # not short-lived
    {"exp": -120},  # expired
])
def test_assertions_with_wrong_claims_are_refused(relying_party, api_server, make_org, make_user,  # noqa: F811
                                                  assertion):
    private, public = rsa_jwk()
    world = build_world(make_org, make_user, token_endpoint_auth_method="private_key_jwt", jwks=public)
    configure(relying_party, api_server, world, "private_key_jwt", jwk=private, assertion=assertion)
    _refused(relying_party.call("clientCredentials"))
    assert tokens_of(world.app) == 0


def test_an_assertion_signed_by_a_key_not_registered_is_refused(relying_party, api_server, make_org,  # noqa: F811
                                                                 make_user):
    private, _ = rsa_jwk()
    other_private, public = rsa_jwk()
    private["kid"] = other_private["kid"]  # names the registered key, signed by another
    world = build_world(make_org, make_user, token_endpoint_auth_method="private_key_jwt", jwks=public)
    configure(relying_party, api_server, world, "private_key_jwt", jwk=private)
    _refused(relying_party.call("clientCredentials"))
    configure(relying_party, api_server, world, "client_secret_jwt", secret="not-the-secret")
    _refused(relying_party.call("clientCredentials"))
    assert tokens_of(world.app) == 0


def test_an_assertion_is_used_once(relying_party, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user, token_endpoint_auth_method="client_secret_jwt")
    configure(relying_party, api_server, world, "client_secret_jwt", assertion={"jti": secrets.token_hex(8)})
    assert relying_party.value("clientCredentials")["tokens"]["access_token"]
    replay = relying_party.call("clientCredentials")
    _refused(replay)
    assert "jti" in replay["description"]
    assert tokens_of(world.app) == 1


# --- authentication request parameters ---

def test_max_age_puts_auth_time_in_the_id_token(relying_party, api_server, make_org, make_user):  # noqa: F811
    """OpenID Connect Core 3.1.2.1: openid-client refuses an answer to max_age without auth_time."""
    world = build_world(make_org, make_user)
    configure(relying_party, api_server, world, "client_secret_basic")
    before = int(time.time())
    answer = code_flow(relying_party, api_server, max_age="600")
    assert before - 1 <= answer["claims"]["auth_time"] <= int(time.time())
    with session_scope() as db:  # the time of the session the sign-in opened, which later answers keep
        session = db.exec(select(m.AuthSession).where(m.AuthSession.owner == world.org,
                                                      m.AuthSession.user_name == USER)).one()
        assert answer["claims"]["auth_time"] == int(session.created_time.timestamp())
    assert answer["claims"]["acr"] == "1"
    refreshed = relying_party.value("refresh", refreshToken=answer["tokens"]["refresh_token"])
    assert refreshed["claims"]["auth_time"] == answer["claims"]["auth_time"]  # the sign-in, not the refresh


def _session_code(world: World, url: str, session_client: TestClient) -> str:
    """The answer the authorize page gives a browser that has a session (oauth/ui/authorize.py):
    the session answers unless the request needs a fresh sign-in."""
    query = dict(parse_qsl(urlsplit(url).query))
    cookie = session_client.cookies.get(SESSION_COOKIE)
    with session_scope() as db:
        authorization = oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(query))
        user, session = auth.account_for_token(db, cookie)
        if oauth.needs_fresh_sign_in(authorization, session.created_time, session.signin_method):
            return ""
        return oauth.authorize(db, authorization, user, signed_in_at=session.created_time,
                               acr=oauth.acr_of(session.signin_method)).url


def test_a_live_session_keeps_its_auth_time_and_prompt_login_asks_again(relying_party, api_server,  # noqa: F811
                                                                         make_org, make_user):
    world = build_world(make_org, make_user)
    configure(relying_party, api_server, world, "client_secret_basic")
    browser = sign_in(world.org, USER, PASSWORD)
    with session_scope() as db:
        session = db.exec(select(m.AuthSession).where(m.AuthSession.owner == world.org,
                                                      m.AuthSession.user_name == USER)).one()
        signed_in_at = int(session.created_time.timestamp())
    time.sleep(1.1)  # a later answer of the same session must still say when the sign-in was
    url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters={"max_age": "600"})
    callback = _session_code(world, url, browser)
    answer = relying_party.value("callback", url=callback, maxAge=600)
    assert answer["claims"]["auth_time"] == signed_in_at
    for asks_again in ({"prompt": "login"}, {"max_age": "0"}, {"acr_values": "2"}):
        url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters=asks_again)
        assert _session_code(world, url, browser) == "", asks_again


def test_acr_values_are_answered_by_the_factors_used(relying_party, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user)
    configure(relying_party, api_server, world, "client_secret_basic")
    assert code_flow(relying_party, api_server, acr_values="2 1")["claims"]["acr"] == "1"
    user = m.User(owner=world.org, name=USER)
    secret, _ = enable_app(sign_in(world.org, USER, PASSWORD), user)
    url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters={"acr_values": "2"})
    callback = signed_in_callback(api_server, url, passcode=pyotp.TOTP(secret).at(time.time() + 30))
    answer = relying_party.value("callback", url=callback)
    assert answer["claims"]["acr"] == "2"


def test_an_essential_acr_not_reached_is_an_error(relying_party, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user)
    configure(relying_party, api_server, world, "client_secret_basic")
    claims = json.dumps({"id_token": {"acr": {"essential": True, "values": ["2"]}}})
    url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters={"claims": claims})
    answer = relying_party.call("callback", url=signed_in_callback(api_server, url))
    assert answer["ok"] is False and answer["error"] == "unmet_authentication_requirements", answer


def test_the_claims_parameter_asks_for_standard_claims(relying_party, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user, token_format="JWT-Standard")
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == world.org, m.User.name == USER)).one()
        user.first_name, user.phone, user.country_code = "Alice", "5550100", "US"
        db.add(user)
    configure(relying_party, api_server, world, "client_secret_basic")
    claims = json.dumps({"id_token": {"phone_number": None, "given_name": {"essential": True}},
                         "userinfo": {"email": None, "family_name": None, "unknown_claim": None}})
    answer = code_flow(relying_party, api_server, scope="openid", claims=claims)
    assert answer["claims"]["phone_number"] == "+15550100" and answer["claims"]["given_name"] == "Alice"
    info = relying_party.value("userinfo", accessToken=answer["tokens"]["access_token"], sub=answer["claims"]["sub"])
    assert info["email"] == "alice@example.com" and info["family_name"] == "" and "unknown_claim" not in info
    assert "phone" not in info  # the scope did not ask for it, nor the claims parameter for userinfo


def test_ui_locales_and_bad_parameters_at_the_authorization_request(relying_party, api_server, make_org,  # noqa: F811
                                                                     make_user):
    world = build_world(make_org, make_user)
    configure(relying_party, api_server, world, "client_secret_basic")
    url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters={"ui_locales": "zh-CN en"})
    query = dict(parse_qsl(urlsplit(url).query))
    assert TestClient(api).get("/api/get-app-login", params=query).json()["status"] == "ok"
    for bad, message in (({"max_age": "soon"}, "max_age must be a number of seconds"),
                         ({"claims": "{not json"}, "The claims parameter must be a JSON object"),
                         ({"claims": json.dumps({"id_token": {"email": 1}})}, "Each requested claim")):
        url = relying_party.value("authorizationUrl", redirectUri=REDIRECT, parameters=bad)
        refused = TestClient(api).get("/api/get-app-login", params=dict(parse_qsl(urlsplit(url).query))).json()
        assert refused["status"] == "error" and refused["msg"].startswith(message), refused
