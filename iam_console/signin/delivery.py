"""Sending a message through an organization's Email or SMS provider.

- Email: providers of type SMTP (and Casdoor's "Default", which is SMTP) through smtplib,
  with the provider's host and port, clientId/clientSecret as the SMTP user and password
  (signed in when both are set and the server offers AUTH), clientId2 as the From address
  (else clientId) and clientSecret2 as the From name (else the organization's display name).
  Encryption: sslMode Enable is TLS from the first byte (SMTPS), Disable a plain connection
  (upgraded with STARTTLS when the server offers it); Auto or empty follows disableSsl: disabled
  is plain, enabled is SMTPS on port 465 and a required STARTTLS on any other port, so that
  "SSL on" never sends the password in clear.
- SMS: Casdoor's "Custom HTTP SMS": a request (method: the provider's method, POST by default;
  GET puts the fields in the query) to the provider's endpoint (else its providerUrl) with the
  fields phoneNumber (E.164), the message (field name: the provider's title, else "content";
  text: its templateCode with %s for the code, else the code alone) and code; userMapping renames
  them (keys phoneNumber, content, code), httpHeaders are sent as headers, and the body is JSON
  when a Content-Type header (or issuerUrl, where Casdoor keeps it) says application/json, a form
  otherwise. Any 2xx answer is success; redirects are followed (at most 5, each hop checked).
- Notification: Casdoor's "Custom HTTP": the content and recipient to the provider's receiver URL;
  Telegram, Slack and Discord: the content to the chat named by the provider's receiver (its Chat
  ID) through the service's bot API, the provider's clientSecret being the bot's token. The APIs'
  base URLs are settings (IAM_TELEGRAM_API, IAM_SLACK_API, IAM_DISCORD_API), so that a local
  stand-in can receive them.
- All connect through core/outbound.py: an internal address is refused unless
  IAM_OUTBOUND_ALLOW lists it, the whole exchange has a time limit, and it counts against the
  provider's organization's outbound calls in progress (outbound.on_behalf_of).
- Every other type needs a third-party service on the internet and is refused with a clear
  message rather than pretending to send.
"""

from __future__ import annotations

import contextlib
import smtplib
import ssl
from collections.abc import Iterator
from email.message import EmailMessage
from email.utils import formataddr
from urllib.parse import quote

import httpx

from iam_console.core import outbound
from iam_console.core.errors import ServiceError
from iam_console.models import Provider
from iam_console.settings import settings

TIMEOUT_SECONDS = 10
SMTP_TYPES = frozenset({"SMTP", "Default"})
HTTP_SMS = "Custom HTTP SMS"
HTTP_NOTIFICATION = "Custom HTTP"
SMTPS_PORT = 465


def render(template: str, code: str) -> str:
    """A provider's text with the code in place of %{code} or %s (appended when it has neither)."""
    if "%{code}" not in template and "%s" not in template:
        return f"{template} {code}".strip()
    return template.replace("%{code}", code).replace("%s", code)


def _smtp_security(provider: Provider) -> str:
    """'smtps' (TLS from the start), 'starttls' (required) or 'plain' (STARTTLS when offered)."""
    mode = (provider.ssl_mode or "").strip().lower()
    if mode in ("enable", "enabled"):
        return "smtps"
    if mode in ("disable", "disabled") or provider.disable_ssl:
        return "plain"
    return "smtps" if (provider.port or SMTPS_PORT) == SMTPS_PORT else "starttls"


def _smtp_host(provider: Provider) -> str:
    if provider.type not in SMTP_TYPES:
        raise ServiceError("The Email provider type %s is not supported here", provider.type)
    host = provider.host.strip()
    if not host:
        raise ServiceError("The Email provider %s has no host", provider.name)
    return host


@contextlib.contextmanager
def _smtp(provider: Provider) -> Iterator[smtplib.SMTP]:
    """A signed-in SMTP session with the provider's server (encrypted as `_smtp_security` says)."""
    host = _smtp_host(provider)
    security = _smtp_security(provider)
    port = provider.port or (SMTPS_PORT if security == "smtps" else 25)
    context = ssl.create_default_context()
    try:
        with outbound.on_behalf_of(provider.owner), outbound.smtp(
                host, port, implicit_tls=security == "smtps", context=context, timeout=TIMEOUT_SECONDS) as client:
            client.ehlo()
            if security != "smtps":
                if client.has_extn("starttls"):
                    client.starttls(context=context)
                    client.ehlo()
                elif security == "starttls":
                    raise ServiceError("The SMTP server %s:%d offers no STARTTLS: disable SSL on the provider "
                                       "to send without encryption", host, port)
            if provider.client_id and provider.client_secret and client.has_extn("auth"):
                client.login(provider.client_id, provider.client_secret)
            yield client
    except (smtplib.SMTPException, OSError, outbound.OutboundError) as exc:  # ssl.SSLError is an OSError
        raise ServiceError("Failed to send the email: %s", str(exc)[:300]) from None


def test_smtp(provider: Provider) -> None:
    """Connect and sign in to the provider's SMTP server, sending nothing."""
    with _smtp(provider):
        pass


def send_email(provider: Provider, to: str, subject: str, html: str, from_name: str) -> None:
    _smtp_host(provider)
    from_address = provider.client_id2 or provider.client_id
    if not from_address:
        raise ServiceError("The Email provider %s has no sender address", provider.name)
    message = EmailMessage()
    message["From"] = formataddr((provider.client_secret2 or from_name, from_address))
    message["To"] = to
    message["Subject"] = subject
    message.set_content(html, subtype="html")
    with _smtp(provider) as client:
        client.send_message(message, from_addr=from_address, to_addrs=[to])


def send_sms(provider: Provider, phone: str, text: str, code: str = "") -> None:
    """The text (a verification's carries its code, also sent as the field code) to a phone."""
    if provider.type != HTTP_SMS:
        raise ServiceError("The SMS provider type %s is not supported here", provider.type)
    endpoint = (provider.endpoint or provider.provider_url).strip()
    if not endpoint.lower().startswith(("http://", "https://")):
        raise ServiceError("The SMS provider %s needs an http(s) endpoint", provider.name)
    method = (provider.method or "POST").upper()
    if method not in ("GET", "POST", "PUT", "DELETE"):
        raise ServiceError("The SMS provider %s has an unsupported method: %s", provider.name, method)
    mapping = {k: v for k, v in (provider.user_mapping or {}).items() if isinstance(v, str) and v}
    fields = {
        mapping.get("phoneNumber", "phoneNumber"): phone,
        mapping.get("content", provider.title or "content"): text,
        **({mapping.get("code", "code"): code} if code else {}),
    }
    headers = {str(k): str(v) for k, v in (provider.http_headers or {}).items()}
    content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), provider.issuer_url)
    as_json = content_type.strip().lower().startswith("application/json")
    if method == "GET":
        request = {"params": fields}
    elif as_json:
        request = {"json": fields}
    else:
        request = {"data": fields}
    try:
        with outbound.on_behalf_of(provider.owner), outbound.http_client(timeout=TIMEOUT_SECONDS) as client:
            answer = client.request(method, endpoint, headers=headers, **request)
    except (httpx.HTTPError, outbound.OutboundError) as exc:
        raise ServiceError("Failed to send the SMS: %s", str(exc)[:300]) from None
    if not answer.is_success:
        raise ServiceError("Failed to send the SMS: the gateway answered %d", answer.status_code)


CHATS = ("Telegram", "Slack", "Discord")


def _chat_request(provider: Provider, content: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """(URL, headers, JSON body) of a chat service's "post a message" call."""
    token, chat = provider.client_secret.strip(), provider.receiver.strip()
    if not token or not chat:
        raise ServiceError("The %s provider %s needs its secret key (the bot token) and its Chat ID",
                           provider.type, provider.name)
    if provider.type == "Telegram":
        return f"{settings.telegram_api}/bot{quote(token, safe=':')}/sendMessage", {}, {"chat_id": chat,
                                                                                      "text": content}
    if provider.type == "Slack":
        return f"{settings.slack_api}/chat.postMessage", {"Authorization": f"Bearer {token}"}, {
            "channel": chat, "text": content}
    return (f"{settings.discord_api}/channels/{quote(chat, safe='')}/messages", {"Authorization": f"Bot {token}"},
            {"content": content})


def _send_chat(provider: Provider, content: str) -> None:
    """A message through a chat service's bot API; its refusal (an error status, or Slack's
    `"ok": false` on a 200) is the error."""
    url, headers, body = _chat_request(provider, content)
    try:
        with outbound.on_behalf_of(provider.owner), outbound.http_client(timeout=TIMEOUT_SECONDS) as client:
            answer = client.post(url, headers=headers, json=body)
    except (httpx.HTTPError, outbound.OutboundError) as exc:
        raise ServiceError("Failed to send the notification: %s", str(exc)[:300]) from None
    try:
        data = answer.json()
    except ValueError:
        data = {}
    refused = isinstance(data, dict) and data.get("ok") is False
    if not answer.is_success or refused:
        detail = data.get("description") or data.get("error") or data.get("message") if isinstance(data, dict) \
            else ""
        raise ServiceError("Failed to send the notification: the %s API answered %s", provider.type,
                           str(detail or answer.status_code)[:200])


def send_notification(provider: Provider, content: str, recipient: str) -> None:
    """Casdoor's "Custom HTTP" notification: the content (field: the provider's title, else
    "content") and the recipient to the provider's receiver URL, as a form (POST) or in the
    query (GET); any 2xx answer is success."""
    if provider.type in CHATS:
        _send_chat(provider, content)
        return
    if provider.type != HTTP_NOTIFICATION:
        raise ServiceError("The Notification provider type %s is not supported here", provider.type)
    endpoint = provider.receiver.strip()
    if not endpoint.lower().startswith(("http://", "https://")):
        raise ServiceError("The Notification provider %s needs an http(s) receiver URL", provider.name)
    method = (provider.method or "POST").upper()
    if method not in ("GET", "POST"):
        raise ServiceError("The Notification provider %s has an unsupported method: %s", provider.name, method)
    fields = {provider.title or "content": content, **({"recipient": recipient} if recipient else {})}
    try:
        with outbound.on_behalf_of(provider.owner), outbound.http_client(timeout=TIMEOUT_SECONDS) as client:
            answer = client.request(method, endpoint, **({"params": fields} if method == "GET" else {"data": fields}))
    except (httpx.HTTPError, outbound.OutboundError) as exc:
        raise ServiceError("Failed to send the notification: %s", str(exc)[:300]) from None
    if not answer.is_success:
        raise ServiceError("Failed to send the notification: the receiver answered %d", answer.status_code)
