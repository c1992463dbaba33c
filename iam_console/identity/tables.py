"""Organizations, users, and the group membership kept by triggers on "user"."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import ClassVar

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlmodel import Field, SQLModel

from iam_console.models.base import Named, json_dict, json_list, long_text, moment, money, named_keys, text

# Casdoor sends one flat key per third-party identity provider on the user
# object. Kept in a single JSON column: ~100 VARCHAR columns would exceed
# MySQL's row size, and nothing filters on them.
THIRD_PARTY_KEYS: tuple[str, ...] = (
    "github", "google", "qq", "wechat", "facebook", "dingtalk", "weibo", "gitee", "linkedin", "wecom", "lark",
    "gitlab", "adfs", "baidu", "alipay", "casdoor", "infoflow", "apple", "azuread", "azureadb2c", "slack",
    "steam", "bilibili", "okta", "douyin", "kwai", "line", "amazon", "auth0", "battlenet", "bitbucket", "box",
    "cloudfoundry", "dailymotion", "deezer", "digitalocean", "discord", "dropbox", "eveonline", "fitbit",
    "gitea", "heroku", "influxcloud", "instagram", "intercom", "kakao", "lastfm", "mailru", "meetup",
    "microsoftonline", "naver", "nextcloud", "onedrive", "oura", "patreon", "paypal", "salesforce", "shopify",
    "soundcloud", "spotify", "strava", "stripe", "telegram", "tiktok", "tumblr", "twitch", "twitter",
    "typetalk", "uber", "vk", "wepay", "xero", "yahoo", "yammer", "yandex", "zoom", "metamask", "web3onboard",
    "custom", "custom2", "custom3", "custom4", "custom5", "custom6", "custom7", "custom8", "custom9",
    "custom10",
)


class Organization(Named, table=True):
    __tablename__ = "organization"
    __table_args__ = named_keys("organization")
    json_secrets: ClassVar[frozenset[str]] = frozenset({"master_password", "default_password"})

    display_name: str = text(100)
    website_url: str = text(255)
    logo: str = text(500)
    logo_dark: str = text(500)
    enable_dark_logo: bool = False
    favicon: str = text(500)
    has_privilege_consent: bool = False
    password_type: str = text(100)
    password_salt: str = text(100)
    password_options: list = json_list()
    password_obfuscator_type: str = text(100)
    password_obfuscator_key: str = text(100)
    password_expire_days: int = 0
    token_retention_days: int = 0
    record_retention_days: int = 0
    country_codes: list = json_list()
    default_avatar: str = text(500)
    use_permanent_avatar: bool = False
    default_application: str = text(100)
    default_token_format: str = text(100)
    user_types: list = json_list()
    tags: list = json_list()
    languages: list = json_list()
    theme_data: dict = json_dict()
    master_password: str = text(200)
    default_password: str = text(200)
    master_verification_code: str = text(100)
    ip_whitelist: str = text(500)
    init_score: int = 0
    enable_soft_deletion: bool = False
    is_profile_public: bool = False
    use_email_as_username: bool = False
    enable_tour: bool = False
    disable_signin: bool = False
    ip_restriction: str = text(500)
    nav_items: list = json_list()
    user_nav_items: list = json_list()
    widget_items: list = json_list()
    mfa_items: list = json_list()
    mfa_remember_in_hours: int = 0
    account_menu: str = text(100)
    account_items: list = json_list()
    dcr_policy: str = text(100)  # dynamic client registration: disabled, initial access token or open
    # the resource URIs (RFC 8707) the organization declares: their tokens' audiences, and the
    # documents /.well-known/oauth-protected-resource serves (RFC 9728, oauth/resources.py)
    protected_resources: list = json_list()
    # clients whose client id is the URL of their metadata document are taken (oauth/metadata_documents.py)
    client_metadata_documents: bool = False
    ldap_attributes: list = json_list()
    kerberos_realm: str = text(100)
    kerberos_kdc_host: str = text(100)
    kerberos_keytab: str = long_text()
    kerberos_service_name: str = text(100)
    org_balance: Decimal = money()
    user_balance: Decimal = money()
    balance_credit: Decimal = money()
    balance_currency: str = text(100)


class User(Named, table=True):
    __tablename__ = "user"
    __table_args__ = named_keys(
        "user",
        sa.UniqueConstraint("uuid", name="uq_user_uuid"),
        sa.Index("ix_user_owner_email", "owner", "email"),
        sa.Index("ix_user_owner_phone", "owner", "phone"),
        sa.Index("ix_user_access_key", "access_key"),
        sa.Index("ix_user_owner_external_id", "owner", "external_id"),  # a syncer finds users by their upstream id
    )
    # Casdoor's user "id" is a UUID; `id` would clash with the key convention.
    json_aliases: ClassVar[dict[str, str]] = {"uuid": "id"}
    json_hidden: ClassVar[frozenset[str]] = frozenset({"pk", "third_party_ids"})
    json_flatten: ClassVar[tuple[str, tuple[str, ...]]] = ("third_party_ids", THIRD_PARTY_KEYS)
    json_secrets: ClassVar[frozenset[str]] = frozenset({
        "password", "totp_secret", "recovery_codes", "access_secret", "access_token", "original_token"})
    json_secrets_revealable: ClassVar[bool] = False

    updated_time: datetime | None = moment()
    deleted_time: datetime | None = moment()
    uuid: str = text(100)
    external_id: str = text(100)
    type: str = text(100)
    password: str = text(200)
    password_salt: str = text(100)
    password_type: str = text(100)
    display_name: str = text(100)
    first_name: str = text(100)
    last_name: str = text(100)
    avatar: str = text(500)
    avatar_type: str = text(100)
    permanent_avatar: str = text(500)
    email: str = text(100)
    email_verified: bool = False
    phone: str = text(100)
    country_code: str = text(10)
    region: str = text(100)
    location: str = text(100)
    address: list = json_list()
    addresses: list = json_list()
    affiliation: str = text(100)
    title: str = text(100)
    id_card_type: str = text(100)
    id_card: str = text(100)
    real_name: str = text(100)
    is_verified: bool = False
    homepage: str = text(255)
    bio: str = long_text()
    tag: str = text(100)
    language: str = text(100)
    gender: str = text(100)
    birthday: str = text(100)
    education: str = text(100)
    score: int = 0
    karma: int = 0
    ranking: int = 0
    balance: Decimal = money()
    balance_credit: Decimal = money()
    currency: str = text(100)
    balance_currency: str = text(100)
    is_default_avatar: bool = False
    is_online: bool = False
    is_admin: bool = False
    is_forbidden: bool = False
    is_deleted: bool = False
    signup_application: str = text(100)
    hash: str = text(100)
    pre_hash: str = text(100)
    access_key: str = text(100)
    access_secret: str = text(100)
    access_token: str = long_text()
    original_token: str = long_text()
    original_refresh_token: str = long_text()
    register_type: str = text(100)
    register_source: str = text(100)
    created_ip: str = text(100)
    last_signin_time: datetime | None = moment()
    last_signin_ip: str = text(100)
    third_party_ids: dict = json_dict()
    webauthn_credentials: list = json_list()
    preferred_mfa_type: str = text(100)
    recovery_codes: list = json_list()
    totp_secret: str = text(100)
    mfa_phone_enabled: bool = False
    mfa_email_enabled: bool = False
    mfa_radius_enabled: bool = False
    mfa_radius_username: str = text(100)
    mfa_radius_provider: str = text(100)
    mfa_push_enabled: bool = False
    mfa_push_receiver: str = text(100)
    mfa_push_provider: str = text(100)
    multi_factor_auths: list = json_list()
    invitation: str = text(100)
    invitation_code: str = text(100)
    face_ids: list = json_list()
    cart: list = json_list()
    ldap: str = text(100)
    uid_number: int = 0
    properties: dict = json_dict()
    third_party_links: list = json_list()
    groups: list = json_list()
    last_change_password_time: datetime | None = moment()
    last_signin_wrong_time: datetime | None = moment()
    signin_wrong_times: int = 0
    managed_accounts: list = json_list()
    mfa_accounts: list = json_list()
    mfa_items: list = json_list()
    mfa_remember_deadline: datetime | None = moment()
    need_update_password: bool = False
    ip_whitelist: str = text(500)
    application_scopes: list = json_list()


# the longest group id the membership table keeps: a group's owner and name are 100 each
GROUP_ID_LENGTH = 255


class UserGroup(SQLModel, table=True):
    """One row per entry of a user's `groups` list (Casdoor's "owner/name"), kept
    by triggers on "user" (migration 0007). The list stays the one source of
    truth: nothing writes here but the triggers. Not an API resource."""

    __tablename__ = "user_group"
    __table_args__ = (sa.Index("ix_user_group_user_pk", "user_pk"),)

    # case-sensitive on MySQL/MariaDB too, as the entries are on the other databases
    group_id: str = Field(primary_key=True, sa_type=sa.String(GROUP_ID_LENGTH).with_variant(
        mysql.VARCHAR(GROUP_ID_LENGTH, collation="utf8mb4_bin"), "mysql", "mariadb"))
    user_pk: int = Field(primary_key=True, sa_type=sa.Integer, sa_column_kwargs={"autoincrement": False})
