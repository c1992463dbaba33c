"""Enforcers: list and edit. An enforcer puts a model and an adapter together (both chosen with
pickers, stored as owner/name); its edit page shows the adapter's policy rules as a table whose
columns follow the model's policy definition (authorization/ui/policies_state.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.authorization.ui.policies_state import POLICIES, EnforcerPolicies, built_in
from iam_console.ui.components.listing import pager
from iam_console.ui.components.rows import rows_table
from iam_console.ui.components.section import section
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.text import t


def _restrictions(db, actor, record) -> tuple[set[str], set[str]]:
    """A built-in enforcer is read-only (the service refuses its changes too)."""
    return ({f.key for f in ENFORCERS.fields} | {"owner", "name"} if built_in(record) else set()), set()


def _policies() -> rx.Component:
    return section(
        "Policies", "enforcer-policies",
        rx.cond(EnforcerPolicies.ready, rx.vstack(
            rows_table(POLICIES, EnforcerPolicies, locked=EnforcerPolicies.frozen),
            pager(EnforcerPolicies, prefix="policy-"),
            width="100%", spacing="2",
        ), rx.text(t("Choose a model and an adapter and save to edit the policies"), size="2",
                   id="enforcer-policies-none")),
    )


ENFORCERS = screen(Screen(
    key="enforcer", title="Enforcers", list_route="/enforcers", edit_route="/enforcers/{owner}/{name}",
    edit_title="Enforcer", global_admins_only=True, owner_picker=True, name_locked=built_in, owner_locked=built_in,
    protected=lambda record, me: built_in(record), restrictions=_restrictions,
    after_read=EnforcerPolicies.load, parts=lambda: (_policies(),),
    columns=(
        Column("name", "Name", link="/enforcers/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("description", "Description"),
        Column("model", "Model", link="/models/{model}"),
        Column("adapter", "Adapter", link="/adapters/{adapter}"),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("model", "Model", "pick", kind="model", form="id"),
        Field("adapter", "Adapter", "pick", kind="adapter", form="id"),
    ),
))
