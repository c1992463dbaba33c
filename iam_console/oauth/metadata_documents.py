"""OAuth Client ID Metadata Documents, MCP clients' way of being a client without registering: the
`client_id` is an https URL, and the JSON document at that URL is the client's metadata (its
`client_id` the URL itself). docs/api.md, "Standards"; docs/security.md, "Client metadata
documents".

An organization opts in (`clientMetadataDocuments`). The organization of an authorization request
whose client id is such a URL is the one that declares the request's `resource` (oauth/resources.py),
else the built-in one; it must have opted in. The document is fetched through the outbound guard
(core/outbound.py: no private addresses unless allowed, FETCH_SECONDS at most, MAX_BYTES at most,
no redirects) on the worker thread that serves the request, never on the event loop, and kept as
an application of that organization (`cimd_<hex>`, client id = the URL) for CACHE_SECONDS: within
them the stored copy answers, after them the next authorization request fetches the document
again. Such a client is public (no secret is ever given: PKCE does the code exchange), may ask for
the authorization_code and refresh_token grants only, and, like a registered client, has no admin
rights (it holds a registration access token nobody knows: core/access.py)."""

from __future__ import annotations

import json
import secrets
import ssl
import time
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.applications import redirects
from iam_console.core import builtin as b
from iam_console.core import lookup, outbound, rules
from iam_console.core.access import ANONYMOUS
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.oauth import oauth, resources

FETCH_SECONDS = 5.0
MAX_BYTES = 5 * 1024
CACHE_SECONDS = 3600
MAX_CLIENT_ID = 100  # the length of an application's client id
GRANTS = ("authorization_code", "refresh_token")
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
VERIFY: ssl.SSLContext | bool = True  # the documents' TLS certificates are checked (tests trust their own CA)


def is_document_url(client_id: str) -> bool:
    """A client id that names a metadata document: an https URL with a path, no fragment, no dot
    segments, no user-info, short enough to be an application's client id."""
    if not client_id.startswith("https://") or len(client_id) > MAX_CLIENT_ID or not redirects.is_plain(client_id):
        return False
    parts = urlsplit(client_id)
    return bool(parts.hostname) and parts.path not in ("", "/")


def accepted(db: Session, application: m.Application | None = None) -> bool:
    """Whether some organization (the application's) takes clients by metadata document."""
    found = select(m.Organization.name).where(m.Organization.client_metadata_documents == True)  # noqa: E712
    if application is not None:
        found = found.where(m.Organization.name == application.organization)
    return db.exec(found.limit(1)).first() is not None


def _organization(db: Session, resource: str) -> m.Organization:
    declaring = resources.declaring(db, resource) if resource else None
    organization = declaring or lookup.organization(db, b.BUILT_IN_ORG)
    if organization is None or not organization.client_metadata_documents:
        raise ServiceError("Client metadata documents are not accepted for this resource")
    return organization


def _fetch(client_id: str) -> dict[str, Any]:
    try:
        with outbound.http_client(timeout=FETCH_SECONDS, max_bytes=MAX_BYTES, verify=VERIFY,
                                  follow_redirects=False) as http:
            answer = http.get(client_id, headers={"Accept": "application/json"})
    except (outbound.OutboundError, OSError, ValueError) as exc:
        raise ServiceError("The client metadata document could not be fetched: %s", str(exc)[:200]) from None
    if answer.status_code != 200:
        raise ServiceError("The client metadata document answered HTTP %s", str(answer.status_code))
    try:
        document = json.loads(answer.content)
    except ValueError:
        raise ServiceError("The client metadata document is not JSON") from None
    return document if isinstance(document, dict) else {}


def _checked(client_id: str, document: dict[str, Any]) -> dict[str, Any]:
    """The document's metadata the server keeps, refused unless it is a public client's, its
    `client_id` the URL it was fetched from."""
    if document.get("client_id") != client_id:
        raise ServiceError("The client metadata document's client_id is not its URL")
    if document.get("token_endpoint_auth_method", "none") != "none" or "client_secret" in document:
        raise ServiceError("A client metadata document describes a public client (token_endpoint_auth_method none)")
    grants = document.get("grant_types", ["authorization_code"])
    uris = document.get("redirect_uris")
    if not isinstance(grants, list) or not set(grants) <= set(GRANTS) or "authorization_code" not in grants:
        raise ServiceError("A client metadata document's grant_types are authorization_code and refresh_token")
    if not isinstance(uris, list) or not 0 < len(uris) <= 10 or not all(
            isinstance(u, str) and redirects.is_plain(u) and not redirects.is_pattern(u)
            and (urlsplit(u).scheme != "http" or urlsplit(u).hostname in LOOPBACK_HOSTS) for u in uris):
        raise ServiceError("A client metadata document's redirect_uris are plain https, loopback http or native URIs")
    name = document.get("client_name", "")
    return {"client_id": client_id, "client_name": name[:100] if isinstance(name, str) else "",
            "redirect_uris": uris, "grant_types": grants, "token_endpoint_auth_method": "none",
            "fetched_at": int(time.time())}


def client(db: Session, client_id: str, resource: str) -> m.Application | None:
    """The application an authorization request's client id names when it is a metadata document's
    URL: the stored copy while it is fresh, else fetched (ServiceError when it may not be, or is
    wrong); None for a client id that is no such URL."""
    if not is_document_url(client_id):
        return None
    organization = _organization(db, resource)
    row = lookup.application_by_client_id(db, client_id)
    if row is not None and row.organization != organization.name:
        raise ServiceError("The client %s belongs to another organization", client_id)
    if row is not None and time.time() - row.client_metadata.get("fetched_at", 0) < CACHE_SECONDS:
        return row
    found = _checked(client_id, _fetch(client_id))
    if row is None:
        row = m.Application(owner=b.ADMIN_OWNER, name=f"cimd_{secrets.token_hex(8)}", organization=organization.name,
                            client_id=client_id, cert=b.BUILT_IN_CERT, category="Agent", type="MCP",
                            enable_password=True, tags=["cimd"], token_format="JWT",
                            # a token nobody holds: no RFC 7592 management, and no admin rights
                            registration_access_token=oauth.digest(secrets.token_urlsafe(32)),
                            signin_methods=[{"name": "Password", "displayName": "Password", "rule": "All"}])
    row.display_name = found["client_name"] or client_id
    row.redirect_uris, row.grant_types, row.client_metadata = found["redirect_uris"], found["grant_types"], found
    kind = REGISTRY["application"]
    rules.before_save(db, ANONYMOUS, kind, None, row, set())
    rules.validate(db, ANONYMOUS, kind, row)
    lookup.forget()
    db.add(row)
    db.flush()
    return row


oauth.CLIENT_FINDERS.append(client)
