"""Providers: the third-party services (OAuth, email, SMS, payment...) an organization uses.

The categories and the types each offers are Casdoor's (its provider edit page's lists); a
provider's type must be one its category accepts: the offered ones, and the few more Casdoor
itself stores and serves (`ALSO_ACCEPTED`; Casdoor's own categories this server keeps but does
not use, `KEPT_ONLY`: docs/api.md "Deliberate differences"). A category's default type is what
choosing the category in the console sets. Custom OAuth providers map the user's fields from the userinfo
answer: their mapping's id, username and displayName cannot be empty. A SAML provider's metadata,
when given, is read on save (saml/saml_sp.py) and fills its issuer URL, single sign-on
endpoint and IdP certificate; metadata that cannot be read, or an IdP certificate that is not
one, is refused."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core import outbound
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, check_destinations, check_port, fixed
from iam_console.files import object_storage
from iam_console.signin import delivery

CUSTOM_OAUTH = ("Custom", *(f"Custom{n}" for n in range(2, 11)), "Custom Flexible")
TYPES: dict[str, tuple[str, ...]] = {
    "Captcha": ("Default", "reCAPTCHA v2", "reCAPTCHA v3", "hCaptcha", "Aliyun Captcha", "GEETEST",
                "Cloudflare Turnstile"),
    "Email": ("Default", "SUBMAIL", "Mailtrap", "Azure ACS", "SendGrid", "Custom HTTP Email", "Resend"),
    "Notification": ("Telegram", "Custom HTTP", "DingTalk", "Lark", "Microsoft Teams", "Bark", "Pushover",
                     "Pushbullet", "Slack", "Webpush", "Discord", "Google Chat", "Line", "Matrix", "Twitter",
                     "Reddit", "Rocket Chat", "Viber", "CUCloud", "WeCom"),
    "OAuth": ("Google", "GitHub", "QQ", "WeChat", "WeChatMiniProgram", "Facebook", "DingTalk", "Weibo", "Gitee",
              "LinkedIn", "WeCom", "Lark", "GitLab", "ADFS", "Baidu", "Alipay", "Casdoor", "Infoflow", "Apple",
              "AzureAD", "AzureADB2C", "Slack", "Steam", "Bilibili", "Okta", "Douyin", "Kwai", "Line", "Amazon",
              "Auth0", "BattleNet", "Bitbucket", "Box", "CloudFoundry", "Dailymotion", "Deezer", "DigitalOcean",
              "Discord", "Dropbox", "EveOnline", "Fitbit", "Gitea", "Heroku", "InfluxCloud", "Instagram",
              "Intercom", "Kakao", "Lastfm", "Mailru", "Meetup", "MicrosoftOnline", "Naver", "Nextcloud",
              "OneDrive", "Oura", "Patreon", "PayPal", "SalesForce", "Shopify", "Soundcloud", "Spotify", "Strava",
              "Stripe", "Telegram", "TikTok", "Tumblr", "Twitch", "Twitter", "Typetalk", "Uber", "VK", "Wepay",
              "Xero", "Yahoo", "Yammer", "Yandex", "Zoom", *CUSTOM_OAUTH),
    "Payment": ("Dummy", "Balance", "Alipay", "WeChat Pay", "PayPal", "Stripe", "AirWallex", "GC", "Polar",
                "Paddle", "FastSpring", "Lemon Squeezy", "Adyen"),
    "SAML": ("Aliyun IDaaS", "Keycloak", "Custom", "Custom Flexible"),
    "SMS": ("Aliyun SMS", "Alibaba Cloud PNVS SMS", "Amazon SNS", "Azure ACS", "Custom HTTP SMS", "Mock SMS",
            "OSON SMS", "Infobip SMS", "Tencent Cloud SMS", "Baidu Cloud SMS", "Volc Engine SMS",
            "Huawei Cloud SMS", "UCloud SMS", "Twilio SMS", "SmsBao SMS", "SUBMAIL SMS", "Msg91 SMS"),
    "Storage": ("Local File System", "AWS S3", "MinIO", "Aliyun OSS", "Tencent Cloud COS", "Azure Blob",
                "Qiniu Cloud Kodo", "Google Cloud Storage", "Synology", "Casdoor", "CUCloud OSS"),
    "Web3": ("MetaMask", "Web3Onboard"),
}
CATEGORIES = tuple(TYPES)  # alphabetical, as the console lists them
# types Casdoor stores and serves beyond what its page offers: its Email sender is SMTP for any type
# it has no other sender for ("SMTP" in the Casdoor SDKs' own data; delivery.SMTP_TYPES sends it as
# Default), and "reCAPTCHA" is its first name of reCAPTCHA v2
ALSO_ACCEPTED = {"Email": ("SMTP",), "Captcha": ("reCAPTCHA",)}
# Casdoor's categories a provider of which is stored as given and used by nothing here
KEPT_ONLY: dict[str, tuple[str, ...]] = {
    "Face ID": ("Alibaba Cloud Facebody", "Local UniFace"),
    "ID Verification": ("Jumio", "Alibaba Cloud"),
    "Log": ("Casdoor Permission Log", "System Log", "Agent", "SELinux Log"),
    "MFA": ("RADIUS",),
    "Scan": ("Security Scan", "MCP Scan"),
}
ACCEPTED: dict[str, tuple[str, ...]] = {
    category: (*TYPES.get(category, ()), *ALSO_ACCEPTED.get(category, ()), *KEPT_ONLY.get(category, ()))
    for category in sorted({*TYPES, *KEPT_ONLY})}
ALL_TYPES = tuple(dict.fromkeys(t for types in TYPES.values() for t in types))  # offered
NOT_OFFERED_TYPES = tuple(dict.fromkeys(t for types in ACCEPTED.values() for t in types if t not in ALL_TYPES))
# what choosing a category sets the type to
DEFAULT_TYPE = {"OAuth": "Google", "Email": "Default", "SMS": "Twilio SMS", "Storage": "AWS S3", "SAML": "Keycloak",
                "Payment": "PayPal", "Captcha": "Default", "Web3": "MetaMask", "Notification": "Telegram"}
# sub types: WeCom and Infoflow sign in as an internal or a third-party application; WeChat from the
# web or a mobile app; Aliyun Captcha slides (nc) or judges (ic)
SUB_TYPES = {"WeCom": ("Internal", "Third-party"), "Infoflow": ("Internal", "Third-party"),
             "WeChat": ("Web", "Mobile"), "Aliyun Captcha": ("nc", "ic")}
ALL_SUB_TYPES = tuple(dict.fromkeys(s for subs in SUB_TYPES.values() for s in subs))
WECOM_METHODS = ("Normal", "Silent")  # WeCom's sign-in: with the user's consent, or silently
HTTP_METHODS = ("GET", "POST")  # the custom HTTP types' request method
SSL_MODES = ("Auto", "Enable", "Disable")  # an Email provider's encryption (signin/delivery.py)
OAUTH_DOMAINS = ("GitLab", "Okta", "AzureAD")  # the OAuth types whose Domain may be their server's URL
REQUIRED_MAPPING = ("id", "username", "displayName")  # a custom OAuth provider's user mapping
MAPPING_KEYS = (*REQUIRED_MAPPING, "email", "avatarUrl")


def needs_mapping(category: str, kind: str) -> bool:
    """Custom OAuth providers read the user from their userinfo answer through the mapping."""
    return category == "OAuth" and kind in CUSTOM_OAUTH


def called_destinations(row: m.Provider) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(URL fields, host fields) of the provider that the server itself connects to, by category
    and type (signin/delivery.py, federation/upstream.py, files/object_storage.py); the same
    fields of other types hold other things (a chat ID in a Telegram provider's receiver, a
    content type in an SMS provider's issuer URL) or links only a browser follows."""
    category, kind = row.category, row.type
    if category == "SMS" and kind == delivery.HTTP_SMS:
        return ("endpoint",) if row.endpoint.strip() else ("provider_url",), ()
    if category == "Notification" and kind == delivery.HTTP_NOTIFICATION:
        return ("receiver",), ()
    if category == "Email" and kind in delivery.SMTP_TYPES:
        return (), ("host",)
    if category == "Storage" and kind in object_storage.S3_TYPES:
        return ("endpoint",), ()
    if category == "OAuth":
        # the token and user info URLs are the server's to call (the auth URL is the browser's),
        # as are a custom provider's discovery at its issuer URL and a GitLab, Okta or Azure AD
        # provider's Domain when it is a URL
        urls = ("custom_token_url", "custom_user_info_url", *(("issuer_url",) if kind in CUSTOM_OAUTH else ()))
        return (*urls, *(("domain",) if kind in OAUTH_DOMAINS and "://" in row.domain else ())), ()
    return (), ()


def validate(db: Session, actor: Actor, row: m.Provider) -> None:
    check_port(db, actor, row)
    urls, hosts = called_destinations(row)
    check_destinations(row, urls, hosts)
    domain = row.domain.strip()
    if row.category == "OAuth" and row.type in ("GitLab", "Okta") and domain and "://" not in domain:
        outbound.check_url(f"https://{domain}", "domain")  # its server, named without the scheme
    if row.category in ACCEPTED and row.type and row.type not in ACCEPTED[row.category]:
        raise ServiceError("The type %s is not a type of the category %s", row.type[:100], row.category)
    allowed = SUB_TYPES.get(row.type, ())
    if row.sub_type and row.sub_type not in allowed:
        raise ServiceError("The sub type %s is not a sub type of %s", row.sub_type[:100], row.type[:100])
    if row.category == "SAML":
        _saml(row)
    if needs_mapping(row.category, row.type):
        mapping = row.user_mapping or {}
        missing = [key for key in REQUIRED_MAPPING if not str(mapping.get(key) or "").strip()]
        if missing:
            raise ServiceError("The user mapping's %s: This field is required", ", ".join(missing))


def _saml(row: m.Provider) -> None:
    from iam_console.saml import saml_sp, saml_xml

    if (row.metadata_ or "").strip():
        read = saml_sp.metadata_fields(row.metadata_)
        row.issuer_url, row.endpoint, row.id_p = read["issuerUrl"][:255], read["endpoint"][:1000], read["idP"]
    elif (row.id_p or "").strip():
        saml_xml.certificate(row.id_p)


RULES = KindRules(
    choices=(Choice("category", CATEGORIES, also=tuple(KEPT_ONLY)), Choice("type", ALL_TYPES, also=NOT_OFFERED_TYPES),
             Choice("sub_type", ALL_SUB_TYPES, label="sub type"), Choice("ssl_mode", SSL_MODES, label="SSL mode")),
    validate=validate,
    new=fixed(displayName="New Provider - {suffix}", category="OAuth", type="GitHub", method="Normal",
              enableSignUp=True, port=0))

# what choosing the Email category also sets (the receiver of the test email is the admin's own address)
EMAIL_HOST, EMAIL_PORT = "smtp.example.com", 465
EMAIL_TITLE = "Verification code"
EMAIL_CONTENT = """<!DOCTYPE html>
<html>
<body style="font-family: Arial, sans-serif; color: #222;">
  <h2>Your verification code</h2>
  <p>Here is your code: <strong style="font-size: 1.4em;">%s</strong></p>
  <p>Please enter it within 5 minutes. If you did not ask for it, ignore this email.</p>
</body>
</html>"""
