"""Permissions: the list at /permissions, with its .xlsx upload, and the edit page.

- A normal user sees the permissions they submitted (the list's access rules, as
  get-permissions-by-submitter answers) and may change only those; the state is a global
  admin's alone. Both are the kind's rules (authorization/kinds/permission.py, core/policy.py),
  which the API obeys too: the page only shows them.
- Changing the resource type empties the resources.
- The model picker reads the chosen model: the roles are disabled, with a hint, while it has no
  role definition (`model_has_roles`)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.authorization.kinds import permission as rules
from iam_console.core.kinds import choices
from iam_console.models.base import format_time, utcnow
from iam_console.ui.screens import Column, Field, Screen, ViewerValue, screen, workbook_upload
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t

HAS_ROLES = "modelHasRoles"  # the page's own value: "false" while the model has no role definition


def _model_roles(db, actor, organization: str, model: str) -> dict[str, str]:
    return {HAS_ROLES: "true" if rules.model_has_roles(db, actor, organization, model) else "false"}


def _roles_allowed(values: Any, flags: Any) -> Any:
    if isinstance(values, rx.Var):
        return values[HAS_ROLES] != "false"
    return values.get(HAS_ROLES) != "false"


def _roles_hint() -> rx.Component:
    return rx.cond(Editing.values[HAS_ROLES] == "false",
                   rx.text(t("The model has no role definition, so roles cannot be chosen"), size="1",
                           color_scheme="gray", id="roles-hint"))


def _approval(state: str) -> dict[str, Any]:
    """Approved sets the approver (the viewer) and the time, Pending clears both."""
    if state == "Approved":
        return {"approver": ViewerValue("name"), "approveTime": format_time(utcnow())}
    return {"approver": "", "approveTime": ""}


PERMISSIONS = screen(Screen(
    key="permission", title="Permissions", list_route="/permissions", edit_route="/permissions/{owner}/{name}",
    edit_title="Permission", owner_picker=True,
    upload=workbook_upload("permission", "Users uploaded successfully, refreshing the page", "Failed to sync: %s"),
    columns=(
        Column("name", "Name", link="/permissions/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("users", "Users", "links", link="/users/{item}", sortable=False),
        Column("groups", "Groups", "links", link="/groups/{item}", sortable=False),
        Column("roles", "Roles", "links", link="/roles/{item}", sortable=False),
        Column("resourceType", "Resource type", filters=rules.RESOURCE_TYPES),
        Column("resources", "Resources", "tags", sortable=False),
        Column("actions", "Actions", "tags", sortable=False),
        Column("effect", "Effect", filters=choices("permission", "effect")),
        Column("isEnabled", "Is enabled", "bool", searchable=False),
        Column("submitter", "Submitter"),
        Column("approver", "Approver"),
        Column("approveTime", "Approve time", "time", searchable=False),
        Column("state", "State", filters=choices("permission", "state")),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("model", "Model", "pick", kind="model", fill=_model_roles),
        Field("adapter", "Adapter", "pick", kind="adapter"),
        Field("users", "Users", "pick", kind="user", multiple=True),
        Field("groups", "Groups", "pick", kind="group", multiple=True),
        Field("roles", "Roles", "pick", kind="role", multiple=True, enabled_when=_roles_allowed,
              addon=_roles_hint),
        Field("domains", "Domains", "list"),
        Field("resourceType", "Resource type", "select", options=rules.RESOURCE_TYPES,
              then=lambda value: {"resources": ""}),
        Field("resources", "Resources", "list"),
        Field("actions", "Actions", "list"),
        Field("effect", "Effect", "select", options=choices("permission", "effect")),
        Field("isEnabled", "Is enabled", "switch"),
        Field("submitter", "Submitter", derived=True),
        Field("approver", "Approver", derived=True),
        Field("approveTime", "Approve time", derived=True),
        # a global admin's alone; the form shows what the save sets (the service sets it)
        Field("state", "State", "select", options=choices("permission", "state"), global_admin_only=True,
              then=_approval),
    ),
))
