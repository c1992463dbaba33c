"""The prompt after sign-in (/prompt/{application}): an application's signup items marked
`prompted` that the signed-in account has not answered yet, asked before the sign-in goes on to
the application, and its provider rows marked `prompted`, offered for linking
(docs/architecture.md, "The public pages").

A prompted item counts as answered when the account's field holds a value (a custom item: its
property). The answers go through the same checks as at sign-up: an email valid and unused in
the organization, a phone valid in its region, each item's regex; only the asked items are
written, and nothing when one answer is refused."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.core.wire import EMAIL
from iam_console.federation import upstream
from iam_console.signin import signup

# the signup items a prompt may ask for, by the user attribute they fill
ATTRIBUTES = {"Display name": "display_name", "Email": "email", "Phone": "phone", "Affiliation": "affiliation",
              "ID card": "id_card", "Country/Region": "region", "Gender": "gender", "Bio": "bio", "Tag": "tag",
              "Education": "education"}
NOT_ASKED = frozenset({"ID", "Username", "Password", "Confirm password", "Agreement", "Signup button", "Providers",
                       "Invitation code"})


def _value(user: m.User, name: str) -> str:
    if name in ATTRIBUTES:
        return str(getattr(user, ATTRIBUTES[name]) or "")
    return str((user.properties or {}).get(name, ""))


def missing(application: m.Application, user: m.User) -> list[dict]:
    """The prompted, visible items the account has no value for, in the application's order."""
    items = signup.Items(application)
    return [item for name, item in items.by_name.items()
            if item.get("prompted") and items.visible(name) and name not in NOT_ASKED
            and (name in ATTRIBUTES or item.get("type")) and not _value(user, name).strip()]


def unlinked(db: Session, application: m.Application, user: m.User) -> list[dict[str, str]]:
    """The prompted provider rows the account is not linked to (upstream.prompted_links)."""
    return [link for link in upstream.prompted_links(db, application, user) if not link["linked"]]


def needed(db: Session, application: m.Application, user: m.User) -> bool:
    """Whether a sign-in goes through the prompt page (as Casdoor's sign-in page decides): a
    prompted item unanswered, or a prompted provider row the account is not linked to. The
    providers are offered, not required: the page lets the user skip them, and the authorize
    page it goes on to asks again only for the items (`missing`)."""
    return bool(missing(application, user)) or bool(unlinked(db, application, user))


def answer(db: Session, application_name: str, user: m.User, values: dict[str, str]) -> None:
    """Write the answers to the asked items; every asked item needs one."""
    application = signup.application_of(db, application_name)
    if application.organization != user.owner:
        raise ServiceError("The user %s/%s cannot sign in to application %s", user.owner, user.name,
                           application.name)
    organization = lookup.organization(db, user.owner)
    changes: dict[str, str] = {}
    properties = dict(user.properties or {})
    country_code = user.country_code
    for item in missing(application, user):
        name = item["name"]
        value = str(values.get(name, "")).strip()[:signup.MAX_FIELD]
        if not value:
            raise ServiceError("Please input your %s!", item.get("label") or name)
        if name == "Email":
            value = value.lower()
            if not EMAIL.match(value):
                raise ServiceError("Email is invalid")
            if signup.taken(db, user.owner, sa.func.lower(m.User.email) == value, m.User.pk != user.pk):
                raise ServiceError("Email already exists")
        elif name == "Phone":
            value, country_code = signup.valid_phone(organization, value, user.country_code)
            if signup.taken(db, user.owner, m.User.phone == value, m.User.pk != user.pk):
                raise ServiceError("Phone already exists")
        signup.check_regex(application, name, item, value)
        if name in ATTRIBUTES:
            changes[ATTRIBUTES[name]] = value
        else:
            properties[name] = value
    for attribute, value in changes.items():  # every answer checked: now written
        setattr(user, attribute, value)
    user.properties, user.country_code = properties, country_code
    db.add(user)
    audit(db, organization=user.owner, user=f"{user.owner}/{user.name}", action="update-user",
          request_uri="/prompt", obj={"application": application.name, "answered": sorted(values)[:20]})
