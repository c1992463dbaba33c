"""Resources: what a token is for (RFC 8707 resource indicators) and the protected resource
metadata (RFC 9728) MCP clients read to find their authorization server (docs/api.md, "Standards").

An organization declares its resource URIs (`protectedResources`). A `resource` parameter names
the resource a token is meant for; it joins the token's `aud`. When the client's organization
declares resources, only those may be named; either way never another application's client id (a
token whose audience names another application would pass that application's checks).

/.well-known/oauth-protected-resource describes this server's own API (the userinfo endpoint and
the Bearer-token API): `resource` is the origin. /.well-known/oauth-protected-resource/<path>
describes the declared resource <origin>/<path> (RFC 9728 §3.1 inserts the well-known segment
between a resource's host and its path), and a declared resource on another host is described at
/.well-known/oauth-protected-resource?resource=<its URI>, the address its server names in its
WWW-Authenticate challenge (RFC 9728 §5.1)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console.core import lookup
from iam_console.models import Application, Organization
from iam_console.settings import settings

MAX_RESOURCE = 255


def problem(db: Session, application: Application, resource: str) -> tuple[str, ...]:
    """Why `resource` may not name what the application's token is for: a message template and its
    arguments (() if it may)."""
    parts = urlsplit(resource) if len(resource) <= MAX_RESOURCE else None
    if parts is None or not parts.scheme or not parts.netloc or "#" in resource:
        return ("The resource must be an absolute URI without a fragment",)
    other = lookup.application_by_client_id(db, resource)
    if other is not None and other.name != application.name:
        return "The resource %s is another application's client id", resource
    organization = lookup.organization(db, application.organization)
    declared = organization.protected_resources if organization is not None else []
    if declared and resource not in declared:
        return "The resource %s is not one the organization declares", resource
    return ()


def declaring(db: Session, resource: str) -> Organization | None:
    """The organization that declares `resource` (a resource is one organization's). The JSON
    lists are searched as text, then read exactly: every database compares text, not every one
    compares JSON."""
    rows = db.exec(select(Organization).where(
        sa.cast(Organization.protected_resources, sa.Text).contains(json.dumps(resource)[1:-1], autoescape=True))).all()
    return next((row for row in rows if resource in row.protected_resources), None)


def metadata(db: Session, scopes: list[str], path: str = "", resource: str = "") -> dict[str, Any] | None:
    """The RFC 9728 document of this server's API (no path, no resource), or of a declared resource;
    None when nothing is declared so. `scopes`: those the server's API takes."""
    origin = settings.origin
    base = {"authorization_servers": [origin], "bearer_methods_supported": ["header"]}
    if not path and not resource:
        return {"resource": origin, **base, "scopes_supported": scopes}
    wanted = resource or f"{origin}/{path}"
    organization = declaring(db, wanted)
    if organization is None:
        return None
    return {"resource": wanted, **base, "resource_name": organization.display_name or organization.name}
