"""Roles: the list at /roles, with its .xlsx upload, and the edit page. Members are users,
groups and sub-roles as owner/name, chosen with pickers of the role's organization (the
sub-roles never offer the role itself; the service refuses it too), and free domains. The
rules are the kind's (authorization/kinds/role.py)."""

from __future__ import annotations

from iam_console.ui.screens import Column, Field, Screen, screen, workbook_upload

ROLES = screen(Screen(
    key="role", title="Roles", list_route="/roles", edit_route="/roles/{owner}/{name}", edit_title="Role",
    owner_picker=True,
    upload=workbook_upload("role", "Users uploaded successfully, refreshing the page", "Failed to sync: %s"),
    columns=(
        Column("name", "Name", link="/roles/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("users", "Users", "links", link="/users/{item}", sortable=False),
        Column("groups", "Groups", "links", link="/groups/{item}", sortable=False),
        Column("roles", "Sub roles", "links", link="/roles/{item}", sortable=False),
        Column("domains", "Domains", "tags", sortable=False),
        Column("isEnabled", "Is enabled", "bool", searchable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("users", "Users", "pick", kind="user", multiple=True),
        Field("groups", "Groups", "pick", kind="group", multiple=True),
        Field("roles", "Sub roles", "pick", kind="role", multiple=True, not_self=True),
        Field("domains", "Domains", "list"),
        Field("isEnabled", "Is enabled", "switch"),
    ),
))
