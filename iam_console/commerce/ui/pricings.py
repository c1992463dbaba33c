"""Pricings: list and edit. A pricing's plans (a picker of its organization's), its application,
the trial in days (at least 0: the kind's rule, commerce/kinds/pricing.py) and whether it is
enabled; Copy pricing page URL puts the public plan-selection page's address on the clipboard
(the server's public URL, IAM_ORIGIN, then /select-plan/{owner}/{name})."""

from __future__ import annotations

import reflex as rx

from iam_console.settings import settings
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import say
from iam_console.ui.text import t


def pricing_page_url(owner: str, name: str) -> str:
    """The public page listing a pricing's plans."""
    return f"{settings.origin}/select-plan/{owner}/{name}"


class PricingTools(rx.State):
    @rx.event
    async def copy(self):
        """The saved pricing's page (the name in the form is not saved yet)."""
        editing = await self.get_state(Editing)
        url = pricing_page_url(editing.saved_owner, editing.saved_name)
        return [rx.set_clipboard(url), rx.toast.success(await say(self, "Copied to clipboard successfully"))]


def _copy() -> rx.Component:
    """Under the fields (beside Save it would sit under the toasts of the saves)."""
    return rx.hstack(rx.button(rx.icon("copy", size=14), t("Copy pricing page URL"), on_click=PricingTools.copy,
                               variant="outline", id="copy-pricing-url"), margin_top="0.5em")


PRICINGS = screen(Screen(
    key="pricing", title="Pricings", list_route="/pricings", edit_route="/pricings/{owner}/{name}",
    edit_title="Pricing", owner_picker=True, parts=lambda: (_copy(),),
    columns=(
        Column("name", "Name", link="/pricings/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("application", "Application", link="/applications/admin/{application}"),
        Column("plans", "Plans", "links", link="/plans/{owner}/{item}", sortable=False),
        Column("trialDuration", "Trial duration", searchable=False),
        Column("isEnabled", "Is enabled", "bool", searchable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("application", "Application", "pick", kind="application"),
        Field("plans", "Plans", "pick", kind="plan", multiple=True),
        Field("trialDuration", "Trial duration", "number", minimum=0),
        Field("isEnabled", "Is enabled", "switch"),
    ),
))
