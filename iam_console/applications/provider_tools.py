"""The test tools of a provider's edit page: send a test email, test the SMTP connection, send a
test SMS or notification, preview a captcha. Each works on the provider as the page shows it (the
stored record with the page's unsaved edits, never saved), for those who may change it, and
connects through signin/delivery.py (core/outbound.py's guard and time limits): a service
out of reach is a clear error after the limit, never a hang."""

from __future__ import annotations

import re
from typing import Any

from sqlmodel import Session

from iam_console import models as m
from iam_console.applications.kinds.provider import TYPES
from iam_console.core import crud, policy, wire
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.signin import captcha, delivery, messages

TEST_CODE = "123456"  # the code a test message carries
TEST_NOTIFICATION = "This is a test notification."
PHONE = r"^\+?[0-9]{5,20}$"


def edited(db: Session, actor: Actor, owner: str, name: str, changes: dict[str, Any]) -> m.Provider:
    """The stored provider with `changes` (wire fields) applied to a copy that is never saved.
    Only those who may change the provider test it (a shared one: the global admin)."""
    kind = REGISTRY["provider"]
    row = crud.readable_row(db, actor, kind, owner, name)
    if row is None:
        raise ServiceError("The provider: %s is not found", f"{owner}/{name}"[:200])
    policy.check_write(actor, kind, row, row)
    copy = m.Provider(**row.model_dump(exclude={"pk"}))
    wire.apply(copy, {k: v for k, v in changes.items() if k not in ("owner", "name")})
    return copy


def valid_email(address: str) -> bool:
    return bool(wire.EMAIL.match(address.strip()))


def valid_phone(number: str) -> bool:
    return bool(re.match(PHONE, number.strip().replace(" ", "")))


def can_send_sms(provider_type: str, endpoint: str, phone: str) -> bool:
    """A valid phone, and for a Custom HTTP SMS an endpoint to send to."""
    return valid_phone(phone) and (provider_type != delivery.HTTP_SMS or bool(endpoint.strip()))


def send_test_email(db: Session, actor: Actor, provider: m.Provider, receiver: str) -> None:
    """The provider's title and content (with the test code) to `receiver`."""
    if not valid_email(receiver):
        raise ServiceError("Invalid Email receivers: %s", receiver[:200])
    messages.count(db, actor, 1)
    content = delivery.render(provider.content or "%s", TEST_CODE)
    delivery.send_email(provider, receiver.strip(), provider.title or "Test email", content,
                        provider.display_name or provider.name)


def test_smtp(db: Session, actor: Actor, provider: m.Provider) -> None:
    messages.count(db, actor, 1)
    delivery.test_smtp(provider)


def send_test_sms(db: Session, actor: Actor, provider: m.Provider, phone: str) -> None:
    if not can_send_sms(provider.type, provider.endpoint or provider.provider_url, phone):
        raise ServiceError("Invalid phone receivers: %s", phone[:100])
    messages.count(db, actor, 1)
    delivery.send_sms(provider, phone.strip().replace(" ", ""),
                      delivery.render(provider.template_code or provider.content or "%s", TEST_CODE), TEST_CODE)


def send_test_notification(db: Session, actor: Actor, provider: m.Provider, content: str) -> None:
    messages.count(db, actor, 1)
    delivery.send_notification(provider, content.strip() or TEST_NOTIFICATION, "")


def captcha_preview(db: Session, actor: Actor, provider: m.Provider, client_ip: str) -> dict[str, str]:
    """A Default captcha drawn by this server; the other types are services on the internet,
    whose widget this server cannot show: said plainly."""
    if provider.type != captcha.DEFAULT:
        if provider.type not in TYPES["Captcha"]:
            raise ServiceError("The captcha type %s is not supported here", provider.type[:100])
        if not provider.client_id or not provider.client_secret:
            raise ServiceError("The captcha preview needs the client ID and client secret")
        if provider.type == "Aliyun Captcha" and not (provider.sub_type and provider.client_id2
                                                      and provider.client_secret2):
            raise ServiceError("The captcha preview of Aliyun Captcha needs the sub type, the scene and the app key")
        raise ServiceError("The captcha type %s is a service on the internet: its preview is shown by its own "
                           "script, which this console does not load", provider.type)
    return captcha.picture(db, client_ip)
