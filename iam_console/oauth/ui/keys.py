"""Access keys: list and edit, in the Identity menu as Casdoor has them. A key acts as its user, or
as its application's client, within its organization (oauth/kinds/key.py). Its secret is made when
the list's Add makes the key and shown that once on the edit page it opens (Screen.shown_once);
only its hash is kept, so no page shows it again. A key stays in its organization: the owner is
fixed, since the key's organization must be its owner."""

from __future__ import annotations

from iam_console.oauth.kinds import key
from iam_console.ui.screens import Column, Field, Screen, screen


def _acts_as(value: str) -> dict[str, str]:
    """A key acts as a user or as an application, not both: a type clears the other one."""
    return {field: "" for field, type_ in (("application", "Application"), ("user", "User")) if value != type_}


KEYS = screen(Screen(
    key="key", title="Keys", list_route="/keys", edit_route="/keys/{owner}/{name}", edit_title="Key",
    owner_locked=lambda record: True, shown_once=(("accessSecret", "Access secret"),),
    columns=(
        Column("name", "Name", link="/keys/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("type", "Type", filters=key.TYPES),
        Column("accessKey", "Access key"),
        Column("expireTime", "Expire time", "time", searchable=False),
        Column("state", "State", "badge", filters=key.STATES, colors=(("Active", "green"), ("Inactive", "gray"))),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("type", "Type", "select", options=key.TYPES, then=_acts_as),
        Field("application", "Application", "pick", kind="application",
              shown_when=lambda v, f: v["type"] == "Application"),
        Field("user", "User", "pick", kind="user", shown_when=lambda v, f: v["type"] == "User"),
        Field("accessKey", "Access key", derived=True),
        Field("expireTime", "Expire time"),
        Field("state", "State", "select", options=key.STATES),
    ),
))
