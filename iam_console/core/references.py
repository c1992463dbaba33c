"""References between records: the fields of a record that name other records, declared
on each kind (Kind.references), are checked on every write. Each name must be a record
that exists in the record's own organization, or a shared one where the declaration
allows it, so that no record reaches into another organization through what it lists:
a role cannot hold another organization's users, a group cannot hang under another
organization's group, an application cannot sign with another organization's cert.

A global admin (a user of the built-in organization acting as its admin, not an application's
client) writes Casdoor's data as Casdoor takes it: its references may name an existing record
of any organization (docs/security.md "References")."""

from __future__ import annotations

from collections.abc import Iterator

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Kind, Ownership, Ref, organization_of

CHUNK = 500  # names asked for in one query
# db.info key: the references found in this session, {(target kind, shared): {(organization, name)}};
# bulk writes ask once per name, and a bulk upload puts its own rows there (known)
FOUND = "references"
ACROSS = "across"  # the key of what an across check found (any organization's records)


def reaches_across(actor: Actor) -> bool:
    """Whether the actor's references may name records of other organizations: a global admin
    user's alone (an application's client and an organization admin stay within one)."""
    return actor.user is not None and actor.is_global_admin


def check(db: Session, kind: Kind, row: m.Named, *, across: bool = False) -> None:
    """`across`: names of other organizations' records are taken (reaches_across)."""
    organization = organization_of(kind, row)
    for ref in kind.references:
        if ref.when is not None and getattr(row, ref.when[0]) not in ref.when[1]:
            continue
        wanted: dict[tuple[str, str], str] = {}  # (owner, name) -> the value as written
        for value in _values(kind, row, ref):
            if value in ref.also or (ref.organization_itself and value == organization):
                continue
            owner, name = _split(kind, ref, value, organization)
            if ref.wildcard and name == "*" and owner == organization:
                continue
            if owner != organization and not (ref.shared and owner == b.ADMIN_OWNER) and not across:
                raise _not_ours(kind, ref, value, organization)
            wanted[(owner, name)] = value
        missing = set(wanted) - _existing(db, ref, organization, set(wanted), across)
        if missing:
            value = wanted[min(missing)]
            # named across organizations: one answer for another organization's and a missing record
            if REGISTRY[ref.target].ownership is Ownership.ADMIN and not across:
                raise _not_ours(kind, ref, value, organization)
            raise ServiceError("The field %s names %s, which does not exist",
                               m.wire_name(kind.model, ref.attribute), value[:200])


def known(found: dict, kind: Kind, rows: list[m.Named]) -> None:
    """Take these rows as existing (a workbook's rows, named by rows of the same upload)."""
    for shared in (False, True, ACROSS):
        found.setdefault((kind.name, shared), set()).update((organization_of(kind, row), row.name) for row in rows)


def _values(kind: Kind, row: m.Named, ref: Ref) -> Iterator[str]:
    value = getattr(row, ref.attribute)
    for item in value if isinstance(value, list) else [value]:
        if ref.key and isinstance(item, dict):
            item = item.get(ref.key, "")
        if not isinstance(item, str):
            raise ServiceError("The field %s must hold names", m.wire_name(kind.model, ref.attribute))
        if item:
            yield item


def _split(kind: Kind, ref: Ref, value: str, organization: str) -> tuple[str, str]:
    """(owner, name) of a value; an application's owner is the organization it belongs to."""
    qualified = ref.form == "id" or (ref.form == "either" and "/" in value)
    if not qualified:  # a bare name: the organization's record, else (where allowed) a shared one
        return organization, value
    owner, slash, name = value.partition("/")
    if not slash or not owner or not name or "/" in name:
        raise ServiceError("The field %s must hold owner/name values: %s",
                           m.wire_name(kind.model, ref.attribute), value[:200])
    return owner, name


def _existing(db: Session, ref: Ref, organization: str, wanted: set[tuple[str, str]],
              across: bool = False) -> set[tuple[str, str]]:
    # an across check finds more than an ordinary one: its findings are kept apart
    found: set[tuple[str, str]] = db.info.setdefault(FOUND, {}).setdefault(
        (ref.target, ACROSS if across else ref.shared), set())
    asked = sorted(wanted - found)
    target = REGISTRY[ref.target]
    for start in range(0, len(asked), CHUNK):
        chunk = asked[start:start + CHUNK]
        if target.ownership is Ownership.ADMIN:  # applications: by the organization they belong to
            model = target.model
            for name, owner, is_shared in db.exec(select(model.name, model.organization, model.is_shared).where(
                    model.owner == b.ADMIN_OWNER, model.name.in_([n for _, n in chunk]))).all():
                # the organization's own, or one every organization signs in through
                if across or owner == organization or (ref.shared and (is_shared or name == b.BUILT_IN_APP)):
                    found.add((organization, name))
            continue
        home = {organization, *([b.ADMIN_OWNER] if ref.shared and target.ownership is Ownership.SHARED else [])}
        away = [(o, n) for o, n in chunk if o not in home] if across else []
        for owner in sorted({o for o, _ in away}):  # owner/name of another organization: that one's record
            found.update((owner, n) for n in _names(db, target, [n for o, n in away if o == owner], owner))
        chunk = [pair for pair in chunk if pair not in away]
        if target.ownership is Ownership.SHARED:  # a bare name: the organization's own, else a shared one
            own = set(_names(db, target, [n for o, n in chunk if o == organization], organization))
            shared = set(_names(db, target, [n for o, n in chunk if o == b.ADMIN_OWNER or n not in own],
                                b.ADMIN_OWNER)) if ref.shared else set()
            found.update((o, n) for o, n in chunk if n in shared or (o == organization and n in own))
            continue
        for name in _names(db, target, [n for _, n in chunk], organization):
            found.add((organization, name))
    return wanted & found


def _names(db: Session, target: Kind, names: list[str], owner: str) -> list[str]:
    if not names:
        return []
    model = target.model
    return list(db.exec(select(model.name).where(model.owner == owner, model.name.in_(names))).all())


def _not_ours(kind: Kind, ref: Ref, value: str, organization: str) -> ServiceError:
    template = ("The field %s names %s, which is neither one of the %s of the organization %s nor a shared one"
                if ref.shared else "The field %s names %s, which is not one of the %s of the organization %s")
    return ServiceError(template, m.wire_name(kind.model, ref.attribute), value[:200],
                        REGISTRY[ref.target].plural_name, organization)
