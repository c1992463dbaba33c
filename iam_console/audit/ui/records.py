"""Records: the audit trail, a read-only list (audit/trail.py reads it at scale)."""

from __future__ import annotations

from typing import Any

from iam_console.core.addresses import lookup_url
from iam_console.ui.screens import Column, Screen, screen

METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")
# the actions whose record says whether a webhook was triggered by it
TRIGGERING = frozenset({"signup", "login", "logout", "update-user", "new-user"})


def _user_page(record: dict[str, Any]) -> str:
    """A write's record names its user by id (organization/name), a sign-in's by name within
    the record's organization, as Casdoor does; an application or an anonymous caller has no
    user page."""
    user = str(record.get("user") or "")
    owner, _, name = user.partition("/")
    if not name:
        owner, name = str(record.get("organization") or ""), user
    if not owner or not name or owner == "app" or user == "anonymous":
        return ""
    return f"/users/{owner}/{name}"


RECORDS = screen(Screen(
    key="record", title="Records", list_route="/records", edit_route="", columns=(
        # organization admins are not shown the records' generated names
        Column("name", "Name", hidden_for=lambda viewer: not viewer.is_global_admin),
        Column("id", "ID", searchable=False),
        Column("clientIp", "Client IP", link=lambda record: lookup_url(str(record.get("clientIp") or "")),
               external=True),
        Column("createdTime", "Timestamp", "time", searchable=False),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("user", "User", link=_user_page),
        Column("method", "Method", filters=METHODS),
        Column("requestUri", "Request URI", cut=100),
        Column("language", "Language"),
        Column("statusCode", "Status code", searchable=False),
        Column("response", "Response", searchable=False, cut=100),
        Column("object", "Object", searchable=False, cut=100),
        Column("action", "Action"),
        Column("isTriggered", "Is triggered", "bool", searchable=False,
               shown_when=lambda record: record.get("action") in TRIGGERING),
    ),
    fields=(), page_size=20, addable=False, read_only=True, export="/api/export-records",
))
