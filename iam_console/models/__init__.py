"""The tables of the shared core and of the built-in features declared in features.py; importing
this package registers them. An extension's tables are its own (its kinds' models and
`Extension.tables`, iam_console/extension.py): commerce's are in iam_console/commerce/tables.py."""

from iam_console.applications.tables import Application, Cert, Provider
from iam_console.audit.tables import Record
from iam_console.authorization.tables import (
    Adapter,
    AuthzChange,
    AuthzVersion,
    CasbinModel,
    CasbinRule,
    Enforcer,
    Permission,
    Role,
)
from iam_console.core.tables import RowCount
from iam_console.federation.tables import UpstreamState, Web3Nonce
from iam_console.files.tables import Resource
from iam_console.identity.directory import Group, Invitation, Ldap
from iam_console.identity.tables import Organization, User, UserGroup
from iam_console.models.base import Named, Row, detached_copy, to_wire, wire_name
from iam_console.oauth.tables import Key, PushedRequest, Token
from iam_console.operations.tables import Syncer, Webhook, WebhookEvent
from iam_console.saml.tables import SamlRequest
from iam_console.signin.tables import (
    AuthSession,
    MfaSetup,
    PendingSignIn,
    Session,
    Throttle,
    Verification,
    WebAuthnChallenge,
)

__all__ = [
    "Adapter",
    "Application",
    "AuthSession",
    "AuthzChange",
    "AuthzVersion",
    "CasbinModel",
    "CasbinRule",
    "Cert",
    "Enforcer",
    "Group",
    "Invitation",
    "Key",
    "Ldap",
    "MfaSetup",
    "Named",
    "Organization",
    "PendingSignIn",
    "Permission",
    "Provider",
    "PushedRequest",
    "Record",
    "Resource",
    "Role",
    "Row",
    "RowCount",
    "SamlRequest",
    "Session",
    "Syncer",
    "Throttle",
    "Token",
    "UpstreamState",
    "User",
    "UserGroup",
    "Verification",
    "Web3Nonce",
    "WebAuthnChallenge",
    "Webhook",
    "WebhookEvent",
    "detached_copy",
    "to_wire",
    "wire_name",
]
