"""Invitations: list and edit, with the 'Copy signup page URL' button."""

from __future__ import annotations

import reflex as rx

from iam_console.core.kinds import choices
from iam_console.identity import invitations
from iam_console.identity.kinds.invitation import made_for_plan
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, say
from iam_console.ui.text import t


def _for_plan(record) -> bool:
    """An invitation a plan created keeps its organization and name."""
    return made_for_plan(record.get("tag"))


INVITATIONS = screen(Screen(
    key="invitation", title="Invitations", list_route="/invitations", edit_route="/invitations/{owner}/{name}",
    name_locked=_for_plan, owner_locked=_for_plan, edit_title="Invitation", parts=lambda: (_copy_button(),),
    columns=(
        Column("name", "Name", link="/invitations/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("updatedTime", "Updated time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("code", "Code"),
        Column("quota", "Quota", searchable=False),
        Column("usedCount", "Used count", searchable=False),
        Column("application", "Application"),
        Column("email", "Email"),
        Column("phone", "Phone"),
        Column("state", "State", "tags", filters=choices("invitation", "state")),
    ),
    fields=(
        Field("displayName", "Display name"),
        # a plain code (letters and digits) is also the default code, as it is typed
        Field("code", "Code", copy_to="defaultCode", copy_pattern=r"[A-Za-z0-9]+"),
        Field("defaultCode", "Default code"),
        Field("quota", "Quota", "number", minimum=0),
        # at most the quota: checked by the service (identity/kinds/invitation.py), which names the bound
        Field("usedCount", "Used count", "number", minimum=0),
        # pickers of the invitation's organization's records; All and Default name none
        Field("application", "Application", "pick", kind="application",
              also=((invitations.ALL_APPLICATIONS, "All"),)),
        Field("signupGroup", "Signup group", "pick", kind="group", also=(("", "Default"),)),
        Field("username", "Username"),
        Field("email", "Email"),
        Field("phone", "Phone"),
        Field("state", "State", "select", options=choices("invitation", "state")),
    ),
))


class InvitationLink(rx.State):
    @rx.event
    async def copy(self):
        """The signup page's URL with the code, as the form shows them now."""
        editing = await self.get_state(Editing)
        values = editing.values
        url = await call(self, lambda db, actor: invitations.signup_url(
            db, actor, editing.saved_owner, values.get("application", ""),
            values.get("defaultCode") or values.get("code", "")))
        if url.failed:
            return url.event
        return [rx.set_clipboard(url.value), rx.toast.success(await say(self, "Copied to clipboard successfully"))]


def _copy_button() -> rx.Component:
    return rx.hstack(
        rx.button(rx.icon("copy", size=14), t("Copy signup page URL"), on_click=InvitationLink.copy,
                  variant="outline", id="invitation-copy-url"),
        width="100%",
    )

