"""Users: type, account item patterns, face IDs, groups, what saving one also does, and what
goes with a user deleted or renamed (core/leftovers.py)."""

from __future__ import annotations

import secrets
import uuid

from sqlmodel import Session

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import leftovers, lookup
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, built_in
from iam_console.identity import accounts, groups
from iam_console.identity.passwords import hash_secret
from iam_console.models.base import utcnow
from iam_console.oauth import logout
from iam_console.signin import auth, credentials, mfa_props

TYPES = ("normal-user", "paid-user")
MAX_FACE_IDS = 5


def validate(db: Session, actor: Actor, row: m.User) -> None:
    accounts.check_patterns(db, row)
    if len(row.face_ids or []) > MAX_FACE_IDS:
        raise ServiceError("At most 5 face IDs")
    groups.check_one_physical_group(db, row.groups)
    credentials.check_access_key_free(db, row.access_key, user=row)


def before_save(db: Session, actor: Actor, old: m.User | None, row: m.User, changed: set[str]) -> None:
    if not row.uuid:
        row.uuid = str(uuid.uuid4())
    if "password" in changed or (old is None and row.password):
        auth.change_password(db, row, lookup.organization(db, row.owner), row.password, signed_in_as=old,
                             keep_session=actor.session_id)
    if "access_secret" in changed:
        row.access_secret = hash_secret(row.access_secret)  # shown once, when generated; then only compared
    if "is_deleted" in changed or old is None:
        row.deleted_time = (row.deleted_time or utcnow()) if row.is_deleted else None
    row.multi_factor_auths = mfa_props.all_props(row)  # its masked email or phone follows the fields
    row.updated_time = utcnow()


def after_save(db: Session, actor: Actor, old: m.User | None, row: m.User) -> None:
    """A renamed account is signed out everywhere and its tokens die (nothing issued under the
    old name passes to a new account of that name); its roles, permissions, managed groups and
    keys follow the new name within its organization. Flagged deleted, it is signed out too,
    and keeps the rest: the flag can be lifted. Forbidden, it is signed out and its tokens are
    revoked. Every such ending tells the applications (oauth/logout.py)."""
    if old is None:
        return
    if (old.owner, old.name) != (row.owner, row.name):
        _end_access(db, old)
        leftovers.release_user(db, old.owner, old.name, row.name if row.owner == old.owner else "")
    elif row.is_deleted and not old.is_deleted:
        _end_access(db, old)
    elif row.is_forbidden and not old.is_forbidden:
        auth.revoke_all(db, old)  # signed out everywhere, its tokens revoked; lifting the flag restores none


def _end_access(db: Session, user: m.User) -> None:
    """`user` (as its sessions and tokens name it) ends everywhere: its applications are told first,
    while its tokens still say which (oauth/logout.py)."""
    logout.tell(db, logout.sessions_of(db, user), user)
    leftovers.end_user_access(db, user.owner, user.name)


def take_along(db: Session, row: m.User) -> None:
    """A deleted account ends everywhere and leaves the lists and keys of its organization;
    its WebAuthn credentials and MFA secrets go with the row. Its history stays: audit
    records, files, and every other kind's records that name it."""
    _end_access(db, row)
    leftovers.release_user(db, row.owner, row.name)


def soft_deleted(db: Session, row: m.User) -> bool:
    """In an organization with soft deletion, a deleted user's row stays, flagged deleted (what
    take_along released stays released: lifting the flag restores the account, not its grants)."""
    organization = lookup.organization(db, row.owner)
    if organization is None or not organization.enable_soft_deletion:
        return False
    row.is_deleted = True
    row.deleted_time = row.deleted_time or utcnow()
    return True


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    org = lookup.organization(db, owner)
    return {
        "type": "normal-user", "password": secrets.token_urlsafe(16), "displayName": f"New User - {suffix}",
        "email": f"{suffix}@example.com", "countryCode": (org.country_codes or ["US"])[0] if org else "US",
        "affiliation": "Example Inc.", "tag": "staff", "isAdmin": owner == b.BUILT_IN_ORG,
        "score": org.init_score if org else 0,
        "signupApplication": (org.default_application if org else "") or b.BUILT_IN_APP,
    }


RULES = KindRules(
    choices=(Choice("type", TYPES, label="user type"),),
    validate=validate, before_save=before_save, protect=built_in(b.BUILT_IN_ORG, b.ADMIN_USER), new=new,
    after_save=after_save, take_along=take_along, keeps_row=soft_deleted,
)
