"""This server as a SAML 2.0 identity provider, with pysaml2 as the service provider: the
metadata, single sign-on over the Redirect and POST bindings, the signed Response as the
application's fields shape it, and the requests it must refuse."""

from __future__ import annotations

import base64
import secrets
import subprocess
import zlib
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
from iam_console.db import session_scope
from iam_console.saml import saml_xml as x
from tests.api.conftest import sign_in
from tests.api.saml_world import SP_ACS, SP_ENTITY, local, need_xmlsec, posted_form, sp_client
from tests.conftest import unique

PASSWORD = "saml-pass-1"


@pytest.fixture(autouse=True)
def _xmlsec():
    need_xmlsec()


@pytest.fixture
def world(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com", display_name="Alice",
              phone="5550100")
    return org


def make_app(org: str, **fields) -> m.Application:
    """An application service providers sign in to: pysaml2 asks for exclusive C14N (enableSamlC14n10)."""
    fields.setdefault("enable_saml_c14n10", True)
    app = m.Application(owner="admin", name=unique("samlapp"), organization=org, cert="cert-built-in",
                        enable_password=True, redirect_uris=[SP_ENTITY, SP_ACS], client_id=secrets.token_hex(10),
                        client_secret=secrets.token_hex(20), **fields)
    with session_scope() as db:
        db.add(app)
    return app


def make_cert(owner: str = "admin") -> tuple[str, str, str]:
    name = unique("spcert")
    certificate, key = certs.generate("RS256", 2048, 1, name)
    with session_scope() as db:
        db.add(m.Cert(owner=owner, name=name, scope="JWT", type="x509", crypto_algorithm="RS256", bit_size=2048,
                      certificate=certificate, private_key=key))
    return name, certificate, key


def metadata(app: m.Application, post: bool = False) -> str:
    answer = TestClient(api).get("/api/saml/metadata", params={"application": f"admin/{app.name}",
                                                               "enablePostBinding": str(post).lower()})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/xml"), answer.text
    return answer.text


def redirect_request(sp, relay_state: str = "rs-1", **kw) -> tuple[str, str]:
    """The SP's AuthnRequest over the Redirect binding: (request id, path and query on this server)."""
    from saml2 import BINDING_HTTP_REDIRECT
    request_id, info = sp.prepare_for_authenticate(relay_state=relay_state, binding=BINDING_HTTP_REDIRECT, **kw)
    return request_id, local(dict(info["headers"])["Location"])


def signed_in_answer(app: m.Application, path: str) -> tuple[str, dict[str, str]]:
    client = sign_in(app.organization, "alice", PASSWORD)
    page = client.get(path, follow_redirects=False)
    assert page.status_code == 200, (page.status_code, page.headers, page.text[:500])
    return posted_form(page.text)


def check_response(sp, request_id: str, saml_response: str):
    from saml2 import BINDING_HTTP_POST
    answer = sp.parse_authn_request_response(saml_response, BINDING_HTTP_POST, outstanding={request_id: "/"})
    assert answer is not None
    return answer


def test_metadata_names_the_application_cert_and_both_bindings(world):
    app = make_app(world.name)
    root = etree.fromstring(metadata(app).encode())
    assert root.get("entityID") == "http://testserver"
    services = root.findall("md:IDPSSODescriptor/md:SingleSignOnService", x.NS)
    assert [s.get("Binding") for s in services] == [x.REDIRECT_BINDING, x.POST_BINDING]
    assert {s.get("Location") for s in services} == {f"http://testserver/api/saml/redirect/admin/{app.name}"}
    post_first = etree.fromstring(metadata(app, post=True).encode())
    assert post_first.find("md:IDPSSODescriptor/md:SingleSignOnService", x.NS).get("Binding") == x.POST_BINDING
    with session_scope() as db:
        cert = db.exec(select(m.Cert).where(m.Cert.owner == "admin", m.Cert.name == "cert-built-in")).one()
    published = root.findtext("md:IDPSSODescriptor/md:KeyDescriptor/ds:KeyInfo/ds:X509Data/ds:X509Certificate",
                              namespaces=x.NS)
    assert published == x.bare_certificate(x.certificate(cert.certificate))


def test_unknown_application_metadata_is_an_error(database):
    body = TestClient(api).get("/api/saml/metadata", params={"application": "admin/nope-none"}).json()
    assert body["status"] == "error" and "does not exist" in body["msg"]


def test_redirect_binding_round_trip_with_pysaml2(world, tmp_path):
    app = make_app(world.name, saml_attributes=[
        {"name": "team", "nameFormat": "urn:oasis:names:tc:SAML:2.0:attrname-format:basic", "value": "$user.owner"},
        {"name": "plan", "nameFormat": "", "value": "gold"}])
    sp = sp_client(metadata(app), tmp_path)
    request_id, path = redirect_request(sp)
    # nobody signed in: the login page first, which comes back here
    first = TestClient(api).get(path, follow_redirects=False)
    assert first.status_code == 303
    target = urlsplit(first.headers["location"])
    assert target.path == f"/login/{world.name}"
    assert parse_qs(target.query)["from"] == [path]
    action, fields = signed_in_answer(app, path)
    assert action == SP_ACS and fields["RelayState"] == "rs-1"
    with session_scope() as db:  # the assertion issued is on record
        record = db.exec(select(m.Record).where(m.Record.action == "saml-sso", m.Record.organization == world.name)
                         ).one()
        assert app.name in record.object and SP_ENTITY in record.object
    answer = check_response(sp, request_id, fields["SAMLResponse"])
    assert answer.name_id.text == "alice"  # the user's name unless useEmailAsSamlNameId
    identity = answer.get_identity()
    assert identity["Email"] == ["alice@example.com"] and identity["DisplayName"] == ["Alice"]
    assert identity["team"] == [world.name] and identity["plan"] == ["gold"]
    # exclusive C14N 1.0 and SHA-256 by default; the Response is not deflated
    xml = base64.b64decode(fields["SAMLResponse"])
    assert xml.startswith(b"<?xml")
    root = etree.fromstring(xml)
    assert root.find("ds:Signature/ds:SignedInfo/ds:CanonicalizationMethod", x.NS).get("Algorithm") == x.EXC_C14N10
    assert root.find("ds:Signature/ds:SignedInfo/ds:SignatureMethod", x.NS).get("Algorithm") == x.RSA_SHA256


def test_post_binding_email_name_id_compressed_sha512_signed_assertion(world, tmp_path):
    from saml2 import BINDING_HTTP_POST
    app = make_app(world.name, use_email_as_saml_name_id=True, enable_saml_compress=True, enable_saml_c14n10=True,
                   enable_saml_assertion_signature=True, saml_hash_algorithm="SHA512", disable_saml_attributes=True)
    sp = sp_client(metadata(app, post=True), tmp_path, want_assertions_signed=True)
    request_id, request = sp.create_authn_request(f"http://testserver/api/saml/redirect/admin/{app.name}",
                                                  binding=BINDING_HTTP_POST)
    encoded = base64.b64encode(str(request).encode()).decode()
    posted = TestClient(api).post(f"/api/saml/redirect/admin/{app.name}",
                                  data={"SAMLRequest": encoded, "RelayState": "rs-2"}, follow_redirects=False)
    assert posted.status_code == 303  # on as the Redirect binding's GET, which carries the session cookie
    action, fields = signed_in_answer(app, posted.headers["location"])
    assert action == SP_ACS and fields["RelayState"] == "rs-2"
    xml = zlib.decompress(base64.b64decode(fields["SAMLResponse"]), -zlib.MAX_WBITS)  # deflated
    root = etree.fromstring(xml)
    assert root.find("saml:Assertion/ds:Signature", x.NS) is not None
    assert root.find("saml:Assertion/saml:AttributeStatement", x.NS) is None
    answer = check_response(sp, request_id, fields["SAMLResponse"])
    assert answer.name_id.text == "alice@example.com"
    assert answer.name_id.format == x.NAME_ID_EMAIL


def test_inclusive_c14n_without_enable_saml_c14n10(world, tmp_path):
    """Without enableSamlC14n10 the signature is over inclusive C14N 1.0 (pysaml2 refuses any but
    exclusive: xmlsec1 checks the signature against the application's cert)."""
    app = make_app(world.name, enable_saml_c14n10=False)
    request = (f'<samlp:AuthnRequest xmlns:samlp="{x.PROTOCOL}" xmlns:saml="{x.ASSERTION}" ID="_r1" Version="2.0" '
               f'AssertionConsumerServiceURL="{SP_ACS}"><saml:Issuer>{SP_ENTITY}</saml:Issuer></samlp:AuthnRequest>')
    _, fields = signed_in_answer(app, f"/api/saml/redirect/admin/{app.name}?{_deflated_query(request.encode())}")
    root = etree.fromstring(base64.b64decode(fields["SAMLResponse"]))
    assert root.find("ds:Signature/ds:SignedInfo/ds:CanonicalizationMethod", x.NS).get("Algorithm") == x.C14N10
    with session_scope() as db:
        cert = db.exec(select(m.Cert).where(m.Cert.owner == "admin", m.Cert.name == "cert-built-in")).one()
    (tmp_path / "idp.pem").write_text(cert.certificate)
    (tmp_path / "response.xml").write_bytes(base64.b64decode(fields["SAMLResponse"]))
    checked = subprocess.run([need_xmlsec(), "--verify", "--id-attr:ID", f"{x.PROTOCOL}:Response",
                              "--pubkey-cert-pem", str(tmp_path / "idp.pem"), str(tmp_path / "response.xml")],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def test_reply_url_overrides_the_request_acs(world, tmp_path):
    app = make_app(world.name, saml_reply_url="http://sp.example.com/acs")
    sp = sp_client(metadata(app), tmp_path)
    request_id, path = redirect_request(sp)
    action, fields = signed_in_answer(app, path)
    assert action == "http://sp.example.com/acs"
    check_response(sp, request_id, fields["SAMLResponse"])


def test_tampered_signature_is_refused_by_pysaml2(world, tmp_path):
    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path)
    request_id, path = redirect_request(sp)
    _, fields = signed_in_answer(app, path)
    xml = base64.b64decode(fields["SAMLResponse"]).replace(b">alice<", b">mallory<")
    from saml2.sigver import SignatureError
    with pytest.raises(SignatureError):
        check_response(sp, request_id, base64.b64encode(xml).decode())


def _refused(path: str) -> str:
    page = sign_in_client().get(path, follow_redirects=False)
    assert page.status_code == 400 and "SAMLResponse" not in page.text, page.text[:300]
    return unescape(page.text)


def sign_in_client() -> TestClient:
    return TestClient(api)


def test_unknown_issuer_is_refused(world, tmp_path):
    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path, entity="http://stranger.example.com/metadata")
    _, path = redirect_request(sp)
    assert "doesn't exist in the allowed Redirect URI list" in _refused(path)


def _deflated_query(xml: bytes, **extra: str) -> str:
    return urlencode({"SAMLRequest": x.encode(xml, deflate=True), **extra})


def test_tampered_acs_is_refused_never_redirected(world, tmp_path):
    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path)
    _, path = redirect_request(sp)
    request = zlib.decompress(base64.b64decode(parse_qs(urlsplit(path).query)["SAMLRequest"][0]), -zlib.MAX_WBITS)
    evil = request.replace(SP_ACS.encode(), b"https://evil.example.net/acs")
    assert evil != request
    text = _refused(f"/api/saml/redirect/admin/{app.name}?{_deflated_query(evil)}")
    assert "evil.example.net" in text and "AssertionConsumerServiceURL" in text


@pytest.mark.parametrize("payload", [
    b"not xml at all",
    b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><r>&e;</r>',
    b'<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="_1"/>',
])
def test_bad_requests_are_refused(world, payload):
    app = make_app(world.name)
    text = _refused(f"/api/saml/redirect/admin/{app.name}?{_deflated_query(payload)}")
    assert "passwd" not in text.replace("etc/passwd", "")


def test_signed_requests_when_the_application_names_a_client_cert(world, tmp_path):
    from saml2.xmldsig import SIG_RSA_SHA256
    name, certificate, key = make_cert()
    app = make_app(world.name, client_cert=name)
    assert 'WantAuthnRequestsSigned="true"' in metadata(app)
    unsigned = sp_client(metadata(app), tmp_path)
    _, path = redirect_request(unsigned)
    assert "must be signed" in _refused(path)
    signing = sp_client(metadata(app), tmp_path, key_pem=key, cert_pem=certificate)
    request_id, path = redirect_request(signing, sigalg=SIG_RSA_SHA256)
    assert "Signature=" in path
    _, fields = signed_in_answer(app, path)
    check_response(signing, request_id, fields["SAMLResponse"])
    # the same query with another RelayState: the signature no longer holds
    assert "signature" in _refused(path.replace("RelayState=rs-1", "RelayState=rs-9")).lower()
    # signed by another key
    _, other_cert, other_key = make_cert()
    stranger = sp_client(metadata(app), tmp_path / "..", key_pem=other_key, cert_pem=other_cert)
    _, path = redirect_request(stranger, sigalg=SIG_RSA_SHA256)
    assert "signature" in _refused(path).lower()


def test_the_client_cert_is_set_from_the_service_providers_certificate_alone(admin, world, tmp_path):
    """The service provider hands over its certificate only: add-cert keeps it as given (no key
    pair is made in its place) and its signed requests are checked against it."""
    from saml2.xmldsig import SIG_RSA_SHA256
    sp_certificate, sp_key = certs.generate("RS256", 2048, 1, "sp.example.com")
    name = unique("spcert")
    added = admin.post("/api/add-cert", json={"owner": "admin", "name": name, "scope": "JWT", "type": "x509",
                                              "cryptoAlgorithm": "RS256", "bitSize": 2048,
                                              "certificate": sp_certificate}).json()
    assert added["data"] == "Affected", added
    with session_scope() as db:
        stored = db.exec(select(m.Cert).where(m.Cert.owner == "admin", m.Cert.name == name)).one()
        assert (stored.certificate, stored.private_key) == (sp_certificate, "")
    app = make_app(world.name, client_cert=name)
    signing = sp_client(metadata(app), tmp_path, key_pem=sp_key, cert_pem=sp_certificate)
    request_id, path = redirect_request(signing, sigalg=SIG_RSA_SHA256)
    _, fields = signed_in_answer(app, path)
    check_response(signing, request_id, fields["SAMLResponse"])


def test_user_of_another_organization_gets_no_assertion(world, make_org, make_user, tmp_path):
    other = make_org()
    make_user(owner=other.name, name="bob", password=PASSWORD)
    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path)
    _, path = redirect_request(sp)
    answer = sign_in(other.name, "bob", PASSWORD).get(path, follow_redirects=False)
    assert answer.status_code == 400 and "SAMLResponse" not in answer.text
    assert f"{other.name}/bob cannot sign in to application {app.name}" in unescape(answer.text)


def _signed_in_a_minute_ago(org: str) -> TestClient:
    """alice's browser, whose session was signed in before any request made now (a request's
    IssueInstant has whole seconds)."""
    client = sign_in(org, "alice", PASSWORD)
    with session_scope() as db:
        for row in db.exec(select(m.AuthSession).where(m.AuthSession.owner == org)).all():
            row.created_time = row.created_time - timedelta(minutes=1)
            db.add(row)
    return client


def test_force_authn_asks_a_signed_in_user_to_sign_in_again(world, tmp_path):
    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path)
    client = _signed_in_a_minute_ago(world.name)
    request_id, path = redirect_request(sp, force_authn="true")
    assert 'ForceAuthn="true"' in zlib.decompress(base64.b64decode(parse_qs(urlsplit(path).query)["SAMLRequest"][0]),
                                                  -15).decode()
    again = client.get(path, follow_redirects=False)
    assert again.status_code == 303 and urlsplit(again.headers["location"]).path == f"/login/{world.name}"
    assert "SAMLResponse" not in again.text
    assert client.get("/api/get-account").json()["status"] == "error"  # that session ended
    # signed in anew (after the request was issued), the same request is answered
    fresh = sign_in(world.name, "alice", PASSWORD)
    page = fresh.get(path, follow_redirects=False)
    assert page.status_code == 200
    action, fields = posted_form(page.text)
    assert action == SP_ACS and check_response(sp, request_id, fields["SAMLResponse"]).name_id.text == "alice"
    # without ForceAuthn an earlier session is enough
    request_id, path = redirect_request(sp)
    assert fresh.get(path, follow_redirects=False).status_code == 200


def test_is_passive_answers_at_once_or_no_passive(world, tmp_path):
    from saml2.response import StatusNoPassive

    app = make_app(world.name)
    sp = sp_client(metadata(app), tmp_path)
    # with a session: the Response at once
    request_id, path = redirect_request(sp, is_passive="true")
    action, fields = signed_in_answer(app, path)
    assert check_response(sp, request_id, fields["SAMLResponse"]).name_id.text == "alice"
    # without one: no login page, a NoPassive Response to the service provider
    request_id, path = redirect_request(sp, is_passive="true", relay_state="rs-passive")
    page = TestClient(api).get(path, follow_redirects=False)
    assert page.status_code == 200 and "/login/" not in page.headers.get("location", "")
    action, fields = posted_form(page.text)
    assert action == SP_ACS and fields["RelayState"] == "rs-passive"
    root = etree.fromstring(base64.b64decode(fields["SAMLResponse"]))
    assert root.find("samlp:Status/samlp:StatusCode", x.NS).get("Value") == x.RESPONDER
    assert root.find("samlp:Status/samlp:StatusCode/samlp:StatusCode", x.NS).get("Value") == x.NO_PASSIVE
    assert root.find("saml:Assertion", x.NS) is None
    with pytest.raises(StatusNoPassive):
        check_response(sp, request_id, fields["SAMLResponse"])
    # ForceAuthn and IsPassive with a session: it cannot sign in anew without a page
    client = _signed_in_a_minute_ago(world.name)
    request_id, path = redirect_request(sp, is_passive="true", force_authn="true")
    with pytest.raises(StatusNoPassive):
        check_response(sp, request_id, posted_form(client.get(path, follow_redirects=False).text)[1]["SAMLResponse"])


def test_a_requested_name_id_format_is_given_or_refused(world, make_user, tmp_path):
    """SAML core 3.4.1.1: the NameIDPolicy's Format is honoured, else InvalidNameIDPolicy; with none
    asked, the Response's format is one the metadata lists."""
    from saml2.response import StatusInvalidNameidPolicy

    app = make_app(world.name)
    idp_metadata = metadata(app)
    listed = [e.text for e in etree.fromstring(idp_metadata.encode()).findall("md:IDPSSODescriptor/md:NameIDFormat",
                                                                               x.NS)]
    assert set(listed) == {x.NAME_ID_UNSPECIFIED, x.NAME_ID_EMAIL, x.NAME_ID_PERSISTENT, x.NAME_ID_TRANSIENT}
    sp = sp_client(idp_metadata, tmp_path)

    def answered(name_id_format: str = "", client=None):
        request_id, path = redirect_request(sp, **({"nameid_format": name_id_format} if name_id_format else {}))
        page = (client or sign_in(world.name, "alice", PASSWORD)).get(path, follow_redirects=False)
        assert page.status_code == 200, page.text[:300]
        action, fields = posted_form(page.text)
        assert action == SP_ACS
        return request_id, fields["SAMLResponse"]

    default = check_response(sp, *answered()).name_id
    assert default.text == "alice" and default.format in listed
    email = check_response(sp, *answered(x.NAME_ID_EMAIL)).name_id
    assert (email.text, email.format) == ("alice@example.com", x.NAME_ID_EMAIL)
    first, again = (check_response(sp, *answered(x.NAME_ID_PERSISTENT)).name_id for _ in range(2))
    assert first.format == x.NAME_ID_PERSISTENT and first.text == again.text  # stable for this service provider
    assert "alice" not in first.text and first.sp_name_qualifier == SP_ENTITY
    other_sp = sp_client(idp_metadata, tmp_path, entity=SP_ACS)  # another service provider: another identifier
    request_id, path = redirect_request(other_sp, nameid_format=x.NAME_ID_PERSISTENT)
    _, fields = signed_in_answer(app, path)
    assert check_response(other_sp, request_id, fields["SAMLResponse"]).name_id.text != first.text
    one, two = (check_response(sp, *answered(x.NAME_ID_TRANSIENT)).name_id for _ in range(2))
    assert one.format == x.NAME_ID_TRANSIENT and one.text != two.text and "alice" not in one.text
    # a format this server does not give: InvalidNameIDPolicy at once, signed in or not, and no assertion
    for client in (TestClient(api), None):
        request_id, answer = answered("urn:oasis:names:tc:SAML:1.1:nameid-format:X509SubjectName", client)
        root = etree.fromstring(base64.b64decode(answer))
        assert root.find("samlp:Status/samlp:StatusCode", x.NS).get("Value") == x.REQUESTER
        assert root.find("samlp:Status/samlp:StatusCode/samlp:StatusCode", x.NS).get("Value") == \
            x.INVALID_NAME_ID_POLICY
        assert root.find("saml:Assertion", x.NS) is None
        with pytest.raises(StatusInvalidNameidPolicy):
            check_response(sp, request_id, answer)
    # an email format for a user without an email: the same answer
    make_user(owner=world.name, name="bob", password=PASSWORD)
    request_id, answer = answered(x.NAME_ID_EMAIL, sign_in(world.name, "bob", PASSWORD))
    with pytest.raises(StatusInvalidNameidPolicy):
        check_response(sp, request_id, answer)


def test_force_authn_request_from_the_future_is_refused(world):
    app = make_app(world.name)
    xml = (f'<samlp:AuthnRequest xmlns:samlp="{x.PROTOCOL}" xmlns:saml="{x.ASSERTION}" ID="_f1" Version="2.0" '
           f'IssueInstant="2999-01-01T00:00:00Z" ForceAuthn="true" AssertionConsumerServiceURL="{SP_ACS}">'
           f'<saml:Issuer>{SP_ENTITY}</saml:Issuer></samlp:AuthnRequest>').encode()
    assert "cannot be read" in _refused(f"/api/saml/redirect/admin/{app.name}?{_deflated_query(xml)}")
