"""Which application serves an organization or a user, and the cards of the apps page."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from iam_console.core import builtin as b
from iam_console.core import crud, lookup, policy, query
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY


def default_of(db: Session, actor: Actor, organization: str) -> dict[str, Any] | None:
    """The organization's default application (app-built-in when it names none)."""
    org = lookup.organization(db, organization)
    if org is None:
        raise ServiceError("The organization: %s does not exist", organization)
    return crud.get_record(db, actor, REGISTRY["application"], b.ADMIN_OWNER, org.default_application or b.BUILT_IN_APP)


def of_user(db: Session, actor: Actor, owner: str, name: str) -> dict[str, Any] | None:
    """The application the user signed up through, else their organization's default."""
    user = crud.get_record(db, actor, REGISTRY["user"], owner, name)
    if user is None:
        return None
    if user["signupApplication"]:
        return crud.get_record(db, actor, REGISTRY["application"], b.ADMIN_OWNER, user["signupApplication"])
    return default_of(db, actor, owner)


# --- the apps page ---

CUSTOM_URL = "<custom-url>"  # a homepage URL that stands for each user's own homepage
APPS_PAGE_SIZE = 24


def safe_link(url: str) -> str:
    """An absolute http(s) URL, else '': admins and users set these, and a card
    must never open a javascript: or data: URL."""
    url = (url or "").strip()
    if not url.lower().startswith(("http://", "https://")) or any(ord(c) < 33 for c in url):
        return ""
    return url


def homepage_link(homepage_url: str, account_homepage: str) -> str:
    """Where an application's card goes: its homepage URL; the placeholder
    <custom-url> resolves to the viewer's own homepage (Casdoor's behaviour)."""
    return safe_link(account_homepage if homepage_url.strip() == CUSTOM_URL else homepage_url)


def apps_of(db: Session, actor: Actor, page: int = 1, page_size: int = APPS_PAGE_SIZE) -> query.Page:
    """The applications of the viewer's organization that they may read, newest
    first, one page: each with its name, display name, logo, description and the
    link its card opens ('' when it has none: the card is shown disabled)."""
    policy.require_user(actor)
    found = crud.list_records(db, actor, REGISTRY["application"], {"p": str(max(1, page)), "pageSize": str(page_size)},
                              organization=actor.organization)
    homepage = actor.user.homepage if actor.user is not None else ""
    rows = [{
        "name": row["name"], "displayName": row["displayName"] or row["name"], "logo": safe_link(row["logo"]),
        "description": row["description"], "link": homepage_link(row["homepageUrl"], homepage),
    } for row in found.rows]
    return query.Page(rows, found.total, found.page)
