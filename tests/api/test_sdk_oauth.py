"""Compatibility: the OAuth calls of the official Casdoor Python SDK (casdoor 1.43.3), unchanged,
against the real HTTP server.

The SDK is built for an application of its own (client id and secret, and its cert's X.509
PEM as `certificate`): get_oauth_token with a code, with a password and with nothing
(client credentials), refresh_oauth_token(s), parse_jwt_token (RS256 and ES256, a forged
signature refused), introspect_token, and logout / logout_current_session (POST
/api/sso-logout?logoutAll=true|false with the Bearer token). The token endpoints answer raw
RFC 6749 JSON, errors included, which the SDK hands back as they are."""

from __future__ import annotations

from contextlib import closing

import casdoor
import httpx
import jwt
import pytest

from iam_console.applications import certs
from tests.api.oauth_world import USER, World, add_app, authorization_code, build_world
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import PASSWORD, kid_of, make_cert

TOKEN_KEYS = {"access_token", "id_token", "refresh_token", "token_type", "expires_in", "scope"}


def assert_token_answer(tokens: dict, scope: str = "") -> None:
    """Casdoor's six keys; the server leaves out an empty scope (RFC 6749 §5.1: optional)."""
    assert set(tokens) == (TOKEN_KEYS if scope else TOKEN_KEYS - {"scope"}), tokens
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 2 * 3600
    assert tokens.get("scope", "") == scope


def sdk_for(world: World, endpoint: str, secret: str | None = None) -> casdoor.CasdoorSDK:
    return casdoor.CasdoorSDK(endpoint=endpoint, client_id=world.app.client_id,
                              client_secret=world.app.client_secret if secret is None else secret,
                              certificate=world.certificate,
                              org_name=world.org, application_name=world.app.name, front_endpoint=endpoint)


@pytest.fixture
def world(make_org, make_user) -> World:
    return build_world(make_org, make_user)


@pytest.fixture
def sdk(world, api_server) -> casdoor.CasdoorSDK:  # noqa: F811
    return sdk_for(world, api_server)


def _password_tokens(sdk: casdoor.CasdoorSDK) -> dict:
    tokens = sdk.get_oauth_token(username=USER, password=PASSWORD)
    assert "error" not in tokens, tokens
    return tokens


def _revoke(api_server: str, world: World, token: str) -> None:  # noqa: F811
    # the SDK has no revocation call: RFC 7009 as any client sends it
    response = httpx.post(f"{api_server}/api/login/oauth/revoke", data={"token": token},
                          auth=(world.app.client_id, world.app.client_secret))
    assert response.status_code == 200


# --- get_oauth_token: the three grants ---

def test_code_exchange_and_the_users_claims(sdk, world, api_server):  # noqa: F811
    code = authorization_code(api_server, world)
    tokens = sdk.get_oauth_token(code=code)
    assert_token_answer(tokens, "openid profile email")

    claims = sdk.parse_jwt_token(tokens["access_token"])
    assert (claims["owner"], claims["name"], claims["displayName"]) == (world.org, USER, "Alice")
    assert claims["tokenType"] == "access-token" and claims["nonce"] == "n-sdk"
    assert claims["aud"] == [world.app.client_id] and claims["azp"] == world.app.client_id
    assert claims["password"] == ""
    assert sdk.parse_jwt_token(tokens["id_token"])["name"] == USER
    # the refresh token is for the server alone (HMAC-signed): the SDK's certificate cannot verify it
    with pytest.raises(jwt.PyJWTError):
        sdk.parse_jwt_token(tokens["refresh_token"])
    assert jwt.decode(tokens["refresh_token"], options={"verify_signature": False})["tokenType"] == "refresh-token"

    # a code works once: the SDK returns the RFC error as it is, and the replay ends the tokens it gave
    replay = sdk.get_oauth_token(code=code)
    assert replay["error"] == "invalid_grant" and "access_token" not in replay
    assert sdk.introspect_token(tokens["access_token"]) == {"active": False}


def test_a_code_of_another_application_is_refused(sdk, world, api_server):  # noqa: F811
    other = sdk_for(add_app(world.org), api_server)
    code = authorization_code(api_server, world)
    assert other.get_oauth_token(code=code)["error"] == "invalid_grant"
    assert "access_token" in sdk.get_oauth_token(code=code)  # the failed attempt did not spend it


def test_password_grant(sdk, world):
    tokens = _password_tokens(sdk)
    assert_token_answer(tokens)
    claims = sdk.parse_jwt_token(tokens["access_token"])
    assert (claims["owner"], claims["name"]) == (world.org, USER)

    assert sdk.get_oauth_token_by_password(USER, PASSWORD)["access_token"]
    wrong = sdk.get_oauth_token(username=USER, password="not-the-password")
    assert wrong["error"] == "invalid_grant" and wrong["error_description"]
    with pytest.raises(Exception, match="password"):
        sdk.get_oauth_token_by_password(USER, "not-the-password")


def test_client_credentials_grant(sdk, world):
    tokens = sdk.get_oauth_token()
    assert "error" not in tokens, tokens
    assert "refresh_token" not in tokens and tokens["token_type"] == "Bearer"
    claims = sdk.parse_jwt_token(tokens["access_token"])
    assert claims["sub"] == f"admin/{world.app.name}" and claims["aud"] == [world.app.client_id]
    assert sdk.introspect_token(tokens["access_token"])["active"] is True


def test_a_wrong_client_secret_is_invalid_client(world, api_server):  # noqa: F811
    wrong = sdk_for(world, api_server, secret="wrong")
    for answer in (wrong.get_oauth_token(), wrong.get_oauth_token(username=USER, password=PASSWORD)):
        assert answer["error"] == "invalid_client", answer


# --- refresh ---

def test_refresh_rotates_the_pair(sdk, world):
    first = _password_tokens(sdk)
    second = sdk.refresh_oauth_tokens(first["refresh_token"])  # the SDK sends scope="" (keep the granted one)
    assert_token_answer(second)  # the scope granted first: none
    assert second["access_token"] != first["access_token"]
    assert sdk.parse_jwt_token(second["access_token"])["name"] == USER

    # the old access token is spent with its refresh token
    assert sdk.introspect_token(first["access_token"]) == {"active": False}

    third = sdk.refresh_oauth_token(second["refresh_token"])
    assert isinstance(third, str) and third != second["access_token"]
    assert (sdk.parse_jwt_token(third)["owner"], sdk.introspect_token(third)["active"]) == (world.org, True)

    # the spent refresh token presented again is a replay: the family ends, what it became included
    assert sdk.refresh_oauth_token(first["refresh_token"]) is None
    assert sdk.refresh_oauth_tokens(first["refresh_token"])["error"] == "invalid_grant"
    assert sdk.introspect_token(third) == {"active": False}


def test_refresh_by_another_application_is_refused(sdk, world, api_server):  # noqa: F811
    other = sdk_for(add_app(world.org), api_server)
    tokens = _password_tokens(sdk)
    assert other.refresh_oauth_tokens(tokens["refresh_token"])["error"] == "invalid_grant"
    assert sdk.refresh_oauth_token(tokens["refresh_token"])


# --- introspection ---

def test_introspect_then_revoke(sdk, world, api_server):  # noqa: F811
    tokens = _password_tokens(sdk)
    live = sdk.introspect_token(tokens["access_token"], "access_token")
    assert live["active"] is True and live["token_type"] == "Bearer"
    assert (live["username"], live["client_id"], live["sub"]) == (USER, world.app.client_id,
                                                                 sdk.parse_jwt_token(tokens["access_token"])["sub"])
    assert live["aud"] == [world.app.client_id] and live["exp"] - live["iat"] == 2 * 3600
    refresh = sdk.introspect_token(tokens["refresh_token"], "refresh_token")
    assert refresh["active"] is True and refresh["token_type"] == "refresh_token"
    assert sdk.introspect_token("not-a-token") == {"active": False}

    _revoke(api_server, world, tokens["access_token"])
    for token, hint in ((tokens["access_token"], "access_token"), (tokens["refresh_token"], "refresh_token")):
        assert sdk.introspect_token(token, hint) == {"active": False}
    assert sdk.refresh_oauth_tokens(tokens["refresh_token"])["error"] == "invalid_grant"


# --- logout ---

def test_logout_ends_every_token_of_the_user(sdk, world):
    one, two = _password_tokens(sdk), _password_tokens(sdk)
    answer = sdk.logout(one["access_token"])
    assert (answer["status"], answer["data"]) == ("ok", world.user_id)
    for tokens in (one, two):
        assert sdk.introspect_token(tokens["access_token"]) == {"active": False}
        assert sdk.refresh_oauth_tokens(tokens["refresh_token"])["error"] == "invalid_grant"
    with pytest.raises(Exception, match="login"):
        sdk.logout(one["access_token"])  # the token is dead: nobody is signed in


def _signed_in_browser(api_server: str, world: World) -> httpx.Client:  # noqa: F811
    browser = httpx.Client(base_url=api_server)
    answer = browser.post("/api/login", json={"application": world.app.name, "organization": world.org,
                                              "username": USER, "password": PASSWORD, "type": "login"}).json()
    assert answer["status"] == "ok", answer
    return browser


def _account(browser: httpx.Client) -> str:
    return browser.get("/api/get-account").json()["status"]


def test_logout_current_session_ends_only_that_token(sdk, world, api_server):  # noqa: F811
    one, two = _password_tokens(sdk), _password_tokens(sdk)
    with closing(_signed_in_browser(api_server, world)) as browser:
        assert _account(browser) == "ok"
        answer = sdk.logout_current_session(one["access_token"])
        assert (answer["status"], answer["data"]) == ("ok", world.user_id)
        assert sdk.introspect_token(one["access_token"]) == {"active": False}
        # logoutAll=false: the user's other token and console session live on
        assert sdk.introspect_token(two["access_token"])["active"] is True
        assert _account(browser) == "ok"

        sdk.logout(two["access_token"])  # logoutAll=true: everything ends
        assert sdk.introspect_token(two["access_token"]) == {"active": False}
        assert _account(browser) == "error"
    with pytest.raises(ValueError):
        sdk.logout("")  # the SDK's own check: no request


# --- parse_jwt_token: the signature and the audience ---

def test_es256_tokens_parse_with_the_ec_certificate(make_org, make_user, api_server):  # noqa: F811
    world = build_world(make_org, make_user, cert=make_cert("ES256", 0), token_signing_method="ES256")
    assert "BEGIN CERTIFICATE" in world.certificate
    sdk = sdk_for(world, api_server)
    for tokens in (sdk.get_oauth_token(), _password_tokens(sdk),
                   sdk.get_oauth_token(code=authorization_code(api_server, world))):
        assert jwt.get_unverified_header(tokens["access_token"]) == {
            "alg": "ES256", "kid": kid_of(world.app.cert), "typ": "JWT"}
        assert sdk.parse_jwt_token(tokens["access_token"])["azp"] == world.app.client_id
    refreshed = sdk.refresh_oauth_token(tokens["refresh_token"])
    assert sdk.parse_jwt_token(refreshed)["name"] == USER
    with pytest.raises(jwt.InvalidSignatureError):
        sdk.parse_jwt_token(_forge(sdk.parse_jwt_token(refreshed), "ES256", world.app.cert))


def _forge(claims: dict, algorithm: str, kid: str) -> str:
    """The claims of a genuine token, signed with a key of the same kind that is not the cert's."""
    _, key = certs.generate(algorithm, 2048 if algorithm.startswith("RS") else 0, 1, "forger")
    return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": kid})


def test_a_token_signed_by_another_key_is_refused(sdk, world):
    forged = _forge(sdk.parse_jwt_token(sdk.get_oauth_token()["access_token"]), "RS256", world.app.cert)
    with pytest.raises(jwt.InvalidSignatureError):
        sdk.parse_jwt_token(forged)
    assert sdk.introspect_token(forged) == {"active": False}


def test_a_token_of_another_cert_or_application_is_refused(sdk, world, api_server):  # noqa: F811
    ec_app = sdk_for(add_app(world.org, cert=make_cert("ES256", 0)), api_server)
    # an SDK quirk: PyJWT, given the RSA key of the SDK's certificate for an ES256 token,
    # raises TypeError ("Expecting a PEM-formatted key"), not a PyJWTError
    with pytest.raises(TypeError):
        sdk.parse_jwt_token(ec_app.get_oauth_token()["access_token"])
    rsa_app = sdk_for(add_app(world.org, cert=make_cert("RS256")), api_server)
    with pytest.raises(jwt.InvalidSignatureError):
        sdk.parse_jwt_token(rsa_app.get_oauth_token()["access_token"])
    same_cert = sdk_for(add_app(world.org), api_server)
    with pytest.raises(jwt.InvalidAudienceError):
        sdk.parse_jwt_token(same_cert.get_oauth_token()["access_token"])
