"""SAML's XML handling: hostile documents, the bindings' encodings and the Redirect binding's
query signature (saml/saml_xml.py)."""

from __future__ import annotations

import base64
import zlib
from urllib.parse import quote

import pytest

from iam_console.applications import certs
from iam_console.core.errors import ServiceError
from iam_console.saml import saml_xml as x


@pytest.mark.parametrize("text", [
    "",
    "not xml",
    '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><r>&b;</r>',
    '<!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><r>&e;</r>',
    '<!DOCTYPE r SYSTEM "http://127.0.0.1:9/evil.dtd"><r/>',
])
def test_hostile_or_broken_xml_is_refused(text):
    with pytest.raises(ServiceError, match="cannot be read"):
        x.parse(text)


def test_deflate_bomb_is_refused():
    bomb = base64.b64encode(zlib.compress(b"<a>" + b" " * 5_000_000 + b"</a>")[2:-4]).decode()
    with pytest.raises(ServiceError, match="cannot be read"):
        x.decode(bomb, inflate=True)


def test_encodings_round_trip():
    xml = b"<samlp:AuthnRequest xmlns:samlp='urn:oasis:names:tc:SAML:2.0:protocol' ID='_1'/>"
    assert x.decode(x.encode(xml, deflate=True), inflate=True) == xml
    assert x.decode(x.encode(xml, deflate=True), inflate=None) == xml  # a POST-binding message, deflated
    assert x.decode(x.encode(xml, deflate=False), inflate=None) == xml
    with pytest.raises(ServiceError):
        x.decode("@@@not base64 nor deflate@@@", inflate=True)


def test_query_signature_covers_request_relay_state_and_algorithm():
    certificate, key = certs.generate("RS256", 2048, 1, "sp")
    query = f"SAMLRequest=abc%2B&RelayState=rs&SigAlg={quote(x.RSA_SHA256, safe='')}"
    signed = x.sign_query(query, key)
    signature = dict(p.split("=", 1) for p in signed.split("&"))["Signature"]
    from urllib.parse import unquote
    cert = x.certificate(certificate)
    x.check_query_signature(f"foo=1&{signed}", "SAMLRequest", x.RSA_SHA256, unquote(signature), cert)
    with pytest.raises(ServiceError, match="invalid"):
        x.check_query_signature(signed.replace("RelayState=rs", "RelayState=rt"), "SAMLRequest", x.RSA_SHA256,
                                unquote(signature), cert)
    with pytest.raises(ServiceError, match="not supported"):
        x.check_query_signature(signed, "SAMLRequest", "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
                                unquote(signature), cert)


def test_certificate_as_pem_or_bare_base64():
    certificate, _ = certs.generate("RS256", 2048, 1, "idp")
    parsed = x.certificate(certificate)
    assert x.certificate(x.bare_certificate(parsed)) == parsed
    with pytest.raises(ServiceError, match="certificate"):
        x.certificate("not a certificate")
