"""LDAP servers beyond CRUD: the
directory's users with the ones already synced, the sync of selected users
into the server's organization, and the auto sync every N minutes.

The directory is read through identity/ldap_client.py as a stream of pages;
a sync writes in batches of BATCH users, each batch its own transaction, so
a directory of any size is synced with flat memory and a failure loses at
most the batch it happened in. A synced user is Casdoor's: named after the
entry's uid (uid_uidNumber when that name is taken), its `ldap` column the
entry's uuid, in the server's default group; the directory keeps the password
(sign-in binds, see ldap_client.bind_user)."""

from __future__ import annotations

import heapq
import logging
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select, update

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import crud, lookup, policy, scheduled
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity import ldap_client, uploads
from iam_console.models.base import utcnow
from iam_console.operations import metrics

log = logging.getLogger("iam_console.ldap")

BATCH = 500
MAX_FIELD = 255  # an LdapUser's values are bounded like the user columns they fill
GROUP_ID_LIMIT = 1000  # distinct group ids offered as the sync table's filter
SORTABLE = ("cn", "uid", "uidNumber", "groupId", "email", "mobile", "address")
NUMERIC = ("uidNumber", "groupId", "gidNumber")


# --- the record ---

def server(db: Session, actor: Actor, owner: str, name: str) -> m.Ldap:
    """The LDAP server owner/name if the actor administers its organization."""
    policy.require_admin(actor)
    row = db.exec(select(m.Ldap).where(m.Ldap.owner == owner, m.Ldap.name == name,
                                       *policy.read_scope(actor, REGISTRY["ldap"]))).first()
    if row is None:  # missing, or out of reach: the same answer
        raise ServiceError("The LDAP server: %s/%s does not exist", owner, name)
    return row


def synced_users(db: Session, organization: str, uuids: Iterable[str]) -> dict[str, str]:
    """{directory uuid: user name} of those uuids that already have a user in the organization."""
    found: dict[str, str] = {}
    pending = iter(dict.fromkeys(u for u in uuids if u))
    while chunk := list(islice(pending, BATCH)):
        found.update(db.exec(select(m.User.ldap, m.User.name).where(m.User.owner == organization,
                                                                    m.User.ldap.in_(chunk))).all())
    return found


def exist_uuids(db: Session, organization: str, uuids: Iterable[str]) -> set[str]:
    """Which of these directory uuids already have a user in the organization."""
    return set(synced_users(db, organization, uuids))


# --- reading the directory ---

def directory_users(db: Session, actor: Actor, owner: str, name: str) -> tuple[list[dict[str, str]], list[str]]:
    """get-ldap-users: every user of the directory, and the uuids of those synced.
    (The wire contract is one list; the console pages instead, see `directory_page`.)"""
    row = server(db, actor, owner, name)
    found = list(ldap_client.users(row))
    synced = exist_uuids(db, row.owner, (u["uuid"] for u in found))
    return found, [u["uuid"] for u in found if u["uuid"] in synced]


@dataclass
class DirectoryPage:
    rows: list[dict[str, str]]
    total: int
    group_ids: list[str]  # the distinct group ids of the directory's users (the filter's options)
    synced: dict[str, str]  # {uuid: user name} of the shown rows that have a user


def _sort_key(column: str):
    if column in NUMERIC:
        return lambda u: (0, int(u[column]), "") if u[column].isdigit() else (1, 0, u[column])
    return lambda u: u.get(column, "")


def directory_page(db: Session, actor: Actor, owner: str, name: str, *, page: int = 1, page_size: int = 10,
                   sort_field: str = "", sort_order: str = "", group_id: str = "") -> DirectoryPage:
    """One page of the directory's users, sorted and filtered by group id, reading the
    directory as a stream: only the rows up to the page's end are kept (a heap), so
    memory follows the page asked for, not the directory's size."""
    row = server(db, actor, owner, name)
    page, page_size = max(1, page), max(1, min(page_size, 100))
    total = 0
    group_ids: set[str] = set()

    def matching() -> Iterator[dict[str, str]]:
        nonlocal total
        for user in ldap_client.users(row):
            if len(group_ids) < GROUP_ID_LIMIT and user["groupId"]:
                group_ids.add(user["groupId"])
            if group_id and user["groupId"] != group_id:
                continue
            total += 1
            yield user

    wanted = page * page_size
    if sort_field in SORTABLE and sort_order in ("ascend", "descend"):
        pick = heapq.nsmallest if sort_order == "ascend" else heapq.nlargest
        kept = pick(wanted, matching(), key=_sort_key(sort_field))
    else:
        kept = []
        for user in matching():  # the directory's order: the first `wanted`, and count the rest
            if len(kept) < wanted:
                kept.append(user)
    rows = kept[(page - 1) * page_size:wanted]
    ordered_ids = sorted(group_ids, key=lambda g: (0, int(g), "") if g.isdigit() else (1, 0, g))
    return DirectoryPage(rows, total, ordered_ids, synced_users(db, row.owner, (u["uuid"] for u in rows)))


# --- syncing ---

@dataclass
class SyncResult:
    added: int = 0
    exist: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    exist_count: int = 0
    failed_count: int = 0


def clean_user(value: Any) -> dict[str, str] | None:
    """A directory user as a client sent it (sync-ldap-users), reduced to LdapUser's
    string fields; None when it is not one (not an object, a value not a string or number)."""
    if not isinstance(value, dict):
        return None
    lowered = {str(k).lower(): v for k, v in value.items()}
    out: dict[str, str] = {}
    for key in ldap_client.FIELDS:
        item = lowered.get(key.lower(), "")
        if item is None:
            item = ""
        if isinstance(item, bool) or not isinstance(item, str | int):
            return None
        out[key] = str(item).strip()[:MAX_FIELD]
    out["mobile"] = out["mobile"] or str(lowered.get("phone") or "")[:MAX_FIELD]
    out["groupId"] = out["groupId"] or out["gidNumber"]
    out["uuid"] = out["uuid"] or out["uid"] or out["cn"]
    return out if out["uuid"] else None


def _affiliation(row: m.Ldap) -> str:
    """Casdoor's: the dc= parts of the base DN joined with dots (example.com)."""
    return ".".join(p.strip()[3:] for p in row.base_dn.split(",") if p.strip().lower().startswith("dc="))


def _tag(row: m.Ldap) -> str:
    """Casdoor's: the ou= parts of the admin's DN joined with dots."""
    return ".".join(p.strip()[3:] for p in row.username.split(",") if p.strip().lower().startswith("ou="))


class _Batch:
    """What one batch needs to name its new users: the names already taken."""

    def __init__(self, db: Session, organization: str, users: list[dict[str, str]]) -> None:
        candidates = set()
        for user in users:
            base = user["uid"] or user["cn"]
            candidates |= {base, f"{base}_{user['uidNumber']}"}
        self.taken = set(db.exec(select(m.User.name).where(m.User.owner == organization,
                                                           m.User.name.in_(candidates))).all())

    def name_for(self, user: dict[str, str]) -> str:
        """uid (cn without one); uid_uidNumber when taken; then a random suffix."""
        base = user["uid"] or user["cn"]
        for name in (base, f"{base}_{user['uidNumber']}"):
            if name not in self.taken:
                break
        else:
            name = f"{base}_{user['uidNumber']}_{secrets.token_hex(3)}"
        self.taken.add(name)
        return name


def _new_user(row: m.Ldap, organization: m.Organization, name: str, user: dict[str, str]) -> dict[str, Any]:
    return {
        "owner": row.owner, "name": name, "type": "normal-user",
        "displayName": user["displayName"] or user["cn"], "avatar": organization.default_avatar,
        "email": user["email"], "phone": user["mobile"], "address": [user["address"]] if user["address"] else [],
        "affiliation": _affiliation(row), "tag": _tag(row), "score": organization.init_score, "ldap": user["uuid"],
        "groups": [row.default_group] if row.default_group else [],
        "signupApplication": organization.default_application,
    }


def _values(row: m.User) -> dict[str, Any]:
    return {column.key: getattr(row, column.key) for column in m.User.__table__.columns if column.key != "pk"}


def _insert(db: Session, rows: list[m.User], users: list[dict[str, str]], result: SyncResult, keep: bool) -> None:
    """The batch in one INSERT and one transaction; if the database refuses it (a name taken
    meanwhile by another writer), each row in a transaction of its own, so that only the
    refused ones fail. (Core inserts: the rows are not kept in the session afterwards.)"""
    if not rows:
        return
    table = m.User.__table__
    try:
        db.exec(insert(table), params=[_values(row) for row in rows])
        db.commit()
        result.added += len(rows)
        return
    except IntegrityError:
        db.rollback()
    for row, user in zip(rows, users, strict=True):
        try:
            db.exec(insert(table).values(**_values(row)))
            db.commit()
            result.added += 1
        except IntegrityError:
            db.rollback()
            _fail(result, user, keep)


def _fail(result: SyncResult, user: dict[str, str], keep: bool) -> None:
    result.failed_count += 1
    if keep:
        result.failed.append(user)


def _sync_batch(db: Session, actor: Actor, row: m.Ldap, organization: m.Organization,
                users: list[dict[str, str]], result: SyncResult, keep: bool) -> None:
    existing = exist_uuids(db, row.owner, (u["uuid"] for u in users))
    fresh: list[dict[str, str]] = []
    for user in users:
        if user["uuid"] in existing:
            result.exist_count += 1
            if keep:
                result.exist.append(user)
        else:
            existing.add(user["uuid"])  # the same entry twice in one request: one user
            fresh.append(user)
    names = _Batch(db, row.owner, fresh)
    rows, added = [], []
    for user in fresh:
        try:
            # uploads.blank: a fresh User without pydantic's per-field start-up (50 times cheaper)
            users = REGISTRY["user"]
            new, changed = crud.parse_new(actor, users, _new_user(row, organization, names.name_for(user), user),
                                          uploads.blank(m.User))
            crud.complete_new(db, actor, users, new, changed)
        except (ServiceError, ValueError) as exc:
            log.info("LDAP user %s not synced: %s", user.get("cn"), exc)
            _fail(result, user, keep)
            continue
        rows.append(new)
        added.append(user)
    # each batch is its own transaction: a long sync never holds the write lock for long
    _insert(db, rows, added, result, keep)
    db.commit()


def sync(db: Session, actor: Actor, row: m.Ldap, users: Iterable[Any], *, keep: bool = True,
         request: crud.Request = crud.NO_REQUEST) -> SyncResult:
    """Add the directory users that have no user in the server's organization yet.
    `keep`: collect the existing and failed users themselves (the API's answer), not
    only their counts (the auto sync of a whole directory)."""
    organization = lookup.organization(db, row.owner)
    if organization is None:
        raise ServiceError("The organization: %s does not exist", row.owner)
    # plain copies: the batches commit (and may roll back) the session these were read in
    row, organization = m.detached_copy(row), m.detached_copy(organization)
    result = SyncResult()
    db.info[lookup.ORGANIZATION_CACHE] = {}  # one read of the organization for the whole sync
    try:
        with metrics.counted_run("ldap"):
            pending = iter(users)
            while chunk := list(islice(pending, BATCH)):
                cleaned = []
                for value in chunk:
                    user = clean_user(value)
                    if user is None:
                        _fail(result, value if isinstance(value, dict) else {"cn": str(value)[:MAX_FIELD]}, keep)
                    else:
                        cleaned.append(user)
                _sync_batch(db, actor, row, organization, cleaned, result, keep)
    finally:
        db.info.pop(lookup.ORGANIZATION_CACHE, None)
    audit(db, organization=row.owner, user=actor.id, action="sync-ldap-users", request_uri=request.uri,
          client_ip=request.client_ip, language=request.language,
          obj={"ldap": f"{row.owner}/{row.name}", "added": result.added, "exist": result.exist_count,
               "failed": result.failed_count})
    return result


def sync_users(db: Session, actor: Actor, owner: str, name: str, users: Any,
               request: crud.Request = crud.NO_REQUEST) -> SyncResult:
    """sync-ldap-users: the users a client sent (Casdoor's console sends the selected rows)."""
    row = server(db, actor, owner, name)
    if not isinstance(users, list):
        raise ServiceError("The request body must be a list of LDAP users")
    return sync(db, actor, row, users, request=request)


def sync_selected(db: Session, actor: Actor, owner: str, name: str, uuids: Iterable[str]) -> SyncResult:
    """The console's Sync: the selected users read again from the directory (the page
    keeps only their uuids), so what is written is what the directory holds."""
    row = server(db, actor, owner, name)
    wanted = set(uuids)
    if not wanted:
        raise ServiceError("Please select al least 1 user first")
    seen: set[str] = set()

    def selected() -> Iterator[dict[str, str]]:
        for user in ldap_client.users(row):
            if user["uuid"] in wanted:
                seen.add(user["uuid"])
                yield user

    result = sync(db, actor, row, selected())
    for gone in sorted(wanted - seen):  # left the directory since the page showed it
        _fail(result, {"uuid": gone, "cn": gone}, keep=True)
    return result


# --- auto sync ---

def due(db: Session, now: datetime) -> list[tuple[int, datetime | None]]:
    """(pk, lastSync) of the servers whose auto sync is due: never run, or N minutes ago."""
    rows = db.exec(select(m.Ldap.pk, m.Ldap.auto_sync, m.Ldap.last_sync).where(m.Ldap.auto_sync > 0)).all()
    return [(pk, last) for pk, minutes, last in rows if last is None or last + timedelta(minutes=minutes) <= now]


def claim(db: Session, pk: int, last: datetime | None, now: datetime) -> bool:
    """Take one run (core/scheduled.claim)."""
    return scheduled.claim(db, m.Ldap, pk, last, now)


def auto_sync(db: Session, now: datetime | None = None) -> list[tuple[str, SyncResult | None]]:
    """Run every due auto sync this worker wins: all the directory's users of each server
    into its organization; lastSync records when the run finished. A server that cannot be
    reached is logged and tried again after its interval."""
    now = now or utcnow()
    done: list[tuple[str, SyncResult | None]] = []
    for pk, last in due(db, now):
        if not claim(db, pk, last, now):
            continue
        row = db.get(m.Ldap, pk)
        ident = f"{row.owner}/{row.name}"
        try:
            result = sync(db, scheduled.system_actor(db), row, ldap_client.users(row), keep=False)
        except ServiceError as exc:
            log.warning("LDAP auto sync of %s failed: %s", ident, exc)
            db.rollback()
            done.append((ident, None))
            continue
        finished = max(utcnow(), now)
        db.exec(update(m.Ldap).where(m.Ldap.pk == pk).values(last_sync=finished))
        db.commit()
        log.info("LDAP auto sync of %s: %d added, %d existed, %d failed", ident, result.added,
                 result.exist_count, result.failed_count)
        done.append((ident, result))
    return done
