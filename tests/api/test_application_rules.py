"""The applications' save rules, as every caller meets them: auto sign-in needs the sign-in
session, providers of other organizations and unknown sign-in methods are dropped, no grant type
means authorization_code, the limits are at least 1 and only the global admin shares an application."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique

PASSWORD = "Apps-pass-1"


@pytest.fixture(scope="module")
def world(admin) -> dict:
    """Two organizations, each with a provider; A's admin signed in; one shared provider."""
    a, b = unique("appa"), unique("appb")
    for org in (a, b):
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
        ok_body(admin.post("/api/add-provider", json={"owner": org, "name": f"{org}-github", "category": "OAuth",
                                                      "type": "GitHub"}))
    ok_body(admin.post("/api/add-user", json={"owner": a, "name": "boss", "password": PASSWORD, "isAdmin": True}))
    shared = unique("shared")
    ok_body(admin.post("/api/add-provider", json={"owner": "admin", "name": shared, "category": "Captcha",
                                                  "type": "Default"}))
    return {"a": a, "b": b, "shared": shared, "boss": sign_in(a, "boss", PASSWORD)}


def _get(client, name: str) -> dict:
    return ok_body(client.get("/api/get-application", params={"id": f"admin/{name}"}))["data"]


def _update(client, name: str, **fields) -> dict:
    body = {**_get(client, name), **fields}
    return client.post("/api/update-application", params={"id": f"admin/{name}"}, json=body).json()


def _ok(answer: dict) -> None:
    assert answer["status"] == "ok", answer


def test_auto_signin_needs_the_signin_session(admin, world):
    name = unique("app")
    answer = admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"],
                                                       "enableAutoSignin": True}).json()
    assert answer == {**answer, "status": "error",
                      "msg": 'Please enable "Signin session" first before enabling "Auto signin"'}
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"],
                                                     "enableAutoSignin": True, "enableSigninSession": True}))
    assert _update(admin, name, enableSigninSession=False)["status"] == "error"
    ok_body(admin.post("/api/update-application", params={"id": f"admin/{name}"},
                       json={**_get(admin, name), "enableSigninSession": False, "enableAutoSignin": False}))


def test_providers_of_other_organizations_and_unknown_methods_are_dropped(admin, world):
    a, b, name = world["a"], world["b"], unique("app")
    entry = lambda provider: {"name": provider, "canSignUp": True, "canSignIn": True, "rule": "None"}  # noqa: E731
    ok_body(admin.post("/api/add-application", json={
        "owner": "admin", "name": name, "organization": a,
        "providers": [entry(f"{a}-github"), entry(f"{b}-github"), entry(world["shared"]), entry("nowhere")],
        "signinMethods": [{"name": "Password", "displayName": "Password", "rule": "All"},
                          {"name": "Magic link", "displayName": "Magic", "rule": "All"},
                          {"name": "LDAP", "displayName": "LDAP", "rule": "None"}],
    }))
    saved = _get(admin, name)
    assert [p["name"] for p in saved["providers"]] == [f"{a}-github", world["shared"]]
    assert [s["name"] for s in saved["signinMethods"]] == ["Password", "LDAP"]
    # an update drops them too
    ok_body(admin.post("/api/update-application", params={"id": f"admin/{name}"}, json={
        **saved, "providers": [*saved["providers"], entry(f"{b}-github")]}))
    assert [p["name"] for p in _get(admin, name)["providers"]] == [f"{a}-github", world["shared"]]


def test_no_grant_type_means_authorization_code(admin, world):
    name = unique("app")
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"],
                                                     "grantTypes": []}))
    assert _get(admin, name)["grantTypes"] == ["authorization_code"]
    _ok(_update(admin, name, grantTypes=["password", "refresh_token"]))
    assert _get(admin, name)["grantTypes"] == ["password", "refresh_token"]
    _ok(_update(admin, name, grantTypes=[]))
    assert _get(admin, name)["grantTypes"] == ["authorization_code"]


@pytest.mark.parametrize(("key", "label", "default"), [
    ("expireInHours", "expire in hours", 168), ("refreshExpireInHours", "refresh expire in hours", 168),
    ("failedSigninLimit", "failed signin limit", 5), ("failedSigninFrozenTime", "failed signin frozen time", 15),
])
def test_the_limits_are_at_least_one(admin, world, key, label, default):
    name = unique("app")
    # unset on add: the default
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"]}))
    assert _get(admin, name)[key] == default
    for value in (0, -3):
        answer = _update(admin, name, **{key: value})
        assert answer["status"] == "error" and answer["msg"] == f"The {label} must be at least 1", answer
    _ok(_update(admin, name, **{key: 1}))
    assert _get(admin, name)[key] == 1


def test_only_the_global_admin_shares_an_application(admin, world):
    boss, a = world["boss"], world["a"]
    name = unique("app")
    ok_body(boss.post("/api/add-application", json={"owner": "admin", "name": name, "organization": a,
                                                    "isShared": True}))
    assert _get(boss, name)["isShared"] is False
    _update(boss, name, isShared=True)
    assert _get(boss, name)["isShared"] is False
    _ok(_update(admin, name, isShared=True))
    assert _get(admin, name)["isShared"] is True
    # the organization's admin edits the shared application without unsharing it
    _ok(_update(boss, name, displayName="Renamed", isShared=False))
    saved = _get(admin, name)
    assert saved["displayName"] == "Renamed" and saved["isShared"] is True


# --- the edit page's tools that read and write records ---

def _actor(owner: str, name: str):
    from iam_console.core import lookup
    from iam_console.core.access import Actor
    from iam_console.db import session_scope

    with session_scope() as db:
        user = lookup.user(db, owner, name)
        db.expunge(user)
    return Actor(user=user)


def test_a_chosen_provider_fills_its_row(admin, world):
    from iam_console.applications import application_tools as tools
    from iam_console.core.errors import ServiceError
    from iam_console.db import session_scope

    a, b = world["a"], world["b"]
    ok_body(admin.post("/api/add-provider", json={"owner": a, "name": f"{a}-mail", "category": "Email",
                                                  "type": "Default"}))
    boss = _actor(a, "boss")
    with session_scope() as db:
        mail = tools.provider_entry(db, boss, a, f"{a}-mail")
        github = tools.provider_entry(db, boss, a, f"{a}-github")
        captcha = tools.provider_entry(db, boss, a, world["shared"])
    assert mail["provider"] == {"owner": a, "category": "Email", "type": "Default"} and mail["rule"] == "All"
    assert mail["canSignUp"] is False and mail["canSignIn"] is False
    assert github["rule"] == "None" and github["canSignIn"] is True
    assert captcha["provider"]["category"] == "Captcha" and captcha["rule"] == "None"
    with session_scope() as db, pytest.raises(ServiceError):  # another organization's: not offered
        tools.provider_entry(db, boss, a, f"{b}-github")
    # the saved entries carry their provider's kind too
    name = unique("app")
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": a,
                                                     "providers": [{"name": f"{a}-mail"}]}))
    assert _get(admin, name)["providers"][0]["provider"] == {"owner": a, "category": "Email", "type": "Default"}


def test_the_terms_of_use_are_stored_as_a_resource(admin, world):
    from iam_console.applications import application_tools as tools
    from iam_console.core.errors import ServiceError
    from iam_console.db import session_scope

    a, name = world["a"], unique("app")
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": a}))
    boss = _actor(a, "boss")
    with session_scope() as db, pytest.raises(ServiceError) as refused:
        tools.upload_terms_of_use(db, boss, name, "terms.txt", b"<p>terms</p>")
    assert refused.value.template == "Please select a HTML file"
    with session_scope() as db:
        url = tools.upload_terms_of_use(db, boss, name, "Terms.HTML", b"<h1>Terms</h1>")
    assert url.endswith(f"/files/resource/{a}/termsOfUse_{a}_{name}.html")
    resource = ok_body(admin.get("/api/get-resource", params={"id": f"{a}/termsOfUse_{a}_{name}.html"}))["data"]
    assert resource["tag"] == "termsOfUse" and resource["application"] == name and resource["user"] == "boss"
    assert admin.get(urlsplit(url).path).content == b"<h1>Terms</h1>"
    # an application that does not exist (or that the caller may not read) has none
    with session_scope() as db, pytest.raises(ServiceError):
        tools.upload_terms_of_use(db, _actor(a, "boss"), unique("missing"), "t.html", b"x")


def test_the_signup_items_rules(admin, world):
    name = unique("app")
    item = lambda n, **f: {"name": n, "visible": True, "required": True, "type": "Input", "rule": "None",  # noqa: E731
                           "options": [], **f}
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"],
                                                     "signupItems": [
        item("ID", visible=False, rule="Sequential"), item("Password", required=False),
        item("Email", visible=False, rule="No verification"), item("Email"),
        item("Gender", options=["F", "M"]), item("Tag", type="Single Choice", options=["a", "b"]),
        item("Agreement", rule="Signin (Default True)")]}))
    items = {i["name"]: i for i in _get(admin, name)["signupItems"]}
    assert list(items) == ["ID", "Password", "Email", "Gender", "Tag", "Agreement", "Signup button"]
    assert items["ID"]["visible"] is True and items["ID"]["rule"] == "Random"  # always shown; a rule it takes
    assert items["Password"]["required"] is True
    assert items["Email"] == {**items["Email"], "visible": False, "required": False, "rule": "No verification"}
    assert items["Gender"]["options"] == [] and items["Tag"]["options"] == ["a", "b"]
    assert items["Agreement"]["rule"] == "Signin (Default True)"
    # the signin items: a hidden one is optional
    saved = _get(admin, name)
    _ok(_update(admin, name, signinItems=[{"name": "Logo", "visible": False, "required": True},
                                          {"name": "Username", "visible": True, "required": True}]))
    signin = _get(admin, name)["signinItems"]
    assert [(i["name"], i["required"]) for i in signin] == [("Logo", False), ("Username", True)]
    assert saved["signupItems"] == _get(admin, name)["signupItems"]


def test_a_new_application_without_items_gets_the_default_signup_and_signin_items(admin, world):
    """Casdoor's defaults: an application added with no items can be signed up to (Username,
    Password, Email... and the button) and shows the sign-in page's items; items sent are kept."""
    name = unique("app")
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": world["a"],
                                                     "enableSignUp": True}))
    stored = _get(admin, name)
    signup = {item["name"]: item for item in stored["signupItems"]}
    assert list(signup)[:4] == ["ID", "Username", "Display name", "Password"]
    assert signup["ID"]["rule"] == "Random" and signup["Email"]["rule"] == "Normal"
    assert {"Confirm password", "Phone", "Agreement", "Signup button", "Providers"} <= set(signup)
    signin = [item["name"] for item in stored["signinItems"]]
    assert signin[:3] == ["Back button", "Languages", "Logo"] and "Login button" in signin
    chosen = unique("app")
    ok_body(admin.post("/api/add-application", json={
        "owner": "admin", "name": chosen, "organization": world["a"],
        "signupItems": [{"name": "Username", "visible": True, "required": True}],
        "signinItems": [{"name": "Logo", "visible": True}]}))
    kept = _get(admin, chosen)
    assert [i["name"] for i in kept["signupItems"]] == ["Username", "Signup button"]
    assert [i["name"] for i in kept["signinItems"]] == ["Logo"]
