"""SAML test helpers: pysaml2 as a service provider of this server's IdP, and reading the page
that posts a SAML message."""

from __future__ import annotations

import os
import re
import shutil
from html import unescape
from urllib.parse import urlsplit

import pytest

XMLSEC = shutil.which("xmlsec1")
SP_ENTITY = "http://sp.example.com/metadata"
SP_ACS = "http://sp.example.com/acs"


def need_xmlsec() -> str:
    """pysaml2 signs and checks signatures with the xmlsec1 program."""
    if XMLSEC:
        return XMLSEC
    if os.environ.get("CI") == "true":
        pytest.fail("xmlsec1 is required under CI (apt-get install xmlsec1)")
    pytest.skip("xmlsec1 is not installed (apt-get install xmlsec1): pysaml2 needs it")


def sp_client(idp_metadata: str, tmp_path, *, key_pem: str = "", cert_pem: str = "",
              want_assertions_signed: bool = False, entity: str = SP_ENTITY):
    """A pysaml2 service provider trusting the metadata; it signs its requests with the key when given."""
    from saml2 import BINDING_HTTP_POST
    from saml2.client import Saml2Client
    from saml2.config import SPConfig

    config = {
        "entityid": entity,
        "xmlsec_binary": need_xmlsec(),
        "metadata": {"inline": [idp_metadata]},
        "accepted_time_diff": 60,
        "allow_unknown_attributes": True,
        "service": {"sp": {
            "endpoints": {"assertion_consumer_service": [(SP_ACS, BINDING_HTTP_POST)]},
            "want_response_signed": True,
            "want_assertions_signed": want_assertions_signed,
            "allow_unsolicited": False,
            "authn_requests_signed": bool(key_pem),
        }},
    }
    if key_pem:
        (tmp_path / "sp.key").write_text(key_pem)
        (tmp_path / "sp.crt").write_text(cert_pem)
        config["key_file"] = str(tmp_path / "sp.key")
        config["cert_file"] = str(tmp_path / "sp.crt")
    sp_config = SPConfig()
    sp_config.load(config)
    return Saml2Client(config=sp_config)


def posted_form(html: str) -> tuple[str, dict[str, str]]:
    """The action and the hidden fields of a page that posts a SAML message."""
    action = re.search(r'<form[^>]*action="([^"]*)"', html)
    assert action, html[:500]
    fields = {unescape(n): unescape(v) for n, v in re.findall(r'name="([^"]+)" value="([^"]*)"', html)}
    return unescape(action.group(1)), fields


def local(url: str) -> str:
    """The path and query of a URL of this server (the test client's)."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")
