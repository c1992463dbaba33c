"""This server as a SAML 2.0 service provider of an external identity provider (a provider of
category SAML: Keycloak, Okta, Custom...): the IdP metadata, the AuthnRequest
(/api/get-saml-login) and the Response posted to /api/acs. docs/security.md, "SAML 2.0",
states the rules.

- The IdP is the provider's metadata when it has some (entity ID, single sign-on URL and
  signing certificate read from it), else its fields: issuerUrl (entity ID), endpoint (single
  sign-on URL) and idP (the signing certificate, PEM or base64).
- This server's entity ID and ACS URL are both {origin}/api/acs, as Casdoor's.
- The binding is Casdoor's choice: with enableSignAuthnRequest the AuthnRequest goes over
  HTTP-POST, signed (enveloped) with the provider's cert (the built-in cert when it names none),
  in a page that posts itself; without, over HTTP-Redirect. When the IdP's metadata offers only
  the other binding, that one is used (a signed Redirect request carries the query signature).
- Each AuthnRequest's ID is stored (table saml_request, ten minutes). A Response is accepted only
  when it answers one of them (InResponseTo), once: the row is deleted as the Response is
  accepted, so a replayed Response is refused. Unsolicited Responses are refused.
- The Response, or its assertion, must be signed with the IdP's certificate (never a key the
  message carries); only the signed element is read afterwards. Issuer, Destination, Recipient,
  Audience, NotBefore and NotOnOrAfter are checked (a bearer confirmation with Recipient and
  NotOnOrAfter, and an audience restriction naming this server, must be there), with 90 seconds of
  clock skew. Encrypted assertions are not supported."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import quote, urlencode

import sqlalchemy as sa
from lxml import etree
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import lookup, navigation
from iam_console.core.errors import ServiceError
from iam_console.models.base import utcnow
from iam_console.saml import saml_xml as x
from iam_console.settings import settings

REQUEST_MINUTES = 10
ACS_PATH = "/api/acs"
MAX_RELAY_STATE = 1000
BAD_METADATA = "Can not parse metadata"
NOT_SAML = "The provider: %s's category is not SAML"
NO_PROVIDER = "The provider: %s does not exist"
NO_ENDPOINT = "The SAML provider %s has no single sign-on URL"
NO_IDP_CERT = "The IdP certificate of provider: %s is empty"
UNKNOWN_REQUEST = "The SAML response does not answer a request of this server, or was already used"
REFUSED = "The SAML response is refused: %s"


def acs_url() -> str:
    return f"{settings.origin}{ACS_PATH}"


def sp_entity_id() -> str:
    return acs_url()


# --- the IdP ---

@dataclass(frozen=True)
class Idp:
    entity_id: str
    sso_url: str
    certificates: tuple[str, ...] = field(default_factory=tuple)  # base64 DER or PEM
    services: tuple[tuple[str, str], ...] = ()  # (binding, single sign-on URL) the IdP offers

    def url_for(self, binding: str) -> str:
        return next((url for kind, url in self.services if kind == binding), "")


def parse_metadata(text: str) -> Idp:
    """An IdP's metadata: its entity ID, its HTTP-Redirect single sign-on URL (else the
    HTTP-POST one), its signing certificates; ServiceError for anything else."""
    root = x.parse(text or "", BAD_METADATA)
    md = f"{{{x.METADATA}}}"
    entity = root if root.tag == md + "EntityDescriptor" else root.find("md:EntityDescriptor", x.NS)
    descriptor = entity.find("md:IDPSSODescriptor", x.NS) if entity is not None else None
    if descriptor is None:
        raise ServiceError(BAD_METADATA)
    services = descriptor.findall("md:SingleSignOnService", x.NS)
    services.sort(key=lambda s: s.get("Binding") != x.REDIRECT_BINDING)
    offered = tuple((s.get("Binding", ""), s.get("Location", "")) for s in services
                    if s.get("Binding") in (x.REDIRECT_BINDING, x.POST_BINDING) and s.get("Location"))
    sso = offered[0][1] if offered else ""
    certs = tuple("".join((c.text or "").split()) for k in descriptor.findall("md:KeyDescriptor", x.NS)
                  if k.get("use", "signing") == "signing"
                  for c in k.findall("ds:KeyInfo/ds:X509Data/ds:X509Certificate", x.NS) if (c.text or "").strip())
    if not sso or not certs:
        raise ServiceError(BAD_METADATA)
    for cert in certs:
        x.certificate(cert)  # each one readable
    return Idp(entity.get("entityID", ""), sso, certs, offered)


def idp_of(provider: m.Provider) -> Idp:
    """The provider's IdP: its metadata, else its fields (whose endpoint takes either binding)."""
    if (provider.metadata_ or "").strip():
        return parse_metadata(provider.metadata_)
    endpoint = provider.endpoint or ""
    return Idp(provider.issuer_url or "", endpoint, (provider.id_p,) if provider.id_p else (),
               ((x.POST_BINDING, endpoint), (x.REDIRECT_BINDING, endpoint)) if endpoint else ())


def metadata_fields(text: str) -> dict[str, str]:
    """What a provider's form fills from pasted metadata: issuerUrl, endpoint and idP."""
    idp = parse_metadata(text)
    return {"issuerUrl": idp.entity_id, "endpoint": idp.sso_url, "idP": idp.certificates[0]}


def provider_of(db: Session, provider_id: str) -> m.Provider:
    owner, _, name = (provider_id or "").partition("/")
    if not name:
        owner, name = b.ADMIN_OWNER, owner
    provider = db.exec(select(m.Provider).where(m.Provider.owner == owner[:100], m.Provider.name == name[:100])).first()
    if provider is None:
        raise ServiceError(NO_PROVIDER, (provider_id or "")[:200])
    if provider.category != "SAML":
        raise ServiceError(NOT_SAML, provider.name)
    return provider


# --- the AuthnRequest ---

@dataclass(frozen=True)
class Login:
    url: str  # where the browser goes (the IdP's single sign-on URL, with the request for GET)
    method: str  # GET: the Redirect binding; POST: the POST binding, whose page is `page`
    request_id: str
    page: str = ""  # POST: the page that posts the signed request to `url` by itself


def _signing_cert(db: Session, provider: m.Provider) -> m.Cert:
    cert = lookup.signing_cert(db, provider.owner, provider.cert or b.BUILT_IN_CERT)
    if cert is None or not cert.private_key or not cert.certificate:
        raise ServiceError("The cert %s of provider %s has no key pair", provider.cert or b.BUILT_IN_CERT,
                           provider.name)
    return cert


def binding_of(provider: m.Provider, idp: Idp) -> tuple[str, str]:
    """(binding, URL) of the AuthnRequest: Casdoor's POST for a signed request, Redirect for an
    unsigned one, unless the IdP offers only the other."""
    order = (x.POST_BINDING, x.REDIRECT_BINDING) if provider.enable_sign_authn_request else \
        (x.REDIRECT_BINDING, x.POST_BINDING)
    for binding in order:
        if idp.url_for(binding):
            return binding, idp.url_for(binding)
    raise ServiceError(NO_ENDPOINT, provider.name)


def login(db: Session, provider_id: str, application: m.Application, relay_state: str = "",
          return_to: str = "/") -> Login:
    """A new AuthnRequest to the provider's IdP (binding_of; signed with enableSignAuthnRequest),
    remembered for the ACS; the sign-in is for `application` and then goes on to `return_to` (a
    same-site path)."""
    provider = provider_of(db, provider_id)
    if len(relay_state or "") > MAX_RELAY_STATE:
        raise ServiceError("The RelayState is too long")
    binding, url = binding_of(provider, idp_of(provider))
    cert = _signing_cert(db, provider) if provider.enable_sign_authn_request else None
    request_id = x.new_id()
    p, a = f"{{{x.PROTOCOL}}}", f"{{{x.ASSERTION}}}"
    root = etree.Element(p + "AuthnRequest", {
        "ID": request_id, "Version": "2.0", "IssueInstant": x.instant(x.now()), "Destination": url,
        "ProtocolBinding": x.POST_BINDING, "AssertionConsumerServiceURL": acs_url()},
        nsmap={"samlp": x.PROTOCOL, "saml": x.ASSERTION})
    etree.SubElement(root, a + "Issuer").text = sp_entity_id()
    etree.SubElement(root, p + "NameIDPolicy", {"AllowCreate": "true", "Format": x.NAME_ID_UNSPECIFIED})
    if binding == x.POST_BINDING:
        if cert is not None:  # enveloped, after the Issuer
            root.insert(1, x.placeholder())
            root = x.sign(root, request_id, cert.private_key, cert.certificate, organization=application.organization)
        fields = {"SAMLRequest": x.encode(etree.tostring(root), deflate=False), "RelayState": relay_state}
        found = Login(url, "POST", request_id, x.auto_post_page(url, fields))
    else:
        query = urlencode({k: v for k, v in (("SAMLRequest", x.encode(etree.tostring(root), deflate=True)),
                                             ("RelayState", relay_state)) if v})
        if cert is not None:
            query = x.sign_query(f"{query}&{urlencode({'SigAlg': x.query_sig_alg(cert.private_key)})}",
                                 cert.private_key, application.organization)
        found = Login(f"{url}{'&' if '?' in url else '?'}{query}", "GET", request_id)
    now = utcnow()
    db.execute(sa.delete(m.SamlRequest).where(m.SamlRequest.expires_at < now))
    db.add(m.SamlRequest(request_id=request_id, provider_owner=provider.owner, provider_name=provider.name,
                         application=application.name, return_to=navigation.safe_return_path(return_to)[:1000],
                         created_time=now, expires_at=now + timedelta(minutes=REQUEST_MINUTES)))
    db.flush()
    return found


# --- the Response ---

@dataclass(frozen=True)
class Assertion:
    """What a checked Response says, and the request it answers."""
    provider: m.Provider
    application: str
    return_to: str
    name_id: str
    attributes: dict[str, list[str]]
    request_id: str = ""  # the AuthnRequest it answers (used up)


def _refuse(reason: str) -> ServiceError:
    return ServiceError(REFUSED, reason)


def _in_window(not_before: str | None, not_on_or_after: str | None, now) -> None:
    start, end = x.parse_instant(not_before), x.parse_instant(not_on_or_after)
    if (not_before and start is None) or (not_on_or_after and end is None):
        raise _refuse("a time cannot be read")
    if start is not None and now + x.CLOCK_SKEW < start:
        raise _refuse("not valid yet")
    if end is not None and now - x.CLOCK_SKEW >= end:
        raise _refuse("expired")


def _signed_assertion(root: etree._Element, certs: list) -> etree._Element:
    """The assertion a trusted signature covers: the Response's, or the assertion's own."""
    if root.find("saml:EncryptedAssertion", x.NS) is not None:
        raise _refuse("encrypted assertions are not supported")
    last_error: ServiceError | None = None
    for cert in certs:
        try:
            if root.find("ds:Signature", x.NS) is not None:
                signed = x.verify_element(root, cert)
                assertions = signed.findall("saml:Assertion", x.NS)
            else:
                assertions = root.findall("saml:Assertion", x.NS)
                if len(assertions) != 1:
                    raise _refuse("one assertion is expected")
                assertions = [x.verify_element(assertions[0], cert)]
        except ServiceError as exc:
            last_error = exc
            continue
        if len(assertions) != 1:
            raise _refuse("one assertion is expected")
        return assertions[0]
    raise last_error or ServiceError(x.BAD_SIGNATURE)


def accept(db: Session, saml_response: str) -> Assertion:
    """The Response posted to the ACS, checked; its request is used up. ServiceError otherwise."""
    root = x.parse(x.decode(saml_response, inflate=None))
    if root.tag != f"{{{x.PROTOCOL}}}Response":
        raise ServiceError(x.BAD_MESSAGE)
    in_response_to = root.get("InResponseTo") or ""
    request = db.exec(select(m.SamlRequest).where(m.SamlRequest.request_id == in_response_to[:100],
                                                  m.SamlRequest.expires_at > utcnow())).first() \
        if in_response_to else None
    if request is None:
        raise ServiceError(UNKNOWN_REQUEST)
    provider = db.exec(select(m.Provider).where(m.Provider.owner == request.provider_owner,
                                                m.Provider.name == request.provider_name)).first()
    if provider is None or provider.category != "SAML":
        raise ServiceError(NO_PROVIDER, f"{request.provider_owner}/{request.provider_name}")
    idp = idp_of(provider)
    if not idp.certificates:
        raise ServiceError(NO_IDP_CERT, provider.name)
    status = root.find("samlp:Status/samlp:StatusCode", x.NS)
    if status is None or status.get("Value") != x.SUCCESS:
        raise _refuse("the identity provider did not sign the user in")
    assertion = _signed_assertion(root, [x.certificate(c) for c in idp.certificates])
    now = x.now()
    destination = root.get("Destination")
    if destination and destination != acs_url():
        raise _refuse("wrong destination")
    issuer = (assertion.findtext("saml:Issuer", "", x.NS) or "").strip()
    if idp.entity_id and issuer != idp.entity_id:
        raise _refuse("wrong issuer")
    conditions = assertion.find("saml:Conditions", x.NS)
    if conditions is None:
        raise _refuse("no conditions")
    _in_window(conditions.get("NotBefore"), conditions.get("NotOnOrAfter"), now)
    audiences = [(a.text or "").strip() for a in conditions.findall("saml:AudienceRestriction/saml:Audience", x.NS)]
    if sp_entity_id() not in audiences:
        raise _refuse("wrong audience")
    subject = assertion.find("saml:Subject", x.NS)
    name_id = (subject.findtext("saml:NameID", "", x.NS) if subject is not None else "").strip()
    if not name_id:
        raise _refuse("no NameID")
    bearer = [c.find("saml:SubjectConfirmationData", x.NS) for c in subject.findall("saml:SubjectConfirmation", x.NS)
              if c.get("Method") == x.BEARER]
    data = next((d for d in bearer if d is not None), None)
    if data is None:
        raise _refuse("no bearer confirmation")
    if data.get("Recipient") != acs_url():
        raise _refuse("wrong recipient")
    if data.get("InResponseTo") and data.get("InResponseTo") != in_response_to:
        raise _refuse("wrong request")
    if not data.get("NotOnOrAfter"):
        raise _refuse("no expiry")
    _in_window(data.get("NotBefore"), data.get("NotOnOrAfter"), now)
    # used once: the request's row goes as the Response is accepted (a concurrent copy finds none)
    used = db.execute(sa.delete(m.SamlRequest).where(m.SamlRequest.pk == request.pk))
    if used.rowcount != 1:
        raise ServiceError(UNKNOWN_REQUEST)
    attributes: dict[str, list[str]] = {}
    for attribute in assertion.findall("saml:AttributeStatement/saml:Attribute", x.NS):
        values = [(v.text or "").strip() for v in attribute.findall("saml:AttributeValue", x.NS)]
        attributes.setdefault(attribute.get("Name", ""), []).extend(values)
    return Assertion(provider, request.application, request.return_to, name_id[:100], attributes, in_response_to)


def answered_request(saml_response: str) -> str:
    """The request a Response says it answers, unchecked (only to find where the sign-in
    started; `accept` decides whether it is true); "" when it cannot be read."""
    try:
        root = x.parse(x.decode(saml_response, inflate=None))
    except ServiceError:
        return ""
    return (root.get("InResponseTo") or "")[:100]


def mapped(assertion: Assertion) -> dict[str, str]:
    """The identity's fields: the provider's userMapping (field -> attribute name), else the
    attributes this server's own IdP sends (Email, Name, DisplayName); id is the NameID."""
    mapping = {"email": "Email", "username": "Name", "displayName": "DisplayName",
               **{k: str(v) for k, v in (assertion.provider.user_mapping or {}).items() if isinstance(v, str) and v}}
    out = {"id": assertion.name_id}
    for key in ("username", "displayName", "email", "avatarUrl"):
        values = assertion.attributes.get(mapping.get(key, ""), [])
        out[key] = values[0][:100] if values else ""
    if not out["username"]:
        out["username"] = out["email"] or out["id"]
    return out


def login_return(organization: str, return_to: str) -> str:
    return f"/login/{quote(organization, safe='')}?from={quote(return_to, safe='/')}"
