"""Invitations beyond CRUD: the signup link an admin hands out, what a sign-up page may
learn of an invitation from its code (get-invitation-info), and the code a sign-up spends
(signin/signup.py)."""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import quote

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import lookup, patterns, policy, throttle
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.models.base import to_wire
from iam_console.settings import settings

ALL_APPLICATIONS = "All"
CHOICES_LIMIT = 500
CODE_CHECKS = (30, 600)  # code look-ups a client address may make per window: codes can be guessed
# what a sign-up page is not told of an invitation (Casdoor masks the same fields)
HIDDEN = {"createdTime": "", "updatedTime": "", "code": "***", "defaultCode": "***", "isRegexp": False,
          "quota": -1, "usedCount": -1, "signupGroup": ""}


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
    policy.read_scope(actor, REGISTRY["invitation"], owner)
    if owner != actor.organization and not actor.is_global_admin:
        raise ServiceError(policy.UNAUTHORIZED)
    name = signup_application(db, owner, application)
    return f"{settings.origin}/signup/{quote(name, safe='')}?invitationCode={quote(code, safe='')}"


def _matches(invitation: m.Invitation, code: str) -> bool:
    if not invitation.is_regexp:
        return hmac.compare_digest(invitation.code.encode(), code.encode())
    try:
        return patterns.fullmatch(invitation.code, code)
    except patterns.PatternError:
        return False


def _refusal(db: Session, invitation: m.Invitation, code: str) -> str:
    """Why a matching invitation takes no sign-up now ("" when it does)."""
    if invitation.state != "Active":
        return "Invitation code suspended"
    if invitation.used_count >= invitation.quota:
        return "Invitation code exhausted"
    if invitation.is_regexp and db.exec(select(m.User.pk).where(
            m.User.owner == invitation.owner, m.User.invitation_code == code)).first() is not None:
        return "The invitation code has already been used"
    return ""


BOUND = {"username": "Please register using the username corresponding to the invitation code",
         "email": "Please register using the email corresponding to the invitation code",
         "phone": "Please register using the phone corresponding to the invitation code"}


def _not_bound_to(invitation: m.Invitation, who: dict[str, str]) -> str:
    """Why the account `who` describes (username, email, phone: the ones the application
    requires) may not spend the invitation: it names another ("" when it may)."""
    for key, message in BOUND.items():
        wanted = str(getattr(invitation, key) or "")
        if key in who and wanted and (wanted.lower() != who[key].lower() if key == "email" else wanted != who[key]):
            return message
    return ""


def find_by_code(db: Session, application: m.Application, code: str,
                 who: dict[str, str] | None = None) -> m.Invitation:
    """The invitation of the application's organization, for this application or All, that
    `code` opens and that takes a sign-up now (by the account `who` describes, when given:
    an invitation naming a username, email or phone takes that one only); else why not."""
    refusal = ""
    for invitation in db.exec(select(m.Invitation).where(m.Invitation.owner == application.organization)
                              .order_by(m.Invitation.created_time, m.Invitation.pk).limit(CHOICES_LIMIT)).all():
        if invitation.application not in ("", ALL_APPLICATIONS, application.name) or not _matches(invitation, code):
            continue
        why = _refusal(db, invitation, code) or (_not_bound_to(invitation, who) if who is not None else "")
        if not why:
            return invitation
        refusal = refusal or why
    raise ServiceError(refusal or "Invitation code is invalid")


def count_use(db: Session, invitation: m.Invitation) -> None:
    """One more sign-up through the invitation, in the sign-up's transaction; of two sign-ups
    racing for its last use, one gets it and the other is refused."""
    table = m.Invitation.__table__
    done = db.execute(sa.update(table).where(table.c.pk == invitation.pk, table.c.used_count < table.c.quota)
                      .values(used_count=table.c.used_count + 1))
    if done.rowcount != 1:
        raise ServiceError("Invitation code exhausted")


def info_by_code(db: Session, application_id: str, code: str, client_ip: str) -> dict[str, Any]:
    """get-invitation-info: the invitation of the application's organization that `code` opens,
    without its codes, quota or group (a sign-up page fills in its username, email or phone);
    anyone may ask, a limited number of times per client address."""
    name = application_id.split("/", 1)[1] if "/" in application_id else application_id
    application = lookup.application(db, name) if name else None
    if application is None:
        raise ServiceError("The application: %s does not exist", application_id[:200])
    if not code:
        raise ServiceError("Invitation code is invalid")
    throttle.hit(db, f"invitation-code:{client_ip}", *CODE_CHECKS, throttle.TOO_MANY_REQUESTS)
    return {**to_wire(find_by_code(db, application, code)), **HIDDEN}
