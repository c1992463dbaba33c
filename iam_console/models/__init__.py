"""Every table of the product; importing this package registers them all."""

from .applications import Application, Cert, Provider
from .audit import AuthSession, MfaSetup, PendingSignIn, Record, SamlRequest, Session, Throttle
from .authz import Adapter, AuthzChange, AuthzVersion, CasbinModel, CasbinRule, Enforcer, Permission, Role
from .base import Named, Row, detached_copy, to_wire, wire_name
from .commerce import Order, Payment, Plan, Pricing, Product, Subscription, Transaction
from .credentials import Key, Resource, Token, UpstreamState, Verification, WebAuthnChallenge
from .directory import Group, Invitation, Ldap
from .identity import Organization, User
from .operations import Syncer, Webhook, WebhookEvent
from .stats import RowCount, UserGroup
from .wallet import Web3Nonce

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
    "Order",
    "Organization",
    "Payment",
    "PendingSignIn",
    "Permission",
    "Plan",
    "Pricing",
    "Product",
    "Provider",
    "Record",
    "Resource",
    "Role",
    "Row",
    "RowCount",
    "SamlRequest",
    "Session",
    "Subscription",
    "Syncer",
    "Throttle",
    "Token",
    "Transaction",
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
