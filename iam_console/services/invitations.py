"""Invitations beyond CRUD: the signup link an admin hands out."""

from __future__ import annotations

from urllib.parse import quote

from sqlmodel import Session

from ..settings import settings
from . import builtin as b
from . import lookup, policy
from .access import Actor
from .errors import ServiceError
from .resources import REGISTRY

INVITATIONS = REGISTRY["invitation"]
ALL_APPLICATIONS = "All"


def signup_application(db: Session, owner: str, application: str) -> str:
    """The application whose signup page takes the invitation: its own, or with
    'All' the organization's default one (app-built-in for the built-in organization)."""
    if application and application != ALL_APPLICATIONS:
        return application
    if owner == b.BUILT_IN_ORG:
        return b.BUILT_IN_APP
    organization = lookup.organization(db, owner)
    if organization is None or not organization.default_application:
        raise ServiceError("You need to specify a default application for %s", owner)
    return organization.default_application


def signup_url(db: Session, actor: Actor, owner: str, application: str, code: str) -> str:
    """{origin}/signup/{application}?invitationCode={code}, for whoever may read the
    organization's invitations. `code` is the invitation's default code (a concrete
    one even when the code is a pattern), else its code."""
    policy.read_scope(actor, INVITATIONS, owner)
    if owner != actor.organization and not actor.is_global_admin:
        raise ServiceError(policy.UNAUTHORIZED)
    name = signup_application(db, owner, application)
    return f"{settings.origin}/signup/{quote(name, safe='')}?invitationCode={quote(code, safe='')}"
