"""This server as a SAML 2.0 identity provider for its applications (Casdoor's
/api/saml/metadata and single sign-on): the metadata, the AuthnRequest's checks and the signed
Response. docs/security.md, "SAML 2.0", states the rules.

- An application's entity is this server's origin; its single sign-on service answers the
  HTTP-Redirect and HTTP-POST bindings at /api/saml/redirect/{owner}/{application}.
- A request's Issuer (the service provider's entity ID) must be one of the application's
  redirect URIs (as Casdoor checks it). The Response goes to the application's samlReplyUrl
  when set, else to the request's AssertionConsumerServiceURL, which must then be a redirect URI
  too: a request never makes this server post an assertion anywhere else.
- When the application names a client cert, its requests must be signed with that cert's key
  (the Redirect binding's query signature, or an enveloped signature); otherwise a signature is
  not asked for, as with Casdoor.
- The Response is signed with the application's cert (RSA or ECDSA with SHA-256, SHA-512 when
  samlHashAlgorithm says so), the assertion too when enableSamlAssertionSignature is on; with
  inclusive C14N 1.0, or exclusive C14N 1.0 when enableSamlC14n10 is on (what most service
  providers, pysaml2 among them, ask for); deflated when enableSamlCompress is on. The
  NameID follows the request's NameIDPolicy Format (SAML core 3.4.1.1): emailAddress is the
  user's email, persistent an opaque identifier of the user for that service provider alone
  (the same at every sign-in), transient a new one at each; unspecified, or no policy, is the
  user's name, or the email with useEmailAsSamlNameId. Any other format, or an email format for a
  user without one, is answered with a Response of status Requester / InvalidNameIDPolicy (no
  assertion). The metadata lists these four formats. The attributes are Email,
  Name, DisplayName and Roles, then the application's samlAttributes (none with
  disableSamlAttributes). The assertion is valid for five minutes.
- ForceAuthn="true": a session signed in before the request was issued is not enough; the user
  signs in again (saml/api.py ends that session first). IsPassive="true": no page is shown; with
  a session the Response goes at once, without one (or when the user would have to sign in again)
  a Response with status Responder / NoPassive goes to the service provider instead."""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote, urlencode

from lxml import etree
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.applications import redirects
from iam_console.core import builtin as b
from iam_console.core import lookup, server_keys
from iam_console.core.errors import ServiceError
from iam_console.oauth import jwt_tokens
from iam_console.saml import saml_xml as x
from iam_console.settings import settings

ASSERTION_MINUTES = 5
SSO_PATH = "/api/saml/redirect"
MAX_RELAY_STATE = 1000
NOT_FOUND = "The application: %s does not exist"
NO_CERT = "Please set a cert for the application first"
ISSUER_REFUSED = "Issuer URI: %s doesn't exist in the allowed Redirect URI list"
ACS_REFUSED = "The AssertionConsumerServiceURL: %s doesn't exist in the allowed Redirect URI list"
NO_ACS = "The SAML request has no AssertionConsumerServiceURL and the application has no SAML reply URL"
NOT_AUTHN_REQUEST = "The SAML message is not an AuthnRequest"
SIGNATURE_REQUIRED = "The SAML request must be signed with the application's client cert"
# the NameID formats a request may ask for, listed in the metadata: the default first
NAME_ID_FORMATS = (x.NAME_ID_UNSPECIFIED, x.NAME_ID_EMAIL, x.NAME_ID_PERSISTENT, x.NAME_ID_TRANSIENT)


def application_of(db: Session, application_id: str) -> m.Application:
    """`admin/name` (or `name`): the application, refused when there is none."""
    owner, _, name = (application_id or "").rpartition("/")
    application = lookup.application(db, name) if owner in ("", b.ADMIN_OWNER) else None
    if application is None:
        raise ServiceError(NOT_FOUND, (application_id or "")[:200])
    return application


def entity_id() -> str:
    return settings.origin


def sso_url(application: m.Application) -> str:
    return f"{settings.origin}{SSO_PATH}/{quote(application.owner, safe='')}/{quote(application.name, safe='')}"


def _signing_cert(db: Session, application: m.Application) -> m.Cert:
    try:
        return jwt_tokens.signing_cert(db, application)
    except ServiceError:
        raise ServiceError(NO_CERT) from None


def metadata(db: Session, application_id: str, post_binding: bool) -> bytes:
    """The IdP metadata of an application: entity ID, signing certificate, NameID formats, the
    single sign-on service for both bindings (the one asked for first) and the attributes."""
    application = application_of(db, application_id)
    cert = x.certificate(_signing_cert(db, application).certificate)
    md = f"{{{x.METADATA}}}"
    root = etree.Element(md + "EntityDescriptor", {"entityID": entity_id()}, nsmap={"md": x.METADATA, "ds": x.DSIG})
    descriptor = etree.SubElement(root, md + "IDPSSODescriptor", {
        "protocolSupportEnumeration": x.PROTOCOL, "WantAuthnRequestsSigned": "true" if application.client_cert
        else "false"})
    key = etree.SubElement(descriptor, md + "KeyDescriptor", {"use": "signing"})
    info = etree.SubElement(key, f"{{{x.DSIG}}}KeyInfo")
    etree.SubElement(etree.SubElement(info, f"{{{x.DSIG}}}X509Data"),
                     f"{{{x.DSIG}}}X509Certificate").text = x.bare_certificate(cert)
    for name_format in NAME_ID_FORMATS:
        etree.SubElement(descriptor, md + "NameIDFormat").text = name_format
    bindings = (x.POST_BINDING, x.REDIRECT_BINDING) if post_binding else (x.REDIRECT_BINDING, x.POST_BINDING)
    for binding in bindings:
        etree.SubElement(descriptor, md + "SingleSignOnService", {"Binding": binding, "Location": sso_url(application)})
    for name, friendly in (("Email", "E-Mail"), ("DisplayName", "displayName"), ("Name", "Name")):
        etree.SubElement(descriptor, f"{{{x.ASSERTION}}}Attribute", {
            "Name": name, "NameFormat": x.BASIC_NAME_FORMAT, "FriendlyName": friendly}, nsmap={"saml": x.ASSERTION})
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


# --- single sign-on ---

@dataclass(frozen=True)
class SsoRequest:
    """A checked AuthnRequest: where the Response goes and what it answers."""
    application: m.Application
    request_id: str
    issuer: str
    acs_url: str
    relay_state: str
    force_authn: bool = False
    is_passive: bool = False
    issued: datetime | None = None  # the request's IssueInstant
    name_id_format: str = ""  # the request's NameIDPolicy Format ("" when it asks for none)


def _client_cert(db: Session, application: m.Application):
    if not application.client_cert:
        return None
    cert = lookup.signing_cert(db, application.organization, application.client_cert)
    if cert is None or not cert.certificate:
        raise ServiceError("The client cert %s of application %s does not exist", application.client_cert,
                           application.name)
    return x.certificate(cert.certificate)


def check_request(db: Session, owner: str, name: str, saml_request: str, relay_state: str, *,
                  redirect_binding: bool, raw_query: str = "", sig_alg: str = "", signature: str = "") -> SsoRequest:
    """The AuthnRequest of the Redirect binding (deflated; `raw_query` as received, for its
    signature) or of the POST binding (plain base64), checked against the application;
    ServiceError otherwise, and then nothing is sent anywhere."""
    application = application_of(db, f"{owner}/{name}")
    if len(relay_state or "") > MAX_RELAY_STATE:
        raise ServiceError("The RelayState is too long")
    document = x.parse(x.decode(saml_request, inflate=True if redirect_binding else None))
    if document.tag != f"{{{x.PROTOCOL}}}AuthnRequest":
        raise ServiceError(NOT_AUTHN_REQUEST)
    trusted = _client_cert(db, application)
    if trusted is not None:
        if redirect_binding and signature:
            x.check_query_signature(raw_query, "SAMLRequest", sig_alg, signature, trusted)
        elif document.find("ds:Signature", x.NS) is not None:
            document = x.verify_element(document, trusted)
        else:
            raise ServiceError(SIGNATURE_REQUIRED)
    request_id = document.get("ID") or ""
    issuer = (document.findtext("saml:Issuer", "", x.NS) or "").strip()
    if not request_id or len(request_id) > 200:
        raise ServiceError(x.BAD_MESSAGE)
    if not redirects.matches(issuer, application.redirect_uris or []):
        raise ServiceError(ISSUER_REFUSED, issuer[:200])
    acs = (document.get("AssertionConsumerServiceURL") or "").strip()
    if application.saml_reply_url:
        acs = application.saml_reply_url
    elif not acs:
        raise ServiceError(NO_ACS)
    elif not redirects.matches(acs, application.redirect_uris or []):
        raise ServiceError(ACS_REFUSED, acs[:200])
    force_authn = document.get("ForceAuthn", "").strip().lower() in ("true", "1")
    issued = x.parse_instant(document.get("IssueInstant"))
    if force_authn and (issued is None or issued > x.now() + x.CLOCK_SKEW):
        raise ServiceError(x.BAD_MESSAGE)  # its time decides whether a session is recent enough
    policy = document.find("samlp:NameIDPolicy", x.NS)
    return SsoRequest(application, request_id, issuer, acs, relay_state or "", force_authn,
                      document.get("IsPassive", "").strip().lower() in ("true", "1"), issued,
                      (policy.get("Format") or "").strip()[:200] if policy is not None else "")


def name_id_refused(sso: SsoRequest) -> bool:
    """The request asks for a NameID format this server does not give (answered InvalidNameIDPolicy)."""
    return bool(sso.name_id_format) and sso.name_id_format not in NAME_ID_FORMATS


def _name_id(db: Session, sso: SsoRequest, user: m.User) -> tuple[str, dict[str, str]] | None:
    """The user's NameID for the request, with its attributes; None when the user has none of the
    requested format (an email format for a user without an email)."""
    wanted = sso.name_id_format
    if wanted == x.NAME_ID_EMAIL or (wanted in ("", x.NAME_ID_UNSPECIFIED)
                                     and sso.application.use_email_as_saml_name_id and user.email):
        return (user.email, {"Format": x.NAME_ID_EMAIL}) if user.email else None
    if wanted == x.NAME_ID_PERSISTENT:  # pairwise: no two service providers can tell it is the same user
        key = server_keys.derived_key(db, "saml persistent name id")
        subject = hmac.new(key, f"{sso.issuer}\0{user.owner}/{user.uuid or user.name}".encode(), hashlib.sha256)
        return (base64.urlsafe_b64encode(subject.digest()).rstrip(b"=").decode(),
                {"Format": x.NAME_ID_PERSISTENT, "NameQualifier": entity_id(), "SPNameQualifier": sso.issuer})
    if wanted == x.NAME_ID_TRANSIENT:
        return x.new_id(), {"Format": x.NAME_ID_TRANSIENT}
    return user.name, {"Format": x.NAME_ID_UNSPECIFIED}


def needs_fresh_sign_in(sso: SsoRequest, signed_in_at: datetime | None) -> bool:
    """ForceAuthn: whether the session was signed in before the request was issued."""
    return sso.force_authn and (signed_in_at is None or sso.issued is None or signed_in_at < sso.issued)


def resume_path(sso: SsoRequest, saml_request_deflated: str, query: str = "") -> str:
    """Where the browser comes back after signing in: the Redirect binding's form of the
    request (a POST binding's request deflated; its enveloped signature still holds)."""
    if query:
        return f"{SSO_PATH}/{quote(sso.application.owner, safe='')}/{quote(sso.application.name, safe='')}?{query}"
    params = {"SAMLRequest": saml_request_deflated, "RelayState": sso.relay_state}
    return (f"{SSO_PATH}/{quote(sso.application.owner, safe='')}/{quote(sso.application.name, safe='')}?"
            + urlencode({k: v for k, v in params.items() if v}))


def redeflate(saml_request: str) -> str:
    """A POST binding's request in the Redirect binding's encoding."""
    return x.encode(x.decode(saml_request, inflate=None), deflate=True)


def _text(parent: etree._Element, tag: str, text: str, attrib: dict | None = None) -> etree._Element:
    element = etree.SubElement(parent, tag, attrib or {})
    element.text = text
    return element


def _attribute(statement: etree._Element, name: str, name_format: str, values: list[str]) -> None:
    a = f"{{{x.ASSERTION}}}"
    attribute = etree.SubElement(statement, a + "Attribute", {"Name": name, "NameFormat": name_format or
                                                              x.BASIC_NAME_FORMAT})
    for value in values:
        _text(attribute, a + "AttributeValue", value, {f"{{{x.XSI}}}type": "xs:string"})


def _role_names(db: Session, user: m.User) -> list[str]:
    member = f"{user.owner}/{user.name}"
    roles = db.exec(select(m.Role.name, m.Role.users).where(m.Role.owner == user.owner)).all()
    return sorted(name for name, users in roles if member in (users or []))


USER_FIELDS = {"$user.name": "name", "$user.email": "email", "$user.displayName": "display_name",
               "$user.phone": "phone", "$user.id": "id", "$user.owner": "owner", "$user.firstName": "first_name",
               "$user.lastName": "last_name", "$user.avatar": "avatar", "$user.type": "type"}


def _attribute_values(db: Session, user: m.User, value: str) -> list[str]:
    """A samlAttributes row's value: text, or $user.<field>, $user.roles, $user.groups."""
    if value == "$user.roles":
        return _role_names(db, user)
    if value == "$user.groups":
        return [str(g) for g in user.groups or []]
    field = USER_FIELDS.get(value)
    if field is not None:
        return [str(getattr(user, field, "") or "")]
    return [value]


def response(db: Session, sso: SsoRequest, user: m.User) -> str | None:
    """The signed Response for a signed-in user, base64 (deflated first with enableSamlCompress);
    None when the user has no NameID of the requested format."""
    application = sso.application
    name_id = _name_id(db, sso, user)
    if name_id is None:
        return None
    cert_row = _signing_cert(db, application)
    issued = x.now()
    expires = issued + timedelta(minutes=ASSERTION_MINUTES)
    p, a = f"{{{x.PROTOCOL}}}", f"{{{x.ASSERTION}}}"
    response_id, assertion_id = x.new_id(), x.new_id()
    root = etree.Element(p + "Response", {
        "ID": response_id, "Version": "2.0", "IssueInstant": x.instant(issued), "Destination": sso.acs_url,
        "InResponseTo": sso.request_id}, nsmap={"samlp": x.PROTOCOL, "saml": x.ASSERTION, "xsi": x.XSI, "xs": x.XS})
    _text(root, a + "Issuer", entity_id())
    status = etree.SubElement(root, p + "Status")
    etree.SubElement(status, p + "StatusCode", {"Value": x.SUCCESS})
    assertion = etree.SubElement(root, a + "Assertion", {"ID": assertion_id, "Version": "2.0",
                                                         "IssueInstant": x.instant(issued)})
    _text(assertion, a + "Issuer", entity_id())
    if application.enable_saml_assertion_signature:
        assertion.append(x.placeholder())
    subject = etree.SubElement(assertion, a + "Subject")
    _text(subject, a + "NameID", name_id[0], name_id[1])
    confirmation = etree.SubElement(subject, a + "SubjectConfirmation", {"Method": x.BEARER})
    etree.SubElement(confirmation, a + "SubjectConfirmationData", {
        "InResponseTo": sso.request_id, "Recipient": sso.acs_url, "NotOnOrAfter": x.instant(expires)})
    conditions = etree.SubElement(assertion, a + "Conditions", {"NotBefore": x.instant(issued),
                                                                "NotOnOrAfter": x.instant(expires)})
    _text(etree.SubElement(conditions, a + "AudienceRestriction"), a + "Audience", sso.issuer)
    statement = etree.SubElement(assertion, a + "AuthnStatement", {
        "AuthnInstant": x.instant(issued), "SessionIndex": x.new_id(), "SessionNotOnOrAfter": x.instant(expires)})
    _text(etree.SubElement(statement, a + "AuthnContext"), a + "AuthnContextClassRef",
          "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport")
    if not application.disable_saml_attributes:
        attributes = etree.SubElement(assertion, a + "AttributeStatement")
        _attribute(attributes, "Email", x.BASIC_NAME_FORMAT, [user.email or ""])
        _attribute(attributes, "Name", x.BASIC_NAME_FORMAT, [user.name])
        _attribute(attributes, "DisplayName", x.BASIC_NAME_FORMAT, [user.display_name or ""])
        for item in application.saml_attributes or []:
            if isinstance(item, dict) and item.get("name"):
                _attribute(attributes, str(item["name"]), str(item.get("nameFormat") or ""),
                           _attribute_values(db, user, str(item.get("value") or "")))
        _attribute(attributes, "Roles", x.BASIC_NAME_FORMAT, _role_names(db, user))
    c14n = x.EXC_C14N10 if application.enable_saml_c14n10 else x.C14N10
    digest = x.signature_hash(application.saml_hash_algorithm)
    if application.enable_saml_assertion_signature:
        root = x.sign(root, assertion_id, cert_row.private_key, cert_row.certificate, hash_name=digest, c14n=c14n,
                      organization=application.organization)
    root.insert(1, x.placeholder())  # after the Response's Issuer
    root = x.sign(root, response_id, cert_row.private_key, cert_row.certificate, hash_name=digest, c14n=c14n,
                  organization=application.organization)
    data = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
    return x.encode(data, deflate=application.enable_saml_compress)


def answer_page(db: Session, sso: SsoRequest, user: m.User) -> str:
    """The page that posts the Response (and the RelayState) to the service provider; an
    InvalidNameIDPolicy one when the user has no NameID of the requested format."""
    answer = response(db, sso, user)
    if answer is None:
        return invalid_name_id_policy_page(db, sso)
    return x.auto_post_page(sso.acs_url, {"SAMLResponse": answer, "RelayState": sso.relay_state})


def no_passive_page(db: Session, sso: SsoRequest) -> str:
    """IsPassive without a usable session: the page that posts the signed Response saying so
    (status Responder, sub-status NoPassive; no assertion) to the service provider."""
    return _status_page(db, sso, x.RESPONDER, x.NO_PASSIVE)


def invalid_name_id_policy_page(db: Session, sso: SsoRequest) -> str:
    """A NameID format this server does not give, or the user has not: the page that posts the
    signed Response saying so (status Requester, sub-status InvalidNameIDPolicy; no assertion)."""
    return _status_page(db, sso, x.REQUESTER, x.INVALID_NAME_ID_POLICY)


def _status_page(db: Session, sso: SsoRequest, top: str, second: str) -> str:
    cert_row = _signing_cert(db, sso.application)
    p = f"{{{x.PROTOCOL}}}"
    response_id = x.new_id()
    root = etree.Element(p + "Response", {
        "ID": response_id, "Version": "2.0", "IssueInstant": x.instant(x.now()), "Destination": sso.acs_url,
        "InResponseTo": sso.request_id}, nsmap={"samlp": x.PROTOCOL, "saml": x.ASSERTION})
    _text(root, f"{{{x.ASSERTION}}}Issuer", entity_id())
    status = etree.SubElement(etree.SubElement(root, p + "Status"), p + "StatusCode", {"Value": top})
    etree.SubElement(status, p + "StatusCode", {"Value": second})
    root.insert(1, x.placeholder())
    c14n = x.EXC_C14N10 if sso.application.enable_saml_c14n10 else x.C14N10
    root = x.sign(root, response_id, cert_row.private_key, cert_row.certificate,
                  hash_name=x.signature_hash(sso.application.saml_hash_algorithm), c14n=c14n,
                  organization=sso.application.organization)
    data = x.encode(etree.tostring(root, xml_declaration=True, encoding="UTF-8"),
                    deflate=sso.application.enable_saml_compress)
    return x.auto_post_page(sso.acs_url, {"SAMLResponse": data, "RelayState": sso.relay_state})
