"""Applications, identity/messaging/payment providers and signing certificates."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import sqlalchemy as sa

from iam_console.models.base import Named, json_dict, json_list, long_text, moment, named_keys, text


class Application(Named, table=True):
    __tablename__ = "application"
    json_admin_secrets: ClassVar[frozenset[str]] = frozenset({"client_secret"})
    # set by the registration endpoint alone (oauth/registration.py)
    json_server_set: ClassVar[frozenset[str]] = frozenset({"registration_access_token", "client_metadata"})
    __table_args__ = named_keys(
        "application",
        sa.UniqueConstraint("client_id", name="uq_application_client_id"),
        sa.Index("ix_application_organization", "organization", "created_time", "pk"),
    )

    display_name: str = text(100)
    category: str = text(100)
    type: str = text(100)
    scopes: list = json_list()
    logo: str = text(500)
    title: str = text(100)
    favicon: str = text(500)
    order: int = 0
    homepage_url: str = text(255)
    description: str = text(255)
    organization: str = text(100)
    cert: str = text(100)
    default_group: str = text(100)
    default_tag: str = text(100)
    header_html: str = long_text()
    page_html: str = long_text()
    enable_password: bool = False
    enable_sign_up: bool = False
    enable_guest_signin: bool = False
    disable_signin: bool = False
    enable_signin_session: bool = False
    enable_auto_signin: bool = False
    enable_code_signin: bool = False
    enable_exclusive_signin: bool = False
    enable_saml_compress: bool = False
    enable_saml_c14n10: bool = False
    enable_saml_post_binding: bool = False
    disable_saml_attributes: bool = False
    enable_saml_assertion_signature: bool = False
    use_email_as_saml_name_id: bool = False
    enable_web_authn: bool = False
    enable_link_with_email: bool = False
    org_choice_mode: str = text(100)
    saml_reply_url: str = text(500)
    providers: list = json_list()
    signin_methods: list = json_list()
    signup_items: list = json_list()
    signin_items: list = json_list()
    grant_types: list = json_list()
    tags: list = json_list()
    saml_attributes: list = json_list()
    saml_hash_algorithm: str = text(20)
    saml_c14n_prefix: str = text(100)
    is_shared: bool = False
    ip_restriction: str = text(500)
    client_id: str = text(100)
    client_secret: str = text(100)
    client_cert: str = text(100)
    redirect_uris: list = json_list()
    # OpenID Back-Channel and Front-Channel Logout 1.0 (oauth/logout.py; docs/api.md, "Standards")
    backchannel_logout_uri: str = text(500)
    backchannel_logout_session_required: bool = False
    frontchannel_logout_uri: str = text(500)
    forced_redirect_origin: str = text(255)
    token_format: str = text(100)
    token_signing_method: str = text(100)
    token_fields: list = json_list()
    token_attributes: list = json_list()
    expire_in_hours: int = 0
    refresh_expire_in_hours: int = 0
    cookie_expire_in_hours: int = 0
    signup_url: str = text(500)
    signin_url: str = text(500)
    forget_url: str = text(500)
    affiliation_url: str = text(500)
    ip_whitelist: str = text(500)
    terms_of_use: str = text(500)
    signup_html: str = long_text()
    signin_html: str = long_text()
    theme_data: dict = json_dict()
    footer_html: str = long_text()
    form_css: str = long_text()
    form_css_mobile: str = long_text()
    form_offset: int = 0
    form_side_html: str = long_text()
    form_background_url: str = text(500)
    form_background_url_mobile: str = text(500)
    failed_signin_limit: int = 0
    failed_signin_frozen_time: int = 0
    code_resend_timeout: int = 0
    custom_scopes: list = json_list()
    domain: str = text(255)
    other_domains: list = json_list()
    upstream_host: str = text(255)
    ssl_mode: str = text(100)
    ssl_cert: str = text(100)
    # the SHA-256 of a dynamically registered client's registration access token (RFC 7592); only a
    # client registered so has one, and it has no admin rights (core/access.py)
    registration_access_token: str = text(255)
    # RFC 9126, 9101, 9449 (docs/api.md "Standards"): authorization requests only pushed; access
    # tokens only DPoP-bound; DPoP proofs only with a fresh server nonce; the client's public keys
    # (a JWK Set) that its request objects are signed with
    require_pushed_authorization_requests: bool = False
    require_dpop: bool = False
    require_dpop_nonce: bool = False
    jwks: dict = json_dict()
    client_metadata: dict = json_dict()  # the RFC 7591 metadata it registered with (oauth/registration.py)
    # which audiences (client ids of the organization's applications, resource URIs) it may exchange
    # tokens for (RFC 8693, oauth/exchange.py)
    token_exchange_audiences: list = json_list()


class Provider(Named, table=True):
    __tablename__ = "provider"
    __table_args__ = named_keys(
        "provider", sa.Index("ix_provider_category", "owner", "category")
    )
    # SQLModel reserves `metadata`, hence metadata_
    json_aliases: ClassVar[dict[str, str]] = {"id_p": "idP", "metadata_": "metadata"}
    json_secrets: ClassVar[frozenset[str]] = frozenset({"client_secret", "client_secret2"})

    display_name: str = text(100)
    category: str = text(100)
    type: str = text(100)
    sub_type: str = text(100)
    method: str = text(100)
    client_id: str = text(200)
    client_secret: str = text(3000)
    client_id2: str = text(200)
    client_secret2: str = text(3000)
    cert: str = text(100)
    custom_auth_url: str = text(500)
    custom_token_url: str = text(500)
    custom_user_info_url: str = text(500)
    custom_logout_url: str = text(500)
    custom_logo: str = text(500)
    scopes: str = text(255)
    user_mapping: dict = json_dict()
    http_headers: dict = json_dict()
    host: str = text(255)
    port: int = 0
    disable_ssl: bool = False
    ssl_mode: str = text(100)
    title: str = text(255)
    content: str = long_text()
    receiver: str = text(255)
    region_id: str = text(100)
    sign_name: str = text(100)
    template_code: str = text(100)
    app_id: str = text(100)
    endpoint: str = text(1000)
    intranet_endpoint: str = text(100)
    domain: str = text(255)
    bucket: str = text(100)
    path_prefix: str = text(100)
    metadata_: str = long_text()
    id_p: str = long_text()
    issuer_url: str = text(255)
    enable_sign_authn_request: bool = False
    email_regex: str = text(200)
    provider_url: str = text(500)
    enable_proxy: bool = False
    enable_pkce: bool = False
    enable_sign_up: bool = False
    state: str = text(100)


class Cert(Named, table=True):
    __tablename__ = "cert"
    json_admin_secrets: ClassVar[frozenset[str]] = frozenset({"private_key"})
    __table_args__ = named_keys("cert")

    display_name: str = text(100)
    scope: str = text(100)
    type: str = text(100)
    crypto_algorithm: str = text(100)
    bit_size: int = 0
    expire_in_years: int = 0
    expire_time: datetime | None = moment()
    domain_expire_time: datetime | None = moment()
    provider: str = text(100)
    account: str = text(100)
    access_key: str = text(100)
    access_secret: str = text(100)
    certificate: str = long_text()
    private_key: str = long_text()
