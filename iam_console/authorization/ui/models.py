"""Casbin models: list and edit, the global admin's alone (as the menu shows them). The model
text is edited in the code editor, 500 px high, in Casbin's language; every save is checked by
Casbin and refused with its own error (authorization/kinds/model.py). The built-in models are
read-only and cannot be deleted (core/kinds/common.py BUILT_IN_CASBIN)."""

from __future__ import annotations

from iam_console.core.kinds.common import is_built_in_casbin
from iam_console.ui.screens import Column, Field, Screen, screen

PREVIEW = 100  # characters of the model text the list shows


def built_in(record) -> bool:
    return is_built_in_casbin(str(record.get("owner", "")), str(record.get("name", "")))


def read_only_when_built_in(screen_fields):
    """The restrictions of a built-in Casbin object: every field locked, nothing hidden."""
    def restrictions(db, actor, record) -> tuple[set[str], set[str]]:
        return ({f.key for f in screen_fields()} | {"owner", "name"} if built_in(record) else set()), set()
    return restrictions


MODELS = screen(Screen(
    key="model", title="Models", list_route="/models", edit_route="/models/{owner}/{name}", edit_title="Model",
    global_admins_only=True, owner_picker=True, name_locked=built_in, owner_locked=built_in,
    protected=lambda record, me: built_in(record),
    restrictions=read_only_when_built_in(lambda: MODELS.fields),
    columns=(
        Column("name", "Name", link="/models/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("modelText", "Model text", cut=PREVIEW, sortable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("modelText", "Model text", "code", language="casbin", height="500px"),
    ),
))
