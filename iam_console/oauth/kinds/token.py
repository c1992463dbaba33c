"""Tokens: the OAuth endpoints issue them; add-token only records one that holds no usable token."""

from __future__ import annotations

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import KindRules, fixed
from iam_console.core.resources import Kind
from iam_console.models.base import to_wire


def issued(token: m.Token) -> bool:
    """A token the OAuth endpoints issued (or a code they handed out), as opposed to a record
    added through add-token, which never holds a usable token."""
    return bool(token.access_token_hash or token.code)


def protect(kind: Kind, old: m.Token, new: m.Token | None) -> None:
    """An issued token is viewed, revoked or deleted: nothing re-points it (user, application,
    organization, grant, scope...), and its lifetime only shortens (0 revokes it), so that
    no revoked or expired token lives again."""
    if new is None or not issued(old):
        return
    before, after = to_wire(old), to_wire(new)
    changed = sorted(key for key in after if key != "expiresIn" and after[key] != before[key])
    if changed:
        raise ServiceError("The field %s of an issued token cannot be changed: revoke or delete the token instead",
                           changed[0])
    if new.expires_in > old.expires_in:
        raise ServiceError("The expiresIn of an issued token can only be lowered (0 revokes it)")


RULES = KindRules(
    protect=protect,
    new=fixed(application=b.BUILT_IN_APP, organization=b.BUILT_IN_ORG, user=b.ADMIN_USER, expiresIn=7200,
              scope="read", tokenType="Bearer", accessToken=""),
    missing_is_error=True,
)
