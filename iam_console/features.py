"""The built-in features, declared through the extension contract (iam_console/extension.py) as
an installed extension declares itself: one declaration, `CORE`, until each feature moves into a
package of its own with a declaration of its own (docs/extending.md)."""

from __future__ import annotations

import logging

from iam_console.db import session_scope
from iam_console.extension import Extension, Job, MenuEntry, MenuGroup
from iam_console.i18n import FOLDER as CATALOGS
from iam_console.services import commerce, kinds, ldap, syncers, trail
from iam_console.services.kinds.webhook import BUILT_IN_EVENTS
from iam_console.services.resources import built_in_kinds
from iam_console.settings import settings

log = logging.getLogger("iam_console.scheduler")


def ldap_auto_sync() -> None:
    with session_scope() as db:
        ldap.auto_sync(db)


def syncer_auto_sync() -> None:
    with session_scope() as db:
        syncers.auto_sync(db)


def expire_subscriptions() -> None:
    """Subscriptions past their end: Expired, their plan's role taken back (services/commerce.py);
    each is claimed by its own conditional UPDATE (Active -> Expired), so one worker ends it."""
    with session_scope() as db:
        while commerce.expire_subscriptions(db) == commerce.EXPIRY_BATCH:
            pass


def purge_records() -> None:
    """Records older than IAM_RECORD_RETENTION_DAYS, in batches (services/trail.py)."""
    removed = trail.purge(session_scope, settings.record_retention_days)
    if removed:
        log.info("purged %d records older than %d days", removed, settings.record_retention_days)


CORE = Extension(
    "core",
    kinds=built_in_kinds(),
    rules=kinds.BUILT_IN_RULES,
    menu_groups=(
        MenuGroup("/home", "Home"),
        MenuGroup("/orgs", "User Management"),
        MenuGroup("/identity", "Identity"),
        MenuGroup("/auth", "Authorization"),
        MenuGroup("/logs", "Logging & Auditing"),
        MenuGroup("/business", "Business & Payments"),
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
        MenuEntry("/auth", "/roles", "Roles"),
        MenuEntry("/auth", "/permissions", "Permissions", "everyone"),
        MenuEntry("/auth", "/models", "Models", "global admins"),
        MenuEntry("/auth", "/adapters", "Adapters", "global admins"),
        MenuEntry("/auth", "/enforcers", "Enforcers", "global admins"),
        MenuEntry("/logs", "/sessions", "Sessions"),
        MenuEntry("/logs", "/records", "Records"),
        MenuEntry("/logs", "/tokens", "Tokens"),
        MenuEntry("/logs", "/verifications", "Verifications"),
        MenuEntry("/business", "/products", "Products"),
        MenuEntry("/business", "/payments", "Payments"),
        MenuEntry("/business", "/plans", "Plans"),
        MenuEntry("/business", "/pricings", "Pricings"),
        MenuEntry("/business", "/subscriptions", "Subscriptions"),
        MenuEntry("/business", "/transactions", "Transactions"),
        MenuEntry("/admin", "/sysinfo", "System Info", "global admins"),
        MenuEntry("/admin", "/syncers", "Syncers"),
        MenuEntry("/admin", "/webhooks", "Webhooks"),
        MenuEntry("/admin", "/swagger", "Swagger", "global admins"),
    ),
    jobs=(
        Job("LDAP auto sync", ldap_auto_sync),
        Job("syncer run", syncer_auto_sync),
        Job("subscription expiry", expire_subscriptions),
        Job("record purge", purge_records),
    ),
    webhook_events=BUILT_IN_EVENTS,
    translations=str(CATALOGS),
    routers=(
        "iam_console.api.account:router",
        "iam_console.api.federation:router",
        "iam_console.api.oauth:router",
        "iam_console.api.resources:router",
        "iam_console.api.extras:router",
        "iam_console.api.enforce:router",
        "iam_console.api.sessions:router",
        "iam_console.api.syncers:router",
        "iam_console.api.uploads:router",
        "iam_console.api.verifications:router",
        "iam_console.api.webauthn:router",
        "iam_console.api.wallet:router",
        "iam_console.api.mfa:router",
        "iam_console.api.certs:router",
        "iam_console.api.ldap:router",
        "iam_console.api.files:router",
        "iam_console.api.files:files_router",
        "iam_console.api.records:router",
        "iam_console.api.webhooks:router",
        "iam_console.api.commerce:router",
        "iam_console.api.saml:router",
        "iam_console.api.system:router",
    ),
)
