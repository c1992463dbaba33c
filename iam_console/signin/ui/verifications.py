"""Verifications: the codes sent by email and SMS, a read-only list. The code itself is
masked by the service for everyone but the admins of its organization."""

from __future__ import annotations

from iam_console.core import builtin as b
from iam_console.core.addresses import lookup_url
from iam_console.ui.screens import Column, Screen, screen

VERIFICATIONS = screen(Screen(
    key="verification", title="Verifications", list_route="/verifications", edit_route="", columns=(
        # a code sent for no organization of its own (owner admin) shows as '(empty)', with no link
        Column("owner", "Organization", link="/organizations/{owner}", shown_as=((b.ADMIN_OWNER, "(empty)"),)),
        Column("name", "Name"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("type", "Type"),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("provider", "Provider"),
        # an address may be stored with a trailing ": ", which the lookup leaves out
        Column("remoteAddr", "Client IP", link=lambda record: lookup_url(str(record.get("remoteAddr") or "")),
               external=True),
        Column("receiver", "Receiver"),
        Column("code", "Verification code", searchable=False, sortable=False),
        Column("isUsed", "Is used", "bool", searchable=False),
    ),
    fields=(), addable=False, read_only=True,
))
