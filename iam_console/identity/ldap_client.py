"""Talking to a directory (ldap3): connect and bind, stream its users with
paged searches, map an entry to Casdoor's LdapUser, and sign a user in by
binding with their own password.

Imports only the models and the errors, so that sign-in (signin/auth.py)
can use it without pulling the rest of the service layer in."""

from __future__ import annotations

import logging
import ssl
from collections.abc import Iterator
from typing import Any

from ldap3 import SIMPLE, SUBTREE, Connection, Tls
from ldap3.core.exceptions import LDAPException, LDAPInvalidCredentialsResult
from ldap3.utils.conv import escape_filter_chars
from sqlmodel import Session, select

from iam_console.core import outbound
from iam_console.core.errors import ServiceError
from iam_console.models import Ldap, User

log = logging.getLogger("iam_console.ldap")

CONNECT_TIMEOUT = 5  # seconds: a directory that is down must not hold a sign-in for long
RECEIVE_TIMEOUT = 30
PAGE_SIZE = 500  # entries per paged-search round trip (RFC 2696)

# What Casdoor reads of an entry; an attribute the directory's schema lacks is ignored by the server.
ATTRIBUTES = (
    "uidNumber", "uid", "sAMAccountName", "cn", "gidNumber", "entryUUID", "objectGUID", "userPrincipalName",
    "displayName", "mail", "email", "emailAddress", "telephoneNumber", "mobile", "mobileTelephoneNumber",
    "registeredAddress", "postalAddress", "memberOf",
)
# Casdoor's LdapUser on the wire (get-ldap-users, sync-ldap-users)
FIELDS = ("uidNumber", "uid", "cn", "gidNumber", "groupId", "uuid", "userPrincipalName", "displayName", "email",
          "mobile", "address", "memberOf")
# the filter fields sign-in may match a user by, and the user attribute each reads
FILTER_FIELDS = {"uid": "name", "mail": "email", "mobile": "phone", "sAMAccountName": "name"}


class BindRefused(ServiceError):
    """The directory refused the name and password (as opposed to not answering)."""


def _tls(row: Ldap) -> Tls | None:
    if not row.enable_ssl:
        return None
    # a self-signed certificate is accepted only when the record says so
    return Tls(validate=ssl.CERT_NONE if row.allow_self_signed_cert else ssl.CERT_REQUIRED)


def _reason(exc: LDAPException) -> str:
    return str(exc).strip("()\"',") or type(exc).__name__


def connect(row: Ldap, user: str | None = None, password: str | None = None) -> Connection:
    """A bound, read-only connection: as the record's admin, or as `user` with `password`."""
    if not row.host:
        raise ServiceError("The LDAP server's host cannot be empty")
    try:
        # the directory is a destination the organization's admin chose: through the outbound guard
        conn = outbound.ldap_connection(row.host, row.port, use_ssl=row.enable_ssl, tls=_tls(row),
                                        connect_timeout=CONNECT_TIMEOUT,
                                        user=row.username if user is None else user,
                                        password=row.password if password is None else password,
                                        authentication=SIMPLE, read_only=True, raise_exceptions=True,
                                        receive_timeout=RECEIVE_TIMEOUT)
    except outbound.OutboundError as exc:
        raise ServiceError("Failed to connect to the LDAP server: %s", str(exc)) from None
    try:
        conn.bind()
    except LDAPInvalidCredentialsResult:
        raise BindRefused("Failed to bind to the LDAP server: invalid credentials") from None
    except LDAPException as exc:
        raise ServiceError("Failed to connect to the LDAP server: %s", _reason(exc)) from None
    return conn


def _filter(row: Ldap) -> str:
    text = (row.filter or "").strip() or "(objectClass=*)"
    return text if text.startswith("(") else f"({text})"


def _first(attributes: dict[str, Any], *names: str) -> str:
    for name in names:
        values = attributes.get(name)
        if isinstance(values, list | tuple):
            values = values[0] if values else ""
        if isinstance(values, bytes):
            # AD's objectGUID is 16 raw bytes; anything else undecodable is shown as hex
            values = values.hex()
        if values not in (None, ""):
            return str(values)
    return ""


def directory_user(attributes: dict[str, Any]) -> dict[str, str]:
    """An entry as Casdoor's LdapUser: the first non-empty of the attributes it knows
    for each field (AutoAdjustLdapUser), the uuid falling back to uid, then cn."""
    uid = _first(attributes, "uid", "sAMAccountName")
    cn = _first(attributes, "cn")
    gid = _first(attributes, "gidNumber")
    return {
        "uidNumber": _first(attributes, "uidNumber"), "uid": uid, "cn": cn, "gidNumber": gid, "groupId": gid,
        "uuid": _first(attributes, "entryUUID", "objectGUID") or uid or cn,
        "userPrincipalName": _first(attributes, "userPrincipalName"),
        "displayName": _first(attributes, "displayName"),
        "email": _first(attributes, "email", "emailAddress", "mail"),
        "mobile": _first(attributes, "mobile", "mobileTelephoneNumber", "telephoneNumber"),
        "address": _first(attributes, "postalAddress", "registeredAddress"),
        "memberOf": _first(attributes, "memberOf"),
    }


def users(row: Ldap) -> Iterator[dict[str, str]]:
    """The directory's users under the record's base DN and filter, as LdapUsers, one
    page of PAGE_SIZE at a time: the whole directory is never in memory."""
    with outbound.on_behalf_of(row.owner):  # the directory is the organization's: one of its outbound calls
        conn = connect(row)
        try:
            entries = conn.extend.standard.paged_search(row.base_dn, _filter(row), SUBTREE,
                                                        attributes=list(ATTRIBUTES), paged_size=PAGE_SIZE,
                                                        generator=True)
            for entry in entries:
                if entry.get("type") == "searchResEntry":
                    yield directory_user(entry.get("attributes") or {})
        except LDAPException as exc:
            raise ServiceError("Failed to search the LDAP server: %s", _reason(exc)) from None
        finally:
            conn.unbind()


# --- sign-in by bind ---

def auth_filter(row: Ldap, user: User) -> str | None:
    """The record's filter and (|(field=value)...) over its filter fields (uid by default),
    the values escaped; None when the user has none of them."""
    fields = [f for f in row.filter_fields if f in FILTER_FIELDS] or ["uid"]
    terms = [f"({field}={escape_filter_chars(value)})" for field in fields
             if (value := str(getattr(user, FILTER_FIELDS[field]) or ""))]
    if not terms:
        return None
    return f"(&{_filter(row)}(|{''.join(terms)}))"


def bind_user(db: Session, user: User, password: str) -> bool:
    """Casdoor's LDAP sign-in: find the user's entry on each LDAP server of their
    organization through its filter fields, and bind as that entry with `password`.
    True when a directory accepted it, else False: a user found on none of them gets the
    answer of a wrong password (it is logged for the operator), so that no answer tells
    an account backed by the directory from a missing one."""
    if not password:
        return False  # an empty simple bind is an anonymous bind that "succeeds"
    with outbound.on_behalf_of(user.owner):  # the directories are the organization's: one of its outbound calls
        return _bind_user(db, user, password)


def _bind_user(db: Session, user: User, password: str) -> bool:
    found = False
    for row in db.exec(select(Ldap).where(Ldap.owner == user.owner).order_by(Ldap.pk)).all():
        query = auth_filter(row, user)
        if query is None:
            continue
        try:
            conn = connect(row)
        except ServiceError as exc:
            log.warning("LDAP server %s/%s unreachable at sign-in: %s", row.owner, row.name, exc)
            continue
        try:
            conn.search(row.base_dn, query, SUBTREE, attributes=[], size_limit=2)
            entries = [e for e in conn.response or [] if e.get("type") == "searchResEntry"]
        except LDAPException as exc:
            log.warning("LDAP search failed at sign-in on %s/%s: %s", row.owner, row.name, _reason(exc))
            continue
        finally:
            conn.unbind()
        if not entries:
            continue
        if len(entries) > 1:
            raise ServiceError("Multiple accounts with same uid, please check your ldap server")
        found = True
        try:
            connect(row, entries[0]["dn"], password).unbind()
            return True
        except BindRefused:
            continue
        except ServiceError as exc:
            log.warning("LDAP bind failed at sign-in on %s/%s: %s", row.owner, row.name, exc)
            continue
    if not found:
        log.warning("The user %s/%s was found on none of its organization's LDAP servers", user.owner, user.name)
    return False
