"""What a kind's rules are made of (`KindRules`), and the pieces several kinds share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import outbound
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import Kind
from iam_console.models.base import utcnow

# (db, actor, row): refuse a record that breaks a rule (ServiceError)
Validate = Callable[[Session, Actor, Any], None]
# (db, actor, old or None for a new record, row, the attributes the write changed): complete the row
BeforeSave = Callable[[Session, Actor, Any, Any, set[str]], None]
# (kind, old, new or None for a delete): refuse what may never happen to the record
Protect = Callable[[Kind, Any, Any], None]
# (db, row): refuse a delete that the database forbids
CheckDelete = Callable[[Session, Any], None]
# (db, actor, old or None for a new record, the saved row): write what goes with the record
AfterSave = Callable[[Session, Actor, Any, Any], None]
# (db, row), before the record is deleted: delete or release what belongs to it
TakeAlong = Callable[[Session, Any], None]
# (db, row), after take_along: True when the record stays, flagged deleted (a soft deletion)
KeepsRow = Callable[[Session, Any], bool]
Answer = Callable[[Session, Any], tuple[Any, Any]]


def answer_name(db: Session, row: Any) -> tuple[Any, Any]:
    return row.name, None
# (db, actor, owner, random suffix): the wire fields of a new record, beyond its owner and name
New = Callable[[Session, Actor, str, str], dict[str, Any]]
# (db, actor, owner): the wire fields a new record takes where its writer leaves them out
Defaults = Callable[[Session, Actor, str], dict[str, Any]]


@dataclass(frozen=True)
class Choice:
    """A field that holds one of fixed values (a list field: each of its entries); empty is unset.
    Every write is checked against it, and the console's select and filter offer its values."""

    attribute: str
    values: tuple[str, ...]  # what the console offers
    label: str = ""  # how the refusal names the field; the attribute in words by default
    message: str = ""  # the refusal, when not "The <label> must be a, b or c"; a "%s" gets the value
    # taken too, never offered: values Casdoor itself stores and serves beyond what its pages offer
    # (docs/api.md "Deliberate differences", Choices)
    also: tuple[str, ...] = ()

    def check(self, value: Any) -> None:
        for entry in value if isinstance(value, list) else [value] if value else []:
            if entry not in self.values and entry not in self.also:
                raise ServiceError(self.refusal, *((str(entry)[:100],) if "%s" in self.refusal else ()))

    @property
    def refusal(self) -> str:
        if self.message:
            return self.message
        *first, last = self.values
        listed = f"{', '.join(first)} or {last}" if first else last
        return f"The {self.label or self.attribute.replace('_', ' ')} must be {listed}"


@dataclass(frozen=True)
class KindRules:
    """A kind's own rules; core/rules.py applies them to every write, core/defaults.py
    builds new records with `new`. Each is optional."""

    choices: tuple[Choice, ...] = ()
    validate: Validate | None = None  # after the choices, before the references
    before_save: BeforeSave | None = None  # before validation
    protect: Protect | None = None
    check_delete: CheckDelete | None = None
    after_save: AfterSave | None = None
    take_along: TakeAlong | None = None
    keeps_row: KeepsRow | None = None
    new: New | None = None
    # what a new record holds unless its writer says otherwise (a permission's state and
    # submitter): the console's Add (under `new`'s sample values) and bulk uploads
    # (identity/uploads.py) take them; add-X stores what its client sends, as Casdoor's
    defaults: Defaults | None = None
    # an add without a name gets a generated one ("{kind}_{32 hex digits}"), as Casdoor's
    # add-ldap and add-transaction do
    generate_name: bool = False
    # (db, the added row) -> (data, data2) add-X answers, when not "Affected" (the name of a
    # transaction, a key's new secret)
    answer: Answer | None = None
    # get-X of a missing record (or one out of reach) is an error naming it, not null:
    # the SDKs branch on it where Casdoor answers so (get-token)
    missing_is_error: bool = False
    # an admin-owned kind the SDKs address as {organization}/{name}: such an id, or an
    # added or updated record whose owner is its organization, means admin/{name} of it
    organization_as_owner: bool = False


def check_range(value: int, low: int, high: int | None, label: str) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ServiceError("The %s must be %s", label, bound)


def check_port(db: Session, actor: Actor, row: Any) -> None:
    check_range(row.port, 0, 65535, "port")


def check_destinations(row: Any, urls: tuple[str, ...] = (), hosts: tuple[str, ...] = ()) -> None:
    """Fields naming a place the server itself connects to (a URL it calls, a host it opens a
    connection to), checked as the outbound guard will judge them (core/outbound.py,
    `check_url` and `check_host`): one the guard could never call is refused on save rather than
    failing at every use. An empty field is unset. Only fields the server calls: links the
    browser follows are the browser's."""
    for attribute in urls:
        value = getattr(row, attribute) or ""
        if value:
            outbound.check_url(value, attribute.replace("_", " ").replace("url", "URL"))
    for attribute in hosts:
        value = getattr(row, attribute) or ""
        if value:
            outbound.check_host(value)


def stamp_updated(db: Session, actor: Actor, old: Any, row: Any, changed: set[str]) -> None:
    row.updated_time = utcnow()


def built_in(owner: str, name: str, *, read_only: bool = False,
             suffix: bool = False) -> Protect:
    """The protection of a built-in record, named `owner/name` (`suffix`: every record of `owner`
    whose name ends with `name`): never deleted or renamed, and with `read_only` never changed."""
    def is_built_in(row: m.Named) -> bool:
        return row.owner == owner and (row.name.endswith(name) if suffix else row.name == name)

    def protect(kind: Kind, old: m.Named, new: m.Named | None) -> None:
        if not is_built_in(old):
            return
        if new is None:
            raise ServiceError("The built-in %s %s cannot be deleted", kind.name, old.name)
        if (new.owner, new.name) != (old.owner, old.name):
            raise ServiceError("The built-in %s %s cannot be renamed", kind.name, old.name)
        if read_only:
            raise ServiceError("The built-in %s %s is read-only", kind.name, old.name)
    return protect


# the Casbin objects the built-in organization's permissions run on (seeded: core/seed.py)
BUILT_IN_SUFFIX = "-built-in"
BUILT_IN_CASBIN = built_in(b.BUILT_IN_ORG, BUILT_IN_SUFFIX, read_only=True, suffix=True)


def is_built_in_casbin(owner: str, name: str) -> bool:
    """A model, adapter or enforcer BUILT_IN_CASBIN protects: read-only, never deleted."""
    return owner == b.BUILT_IN_ORG and name.endswith(BUILT_IN_SUFFIX)


def fixed(**values: Any) -> New:
    """New records with these wire fields; "{suffix}" in a text is the new record's random suffix."""
    def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict[str, Any]:
        return {key: (value.format(suffix=suffix) if isinstance(value, str) else value)
                for key, value in values.items()}
    return new
