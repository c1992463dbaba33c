"""How an application's sign-in page looks (the page follows the organization's default
application): its signin items, logo, form position, side panel, background and CSS.

Signin items, by name: Logo, Back button, Languages, Forgot password? and Signup link are shown
when the application lists them visible, and Agreement with the rule Signin (unchecked) or Signin
(Default True) (checked), to be checked before signing in; an application that lists no items shows the
logo, the languages, the forgot-password link and the signup link. Other items with a label are
custom text, whose HTML is cleaned (core/html.py), as is the side panel's. With orgChoiceMode
Select or Input the visitor first chooses the organization (from a list, or by typing its name)
and goes on to its sign-in page, which then shows the form (`?orgChoiceMode=None`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core.html import safe

SHOWN_ITEMS = ("Logo", "Back button", "Languages", "Forgot password?", "Signup link")
# the Agreement item's rules that put it on the sign-in page: unchecked, or checked at first
AGREEMENT_RULES = {"Signin": "unchecked", "Signin (Default True)": "checked"}
DEFAULT_ITEMS = frozenset({"Logo", "Languages", "Forgot password?", "Signup link"})
# the items that are the form itself (or shown elsewhere on the page), never custom text
FORM_ITEMS = frozenset({*SHOWN_ITEMS, "Signin methods", "Username", "Password", "Providers", "Login button",
                        "Captcha", "Auto sign in", "Verification code"})
ORG_CHOICES = ("Select", "Input")  # orgChoiceMode None (or anything else) shows the form at once
MAX_ORGANIZATIONS = 500  # a Select offers at most this many organizations
POSITIONS = (1, 2, 3, 4)  # left, centre, right, with the side panel on the left
CENTRE, WITH_SIDE_PANEL = 2, 4


@dataclass(frozen=True)
class Look:
    logo: str = ""
    position: int = CENTRE
    side_html: str = ""
    background: str = ""
    background_mobile: str = ""
    css: str = ""
    css_mobile: str = ""
    terms_of_use: str = ""
    agreement: str = ""  # "" (not on this page), "unchecked" or "checked": it must be checked to sign in
    shown: frozenset[str] = DEFAULT_ITEMS
    custom: tuple[str, ...] = field(default_factory=tuple)  # custom items' cleaned HTML, in order
    org_choice: str = ""  # Select or Input: the visitor first chooses the organization to sign in to


def _visible(item: dict) -> bool:
    return item.get("visible", True) is not False


def look(application: m.Application | None, organization: m.Organization | None, org_choice_mode: str = "",
         ) -> Look:
    """`org_choice_mode`: the page's own orgChoiceMode query parameter ('None' after a choice)."""
    if application is None:
        return Look(logo=organization.logo if organization is not None else "")
    items = [item for item in application.signin_items or [] if isinstance(item, dict) and item.get("name")]
    shown = frozenset(item["name"] for item in items if _visible(item) and item["name"] in SHOWN_ITEMS) \
        if items else DEFAULT_ITEMS
    custom = tuple(safe(str(item.get("label") or "")) for item in items
                   if _visible(item) and item["name"] not in FORM_ITEMS and item.get("label"))
    agreement = next((AGREEMENT_RULES.get(str(item.get("rule") or ""), "") for item in items
                      if item["name"] == "Agreement" and _visible(item)), "")
    position = application.form_offset if application.form_offset in POSITIONS else CENTRE
    return Look(
        logo=application.logo or (organization.logo if organization is not None else ""),
        position=position,
        side_html=safe(application.form_side_html) if position == WITH_SIDE_PANEL else "",
        background=application.form_background_url or "",
        background_mobile=application.form_background_url_mobile or application.form_background_url or "",
        css=application.form_css or "", css_mobile=application.form_css_mobile or "",
        terms_of_use=application.terms_of_use or "", agreement=agreement, shown=shown, custom=custom,
        org_choice=application.org_choice_mode if application.org_choice_mode in ORG_CHOICES
        and org_choice_mode != "None" else "")


def organization_choices(db: Session) -> list[dict[str, str]]:
    """The organizations a Select offers (name and display name, by name): an application whose
    orgChoiceMode is Select makes this list public on its sign-in page."""
    rows = db.exec(select(m.Organization.name, m.Organization.display_name)
                   .order_by(m.Organization.name).limit(MAX_ORGANIZATIONS)).all()
    return [{"name": name, "label": display or name} for name, display in rows]
