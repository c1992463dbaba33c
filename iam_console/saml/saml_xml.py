"""SAML 2.0 messages as XML: hardened parsing, the bindings' encodings, and XML signatures
(signxml over lxml). Shared by the identity provider (saml/saml_idp.py) and the service
provider (saml/saml_sp.py). docs/security.md, "SAML 2.0", states the rules.

Every SAML message is parsed with DTDs refused (defusedxml first, then lxml with no entity
resolution, no network and no huge trees), so an entity expansion, an external entity or a
DTD fetch never happens. Signatures are checked against a certificate this server holds (the
application's client cert, a provider's IdP cert), never one the message carries, and only
what the checked signature covers is read afterwards."""

from __future__ import annotations

import base64
import binascii
import secrets
import zlib
from datetime import UTC, datetime, timedelta
from html import escape
from urllib.parse import quote

import defusedxml.ElementTree as safe_xml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from defusedxml import DefusedXmlException
from lxml import etree
from signxml import InvalidInput, InvalidSignature, SignatureConstructionMethod, XMLSigner, XMLVerifier

from iam_console import cpu_work
from iam_console.core.errors import ServiceError

PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
ASSERTION = "urn:oasis:names:tc:SAML:2.0:assertion"
METADATA = "urn:oasis:names:tc:SAML:2.0:metadata"
DSIG = "http://www.w3.org/2000/09/xmldsig#"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
XS = "http://www.w3.org/2001/XMLSchema"
REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
RESPONDER = "urn:oasis:names:tc:SAML:2.0:status:Responder"
REQUESTER = "urn:oasis:names:tc:SAML:2.0:status:Requester"
NO_PASSIVE = "urn:oasis:names:tc:SAML:2.0:status:NoPassive"
INVALID_NAME_ID_POLICY = "urn:oasis:names:tc:SAML:2.0:status:InvalidNameIDPolicy"
BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer"
NAME_ID_EMAIL = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
NAME_ID_UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"
NAME_ID_PERSISTENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"
NAME_ID_TRANSIENT = "urn:oasis:names:tc:SAML:2.0:nameid-format:transient"
BASIC_NAME_FORMAT = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic"
NS = {"samlp": PROTOCOL, "saml": ASSERTION, "md": METADATA, "ds": DSIG}

# canonicalization: inclusive C14N 1.0, or exclusive C14N 1.0 (what pysaml2 asks for)
C14N10 = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
EXC_C14N10 = "http://www.w3.org/2001/10/xml-exc-c14n#"
# the Redirect binding's query signature algorithms, by URI
QUERY_SIG_ALGS = {
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256": ("rsa", hashes.SHA256),
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512": ("rsa", hashes.SHA512),
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256": ("ec", hashes.SHA256),
}
RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
HASHES = {"SHA256": "sha256", "SHA512": "sha512"}  # SHA-1 (Casdoor's default) is too weak: SHA-256

MAX_MESSAGE = 200_000  # bytes of a decoded SAML message
MAX_INFLATED = 500_000
CLOCK_SKEW = timedelta(seconds=90)  # how far apart two servers' clocks may be
BAD_MESSAGE = "The SAML message cannot be read"
BAD_SIGNATURE = "The signature of the SAML message is invalid"

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                          huge_tree=False, remove_comments=True, remove_pis=True)


def parse(data: bytes | str, message: str = BAD_MESSAGE) -> etree._Element:
    """XML from a SAML message or metadata, with any DTD refused; ServiceError(message) when bad."""
    raw = data.encode() if isinstance(data, str) else data
    if not raw.strip() or len(raw) > MAX_INFLATED:
        raise ServiceError(message)
    try:
        safe_xml.fromstring(raw, forbid_dtd=True)  # a DTD, an entity, an external reference: refused
        root = etree.fromstring(raw, _PARSER)
    except (safe_xml.ParseError, DefusedXmlException, etree.XMLSyntaxError, ValueError):
        raise ServiceError(message) from None
    if not isinstance(root.tag, str):
        raise ServiceError(message)
    return root


def decode(value: str, *, inflate: bool | None) -> bytes:
    """A base64 message; inflated (raw DEFLATE) when `inflate`, or when None and it does not
    look like XML (the POST binding's compressed responses)."""
    value = (value or "").strip().replace(" ", "+")
    if not value or len(value) > MAX_MESSAGE * 2:
        raise ServiceError(BAD_MESSAGE)
    try:
        data = base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError):
        raise ServiceError(BAD_MESSAGE) from None
    if inflate is None:
        inflate = not data.lstrip().startswith(b"<")
    if not inflate:
        return data
    try:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        out = inflater.decompress(data, MAX_INFLATED)
        if inflater.unconsumed_tail:
            raise ServiceError(BAD_MESSAGE)
        return out
    except zlib.error:
        raise ServiceError(BAD_MESSAGE) from None


def encode(xml: bytes, *, deflate: bool) -> str:
    if deflate:
        compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        xml = compressor.compress(xml) + compressor.flush()
    return base64.b64encode(xml).decode()


def new_id() -> str:
    """An xs:ID (it may not start with a digit)."""
    return "_" + secrets.token_hex(20)


def instant(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_instant(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def now() -> datetime:
    return datetime.now(UTC)


# --- certificates ---

def certificate(text: str) -> x509.Certificate:
    """A certificate given as PEM or as bare base64 DER (as metadata and Casdoor's idP field hold it)."""
    text = (text or "").strip()
    try:
        if text.startswith("-----BEGIN"):
            return x509.load_pem_x509_certificate(text.encode())
        return x509.load_der_x509_certificate(base64.b64decode("".join(text.split()), validate=True))
    except (ValueError, binascii.Error):
        raise ServiceError("The certificate cannot be read") from None


def bare_certificate(cert: x509.Certificate) -> str:
    """Base64 DER, as ds:X509Certificate holds it."""
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _signature_algorithm(key, hash_name: str) -> str:
    return f"{'ecdsa' if isinstance(key, ec.EllipticCurvePrivateKey) else 'rsa'}-{hash_name}"


# --- XML signatures ---

def placeholder() -> etree._Element:
    """Where an enveloped signature goes (after the Issuer, as the schema wants)."""
    return etree.Element(f"{{{DSIG}}}Signature", {"Id": "placeholder"}, nsmap={"ds": DSIG})


def sign(root: etree._Element, element_id: str, key_pem: str, cert_pem_text: str, *, hash_name: str = "sha256",
         c14n: str = EXC_C14N10, organization: str = "") -> etree._Element:
    """The document signed (enveloped) over the element with `element_id`, whose placeholder
    (`placeholder()`) takes the signature; the signed copy is returned. It goes to `sign_text` as
    text: with an RSA key above 2048 bits that runs in a child process, as one of
    `organization`'s calls (cpu_work.signature: such a signature holds the interpreter lock)."""
    return parse(cpu_work.signature(key_pem, organization, sign_text, etree.tostring(root), element_id, key_pem,
                                    cert_pem_text, hash_name, c14n))


def sign_text(xml: bytes, element_id: str, key_pem: str, cert_pem_text: str, hash_name: str, c14n: str) -> bytes:
    """`sign` of a document given and answered as text, as a child process runs it."""
    key = cpu_work.private_key(key_pem)
    signer = XMLSigner(method=SignatureConstructionMethod.enveloped, c14n_algorithm=c14n,
                       signature_algorithm=_signature_algorithm(key, hash_name), digest_algorithm=hash_name)
    try:
        return etree.tostring(signer.sign(parse(xml), key=key, cert=cert_pem_text, reference_uri=f"#{element_id}"))
    except InvalidInput as exc:
        raise ServiceError("The SAML message cannot be signed: %s", str(exc)[:200]) from None


def verified(root: etree._Element, signature: etree._Element, cert: x509.Certificate) -> etree._Element:
    """The element a signature (a ds:Signature child of it) covers, checked against `cert`; the
    element returned is the one the signature verified, read from the signed bytes."""
    parent = signature.getparent()
    element_id = parent.get("ID") if parent is not None else None
    if not element_id:
        raise ServiceError(BAD_SIGNATURE)
    try:
        result = XMLVerifier().verify(etree.tostring(root), x509_cert=cert_pem(cert), id_attribute="ID",
                                      expect_references=1, parser=_PARSER,
                                      ignore_ambiguous_key_info=True)
    except (InvalidSignature, InvalidInput, ValueError):
        raise ServiceError(BAD_SIGNATURE) from None
    signed = result.signed_xml
    if signed is None or signed.get("ID") != element_id:
        raise ServiceError(BAD_SIGNATURE)
    return signed


def verify_element(element: etree._Element, cert: x509.Certificate) -> etree._Element:
    """An element with its own enveloped signature (a direct ds:Signature child), checked;
    the signed element (from the signed bytes) is returned."""
    signature = element.find("ds:Signature", NS)
    if signature is None:
        raise ServiceError(BAD_SIGNATURE)
    document = etree.fromstring(etree.tostring(element), _PARSER)  # alone: its signature is the only one
    return verified(document, document.find("ds:Signature", NS), cert)


# --- the Redirect binding's query signature ---

def query_signature_input(raw_query: str, kind: str) -> bytes:
    """The octets the Redirect binding signs: kind (SAMLRequest or SAMLResponse), RelayState and
    SigAlg exactly as they came in the query, in that order."""
    parts = {}
    for part in raw_query.split("&"):
        name = part.split("=", 1)[0]
        if name in (kind, "RelayState", "SigAlg") and name not in parts:
            parts[name] = part
    return "&".join(parts[n] for n in (kind, "RelayState", "SigAlg") if n in parts).encode()


def sign_query(query: str, key_pem: str, organization: str = "") -> str:
    """`query` (SAMLRequest=...&RelayState=...&SigAlg=..., encoded) with its Signature added (with an
    RSA key above 2048 bits, in a child process, as `sign`)."""
    signature = cpu_work.signature(key_pem, organization, query_signature, query, key_pem)
    return f"{query}&Signature={quote(base64.b64encode(signature).decode(), safe='')}"


def query_signature(query: str, key_pem: str) -> bytes:
    """The signature of a Redirect binding's query: RSA (PKCS#1 v1.5) or ECDSA, over SHA-256."""
    key = cpu_work.private_key(key_pem)
    if isinstance(key, rsa.RSAPrivateKey):
        return key.sign(query.encode(), padding.PKCS1v15(), hashes.SHA256())
    return key.sign(query.encode(), ec.ECDSA(hashes.SHA256()))


def query_sig_alg(key_pem: str) -> str:
    key = cpu_work.private_key(key_pem)
    return RSA_SHA256 if isinstance(key, rsa.RSAPrivateKey) else "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256"


def check_query_signature(raw_query: str, kind: str, sig_alg: str, signature: str, cert: x509.Certificate) -> None:
    algorithm = QUERY_SIG_ALGS.get(sig_alg)
    if algorithm is None:
        raise ServiceError("The signature algorithm %s is not supported", sig_alg[:100])
    try:
        raw = base64.b64decode((signature or "").replace(" ", "+"), validate=True)
    except (binascii.Error, ValueError):
        raise ServiceError(BAD_SIGNATURE) from None
    public = cert.public_key()
    data = query_signature_input(raw_query, kind)
    try:
        if algorithm[0] == "rsa" and isinstance(public, rsa.RSAPublicKey):
            public.verify(raw, data, padding.PKCS1v15(), algorithm[1]())
        elif algorithm[0] == "ec" and isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(raw, data, ec.ECDSA(algorithm[1]()))
        else:
            raise ServiceError(BAD_SIGNATURE)
    except Exception as exc:  # cryptography's InvalidSignature and key mismatches alike
        if isinstance(exc, ServiceError):
            raise
        raise ServiceError(BAD_SIGNATURE) from None


def signature_hash(name: str) -> str:
    """An application's samlHashAlgorithm as a digest name: SHA512, else SHA-256."""
    return HASHES.get((name or "").upper().replace("-", ""), "sha256")


def auto_post_page(action: str, fields: dict[str, str], title: str = "Continue") -> str:
    """An HTML page whose form posts `fields` to `action` by itself (a button when scripts are off)."""
    inputs = "".join(f'<input type="hidden" name="{escape(k)}" value="{escape(v)}"/>' for k, v in fields.items() if v)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>"
            f"{escape(title)}</title></head><body><main><form id=\"saml-form\" method=\"post\" "
            f"action=\"{escape(action)}\">{inputs}<noscript><button type=\"submit\">{escape(title)}</button>"
            "</noscript></form></main><script>document.getElementById('saml-form').submit();</script></body></html>")
