"""The application edit page's tools that need no database: its links, the SAML metadata
address, reading a service provider's metadata, and the rules a providers row offers."""

from __future__ import annotations

import pytest

from iam_console.applications import application_tools as tools
from iam_console.core.errors import ServiceError
from iam_console.settings import settings

METADATA = """<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.example.com/saml">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect"
        Location="https://sp.example.com/acs/redirect" index="0"/>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
        Location="https://sp.example.com/acs/post" index="1"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>"""


def test_the_links_of_an_application():
    links = tools.page_links("my app", "cid123", [" ", "https://rp.example.com/cb?x=1", "https://other/cb"])
    base = settings.origin
    assert links["signup"] == f"{base}/signup/my%20app"
    assert links["prompt"] == f"{base}/prompt/my%20app"
    query = "client_id=cid123&response_type=code&redirect_uri=https%3A%2F%2Frp.example.com%2Fcb%3Fx%3D1" \
            "&scope=read&state=my+app"
    assert links["signin"] == f"{base}/login/oauth/authorize?{query}"
    assert links["authorize"] == f"{base}/signup/oauth/authorize?{query}"
    assert links["redirect"] == "https://rp.example.com/cb?x=1"
    assert tools.page_links("a", "c", [])["redirect"] == ""


def test_the_saml_metadata_address():
    assert tools.saml_metadata_url("app-x", True) == (
        f"{settings.origin}/api/saml/metadata?application=admin/app-x&enablePostBinding=true")
    assert tools.saml_metadata_url("a b", False).endswith("application=admin/a%20b&enablePostBinding=false")


def test_metadata_gives_the_post_reply_url_first():
    assert tools.parse_metadata(METADATA) == {"entityId": "https://sp.example.com/saml",
                                              "replyUrl": "https://sp.example.com/acs/post"}
    redirect_only = METADATA.replace("HTTP-POST", "HTTP-Artifact")
    assert tools.parse_metadata(redirect_only)["replyUrl"] == "https://sp.example.com/acs/redirect"


@pytest.mark.parametrize("text", [
    "", "not xml", "<a><b></a>",
    # no service provider's endpoint
    '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
    # entities are refused, never expanded
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><lolz>&lol;</lolz>',
    '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    '<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata">&e;</EntityDescriptor>',
])
def test_what_is_not_metadata_cannot_be_parsed(text):
    with pytest.raises(ServiceError) as refused:
        tools.parse_metadata(text)
    assert refused.value.template == "Can not parse metadata"


def test_a_providers_row_offers_the_rules_of_its_provider():
    assert tools.provider_rules("Email", "Default")[0] == "All"
    assert tools.provider_rules("SMS", "Twilio SMS") == ("All", "signup", "login", "forget", "reset", "mfaSetup",
                                                        "mfaAuth")
    assert tools.provider_rules("Captcha", "Default") == ("None", "Dynamic", "Always")
    assert tools.provider_rules("OAuth", "Google") == ("Default", "OneTap")
    assert tools.provider_rules("OAuth", "GitHub") == ("None",)
