"""The built-in features, declared through the extension contract (iam_console/extension.py) as
an installed extension declares itself: `CORE` declares every feature package but commerce, which
declares itself (commerce/extension.py; docs/extending.md, "How extensions are found")."""

from __future__ import annotations

import logging

from iam_console.applications.kinds import application, cert, provider
from iam_console.audit import trail
from iam_console.authorization.kinds import adapter, enforcer, model, permission, role
from iam_console.core.kinds.common import KindRules
from iam_console.core.resources import built_in_kinds
from iam_console.db import session_scope
from iam_console.extension import Extension, Job, MenuEntry, MenuGroup
from iam_console.files.kinds import resource
from iam_console.i18n import FOLDER as CATALOGS
from iam_console.identity import ldap as ldap_servers
from iam_console.identity.kinds import group, invitation, ldap, organization, user
from iam_console.oauth.kinds import key, token
from iam_console.operations import syncers
from iam_console.operations.kinds import syncer, webhook
from iam_console.operations.kinds.webhook import BUILT_IN_EVENTS
from iam_console.settings import settings
from iam_console.signin import auth

log = logging.getLogger("iam_console.scheduler")
BUILT_IN_RULES: dict[str, KindRules] = {module.__name__.rpartition(".")[2]: module.RULES for module in (
    adapter, application, cert, enforcer, group, invitation, key, ldap, model, organization, permission, provider,
    resource, role, syncer, token, user, webhook)}


def ldap_auto_sync() -> None:
    with session_scope() as db:
        ldap_servers.auto_sync(db)


def syncer_auto_sync() -> None:
    with session_scope() as db:
        syncers.auto_sync(db)


def end_expired_sessions() -> None:
    """Expired console sessions end: their applications are told (signin/auth.py end_expired)."""
    with session_scope() as db:
        auth.end_expired(db)


def purge_records() -> None:
    """Records older than IAM_RECORD_RETENTION_DAYS, in batches (audit/trail.py)."""
    removed = trail.purge(session_scope, settings.record_retention_days)
    if removed:
        log.info("purged %d records older than %d days", removed, settings.record_retention_days)


CORE = Extension(
    "core",
    kinds=built_in_kinds(),
    rules=BUILT_IN_RULES,
    menu_groups=(
        MenuGroup("/home", "Home"),
        MenuGroup("/orgs", "User Management"),
        MenuGroup("/identity", "Identity"),
        MenuGroup("/auth", "Authorization"),
        MenuGroup("/logs", "Logging & Auditing"),
        MenuGroup("/admin", "Admin"),
    ),
    menu=(
        MenuEntry("/home", "/", "Dashboard"),
        MenuEntry("/home", "/shortcuts", "Shortcuts"),
        MenuEntry("/home", "/apps", "Apps"),
        MenuEntry("/orgs", "/organizations", "Organizations"),
        MenuEntry("/orgs", "/groups", "Groups"),
        MenuEntry("/orgs", "/users", "Users"),
        MenuEntry("/orgs", "/invitations", "Invitations"),
        MenuEntry("/identity", "/applications", "Applications"),
        MenuEntry("/identity", "/providers", "Providers"),
        MenuEntry("/identity", "/resources", "Resources"),
        MenuEntry("/identity", "/certs", "Certs"),
        MenuEntry("/identity", "/keys", "Keys"),
        MenuEntry("/auth", "/roles", "Roles"),
        MenuEntry("/auth", "/permissions", "Permissions", "everyone"),
        MenuEntry("/auth", "/models", "Models", "global admins"),
        MenuEntry("/auth", "/adapters", "Adapters", "global admins"),
        MenuEntry("/auth", "/enforcers", "Enforcers", "global admins"),
        MenuEntry("/logs", "/sessions", "Sessions"),
        MenuEntry("/logs", "/records", "Records"),
        MenuEntry("/logs", "/tokens", "Tokens"),
        MenuEntry("/logs", "/verifications", "Verifications"),
        MenuEntry("/admin", "/sysinfo", "System Info", "global admins"),
        MenuEntry("/admin", "/syncers", "Syncers"),
        MenuEntry("/admin", "/webhooks", "Webhooks"),
        MenuEntry("/admin", "/webhook-events", "Webhook Events"),
        MenuEntry("/admin", "/swagger", "Swagger", "global admins"),
    ),
    jobs=(
        Job("LDAP auto sync", ldap_auto_sync),
        Job("syncer run", syncer_auto_sync),
        Job("record purge", purge_records),
        Job("session expiry", end_expired_sessions),
    ),
    webhook_events=BUILT_IN_EVENTS,
    translations=str(CATALOGS),
    pages=(
        "iam_console.applications.ui.applications",
        "iam_console.applications.ui.apps",
        "iam_console.applications.ui.certs",
        "iam_console.applications.ui.providers",
        "iam_console.audit.ui.records",
        "iam_console.authorization.ui.adapters",
        "iam_console.authorization.ui.enforcers",
        "iam_console.authorization.ui.models",
        "iam_console.authorization.ui.permissions",
        "iam_console.authorization.ui.roles",
        "iam_console.files.ui.resources",
        "iam_console.home.ui.home",
        "iam_console.home.ui.shortcuts",
        "iam_console.identity.ui.groups",
        "iam_console.identity.ui.invitations",
        "iam_console.identity.ui.ldap",
        "iam_console.identity.ui.organizations",
        "iam_console.identity.ui.users",
        "iam_console.oauth.ui.authorize",
        "iam_console.oauth.ui.device",
        "iam_console.oauth.ui.keys",
        "iam_console.oauth.ui.tokens",
        "iam_console.operations.ui.syncers",
        "iam_console.operations.ui.sysinfo",
        "iam_console.operations.ui.webhook_events",
        "iam_console.operations.ui.webhooks",
        "iam_console.signin.ui.forget",
        "iam_console.signin.ui.login",
        "iam_console.signin.ui.mfa",
        "iam_console.signin.ui.prompt",
        "iam_console.signin.ui.sessions",
        "iam_console.signin.ui.signup",
        "iam_console.signin.ui.verifications",
        "iam_console.ui.pages.errors",
    ),
    routers=(
        "iam_console.signin.api.account:router",
        "iam_console.federation.api.federation:router",
        "iam_console.oauth.api:router",
        "iam_console.api.extras:router",
        "iam_console.authorization.api:router",
        "iam_console.signin.api.sessions:router",
        "iam_console.operations.api.syncers:router",
        "iam_console.identity.api.uploads:router",
        "iam_console.signin.api.verifications:router",
        "iam_console.signin.api.webauthn:router",
        "iam_console.federation.api.wallet:router",
        "iam_console.signin.api.mfa:router",
        "iam_console.applications.api:router",
        "iam_console.identity.api.ldap:router",
        "iam_console.files.api:router",
        "iam_console.files.api:files_router",
        "iam_console.audit.api:router",
        "iam_console.operations.api.webhooks:router",
        "iam_console.saml.api:router",
        "iam_console.operations.api.system:router",
        "iam_console.scim.api:router",
    ),
)
