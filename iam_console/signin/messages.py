"""Messages an organization sends through its providers on a caller's request (Casdoor's
send-email, send-sms and send-notification): only an admin or an application's client
sends in an organization's name, to at most MAX_RECEIVERS receivers a call and SENDS
calls a caller per window, through the organization's own or the shared providers."""

from __future__ import annotations

from urllib.parse import quote

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, policy, throttle, wire
from iam_console.core.access import Actor
from iam_console.core.crud import Request
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.settings import settings
from iam_console.signin import delivery, verifications

MAX_RECEIVERS = 50
SENDS, WINDOW_SECONDS = 30, 600  # calls per caller (every receiver counts one)
TEST_SMTP = "TestSmtpServer"  # send-email's receiver that only tests the SMTP server (Casdoor's keyword)
# an invitation mail when the provider's metadata gives no text of its own
DEFAULT_INVITATION = '<p>You are invited. Your invitation code is %code.</p><p><a href="%link">Sign up</a></p>'


def _text(value: object, field: str, limit: int = 100_000) -> str:
    if not isinstance(value, str):
        raise ServiceError("The field %s must be a string", field)
    if "\x00" in value or len(value) > limit:
        raise ServiceError("The field %s is too long or holds a NUL character", field)
    return value


def _receivers(data: dict, field: str = "receivers") -> list[str]:
    value = data.get(field) or []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ServiceError("The field %s must be a list of strings", field)
    if not value:
        raise ServiceError("The field %s cannot be empty", field)
    if len(value) > MAX_RECEIVERS:
        raise ServiceError("At most %d receivers a call", MAX_RECEIVERS)
    return value


def provider(db: Session, actor: Actor, category: str, name: str = "") -> m.Provider:
    """The named provider of the caller's organization (or a shared one); without a name the
    first of the category in the caller's application's (else the organization's default
    application's) Providers list, else the organization's own, else a shared one."""
    policy.require_admin(actor)
    organization = actor.organization
    usable = select(m.Provider).where(m.Provider.category == category,
                                      m.Provider.owner.in_((organization, b.ADMIN_OWNER)))
    own_first = sa.case((m.Provider.owner == organization, 0), else_=1)
    if name:
        found = db.exec(usable.where(m.Provider.name == name).order_by(own_first).limit(1)).first()
        if found is None:
            raise ServiceError("The provider: %s is not found", name[:100])
        return found
    application = actor.application or verifications.default_application(db, lookup.organization(db, organization))
    found = verifications.first_provider(db, organization, application, category)
    if found is None:
        raise ServiceError("please set a %s provider first", category)
    return found


def count(db: Session, actor: Actor, calls: int) -> None:
    for _ in range(calls):
        throttle.hit(db, f"send:{actor.id}", SENDS, WINDOW_SECONDS, throttle.TOO_MANY_SENT)


def send_email(db: Session, actor: Actor, data: dict, request: Request) -> None:
    policy.require_admin(actor)
    receivers = _receivers(data)
    chosen = provider(db, actor, "Email", _text(data.get("provider", ""), "provider", 100))
    if receivers == [TEST_SMTP]:
        delivery.test_smtp(chosen)
        return
    title, content = _text(data.get("title", ""), "title", 1000), _text(data.get("content", ""), "content")
    sender = _text(data.get("sender", ""), "sender", 200)
    if not title or not content or not sender:
        raise ServiceError("The title, content and sender cannot be empty")
    invalid = [r for r in receivers if not wire.EMAIL.match(r)]
    if invalid:
        raise ServiceError("Invalid Email receivers: %s", ", ".join(invalid)[:300])
    count(db, actor, len(receivers))
    for receiver in receivers:
        delivery.send_email(chosen, receiver, title, content, sender)
    _record(db, actor, "send-email", chosen, receivers, request)


def send_sms(db: Session, actor: Actor, data: dict, request: Request) -> None:
    policy.require_admin(actor)
    receivers = _receivers(data)
    content = _text(data.get("content", ""), "content", 2000)
    if not content:
        raise ServiceError("The content cannot be empty")
    chosen = provider(db, actor, "SMS")
    invalid = [r for r in receivers if not r.lstrip("+").isdigit()]
    if invalid:
        raise ServiceError("Invalid phone receivers: %s", ", ".join(invalid)[:300])
    count(db, actor, len(receivers))
    for receiver in receivers:
        delivery.send_sms(chosen, receiver, content)
    _record(db, actor, "send-sms", chosen, receivers, request)


def send_notification(db: Session, actor: Actor, data: dict, request: Request) -> None:
    policy.require_admin(actor)
    content = _text(data.get("content", ""), "content", 10_000)
    recipient = _text(data.get("recipient", ""), "recipient", 200)
    if not content:
        raise ServiceError("The content cannot be empty")
    chosen = provider(db, actor, "Notification")
    count(db, actor, 1)
    delivery.send_notification(chosen, content, recipient)
    _record(db, actor, "send-notification", chosen, [recipient] if recipient else [], request)


def _record(db: Session, actor: Actor, action: str, chosen: m.Provider, receivers: list[str],
            request: Request) -> None:
    audit(db, organization=actor.organization, user=actor.id, action=action, request_uri=request.uri,
          client_ip=request.client_ip, language=request.language,
          obj={"provider": f"{chosen.owner}/{chosen.name}", "receivers": receivers})


def send_invitation(db: Session, actor: Actor, owner: str, name: str, destinations: object,
                    request: Request) -> None:
    """send-invitation: the invitation's code and sign-up link, by email, through the first Email
    provider of its application (else the organization's default application) whose rule allows
    invitations. The text is the provider's metadata with %code and %link replaced."""
    policy.require_admin(actor)
    invitation = crud.readable_row(db, actor, REGISTRY["invitation"], owner, name)
    if invitation is None:
        raise ServiceError("Invitation %s does not exist", f"{owner}/{name}"[:200])
    if invitation.state != "Active" or invitation.used_count >= invitation.quota:
        raise ServiceError("The invitation %s is suspended or used up", invitation.name)
    receivers = _receivers({"receivers": destinations})
    invalid = [r for r in receivers if not wire.EMAIL.match(r)]
    if invalid:
        raise ServiceError("Invalid Email receivers: %s", ", ".join(invalid)[:300])
    organization = lookup.organization(db, invitation.owner)
    named = invitation.application if invitation.application not in ("", "All") else ""
    application = lookup.application(db, named) if named else verifications.default_application(db, organization)
    if application is None:
        raise ServiceError("The organization: %s should have one application at least", invitation.owner)
    chosen = verifications.find_provider(db, organization, application,
                                         verifications.Receiver(verifications.EMAIL_KIND, receivers[0], receivers[0]),
                                         purpose="invitation")
    link = f"{settings.origin}/signup/{quote(application.name, safe='')}?invitationCode={quote(invitation.code)}"
    content = (chosen.metadata_ or DEFAULT_INVITATION).replace("%code", invitation.code).replace("%link", link)
    count(db, actor, len(receivers))
    for receiver in receivers:
        delivery.send_email(chosen, receiver, chosen.title or "Invitation", content,
                            organization.display_name or organization.name)
    _record(db, actor, "send-invitation", chosen, receivers, request)
