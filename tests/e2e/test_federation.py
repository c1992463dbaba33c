"""Sign-in with an upstream OpenID provider, end to end in the browser.

The upstream provider is a second instance of this server (its API and OpenID part: uvicorn on
iam_console.api.app, its own SQLite file and port), holding the upstream users and an application
whose redirect URI is the first server's /callback. The first server has a Custom provider whose
issuerUrl is the second server (discovery, code flow with PKCE, userinfo).

The upstream's sign-in page is a browser page of its own; here the browser's navigation to its
authorize endpoint is answered by the test, which signs the upstream user in there through the
upstream's API (POST /api/login with the authorize request, as its sign-in page does) and sends
the browser on to the redirect URI the upstream answered with: a real code of the real upstream."""

from __future__ import annotations

import contextlib
import secrets
import socket
import subprocess
import time
import urllib.request
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e import axe
from tests.e2e.conftest import PROJECT_DIR, VENV_BIN, _server_env

PASSWORD = "E2e-upstream-pass-1"
UPSTREAM_ADMIN_PASSWORD = "E2e-upstream-admin-1"


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class Upstream:
    base: str
    database_url: str
    client_id: str
    client_secret: str


def _add_upstream_data(database_url: str, callback: str, client_id: str, client_secret: str) -> None:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    engine = make_engine(database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name="upstream", display_name="Upstream", password_type="argon2id",
                                languages=["en"], password_options=["AtLeast6"]))
            for name, display, email in (("uma", "Uma Upstream", "uma@upstream.example"),
                                         ("lena", "Lena Linked", "lena@example.com"),
                                         ("ned", "Ned Nosignin", "ned@upstream.example"),
                                         ("ulli", "Ulli Unlink", "ulli@upstream.example")):
                db.add(User(owner="upstream", name=name, uuid=str(uuid.uuid4()), type="normal-user",
                            display_name=display, email=email, email_verified=True,
                            password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
            db.add(Application(owner="admin", name="downstream", display_name="Downstream", organization="upstream",
                               cert="cert-built-in", client_id=client_id, client_secret=client_secret,
                               redirect_uris=[callback], grant_types=["authorization_code"], enable_password=True,
                               token_format="JWT", expire_in_hours=1, refresh_expire_in_hours=1))
            db.commit()
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def upstream(server, tmp_path_factory) -> Upstream:
    """The second instance: migrated and seeded, then served by uvicorn on a free port."""
    tmp = tmp_path_factory.mktemp("iam-upstream")
    port = _free_port()
    database_url = f"sqlite:///{tmp / 'upstream.db'}"
    env = {**_server_env(port, database_url, tmp / "files"), "IAM_ORIGIN": f"http://127.0.0.1:{port}",
           "IAM_ADMIN_PASSWORD": UPSTREAM_ADMIN_PASSWORD, "IAM_EXTRA_PAGES": ""}
    startup = subprocess.run([str(VENV_BIN / "python"), "-m", "iam_console.startup"], cwd=PROJECT_DIR, env=env,
                             capture_output=True, text=True, timeout=180)
    assert startup.returncode == 0, startup.stdout[-2000:] + startup.stderr[-2000:]
    client_id, client_secret = secrets.token_hex(10), secrets.token_hex(20)
    _add_upstream_data(database_url, server.url("/callback"), client_id, client_secret)
    log = (tmp / "upstream.log").open("wb")
    process = subprocess.Popen(
        [str(VENV_BIN / "python"), "-m", "uvicorn", "iam_console.api.app:api", "--host", "127.0.0.1", "--port",
         str(port), "--log-level", "warning"], cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), \
                    urllib.request.urlopen(base + "/.well-known/openid-configuration", timeout=2) as answer:
                if answer.status == 200:
                    break
            assert process.poll() is None, (tmp / "upstream.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the upstream server did not start"
            time.sleep(0.3)
        yield Upstream(base, database_url, client_id, client_secret)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


@dataclass(frozen=True)
class Downstream:
    organization: str
    application: str
    provider: str
    client_id: str


def make_downstream(engine, upstream: Upstream, *, can_sign_in: bool = True, link_with_email: bool = False,
                    can_unlink: bool = True, prompted: bool = False, **app_fields) -> Downstream:
    """An organization of the first server whose default application lists the Custom provider."""
    from iam_console.db import session_scope
    from iam_console.models import Application, Organization, Provider

    suffix = uuid.uuid4().hex[:8]
    made = Downstream(f"fed-{suffix}", f"fed-app-{suffix}", f"upstream-{suffix}", secrets.token_hex(10))
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=made.organization, display_name="Federated", password_type="argon2id",
                            languages=["en", "zh"], password_options=["AtLeast6"],
                            default_application=made.application))
        db.add(Provider(owner="admin", name=made.provider, display_name="Upstream IAM", category="OAuth",
                        type="Custom", client_id=upstream.client_id, client_secret=upstream.client_secret,
                        issuer_url=upstream.base, scopes="openid profile email",
                        user_mapping={"id": "sub", "username": "preferred_username", "displayName": "name",
                                      "email": "email", "avatarUrl": "picture"}))
        db.add(Application(owner="admin", name=made.application, display_name="Federated app",
                           organization=made.organization, cert="cert-built-in", client_id=made.client_id,
                           client_secret=secrets.token_hex(20), enable_password=True, enable_sign_up=True,
                           **{"grant_types": ["authorization_code"], **app_fields},
                           enable_link_with_email=link_with_email,
                           providers=[{"name": made.provider, "canSignUp": True, "canSignIn": can_sign_in,
                                       "canUnlink": can_unlink, "prompted": prompted, "signupGroup": "",
                                       "rule": "None", "countryCodes": []}]))
    return made


def sign_in_upstream_as(page, upstream: Upstream, username: str) -> None:
    """Answer the browser's visit to the upstream's authorize page as its sign-in would. Playwright
    does not intercept a redirect's next hop, so the start is fetched here: its redirect to the
    upstream is followed by the test, which sends the browser on to the redirect URI (with the
    start's cookie)."""
    def answer(route) -> None:
        started = route.fetch(max_redirects=0)
        location = started.headers.get("location", "")
        if not location.startswith(f"{upstream.base}/login/oauth/authorize"):
            route.fulfill(response=started)  # refused: back to this server's page
            return
        params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        signed = requests.post(f"{upstream.base}/api/login", params=params, json={
            "application": "downstream", "organization": "upstream", "username": username, "password": PASSWORD,
            "type": "code"}, timeout=10).json()
        if signed["status"] != "ok":  # shown as the page, so that the failing assertion says why
            route.fulfill(status=200, content_type="text/plain", body=f"upstream refused: {signed}")
            return
        headers = {"location": signed["data2"]}
        if "set-cookie" in started.headers:
            headers["set-cookie"] = started.headers["set-cookie"]
        route.fulfill(status=302, headers=headers)

    page.route(lambda url: "/api/federation/start?" in url, answer)


def click_provider(page, fed: Downstream) -> None:
    """Sign in with the provider's button; back on this server's console home."""
    page.locator(f"#login-provider-{fed.provider}").click()
    page.wait_for_url(lambda url: urlsplit(url).path not in ("/api/federation/start", "/callback"))
    page.wait_for_load_state()
    assert urlsplit(page.url).path == "/", (page.url, page.inner_text("body")[:500])


def account_of(page) -> dict:
    body = page.request.get("/api/get-account").json()
    assert body["status"] == "ok", body
    return body["data"]


def users_linked(engine, organization: str) -> list:
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import User

    with session_scope(engine) as db:
        return [(u.name, dict(u.third_party_ids)) for u in db.exec(select(User).where(User.owner == organization))]


def test_sign_up_then_sign_in_again_with_the_upstream_provider(visit, page, context, engine, upstream):
    fed = make_downstream(engine, upstream)
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/login/{fed.organization}")
    button = page.locator(f"#login-provider-{fed.provider}")
    expect(button).to_have_text("Sign in with Upstream IAM")
    assert axe.serious(page) == []
    click_provider(page, fed)
    assert account_of(page)["name"] == "uma"
    [(name, links)] = users_linked(engine, fed.organization)
    assert name == "uma" and list(links) == ["custom"]
    context.clear_cookies()  # signed out; the second sign-in finds the same account
    visit(f"/login/{fed.organization}")
    click_provider(page, fed)
    assert account_of(page)["name"] == "uma"
    assert len(users_linked(engine, fed.organization)) == 1


def test_link_by_email_signs_in_the_existing_account(visit, page, engine, upstream):
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    fed = make_downstream(engine, upstream, link_with_email=True)
    with session_scope(engine) as db:
        db.add(User(owner=fed.organization, name="lena-here", uuid=str(uuid.uuid4()), type="normal-user",
                    display_name="Lena Here", email="lena@example.com", password=hash_password(PASSWORD, "argon2id"),
                    password_type="argon2id", signup_application=fed.application))
    sign_in_upstream_as(page, upstream, "lena")
    visit(f"/login/{fed.organization}")
    click_provider(page, fed)
    assert account_of(page)["name"] == "lena-here"
    assert users_linked(engine, fed.organization)[0][1].get("custom")


def test_sign_in_refused_when_can_sign_in_is_off(visit, page, engine, upstream):
    fed = make_downstream(engine, upstream, can_sign_in=False)
    sign_in_upstream_as(page, upstream, "ned")
    visit(f"/login/{fed.organization}")
    expect(page.locator(f"#login-provider-{fed.provider}")).to_have_count(0)  # no button is offered
    # the start, asked for anyway, is refused and says why on the sign-in page
    visit(f"/api/federation/start?application={fed.application}&provider={fed.provider}&method=signin")
    expect(page.locator("#login-error")).to_contain_text("cannot be used to sign in")
    assert users_linked(engine, fed.organization) == []


def test_unlink_from_the_account_page(visit, page, engine, upstream):
    fed = make_downstream(engine, upstream, can_unlink=True)
    sign_in_upstream_as(page, upstream, "ulli")
    visit(f"/login/{fed.organization}")
    click_provider(page, fed)
    visit("/account")
    row = page.locator(f"#linked-row-{fed.provider}")
    expect(row.locator(".linked-username")).to_have_text("ulli")
    assert axe.serious(page) == []
    row.locator(f"#linked-unlink-{fed.provider}").click()
    expect(page.get_by_text("Successfully unlinked")).to_be_visible()
    expect(row.locator(f"#linked-link-{fed.provider}")).to_be_visible()
    assert users_linked(engine, fed.organization) == [("ulli", {})]


def test_callback_replay_is_refused_in_the_browser(visit, page, engine, upstream):
    fed = make_downstream(engine, upstream)
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url) if "/callback?" in request.url else None)
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/login/{fed.organization}")
    click_provider(page, fed)
    page.context.clear_cookies()
    visit(urlsplit(seen[0]).path + "?" + urlsplit(seen[0]).query)  # the same code and state, again
    expect(page.locator("#login-error")).to_contain_text("please sign in again")



CLIENT_CALLBACK = f"http://127.0.0.1:{_free_port()}/cb"  # nothing listens: the test answers the navigation


def answer_client_callback(context) -> None:
    context.route(lambda url: url.startswith(CLIENT_CALLBACK),
                  lambda route: route.fulfill(status=200, content_type="text/plain", body="client"))


def test_authorize_page_button_answers_the_client_with_a_code(visit, page, context, engine, upstream):
    fed = make_downstream(engine, upstream, redirect_uris=[CLIENT_CALLBACK])
    answer_client_callback(context)
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/login/oauth/authorize?client_id={fed.client_id}&response_type=code&redirect_uri={CLIENT_CALLBACK}"
          f"&scope=openid&state=client-state")
    button = page.locator(f"#authorize-provider-{fed.provider}")
    expect(button).to_be_visible()
    assert axe.serious(page) == []
    button.click()
    page.wait_for_url(lambda url: url.startswith(CLIENT_CALLBACK))
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["client-state"] and query["code"][0]


def test_sign_up_page_buttons_and_the_oauth_sign_up_page(visit, page, context, engine, upstream):
    items = [{"name": name, "visible": True, "required": name != "Providers", "prompted": False, "rule": rule}
             for name, rule in (("Username", ""), ("Password", ""), ("Providers", "small"),
                                ("Signup button", ""))]
    fed = make_downstream(engine, upstream, signup_items=items, redirect_uris=[CLIENT_CALLBACK])
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/signup/{fed.application}")
    small = page.locator(f"#signup-provider-{fed.provider}")
    expect(small).to_have_attribute("aria-label", "Sign up with Upstream IAM")  # an icon: its name is the label
    assert axe.serious(page) == []
    small.click()
    page.wait_for_url(lambda url: urlsplit(url).path == "/")
    assert account_of(page)["name"] == "uma"
    context.clear_cookies()
    answer_client_callback(context)
    visit(f"/signup/oauth/authorize?client_id={fed.client_id}&response_type=code&redirect_uri={CLIENT_CALLBACK}"
          f"&scope=openid&state=s2")
    page.locator(f"#signup-provider-{fed.provider}").click()  # the account exists: it signs in, for the client
    page.wait_for_url(lambda url: url.startswith(CLIENT_CALLBACK))
    assert parse_qs(urlsplit(page.url).query)["state"] == ["s2"]


def test_link_from_the_account_page(visit, page, engine, upstream, api_login):
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User
    from tests.e2e.conftest import Account

    fed = make_downstream(engine, upstream)
    with session_scope(engine) as db:
        db.add(User(owner=fed.organization, name="lisa", uuid=str(uuid.uuid4()), type="normal-user",
                    display_name="Lisa", password=hash_password(PASSWORD, "argon2id"), password_type="argon2id",
                    signup_application=fed.application))
    api_login(Account(fed.organization, "lisa", PASSWORD, "Lisa"))
    sign_in_upstream_as(page, upstream, "lena")
    visit("/account")
    row = page.locator(f"#linked-row-{fed.provider}")
    expect(row).to_contain_text("Not linked")
    row.locator(f"#linked-link-{fed.provider}").click()  # to the provider and back to /account, linked
    expect(page.locator(f"#linked-row-{fed.provider} .linked-username")).to_have_text("lena", timeout=30_000)
    assert dict(users_linked(engine, fed.organization))["lisa"].get("custom")


def test_a_second_factor_is_asked_after_the_upstream_sign_in(visit, page, context, engine, upstream):
    import pyotp
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import User

    fed = make_downstream(engine, upstream)
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/login/{fed.organization}")
    click_provider(page, fed)
    secret = pyotp.random_base32()
    with session_scope(engine) as db:
        user = db.exec(select(User).where(User.owner == fed.organization, User.name == "uma")).one()
        user.totp_secret, user.preferred_mfa_type = secret, "app"
        db.add(user)
    context.clear_cookies()
    visit(f"/login/{fed.organization}")
    logs: list[str] = []
    page.on("console", lambda message: logs.append(message.text))
    page.on("response", lambda r: logs.append(f"{r.status} {r.url}") if "/api/" in r.url or "callback" in r.url
            else None)
    page.locator(f"#login-provider-{fed.provider}").click()
    page.wait_for_url(lambda url: "nextMfa=1" in url)
    try:  # back on the sign-in page: the second step
        expect(page.locator("#login-passcode")).to_be_visible(timeout=15_000)
    except AssertionError:
        raise AssertionError((page.url, logs)) from None
    assert page.request.get("/api/get-account").json()["status"] == "error"  # no session yet
    page.fill("#login-passcode", pyotp.TOTP(secret).now())
    page.click("#login-mfa-submit")
    page.wait_for_url(lambda url: urlsplit(url).path == "/")
    assert account_of(page)["name"] == "uma"


def test_a_sign_up_carries_the_invitation_code_through_the_provider(visit, page, engine, upstream):
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Group, Invitation, User

    items = [{"name": name, "visible": True, "required": name != "Providers", "prompted": False, "rule": ""}
             for name in ("Username", "Password", "Invitation code", "Providers", "Signup button")]
    fed = make_downstream(engine, upstream, signup_items=items)
    with session_scope(engine) as db:
        db.add(Group(owner=fed.organization, name="invited", display_name="Invited", type="Virtual"))
        db.add(Invitation(owner=fed.organization, name="spring", code="SPRING-E2E", quota=1, application="All",
                          signup_group=f"{fed.organization}/invited", state="Active"))
    sign_in_upstream_as(page, upstream, "uma")
    visit(f"/signup/{fed.application}")  # no code: the sign-up is refused, and says why
    page.locator(f"#signup-provider-{fed.provider}").click()
    expect(page.get_by_text("Invitation code cannot be blank")).to_be_visible()
    assert users_linked(engine, fed.organization) == []
    visit(f"/signup/{fed.application}?invitationCode=SPRING-E2E")  # the page's code is in the buttons' links
    button = page.locator(f"#signup-provider-{fed.provider}")
    assert "invitationCode=SPRING-E2E" in button.get_attribute("href")
    visit(f"/signup/{fed.application}")  # a code typed into the form goes with the button
    page.locator("#signup-invitation-code").fill("SPRING-E2E")
    page.locator(f"#signup-provider-{fed.provider}").click()
    page.wait_for_url(lambda url: urlsplit(url).path == "/")
    assert account_of(page)["name"] == "uma"
    with session_scope(engine) as db:
        user = db.exec(select(User).where(User.owner == fed.organization)).one()
        invitation = db.exec(select(Invitation).where(Invitation.owner == fed.organization)).one()
        assert (user.invitation, user.groups, invitation.used_count) == (
            "spring", [f"{fed.organization}/invited"], 1)


def test_a_prompted_provider_is_offered_for_linking_after_a_password_sign_in(visit, page, context, engine,
                                                                              upstream):
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    fed = make_downstream(engine, upstream, prompted=True, redirect_uris=[CLIENT_CALLBACK])
    with session_scope(engine) as db:
        db.add(User(owner=fed.organization, name="pia", uuid=str(uuid.uuid4()), type="normal-user",
                    display_name="Pia", password=hash_password(PASSWORD, "argon2id"), password_type="argon2id",
                    signup_application=fed.application))
    answer_client_callback(context)
    sign_in_upstream_as(page, upstream, "lena")
    visit(f"/login/oauth/authorize?client_id={fed.client_id}&response_type=code&redirect_uri={CLIENT_CALLBACK}"
          f"&scope=openid&state=prompt-state")
    page.fill("#authorize-username", "pia")
    page.fill("#authorize-password", PASSWORD)
    page.click("#authorize-submit")
    page.wait_for_url(lambda url: urlsplit(url).path == f"/prompt/{fed.application}")
    link = page.locator(f"#prompt-link-{fed.provider}")
    expect(link).to_be_visible()
    expect(page.locator("#prompt-continue")).to_have_text("Skip")
    assert axe.serious(page) == []
    link.click()  # to the provider and back to the prompt page, linked
    expect(page.locator(f"#prompt-linked-{fed.provider}")).to_be_visible(timeout=30_000)
    assert urlsplit(page.url).path == f"/prompt/{fed.application}"
    assert dict(users_linked(engine, fed.organization))["pia"].get("custom")
    assert axe.serious(page) == []
    expect(page.locator("#prompt-continue")).to_have_text("Continue")
    page.click("#prompt-continue")
    page.wait_for_url(lambda url: url.startswith(CLIENT_CALLBACK))
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["prompt-state"] and query["code"][0]
