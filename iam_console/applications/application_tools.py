"""What the application edit page does beyond saving the record: the links it copies, the provider
a providers row names, SAML metadata read from its XML, and the terms of use uploaded as a resource."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import defusedxml.ElementTree as safe_xml
from defusedxml import DefusedXmlException
from sqlmodel import Session

from iam_console.core import builtin as b
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.files import files
from iam_console.settings import settings

NO_REDIRECT_URL = "ERROR: You must specify at least one Redirect URL in Redirect URLs"
NOT_HTML = "Please select a HTML file"
CANNOT_PARSE = "Can not parse metadata"
MAX_METADATA = 1_000_000  # characters of pasted metadata
SAML_MD = "urn:oasis:names:tc:SAML:2.0:metadata"
POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
# providers whose rows may sign users up, in and be unlinked (the others only deliver or check)
ACCOUNT_CATEGORIES = ("OAuth", "Web3")
MESSAGE_CATEGORIES = ("Email", "SMS")


def page_links(name: str, client_id: str, redirect_uris: list[str]) -> dict[str, str]:
    """The pages of an application, as its edit page copies them: signup, signin (the authorize
    page, as an OAuth client would open it, with the first redirect URI), signup-then-authorize
    and prompt; `redirect` is '' when the application has no redirect URI."""
    base, app = settings.origin, quote(name, safe="")
    first = next((u.strip() for u in redirect_uris if u.strip()), "")
    query = urlencode({"client_id": client_id, "response_type": "code", "redirect_uri": first, "scope": "read",
                       "state": name})
    return {"signup": f"{base}/signup/{app}", "signin": f"{base}/login/oauth/authorize?{query}",
            "authorize": f"{base}/signup/oauth/authorize?{query}", "prompt": f"{base}/prompt/{app}",
            "redirect": first}


def saml_metadata_url(name: str, post_binding: bool) -> str:
    """Where the application's SAML metadata is published (the identity provider's side)."""
    return (f"{settings.origin}/api/saml/metadata?application={b.ADMIN_OWNER}/{quote(name, safe='')}"
            f"&enablePostBinding={str(post_binding).lower()}")


def provider_entry(db: Session, actor: Actor, organization: str, name: str) -> dict[str, Any]:
    """What choosing a provider in an application's providers row sets: the provider's owner,
    category and type (the row's rules depend on them) and the rule it starts with (All for Email and SMS);
    the sign-up, sign-in and unlink switches apply to OAuth and Web3 providers only."""
    kind = REGISTRY["provider"]
    found = crud.get_record(db, actor, kind, organization, name) or crud.get_record(
        db, actor, kind, b.ADMIN_OWNER, name)
    if found is None:
        raise ServiceError("The provider: %s does not exist", name[:100])
    category, type_ = str(found.get("category", "")), str(found.get("type", ""))
    entry: dict[str, Any] = {"provider": {"owner": str(found.get("owner", "")), "category": category, "type": type_},
                             "rule": default_rule(category, type_)}
    if category not in ACCOUNT_CATEGORIES:
        entry |= {"canSignUp": False, "canSignIn": False, "canUnlink": False, "prompted": False, "signupGroup": ""}
    else:
        entry |= {"canSignUp": True, "canSignIn": True, "canUnlink": True}
    return entry


def provider_rules(category: str, type_: str) -> tuple[str, ...]:
    """The rules a providers row may choose, by the provider's kind."""
    if category in MESSAGE_CATEGORIES:
        return ("All", "signup", "login", "forget", "reset", "mfaSetup", "mfaAuth")
    if category == "Captcha":
        return ("None", "Dynamic", "Always")
    if type_ == "Google":
        return ("Default", "OneTap")  # Casdoor's values; the console shows "One Tap"
    return ("None",)


def default_rule(category: str, type_: str) -> str:
    return provider_rules(category, type_)[0]


def parse_metadata(text: str) -> dict[str, str]:
    """A service provider's SAML metadata: its entity ID and the URL it takes responses at (the
    HTTP-POST AssertionConsumerService first). DTDs, entities and external references are refused."""
    if not text.strip() or len(text) > MAX_METADATA:
        raise ServiceError(CANNOT_PARSE)
    try:
        root = safe_xml.fromstring(text, forbid_dtd=True)
    except (safe_xml.ParseError, DefusedXmlException, ValueError):
        raise ServiceError(CANNOT_PARSE) from None
    entity = root if root.tag == f"{{{SAML_MD}}}EntityDescriptor" else root.find(f"{{{SAML_MD}}}EntityDescriptor")
    if entity is None:
        raise ServiceError(CANNOT_PARSE)
    services = entity.findall(f"{{{SAML_MD}}}SPSSODescriptor/{{{SAML_MD}}}AssertionConsumerService")
    services.sort(key=lambda s: s.get("Binding") != POST_BINDING)
    reply = next((s.get("Location", "") for s in services if s.get("Location")), "")
    if not reply:
        raise ServiceError(CANNOT_PARSE)
    return {"entityId": entity.get("entityID", ""), "replyUrl": reply}


def upload_terms_of_use(db: Session, actor: Actor, name: str, file_name: str, content: bytes) -> str:
    """The terms of use of application admin/{name}, one .html file stored as a resource of its
    organization (termsOfUse/{organization}/{name}.html, tag termsOfUse): its URL."""
    if not file_name.lower().endswith(".html"):
        raise ServiceError(NOT_HTML)
    app = crud.get_record(db, actor, REGISTRY["application"], b.ADMIN_OWNER, name)
    if app is None:
        raise ServiceError("The application: %s does not exist", name[:100])
    organization = str(app["organization"])
    # the resource names its uploader when they belong to the organization
    user = actor.user.name if actor.user is not None and actor.organization == organization else ""
    url, _ = files.upload_file(db, actor, organization, user, name, "termsOfUse", "ApplicationEditPage",
                               f"termsOfUse/{organization}/{name}.html", "", content)
    return url
