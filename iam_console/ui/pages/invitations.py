"""Invitations: list and edit, with the 'Copy signup page URL' button."""

from __future__ import annotations

import reflex as rx

from ...db import session_scope
from ...services import invitations
from ...services.errors import ServiceError
from ...services.kinds import choices
from ...services.kinds.invitation import made_for_plan
from ..components.editing import edit_page
from ..components.listing import list_page
from ..routes import page
from ..screens import Column, Field, Screen, screen
from ..state.account import viewer
from ..state.editing import Editing
from ..state.listing import Listing
from ..state.prefs import Prefs
from ..text import t


def _for_plan(record) -> bool:
    """An invitation a plan created keeps its organization and name."""
    return made_for_plan(record.get("tag"))


INVITATIONS = screen(Screen(
    key="invitation", title="Invitations", list_route="/invitations", edit_route="/invitations/{owner}/{name}",
    name_locked=_for_plan, owner_locked=_for_plan,
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
        # at most the quota: checked by the service (services/kinds/invitation.py), which names the bound
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
        editing, prefs = await self.get_state(Editing), await self.get_state(Prefs)
        values = editing.values
        try:
            with session_scope() as db:
                url = invitations.signup_url(db, viewer(db, self.router), editing.saved_owner,
                                             values.get("application", ""),
                                             values.get("defaultCode") or values.get("code", ""))
        except ServiceError as exc:
            return rx.toast.error(prefs.say(exc.template, *exc.args_))
        return [rx.set_clipboard(url), rx.toast.success(prefs.say("Copied to clipboard successfully"))]


def _copy_button() -> rx.Component:
    return rx.hstack(
        rx.button(rx.icon("copy", size=14), t("Copy signup page URL"), on_click=InvitationLink.copy,
                  variant="outline", id="invitation-copy-url"),
        width="100%",
    )


page("/invitations", "Invitations", on_load=Listing.open("invitation"),
     follows_organization=True)(lambda: list_page(INVITATIONS))
page(INVITATIONS.edit_pattern, "Invitation", on_load=Editing.open("invitation"))(
    lambda: edit_page(INVITATIONS, _copy_button()))
