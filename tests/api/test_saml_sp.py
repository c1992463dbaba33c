"""This server as a SAML 2.0 service provider (a SAML provider), against its own IdP (another
application of the same server): /api/get-saml-login, /api/acs, and the Responses it refuses
(replayed, wrongly signed, expired, unsolicited, tampered)."""

from __future__ import annotations

import base64
import json
import secrets
from datetime import timedelta
from html import unescape
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from fastapi.testclient import TestClient
from lxml import etree
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.applications import certs
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.saml import saml_sp
from iam_console.saml import saml_xml as x
from tests.api.conftest import sign_in
from tests.api.saml_world import local, posted_form
from tests.conftest import unique

PASSWORD = "saml-sp-pass-1"
ACS = "http://testserver/api/acs"


def make_cert() -> tuple[str, str, str]:
    name = unique("samlcert")
    certificate, key = certs.generate("RS256", 2048, 1, name)
    with session_scope() as db:
        db.add(m.Cert(owner="admin", name=name, scope="JWT", type="x509", crypto_algorithm="RS256", bit_size=2048,
                      certificate=certificate, private_key=key))
    return name, certificate, key


def built_in_cert() -> str:
    with session_scope() as db:
        return db.exec(select(m.Cert.certificate).where(m.Cert.owner == "admin",
                                                        m.Cert.name == "cert-built-in")).one()


def add(row):
    with session_scope() as db:
        db.add(row)
    return row


@pytest.fixture
def world(make_org, make_user):
    """An organization with alice; its IdP application; a SAML provider trusting that IdP; and
    the application alice signs in to with the provider."""
    org = make_org()
    make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com", display_name="Alice")
    idp_app = add(m.Application(owner="admin", name=unique("idp"), organization=org.name, cert="cert-built-in",
                                enable_password=True, redirect_uris=[ACS], client_id=secrets.token_hex(10),
                                client_secret=secrets.token_hex(20)))
    provider = add(m.Provider(owner="admin", name=unique("saml"), category="SAML", type="Custom",
                              endpoint=f"http://testserver/api/saml/redirect/admin/{idp_app.name}",
                              issuer_url="http://testserver", id_p=built_in_cert()))
    app = add(m.Application(owner="admin", name=unique("spapp"), organization=org.name, cert="cert-built-in",
                            enable_password=True, client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                            providers=[{"name": provider.name, "canSignIn": True, "canSignUp": False}]))
    return org, idp_app, provider, app


def saml_login(provider: m.Provider, app: m.Application, return_to: str = "/account") -> str:
    body = TestClient(api).get("/api/get-saml-login", params={
        "id": f"admin/{provider.name}", "application": app.name, "from": return_to, "relayState": "rs-sp"}).json()
    assert body["status"] == "ok" and body["data2"] == "GET", body
    return body["data"]


def idp_answer(org: str, url: str, client: TestClient | None = None) -> dict[str, str]:
    """The IdP's page for a signed-in alice: the fields it posts to the ACS."""
    client = client or sign_in(org, "alice", PASSWORD)
    page = client.get(local(url), follow_redirects=False)
    assert page.status_code == 200, page.text[:400]
    action, fields = posted_form(page.text)
    assert action == ACS
    return fields


def post_acs(fields: dict[str, str]):
    return TestClient(api).post("/api/acs", data=fields, follow_redirects=False)


def refused(answer) -> str:
    assert answer.status_code == 400 and "set-cookie" not in answer.headers, answer.text[:300]
    return unescape(answer.text)


def test_full_sign_in_through_the_acs(world):
    org, _, provider, app = world
    url = saml_login(provider, app)
    assert url.startswith(provider.endpoint + "?SAMLRequest=")
    assert parse_qs(urlsplit(url).query)["RelayState"] == ["rs-sp"]
    fields = idp_answer(org.name, url)
    assert fields["RelayState"] == "rs-sp"
    client = TestClient(api)
    answer = client.post("/api/acs", data=fields, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/account", answer.text[:300]
    account = client.get("/api/get-account").json()
    assert account["status"] == "ok" and account["data"]["name"] == "alice" and account["data"]["owner"] == org.name
    # the same Response again: its request was used
    assert "already used" in refused(post_acs(fields))


def test_metadata_gives_the_idp(world):
    org, idp_app, provider, app = world
    metadata = TestClient(api).get("/api/saml/metadata", params={"application": f"admin/{idp_app.name}"}).text
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.metadata_, row.endpoint, row.id_p, row.issuer_url = metadata, "", "", ""
        db.add(row)
    assert saml_sp.metadata_fields(metadata) == {
        "issuerUrl": "http://testserver", "endpoint": f"http://testserver/api/saml/redirect/admin/{idp_app.name}",
        "idP": x.bare_certificate(x.certificate(built_in_cert()))}
    fields = idp_answer(org.name, saml_login(provider, app))
    assert post_acs(fields).status_code == 303


@pytest.mark.parametrize("text", ["", "not xml", "<a/>",
                                  '<!DOCTYPE a [<!ENTITY e SYSTEM "file:///etc/passwd">]><a>&e;</a>',
                                  f'<md:EntityDescriptor xmlns:md="{x.METADATA}" entityID="e"/>'])
def test_bad_metadata_is_a_clear_error(text):
    with pytest.raises(ServiceError, match="Can not parse metadata"):
        saml_sp.metadata_fields(text)


def _sign_requests(provider: m.Provider, idp_app: m.Application) -> None:
    """The provider signs its requests with a new cert, which the IdP application requires."""
    name, _, _ = make_cert()
    with session_scope() as db:
        for row, column, value in ((m.Provider, "cert", name), (m.Application, "client_cert", name)):
            target = db.exec(select(row).where(row.name == (provider.name if row is m.Provider
                                                            else idp_app.name))).one()
            setattr(target, column, value)
            if row is m.Provider:
                target.enable_sign_authn_request = True
            db.add(target)


def idp_answer_to_post(org: str, html: str) -> dict[str, str]:
    """The IdP's answer to the page that posts a signed AuthnRequest (POST binding)."""
    action, fields = posted_form(html)
    client = sign_in(org, "alice", PASSWORD)
    on = client.post(local(action), data=fields, follow_redirects=False)
    assert on.status_code == 303, on.text[:400]
    return idp_answer(org, on.headers["location"], client)


def test_signed_authn_request_goes_over_post_checked_by_the_idp(world):
    """As Casdoor: a signed AuthnRequest goes over the POST binding, signed (enveloped)."""
    org, idp_app, provider, app = world
    _sign_requests(provider, idp_app)
    body = TestClient(api).get("/api/get-saml-login", params={
        "id": f"admin/{provider.name}", "application": app.name, "relayState": "rs-sp"}).json()
    assert body["status"] == "ok" and body["data2"] == "POST", body
    action, fields = posted_form(body["data"])
    assert action == provider.endpoint and fields["RelayState"] == "rs-sp"
    request = x.parse(base64.b64decode(fields["SAMLRequest"]))
    assert request.find("ds:Signature", x.NS) is not None and request.get("Destination") == provider.endpoint
    assert post_acs(idp_answer_to_post(org.name, body["data"])).status_code == 303
    # the request altered after signing: the IdP refuses it
    altered = base64.b64encode(base64.b64decode(fields["SAMLRequest"]).replace(
        b'AllowCreate="true"', b'AllowCreate="false"')).decode()
    page = sign_in(org.name, "alice", PASSWORD).post(local(action), data={**fields, "SAMLRequest": altered},
                                                      follow_redirects=False)
    assert page.status_code == 400 and "signature" in unescape(page.text).lower()
    # unsigned: refused too
    request.remove(request.find("ds:Signature", x.NS))
    page = sign_in(org.name, "alice", PASSWORD).post(local(action), data={
        **fields, "SAMLRequest": base64.b64encode(etree.tostring(request)).decode()}, follow_redirects=False)
    assert page.status_code == 400 and "must be signed" in unescape(page.text)


def _redirect_only(metadata: str) -> str:
    root = x.parse(metadata)
    for service in root.iter(f"{{{x.METADATA}}}SingleSignOnService"):
        if service.get("Binding") == x.POST_BINDING:
            service.getparent().remove(service)
    return etree.tostring(root).decode()


def test_signed_redirect_request_when_the_idp_offers_only_redirect(world):
    org, idp_app, provider, app = world
    _sign_requests(provider, idp_app)
    metadata = TestClient(api).get("/api/saml/metadata", params={"application": f"admin/{idp_app.name}"}).text
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.metadata_ = _redirect_only(metadata)
        db.add(row)
    url = saml_login(provider, app)
    assert "SigAlg=" in url and "Signature=" in url
    fields = idp_answer(org.name, url)
    assert post_acs(fields).status_code == 303
    # without the signature the IdP refuses the request
    unsigned = url.split("&SigAlg=")[0]
    page = sign_in(org.name, "alice", PASSWORD).get(local(unsigned), follow_redirects=False)
    assert page.status_code == 400 and "must be signed" in unescape(page.text)


def test_unsigned_request_goes_over_post_when_the_idp_offers_only_post(world):
    org, idp_app, provider, app = world
    metadata = TestClient(api).get("/api/saml/metadata", params={"application": f"admin/{idp_app.name}"}).text
    root = x.parse(metadata)
    for service in root.iter(f"{{{x.METADATA}}}SingleSignOnService"):
        if service.get("Binding") == x.REDIRECT_BINDING:
            service.getparent().remove(service)
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.metadata_ = etree.tostring(root).decode()
        db.add(row)
    body = TestClient(api).get("/api/get-saml-login", params={"id": f"admin/{provider.name}",
                                                              "application": app.name}).json()
    assert body["data2"] == "POST"
    fields = posted_form(body["data"])[1]
    assert x.parse(base64.b64decode(fields["SAMLRequest"])).find("ds:Signature", x.NS) is None
    assert post_acs(idp_answer_to_post(org.name, body["data"])).status_code == 303


def test_wrong_signature_is_refused(world):
    org, _, provider, app = world
    _, other, _ = make_cert()
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.id_p = other
        db.add(row)
    fields = idp_answer(org.name, saml_login(provider, app))
    with session_scope() as db:
        before = db.exec(select(m.Record.pk).where(m.Record.action == "acs")).all()
    assert "signature" in refused(post_acs(fields)).lower()
    with session_scope() as db:  # the refusal is on record, with the message the page showed
        after = db.exec(select(m.Record).where(m.Record.action == "acs", m.Record.pk.not_in(before))).all()
    assert [(r.request_uri, json.loads(r.response)) for r in after] == [
        ("/api/acs", {"status": "error", "msg": "The signature of the SAML message is invalid"})]


def test_tampered_response_is_refused(world):
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    xml = base64.b64decode(fields["SAMLResponse"]).replace(b">alice<", b">admin<")
    assert "signature" in refused(post_acs({**fields, "SAMLResponse": base64.b64encode(xml).decode()})).lower()


def test_expired_response_is_refused(world, monkeypatch):
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    later = x.now() + timedelta(minutes=8)
    monkeypatch.setattr(x, "now", lambda: later)
    assert "expired" in refused(post_acs(fields))


def test_unsolicited_response_is_refused(world):
    org, _, provider, _ = world
    request = (f'<samlp:AuthnRequest xmlns:samlp="{x.PROTOCOL}" xmlns:saml="{x.ASSERTION}" ID="_unasked" '
               f'Version="2.0" AssertionConsumerServiceURL="{ACS}"><saml:Issuer>{ACS}</saml:Issuer>'
               "</samlp:AuthnRequest>")
    url = f"{provider.endpoint}?SAMLRequest={x.encode(request.encode(), deflate=True)}"
    fields = idp_answer(org.name, url.replace("+", "%2B"))
    assert "does not answer a request" in refused(post_acs(fields))


def test_provider_not_enabled_for_the_application(world):
    org, _, provider, app = world
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        row.providers = [{"name": provider.name, "canSignIn": False}]
        db.add(row)
    fields = idp_answer(org.name, saml_login(provider, app))
    assert "cannot be used to sign in" in refused(post_acs(fields))


def test_second_factor_is_asked_on_the_login_page(world, make_user):
    org, _, provider, app = world
    make_user(owner=org.name, name="bob", password=PASSWORD)
    fields = idp_answer(org.name, saml_login(provider, app))  # the IdP's own sign-in is done
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == "alice")).one()
        user.totp_secret, user.preferred_mfa_type = "JBSWY3DPEHPK3PXP", "app"
        db.add(user)
    browser = sign_in(org.name, "bob", PASSWORD)  # the browser's earlier session, as someone else
    answer = browser.post("/api/acs", data=fields, follow_redirects=False)
    assert answer.status_code == 303
    assert browser.get("/api/get-account").json()["status"] == "error"  # it ended
    target = urlsplit(answer.headers["location"])
    assert target.path == f"/login/{org.name}" and parse_qs(target.query)["nextMfa"] == ["1"]
    cookies = answer.headers["set-cookie"]
    assert "iam_mfa=" in cookies and 'iam_session=""' in cookies  # the pending sign-in, and no session


@pytest.mark.parametrize("params", [{"id": "admin/none-such"}, {}])
def test_get_saml_login_bad_provider(params):
    body = TestClient(api).get("/api/get-saml-login", params=params).json()
    assert body["status"] == "error"


def test_get_saml_login_refuses_other_categories(world, database):
    oauth = add(m.Provider(owner="admin", name=unique("oauth"), category="OAuth", type="GitHub"))
    body = TestClient(api).get("/api/get-saml-login", params={"id": f"admin/{oauth.name}"}).json()
    assert body["status"] == "error" and "is not SAML" in body["msg"]


@pytest.mark.parametrize("value", ["", "bm90IHhtbA==", "%%%"])
def test_acs_bad_input(database, value):
    assert "SAML" in refused(post_acs({"SAMLResponse": value}))


def test_saving_a_provider_reads_its_metadata(admin, world):
    _, idp_app, _, _ = world
    metadata = TestClient(api).get("/api/saml/metadata", params={"application": f"admin/{idp_app.name}"}).text
    name = unique("samlmd")
    body = admin.post("/api/add-provider", json={"owner": "admin", "name": name, "category": "SAML",
                                                 "type": "Keycloak", "metadata": metadata}).json()
    assert body["status"] == "ok", body
    saved = admin.get("/api/get-provider", params={"id": f"admin/{name}"}).json()["data"]
    assert saved["issuerUrl"] == "http://testserver"
    assert saved["endpoint"] == f"http://testserver/api/saml/redirect/admin/{idp_app.name}"
    assert saved["idP"] == x.bare_certificate(x.certificate(built_in_cert()))


@pytest.mark.parametrize("fields", [{"metadata": "<EntityDescriptor"}, {"idP": "not a certificate"}])
def test_saving_a_provider_refuses_bad_saml_settings(admin, database, fields):
    name = unique("samlbad")
    body = admin.post("/api/add-provider", json={"owner": "admin", "name": name, "category": "SAML",
                                                 "type": "Custom", **fields}).json()
    assert body["status"] == "error" and ("metadata" in body["msg"] or "certificate" in body["msg"]), body
    assert admin.get("/api/get-provider", params={"id": f"admin/{name}"}).json()["data"] is None


def test_identity_provider_on_another_site_posts_to_the_acs(world):
    """A browser holding a session of this server posts the Response from the IdP's page: the
    cross-site check leaves the ACS to the Response's own checks."""
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    browser = sign_in(org.name, "alice", PASSWORD)
    answer = browser.post("/api/acs", data=fields, headers={"Origin": "https://idp.example.org"},
                          follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/account"
    # elsewhere the check still holds
    refused_elsewhere = browser.post("/api/update-user", json={}, headers={"Origin": "https://idp.example.org"})
    assert "origin" in refused_elsewhere.json()["msg"]


def _other_organization_app(make_org, provider: m.Provider, **row) -> m.Application:
    """An application of another organization (no alice there) listing the provider."""
    other = make_org()
    return add(m.Application(owner="admin", name=unique("spother"), organization=other.name, cert="cert-built-in",
                             enable_password=True, enable_sign_up=True, client_id=secrets.token_hex(10),
                             client_secret=secrets.token_hex(20),
                             providers=[{"name": provider.name, "canSignIn": True, **row}]))


def test_new_account_signed_up_through_the_federation_rules(world, make_org):
    org, _, provider, _ = world
    app = _other_organization_app(make_org, provider, canSignUp=True)
    client = TestClient(api)
    assert client.post("/api/acs", data=idp_answer(org.name, saml_login(provider, app)),
                       follow_redirects=False).status_code == 303
    account = client.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"], account["displayName"]) == (app.organization, "alice", "Alice")
    assert account["custom"] == "alice"  # the Custom type's link holds the NameID
    # the next sign-in finds the same account
    again = TestClient(api)
    assert again.post("/api/acs", data=idp_answer(org.name, saml_login(provider, app)),
                      follow_redirects=False).status_code == 303
    assert again.get("/api/get-account").json()["data"]["name"] == "alice"
    with session_scope() as db:
        assert len(db.exec(select(m.User).where(m.User.owner == app.organization)).all()) == 1


def test_new_account_refused_without_can_sign_up(world, make_org):
    org, _, provider, _ = world
    app = _other_organization_app(make_org, provider, canSignUp=False)
    text = refused(post_acs(idp_answer(org.name, saml_login(provider, app))))
    assert "is not allowed to sign up" in text
    with session_scope() as db:
        assert db.exec(select(m.User).where(m.User.owner == app.organization)).all() == []


@pytest.mark.parametrize("kind", ["Keycloak", "Aliyun IDaaS"])
def test_types_without_a_user_field_sign_up_and_link_by_property(world, make_org, kind):
    """Keycloak and Aliyun IDaaS have no field of their own on a user: the link is the property
    oauth_<Type>_id, found again at the next sign-in; no wire field is added."""
    org, _, provider, app = world
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.type = kind
        db.add(row)
    assert post_acs(idp_answer(org.name, saml_login(provider, app))).status_code == 303  # alice, by NameID
    stranger = _other_organization_app(make_org, provider, canSignUp=True)
    client = TestClient(api)
    assert client.post("/api/acs", data=idp_answer(org.name, saml_login(provider, stranger)),
                       follow_redirects=False).status_code == 303
    account = client.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"]) == (stranger.organization, "alice")
    assert account["properties"][f"oauth_{kind}_id"] == "alice"
    assert not any(key.startswith(kind.replace(" ", "").lower()) for key in account)
    # renamed here, the account is still found by its link (not by the NameID as a name)
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == stranger.organization)).one()
        user.name = "alice-renamed"
        db.add(user)
    again = TestClient(api)
    assert again.post("/api/acs", data=idp_answer(org.name, saml_login(provider, stranger)),
                      follow_redirects=False).status_code == 303
    assert again.get("/api/get-account").json()["data"]["name"] == "alice-renamed"
    with session_scope() as db:
        assert len(db.exec(select(m.User).where(m.User.owner == stranger.organization)).all()) == 1


def test_type_without_a_user_field_refused_without_can_sign_up(world, make_org):
    org, _, provider, _ = world
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.name == provider.name)).one()
        row.type = "Keycloak"
        db.add(row)
    stranger = _other_organization_app(make_org, provider, canSignUp=False)
    assert "is not allowed to sign up" in refused(post_acs(idp_answer(org.name, saml_login(provider, stranger))))
    with session_scope() as db:
        assert db.exec(select(m.User).where(m.User.owner == stranger.organization)).all() == []


# --- the provider buttons (federation/upstream.buttons): /api/federation/start, bound to the browser ---

REDIRECT = "https://client.example/cb"


def start(client: TestClient, app: m.Application, provider: m.Provider, method: str = "signin", **extra):
    return client.get("/api/federation/start", params={"application": app.name, "provider": provider.name,
                                                        "method": method, **extra}, follow_redirects=False)


def upstream_error(location: str) -> str:
    from iam_console.federation import upstream

    with session_scope() as db:
        return upstream.take_error(db, parse_qs(urlsplit(location).query)["upstreamError"][0])


def test_buttons_list_saml_providers_by_the_rows_rules(world):
    from iam_console.federation import upstream

    _, _, provider, app = world
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        [button] = upstream.buttons(db, row, "signin", return_to="/account")
        assert button["name"] == provider.name and button["icon"] == "/providers/saml.svg"
        assert button["href"].startswith("/api/federation/start?") and "method=signin" in button["href"]
        assert upstream.buttons(db, row, "signup") == []  # canSignUp is off
        row.signin_items = [{"name": "Providers", "visible": False}]
        assert upstream.buttons(db, row, "signin") == []


def test_button_sign_in_is_bound_to_the_browser(world):
    org, _, provider, app = world
    browser = TestClient(api)
    started = start(browser, app, provider, **{"from": "/account"})
    assert started.status_code == 302 and started.headers["location"].startswith(provider.endpoint + "?SAMLRequest=")
    assert "iam_upstream" in browser.cookies
    fields = idp_answer(org.name, started.headers["location"])
    # another browser (no binding cookie): first posted again from this site, then refused
    stranger = TestClient(api)
    bounce = stranger.post("/api/acs", data=fields, follow_redirects=False)
    assert bounce.status_code == 200 and "set-cookie" not in bounce.headers
    action, again = posted_form(bounce.text)
    assert action == "/api/acs" and again["bounced"] == "1" and again["SAMLResponse"] == fields["SAMLResponse"]
    refused_there = stranger.post("/api/acs", data=again, follow_redirects=False)
    assert refused_there.status_code == 302 and "another browser" in upstream_error(refused_there.headers["location"])
    assert stranger.get("/api/get-account").json()["status"] == "error"
    # the browser that started it (its state was used by the refused attempt: a new start)
    started = start(browser, app, provider, **{"from": "/account"})
    answer = browser.post("/api/acs", data=idp_answer(org.name, started.headers["location"]), follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/account", answer.text[:300]
    assert browser.get("/api/get-account").json()["data"]["name"] == "alice"


def test_button_signed_request_posts_itself(world):
    org, idp_app, provider, app = world
    _sign_requests(provider, idp_app)
    browser = TestClient(api)
    started = start(browser, app, provider)
    assert started.status_code == 200 and "iam_upstream" in browser.cookies
    assert "script-src 'unsafe-inline'" in started.headers["content-security-policy"]
    answer = browser.post("/api/acs", data=idp_answer_to_post(org.name, started.text), follow_redirects=False)
    assert answer.status_code == 303 and browser.get("/api/get-account").json()["data"]["name"] == "alice"


def test_button_on_the_authorize_page_answers_the_authorization_request(world):
    org, _, provider, app = world
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        row.redirect_uris = [REDIRECT]
        db.add(row)
    authorize = urlencode({"client_id": app.client_id, "response_type": "code", "redirect_uri": REDIRECT,
                           "scope": "openid", "state": "client-state"})
    browser = TestClient(api)
    started = start(browser, app, provider, authorize=authorize)
    answer = browser.post("/api/acs", data=idp_answer(org.name, started.headers["location"]), follow_redirects=False)
    location = answer.headers["location"]
    assert answer.status_code == 303 and location.startswith(REDIRECT + "?code=") and "state=client-state" in location
    # refused after the IdP: back to the authorize page with the message
    second = TestClient(api)
    started = start(second, app, provider, authorize=authorize)
    fields = idp_answer(org.name, started.headers["location"])
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == "alice")).one()
        user.is_forbidden = True
        db.add(user)
    refused_back = second.post("/api/acs", data=fields, follow_redirects=False)
    location = refused_back.headers["location"]
    assert refused_back.status_code == 302 and location.startswith(f"/login/oauth/authorize?{authorize}&")
    assert "forbidden" in upstream_error(location) and second.get("/api/get-account").json()["status"] == "error"


def test_button_on_the_sign_up_page_signs_up(world, make_org):
    org, _, provider, _ = world
    app = _other_organization_app(make_org, provider, canSignUp=True, canSignIn=False)
    assert "cannot be used to sign in" in upstream_error(start(TestClient(api), app, provider).headers["location"])
    browser = TestClient(api)
    started = start(browser, app, provider, "signup")
    answer = browser.post("/api/acs", data=idp_answer(org.name, started.headers["location"]), follow_redirects=False)
    assert answer.status_code == 303, answer.headers
    account = browser.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"]) == (app.organization, "alice")


@pytest.mark.parametrize("params, message", [
    ({"method": "link"}, "Unknown method"),
    ({"provider": "none-such"}, "does not exist"),
    ({"authorize": "client_id=nope&response_type=code&redirect_uri=https://evil.example/cb"}, "")])
def test_bad_button_starts_write_nothing(world, params, message):
    _, _, provider, app = world
    with session_scope() as db:
        before = len(db.exec(select(m.SamlRequest)).all())
    answer = TestClient(api).get("/api/federation/start", params={
        "application": app.name, "provider": provider.name, "method": "signin", **params}, follow_redirects=False)
    assert answer.status_code == 302 and "upstreamError=" in answer.headers["location"]
    assert message in upstream_error(answer.headers["location"])
    with session_scope() as db:
        assert len(db.exec(select(m.SamlRequest)).all()) == before


# --- Casdoor's /api/login with samlResponse ---

def test_api_login_with_saml_response(world):
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    client = TestClient(api)
    body = client.post("/api/login", json={"application": app.name, "provider": provider.name, "type": "login",
                                           "samlResponse": fields["SAMLResponse"], "relayState": "rs-sp"}).json()
    assert body["status"] == "ok" and body["data"] == f"{org.name}/alice", body
    assert client.get("/api/get-account").json()["data"]["name"] == "alice"
    again = TestClient(api).post("/api/login", json={"application": app.name, "samlResponse": fields["SAMLResponse"]})
    assert "already used" in again.json()["msg"]


def test_api_login_with_saml_response_for_a_code(world):
    org, _, provider, app = world
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        row.redirect_uris = [REDIRECT]
        db.add(row)
    fields = idp_answer(org.name, saml_login(provider, app))
    body = TestClient(api).post("/api/login", params={
        "clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
        "state": "st"}, json={"application": app.name, "provider": provider.name, "type": "code",
                              "samlResponse": fields["SAMLResponse"]}).json()
    assert body["status"] == "ok" and body["data2"].startswith(REDIRECT + "?code=" + body["data"]), body


@pytest.mark.parametrize("change, message", [
    ({"application": "another-app"}, "another application"),
    ({"provider": "another-provider"}, "another provider"),
    ({"samlResponse": "not base64 !"}, "cannot be read"),
])
def test_api_login_with_bad_saml_response(world, change, message):
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    body = TestClient(api).post("/api/login", json={"application": app.name, "provider": provider.name,
                                                    "samlResponse": fields["SAMLResponse"], **change}).json()
    assert body["status"] == "error" and message in body["msg"], body
    # nothing used up: the right body still signs in
    assert TestClient(api).post("/api/login", json={"application": app.name, "samlResponse": fields["SAMLResponse"]}
                                ).json()["status"] == "ok"


def test_api_login_with_tampered_saml_response(world):
    org, _, provider, app = world
    fields = idp_answer(org.name, saml_login(provider, app))
    xml = base64.b64decode(fields["SAMLResponse"]).replace(b">alice<", b">mallory<")
    body = TestClient(api).post("/api/login", json={"application": app.name,
                                                    "samlResponse": base64.b64encode(xml).decode()}).json()
    assert body["status"] == "error" and "signature" in body["msg"].lower()


def test_button_sign_in_owing_a_second_factor_ends_the_earlier_session(world, make_user):
    org, _, provider, app = world
    make_user(owner=org.name, name="bob", password=PASSWORD)
    browser = sign_in(org.name, "bob", PASSWORD)  # the browser's earlier session, as someone else
    started = start(browser, app, provider, **{"from": "/account"})
    fields = idp_answer(org.name, started.headers["location"])  # the IdP's own sign-in is done
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == "alice")).one()
        user.totp_secret, user.preferred_mfa_type = "JBSWY3DPEHPK3PXP", "app"
        db.add(user)
    answer = browser.post("/api/acs", data=fields, follow_redirects=False)
    target = urlsplit(answer.headers["location"])
    assert answer.status_code == 303 and target.path == f"/login/{org.name}"
    assert parse_qs(target.query) == {"from": ["/account"], "nextMfa": ["1"]}
    assert "iam_mfa=" in answer.headers["set-cookie"] and 'iam_session=""' in answer.headers["set-cookie"]
    assert browser.get("/api/get-account").json()["status"] == "error"
    pending = browser.get("/api/federation/pending-mfa").json()
    assert pending["data"] == "NextMfa" and pending["data2"][0]["mfaType"] == "app"


def test_a_saml_state_is_taken_by_the_acs_only(world):
    """The OAuth callback does not consume a SAML request's state (nor burn it)."""
    import zlib

    org, _, provider, app = world
    browser = TestClient(api)
    location = start(browser, app, provider, **{"from": "/account"}).headers["location"]
    request = zlib.decompress(base64.b64decode(parse_qs(urlsplit(location).query)["SAMLRequest"][0]), -15)
    request_id = x.parse(request).get("ID")
    callback = browser.get("/callback", params={"state": request_id, "code": "c"}, follow_redirects=False)
    assert "unknown" in upstream_error(callback.headers["location"])
    answer = browser.post("/api/acs", data=idp_answer(org.name, location), follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/account"


# --- invitation codes: the sign-up page's ?invitationCode= rides the SAML start ---

def _invited_app(make_org, provider: m.Provider) -> m.Application:
    """Another organization's application whose sign-up requires an invitation code; `spring`
    (quota 1, group `invited`)."""
    app = _other_organization_app(make_org, provider, canSignUp=True)
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        row.signup_items = [{"name": "Username", "visible": True, "required": True},
                            {"name": "Invitation code", "visible": True, "required": True},
                            {"name": "Providers", "visible": True}]
        db.add(row)
        db.add(m.Group(owner=app.organization, name="invited", display_name="invited", type="Virtual"))
        db.add(m.Invitation(owner=app.organization, name="spring", code="SPRING-1", quota=1, application="All",
                            signup_group=f"{app.organization}/invited", state="Active"))
    return app


@pytest.mark.parametrize("code, message", [("", "Invitation code cannot be blank"),
                                           ("NOPE-1", "Invitation code is invalid")])
def test_saml_sign_up_refused_without_a_good_invitation_code(world, make_org, code, message):
    org, _, provider, _ = world
    app = _invited_app(make_org, provider)
    browser = TestClient(api)
    started = start(browser, app, provider, "signup", **({"invitationCode": code} if code else {}))
    answer = browser.post("/api/acs", data=idp_answer(org.name, started.headers["location"]), follow_redirects=False)
    assert answer.status_code == 302 and answer.headers["location"].startswith(f"/signup/{app.name}?")
    assert message in upstream_error(answer.headers["location"])
    with session_scope() as db:
        assert db.exec(select(m.User).where(m.User.owner == app.organization)).all() == []


def test_saml_sign_up_spends_the_invitation_code(world, make_org):
    from iam_console.federation import upstream

    org, _, provider, _ = world
    app = _invited_app(make_org, provider)
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        [button] = upstream.buttons(db, row, "signup", invitation_code="SPRING-1")
    assert "invitationCode=SPRING-1" in button["href"]
    browser = TestClient(api)
    started = browser.get(button["href"], follow_redirects=False)
    answer = browser.post("/api/acs", data=idp_answer(org.name, started.headers["location"]), follow_redirects=False)
    assert answer.status_code == 303, answer.headers
    with session_scope() as db:
        [user] = db.exec(select(m.User).where(m.User.owner == app.organization)).all()
        used = db.exec(select(m.Invitation.used_count).where(m.Invitation.owner == app.organization)).one()
    assert user.groups == [f"{app.organization}/invited"] and used == 1


def test_api_login_takes_a_button_started_response_from_its_browser_only(world):
    """Issue 26: a provider button's SAML request started in one browser could be completed by
    another client posting the Response to /api/login; /api/acs already refused that."""
    org, _, provider, app = world
    browser = TestClient(api)
    started = start(browser, app, provider, **{"from": "/account"})
    fields = idp_answer(org.name, started.headers["location"])
    body = {"application": app.name, "provider": provider.name, "type": "login", "samlResponse": fields["SAMLResponse"]}
    stranger = TestClient(api)
    refused_there = stranger.post("/api/login", json=body).json()
    assert refused_there["status"] == "error" and "another browser" in refused_there["msg"], refused_there
    assert stranger.get("/api/get-account").json()["status"] == "error"
    # the browser that started it signs in with the same Response (the refusal used nothing up)
    answer = browser.post("/api/login", json=body).json()
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/alice", answer
    assert browser.get("/api/get-account").json()["data"]["name"] == "alice"
    assert "already been used" in TestClient(api).post("/api/login", json=body).json()["msg"]
