"""The console's menu and route guard rules.

Pure functions of the account, so every kind of account can be tested
without a browser."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from iam_console.core import builtin as b
from iam_console.extension import menu_declarations


@dataclass(frozen=True)
class MenuItem:
    key: str  # the route; also the key organizations list in navItems
    label: str
    seen_by: str = field(default="admins", compare=False)  # extension.MenuEntry.seen_by


@dataclass(frozen=True)
class MenuGroup:
    key: str
    label: str
    items: tuple[MenuItem, ...]


def menu() -> tuple[MenuGroup, ...]:
    """The whole menu: every extension's groups in their order, each with the entries every
    extension adds to it (iam_console/extension.py). Thirty-odd entries: assembled when asked."""
    groups, entries = menu_declarations()
    return tuple(MenuGroup(group.key, group.label, tuple(MenuItem(entry.route, entry.label, entry.seen_by)
                                                         for _, entry in entries if entry.group == group.key))
                 for group in groups)


@dataclass(frozen=True)
class Viewer:
    """What the menu needs to know of the signed-in account."""

    owner: str
    is_admin: bool
    nav_items: tuple[str, ...] = ()  # the organization's navItems

    @property
    def is_global_admin(self) -> bool:
        return self.is_admin and self.owner == b.BUILT_IN_ORG


def menu_for(viewer: Viewer | None, available: frozenset[str] | set[str]) -> list[MenuGroup]:
    """The menu groups this viewer sees; `available` are the routes that have a screen."""
    if viewer is None:
        return []
    allowed = set(viewer.nav_items)
    show_all = not allowed or "all" in allowed
    groups = []
    for group in menu():
        items = tuple(
            item for item in group.items
            if item.key in available
            # ordinary users get only what everyone sees (their permission requests; their home is /apps)
            and (viewer.is_admin or item.seen_by == "everyone")
            and (viewer.is_global_admin or item.seen_by != "global admins")
            and (show_all or item.key in allowed)
        )
        if items:
            groups.append(MenuGroup(group.key, group.label, items))
    return groups


# --- the route guard ---

@dataclass(frozen=True)
class GuardDecision:
    show: bool  # render the page
    redirect: str = ""  # where to go instead, when set


WAIT = GuardDecision(show=False)
ALLOW = GuardDecision(show=True)


def safe_return_path(value: str | None) -> str:
    """A same-site path to return to after sign-in; anything else becomes '/'."""
    if not value or not value.startswith("/") or value.startswith("//") or "\\" in value:
        return "/"
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or any(ord(c) < 32 for c in value):
        return "/"
    return value


MFA_SETUP_PATH = "/mfa/setup"


def guard(path: str, *, loaded: bool, signed_in: bool, needs_password_update: bool = False,
          application: str = b.BUILT_IN_APP, mfa_setup_required: str = "") -> GuardDecision:
    """Still loading shows nothing; nobody signed in goes to /login
    remembering where they were; a forced password change goes to /forget; an account
    whose organization requires MFA and that has none (`mfa_setup_required` is the
    type to set up) sees only the MFA setup page until one method is enabled."""
    if not loaded:
        return WAIT
    if not signed_in:
        return GuardDecision(show=False, redirect=f"/login?from={quote(safe_return_path(path), safe='/')}")
    if needs_password_update:
        return GuardDecision(show=False, redirect=f"/forget/{application}")
    if mfa_setup_required and urlsplit(path).path.rstrip("/") != MFA_SETUP_PATH:
        return GuardDecision(show=False, redirect=f"{MFA_SETUP_PATH}?mfaType={mfa_setup_required}")
    return ALLOW


def login_target(organization: str) -> str:
    """Where a signed-out user of an organization signs in again."""
    return "/login" if organization in ("", b.BUILT_IN_ORG) else f"/login/{organization}"


def after_logout(redirect_url: str, organization: str) -> str:
    """After sign-out: the server's redirect URL, else the organization's login page
    when it is not the built-in one, else home."""
    if redirect_url:
        return redirect_url
    if organization and organization != b.BUILT_IN_ORG:
        return login_target(organization)
    return "/"
