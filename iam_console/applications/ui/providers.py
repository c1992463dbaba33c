"""Providers: list and edit. The edit page shows the fields of the provider's category and
type (Casdoor's layout), names the client fields as each type calls them, and carries the
test tools (applications/ui/providers_state.py)."""

from __future__ import annotations

from functools import reduce
from typing import Any

import reflex as rx

from iam_console.applications import provider_tools
from iam_console.applications.kinds import provider as kind
from iam_console.applications.ui.providers_state import ProviderTools
from iam_console.core import builtin as b
from iam_console.core.kinds import choices
from iam_console.settings import settings
from iam_console.ui.screens import Column, Field, Screen, ViewerValue, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t

SHARED = "admin (Shared)"


def _is(key: str, *values: str):
    """A condition of the edited values: the field `key` holds one of `values`."""
    return lambda v, f: reduce(lambda a, c: a | c, [v[key] == value for value in values])


def _cat(*categories: str):
    return _is("category", *categories)


def _both(first, second):
    return lambda v, f: first(v, f) & second(v, f)


def _not(condition):
    return lambda v, f: ~condition(v, f)


def _any(*conditions):
    return lambda v, f: reduce(lambda a, c: a | c, [c(v, f) for c in conditions])


def _type(*types: str):
    return _is("type", *types)


OAUTH, EMAIL, SMS, NOTIFICATION = _cat("OAuth"), _cat("Email"), _cat("SMS"), _cat("Notification")
STORAGE, SAML, PAYMENT, CAPTCHA = _cat("Storage"), _cat("SAML"), _cat("Payment"), _cat("Captcha")
CUSTOM_OAUTH = _both(OAUTH, _type(*kind.CUSTOM_OAUTH))
CHAT_TYPES = ("Line", "Telegram", "Bark", "Discord", "Slack", "Pushbullet", "Pushover", "Lark", "Microsoft Teams",
              "WeCom")
API_KEY_EMAIL = ("Azure ACS", "SendGrid", "Resend")
# types with neither client ID nor secret
NO_CLIENT = _any(_both(CAPTCHA, _type("Default")), _cat("Web3"), _both(STORAGE, _type("Local File System")),
                 _both(SMS, _type("Custom HTTP SMS")), _both(EMAIL, _type("Custom HTTP Email")),
                 _both(NOTIFICATION, _type("Google Chat", "Custom HTTP")))
# types with a secret but no client ID
NO_CLIENT_ID = _any(_both(STORAGE, _type("Google Cloud Storage")), _both(EMAIL, _type(*API_KEY_EMAIL)),
                    _both(NOTIFICATION, _type(*CHAT_TYPES)))
STRIPE = _both(PAYMENT, _type("Stripe"))
SECOND_CLIENT = _any(EMAIL, _type("WeChat", "Apple", "Aliyun Captcha", "WeChat Pay", "Twitter", "Reddit", "CUCloud"))
APP_ID_TYPES = {  # the types with an app ID, and what they call it
    "Agent ID": _any(_both(OAUTH, _both(_type("WeCom"), _is("subType", "Internal"))), _both(OAUTH, _type("Infoflow"))),
    "User flow": _both(OAUTH, _type("AzureADB2C")),
    "Sender number": _both(SMS, _type("Twilio SMS", "Azure ACS")),
    "App ID": _any(_both(SMS, _type("Tencent Cloud SMS")), _both(EMAIL, _type("SUBMAIL"))),
    "SMS account": _both(SMS, _type("Volc Engine SMS")),
    "Channel No.": _both(SMS, _type("Huawei Cloud SMS")),
    "Region": _both(SMS, _type("Amazon SNS")),
    "Endpoint": _both(SMS, _type("Baidu Cloud SMS")),
    "Base URL": _both(SMS, _type("Infobip SMS")),
    "Project Id": _both(SMS, _type("UCloud SMS")),
    "Domain": _both(NOTIFICATION, _type("Viber")),
    "App Key": _both(NOTIFICATION, _type("Line", "Matrix", "Rocket Chat")),
    "Topic name": _both(NOTIFICATION, _type("CUCloud")),
}
CHAT_ID_TYPES = ("Telegram", "Pushover", "Pushbullet", "Slack", "Discord", "Line", "Twitter", "Reddit", "Rocket Chat",
                 "Viber")
DOMAIN = _any(_both(STORAGE, _not(_type("Synology", "Casdoor"))),
              _both(OAUTH, _type("ADFS", "AzureAD", "AzureADB2C", "Casdoor", "Okta", "Nextcloud", "GitLab")))
ENDPOINT = _any(_both(STORAGE, _not(_type("Local File System"))), _both(SMS, _type("Custom HTTP SMS")),
                _both(EMAIL, _type("Custom HTTP Email", "SendGrid")), SAML)
HTTP_METHOD_TYPES = ("Custom HTTP SMS", "Custom HTTP Email", "Custom HTTP")


def _category_changed(category: str) -> dict:
    """A new category starts from its default type; Email also from a usable SMTP setup and a test
    message to the admin's own address."""
    values = {"type": kind.DEFAULT_TYPE.get(category, ""), "subType": ""}
    if category == "Email":
        values |= {"host": kind.EMAIL_HOST, "port": str(kind.EMAIL_PORT), "disableSsl": False,
                   "title": kind.EMAIL_TITLE, "content": kind.EMAIL_CONTENT, "receiver": ViewerValue("email")}
    return values


def _type_changed(chosen: str) -> dict:
    values = {"subType": kind.SUB_TYPES.get(chosen, ("",))[0]}
    if chosen in HTTP_METHOD_TYPES:
        values["method"] = "POST"
    elif chosen == "WeCom":
        values["method"] = "Normal"
    return values


def _tool(tool: str, label: str, disabled: Any = False) -> rx.Component:
    return rx.button(t(label), on_click=ProviderTools.run(tool), loading=ProviderTools.running == tool,
                     disabled=disabled | (ProviderTools.running != ""), variant="outline", id=f"provider-test-{tool}")


def _captcha_preview() -> rx.Component:
    """The Default captcha drawn by this server, with a try of its answer."""
    return rx.cond(ProviderTools.captcha_image != "", rx.hstack(
        rx.image(src=ProviderTools.captcha_image, alt=t("Captcha"), id="provider-captcha-image", height="60px"),
        rx.input(value=ProviderTools.captcha_answer, on_change=ProviderTools.set_captcha_answer, width="8em",
                 id="provider-captcha-answer", aria_label=t("Captcha answer")),
        rx.button(t("Verify"), on_click=ProviderTools.verify_captcha, id="provider-captcha-verify", variant="soft"),
        rx.button(t("Close"), on_click=ProviderTools.close_captcha, variant="soft", color_scheme="gray"),
        align="center", spacing="2",
    ))


def _tools() -> rx.Component:
    """The test buttons of the category (each on the provider as the form shows it)."""
    values = Editing.values
    category = rx.cond(values.contains("category"), values["category"], "")
    kind_ = rx.cond(values.contains("type"), values["type"], "")
    email = rx.hstack(
        rx.cond(rx.Var.create(list(API_KEY_EMAIL)).contains(kind_), rx.fragment(),
                _tool("smtp", "Test SMTP connection")),
        _tool("email", "Send testing email", ~Editing.checked["email"]), spacing="2")
    captcha_ready = (kind_ == "Default") | ((values["clientId"] != "") & (values["clientSecret"] != ""))
    return rx.match(
        category,
        ("Email", email),
        ("SMS", _tool("sms", "Send testing SMS", ~Editing.checked["sms"])),
        ("Notification", _tool("notification", "Send testing notification")),
        ("Captcha", rx.vstack(_tool("captcha", "Preview", ~captcha_ready), _captcha_preview(), spacing="2")),
        rx.fragment(),
    )


def _acs_url() -> rx.Component:
    """What a SAML identity provider posts its answer to: this server's ACS endpoint."""
    return rx.cond(Editing.values["category"] == "SAML", rx.text(
        t("SP ACS URL") + ": " + f"{settings.origin}/api/acs", size="2", id="provider-acs-url", padding_top="0.4em"))


PROVIDERS = screen(Screen(
    key="provider", title="Providers", list_route="/providers", edit_route="/providers/{owner}/{name}",
    edit_title="Provider", parts=lambda: (_tools(),), owner_picker=True,
    checks=(("email", lambda v, f: provider_tools.valid_email(v.get("receiver", ""))),
            ("sms", lambda v, f: provider_tools.can_send_sms(v.get("type", ""), v.get("endpoint", ""),
                                                             v.get("receiver", "")))),
    columns=(
        Column("name", "Name", link="/providers/{owner}/{name}"),
        Column("owner", "Organization", shown_as=((b.ADMIN_OWNER, SHARED),)),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("category", "Category", filters=choices("provider", "category")),
        Column("type", "Type", filters=choices("provider", "type"),
               filter_groups=tuple((category, types) for category, types in kind.TYPES.items())),
        Column("clientId", "Client ID"),
        Column("providerUrl", "Provider URL"),
    ),
    fields=(
        # the organization is the page's owner picker (the global admin's; 'admin (Shared)' shares the
        # provider); this field only says what a move also does: the cert is emptied, and its picker
        # then offers the new organization's certs
        Field("owner", "Organization", global_admin_only=True, then=lambda owner: {"cert": ""}),
        Field("displayName", "Display name"),
        Field("category", "Category", "select", options=choices("provider", "category"), then=_category_changed),
        Field("type", "Type", "select", options=choices("provider", "type"), options_by=("category", kind.TYPES),
              then=_type_changed),
        Field("subType", "Sub type", "select", options=choices("provider", "subType"),
              options_by=("type", kind.SUB_TYPES),
              shown_when=_type(*kind.SUB_TYPES)),
        Field("method", "Method", "select",
              options_by=("type", {"WeCom": kind.WECOM_METHODS, **{k: kind.HTTP_METHODS for k in HTTP_METHOD_TYPES}}),
              shown_when=_any(_both(OAUTH, _type("WeCom")), _type(*HTTP_METHOD_TYPES))),
        Field("clientId", "Client ID", shown_when=_both(_not(NO_CLIENT), _not(NO_CLIENT_ID)), relabel=(
            (_both(OAUTH, _type("Apple")), "Service ID identifier"),
            (EMAIL, "Username"),
            (_any(_both(SMS, _type("Volc Engine SMS", "Amazon SNS", "Baidu Cloud SMS")),
                  _both(CAPTCHA, _type("Aliyun Captcha")), _both(NOTIFICATION, _type("DingTalk"))), "Access key"),
            (_both(SMS, _type("Huawei Cloud SMS")), "App key"),
            (_both(SMS, _type("UCloud SMS")), "Public key"),
            (_both(SMS, _type("Msg91 SMS", "Infobip SMS", "OSON SMS")), "Sender Id"),
            (CAPTCHA, "Site key"),
        )),
        Field("clientSecret", "Client secret", "password", shown_when=_not(NO_CLIENT), relabel=(
            (_both(OAUTH, _type("Apple")), "Team ID"),
            (_both(STORAGE, _type("Google Cloud Storage")), "Service account JSON"),
            (_both(EMAIL, _type(*API_KEY_EMAIL)), "Secret key"),
            (EMAIL, "Password"),
            (_any(_both(SMS, _type("Volc Engine SMS", "Amazon SNS", "Baidu Cloud SMS", "OSON SMS")),
                  _both(CAPTCHA, _type("Aliyun Captcha"))), "Secret access key"),
            (_both(SMS, _type("Huawei Cloud SMS")), "App secret"),
            (_both(SMS, _type("UCloud SMS")), "Private Key"),
            (_both(SMS, _type("Msg91 SMS")), "Auth Key"),
            (_both(SMS, _type("Infobip SMS")), "Api Key"),
            (_any(CAPTCHA, _both(NOTIFICATION, _type("Line", "Telegram", "Bark", "DingTalk", "Discord", "Slack",
                                                     "Pushover", "Pushbullet"))), "Secret key"),
            (_both(NOTIFICATION, _type("Lark", "Microsoft Teams", "WeCom")), "Endpoint"),
        )),
        Field("clientId2", "Client ID 2", shown_when=SECOND_CLIENT, relabel=(
            (_both(OAUTH, _type("Apple")), "Key ID"),
            (EMAIL, "From address"),
            (_type("Aliyun Captcha"), "Scene"),
            (_type("WeChat Pay", "CUCloud"), "App ID"),
        )),
        # Stripe keeps its webhook signing secret here (commerce/payments/stripe_checkout.py)
        Field("clientSecret2", "Client secret 2", "password",
              shown_when=_any(_both(SECOND_CLIENT, _not(_any(_type("WeChat Pay", "CUCloud"),
                                                             _both(EMAIL, _type("Azure ACS"))))), STRIPE),
              relabel=((_both(OAUTH, _type("Apple")), "Key text"), (EMAIL, "From name"),
                       (_type("Aliyun Captcha"), "App key"), (STRIPE, "Webhook signing secret"))),
        Field("appId", "App ID", shown_when=_any(*APP_ID_TYPES.values()),
              relabel=tuple((condition, label) for label, condition in APP_ID_TYPES.items())),
        # OAuth
        Field("enableSignUp", "Enable sign up", "switch", shown_when=OAUTH),
        Field("emailRegex", "Email regex", shown_when=OAUTH),
        Field("customAuthUrl", "Auth URL", shown_when=CUSTOM_OAUTH),
        Field("customTokenUrl", "Token URL", shown_when=CUSTOM_OAUTH),
        Field("customUserInfoUrl", "UserInfo URL", shown_when=CUSTOM_OAUTH),
        Field("scopes", "Scope", shown_when=_any(CUSTOM_OAUTH, _both(OAUTH, _type("WeCom")))),
        Field("customLogo", "Favicon", shown_when=CUSTOM_OAUTH),
        # what the userinfo answer's keys are (id, username and displayName required)
        Field("userMapping.id", "User mapping: id", shown_when=CUSTOM_OAUTH),
        Field("userMapping.username", "User mapping: username", shown_when=CUSTOM_OAUTH),
        Field("userMapping.displayName", "User mapping: display name", shown_when=CUSTOM_OAUTH),
        Field("userMapping.email", "User mapping: email", shown_when=CUSTOM_OAUTH),
        Field("userMapping.avatarUrl", "User mapping: avatar URL", shown_when=CUSTOM_OAUTH),
        Field("domain", "Domain", shown_when=DOMAIN),
        Field("cert", "Cert", "pick", kind="cert", form="name",
              shown_when=_any(_both(OAUTH, _type("Alipay")), _both(PAYMENT, _type("Alipay", "WeChat Pay")))),
        # Email, Payment (GC, FastSpring)
        Field("host", "Host", shown_when=_any(_both(EMAIL, _not(_type("Resend"))),
                                              _both(PAYMENT, _type("GC", "FastSpring")))),
        Field("port", "Port", "number", minimum=0, maximum=65535,
              shown_when=_both(EMAIL, _not(_type(*API_KEY_EMAIL)))),
        # Email's SSL; WeChat, Google and Lark keep a switch of their own in it
        Field("disableSsl", "Disable SSL", "switch", shown_when=_any(
            _both(EMAIL, _not(_type(*API_KEY_EMAIL))), _both(OAUTH, _type("WeChat", "Google", "Lark"))), relabel=(
            (_both(OAUTH, _type("WeChat")), "Use WeChat Media Platform in PC"),
            (_both(OAUTH, _type("Google")), "Get phone number"),
            (_both(OAUTH, _type("Lark")), "Use global endpoint"))),
        # SMS
        Field("signName", "Sign name", shown_when=_both(SMS, _not(_type("Custom HTTP SMS")))),
        Field("templateCode", "Template code", shown_when=SMS),
        # Storage
        Field("intranetEndpoint", "Endpoint (Intranet)", shown_when=_both(STORAGE, _not(_type(
            "Local File System", "MinIO", "Tencent Cloud COS", "Google Cloud Storage", "Qiniu Cloud Kodo", "Synology",
            "Casdoor")))),
        Field("endpoint", "Endpoint", shown_when=ENDPOINT, relabel=((SAML, "SAML 2.0 endpoint"),)),
        Field("bucket", "Bucket", shown_when=_both(STORAGE, _not(_type("Local File System")))),
        Field("pathPrefix", "Path prefix", shown_when=STORAGE),
        Field("regionId", "Region ID", shown_when=_any(STORAGE, _both(NOTIFICATION, _type("CUCloud")))),
        # SAML
        Field("enableSignAuthnRequest", "Sign request", "switch", shown_when=SAML),
        Field("idP", "IdP", "textarea", shown_when=SAML),
        # SAML; Custom OAuth: OpenID Connect discovery of the endpoints (federation/upstream.py)
        Field("issuerUrl", "Issuer URL", shown_when=_any(SAML, CUSTOM_OAUTH), addon=_acs_url),
        Field("metadata", "Metadata", "textarea", shown_when=_any(SAML, EMAIL, _both(NOTIFICATION, _type(
            "Google Chat", "CUCloud"))), relabel=((EMAIL, "Invitation email content"),)),
        # Email and notifications: the message; SMS and notifications: its parameter name
        Field("title", "Title", shown_when=_any(EMAIL, _both(NOTIFICATION, _type("Custom HTTP", "CUCloud")),
                                                _both(SMS, _type("Custom HTTP SMS"))),
              relabel=((EMAIL, "Email title"), (_any(NOTIFICATION, SMS), "Parameter"))),
        Field("content", "Content", "textarea",
              shown_when=_any(EMAIL, NOTIFICATION, SMS, _both(OAUTH, _type("WeChat"))),
              relabel=((EMAIL, "Email content"), (OAUTH, "Access token"))),
        Field("receiver", "Receiver", shown_when=_any(EMAIL, SMS, NOTIFICATION), relabel=(
            (EMAIL, "Test email address"), (SMS, "Test phone number"),
            (_type(*CHAT_ID_TYPES), "Chat ID"), (_type("Custom HTTP", "Webpush", "Matrix"), "Endpoint"))),
        Field("providerUrl", "Provider URL"),
    ),
))
