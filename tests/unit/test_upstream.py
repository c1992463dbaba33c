"""The upstream provider types' endpoints (and their overrides) and how each type's user
information becomes an UpstreamIdentity (federation/upstream.py)."""

import pytest

from iam_console import models as m
from iam_console.core.errors import ServiceError
from iam_console.federation import upstream


def provider(kind, **fields):
    values = {"owner": "admin", "name": f"p-{kind}", "category": "OAuth", "type": kind, "client_id": "c",
              "client_secret": "s", **fields}
    return m.Provider(**values)


def test_well_known_endpoints_and_their_overrides():
    github = upstream.endpoints(provider("GitHub"))
    assert github.authorize == "https://github.com/login/oauth/authorize"
    assert github.emails == "https://api.github.com/user/emails" and github.scope == "read:user user:email"
    google = upstream.endpoints(provider("Google"))
    assert google.token == "https://oauth2.googleapis.com/token" and google.scope == "openid email profile"
    azure = upstream.endpoints(provider("AzureAD", domain="contoso.onmicrosoft.com"))
    assert azure.authorize == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize"
    assert upstream.endpoints(provider("AzureAD")).token.startswith("https://login.microsoftonline.com/common/")
    gitlab = upstream.endpoints(provider("GitLab", domain="git.example.com"))
    assert gitlab.userinfo == "https://git.example.com/api/v4/user" and gitlab.scope == "read_user"
    okta = upstream.endpoints(provider("Okta", domain="https://dev-1.okta.com/oauth2/default", scopes="openid"))
    assert okta.authorize == "https://dev-1.okta.com/oauth2/default/v1/authorize" and okta.scope == "openid"
    moved = upstream.endpoints(provider("GitHub", custom_auth_url="http://127.0.0.1:9/a",
                                        custom_token_url="http://127.0.0.1:9/t",
                                        custom_user_info_url="http://127.0.0.1:9/user"))
    assert (moved.authorize, moved.token, moved.userinfo, moved.emails) == (
        "http://127.0.0.1:9/a", "http://127.0.0.1:9/t", "http://127.0.0.1:9/user", "http://127.0.0.1:9/user/emails")


@pytest.mark.parametrize(("kind", "fields", "message"), [
    ("Okta", {}, "needs its Okta authorization server in Domain"),
    ("Custom", {}, "needs an issuer URL, or its auth, token and user info URLs"),
    ("Custom", {"custom_auth_url": "javascript:alert(1)", "custom_token_url": "https://t.example/t",
                "custom_user_info_url": "https://t.example/u"}, "has no valid auth URL"),
    ("WeChat", {}, "is not supported"),
])
def test_bad_endpoints_are_clear_errors(kind, fields, message):
    with pytest.raises(ServiceError, match=message):
        upstream.endpoints(provider(kind, **fields))


def test_identities_of_each_type():
    github = upstream.identity_of(provider("GitHub"), {"id": 7, "login": "oc", "name": "O C", "email": None,
                                                        "avatar_url": "https://a/7"},
                                  [{"email": "x@e.com", "primary": False, "verified": False},
                                   {"email": "p@e.com", "primary": True, "verified": True}])
    assert (github.id, github.username, github.email, github.email_verified) == ("7", "oc", "p@e.com", True)
    unverified = upstream.identity_of(provider("GitHub"), {"id": 8, "login": "u"},
                                      [{"email": "n@e.com", "primary": True, "verified": False}])
    assert unverified.email == "" and not unverified.email_verified
    gitlab = upstream.identity_of(provider("GitLab"), {"id": 3, "username": "gl", "email": "g@e.com",
                                                        "confirmed_at": "2024-01-01"})
    assert (gitlab.id, gitlab.username, gitlab.email_verified) == ("3", "gl", True)
    google = upstream.identity_of(provider("Google"), {"sub": "s1", "email": "go@e.com", "email_verified": False,
                                                        "name": "Go"})
    assert (google.id, google.username, google.email_verified) == ("s1", "go@e.com", False)
    custom = upstream.identity_of(provider("Custom", user_mapping={"id": "data.uid", "username": "data.login",
                                                                   "displayName": "nick"}),
                                  {"data": {"uid": 42, "login": "cu"}, "nick": "Cu", "email": "c@e.com"})
    assert (custom.id, custom.username, custom.display_name, custom.email) == ("42", "cu", "Cu", "c@e.com")


def test_buttons_follow_the_rows_and_the_providers_item(db):
    application = m.Application(owner="admin", name="a", organization="o", signin_items=[], signup_items=[
        {"name": "Providers", "visible": True, "rule": "small"}], providers=[
        {"name": "gh-btn", "canSignIn": True, "canSignUp": False},
        {"name": "gl-btn", "canSignIn": False, "canSignUp": True},
        {"name": "missing", "canSignIn": True, "canSignUp": True}])
    db.add(provider("GitHub", name="gh-btn", owner="o"))
    db.add(m.Provider(owner="admin", name="gl-btn", category="OAuth", type="GitLab", custom_logo="/l.png"))
    db.flush()
    [sign_in] = upstream.buttons(db, application, "signin", return_to="//evil.example")
    assert sign_in["name"] == "gh-btn" and sign_in["size"] == "big" and sign_in["icon"] == "/providers/github.svg"
    assert sign_in["href"].startswith("/api/federation/start?") and "from=%2F&" not in sign_in["href"]
    assert "evil" not in sign_in["href"]
    [sign_up] = upstream.buttons(db, application, "signup")
    assert (sign_up["name"], sign_up["size"], sign_up["icon"], sign_up["label"]) == ("gl-btn", "small", "/l.png",
                                                                                      "GitLab")
    application.signin_items = [{"name": "Providers", "visible": False}]
    assert upstream.buttons(db, application, "signin") == []
    db.rollback()
