"""Casdoor's init_data.json (its `initDataFile`): the records a file lists, added when the server
starts (IAM_INIT_DATA, docs/operations.md) as the built-in organization's admin adds them through
the API — the same rules, reference checks and password hashing — so that data written for
Casdoor, its SDKs' CI data among it, loads here too.

The sections are added in the order their references need (a cert before the application that
signs with it, a role before the permission that lists it). A record that already exists is left
as it is (Casdoor's initDataNewOnly), so a restart adds only what is new. Each record is added on
its own: a refused one is reported with the reason and the others are still added."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Ownership, built_in_kinds
from iam_console.db import session_scope

log = logging.getLogger(__name__)
MAX_BYTES = 50 * 1024 * 1024
# (section of the file, kind) of the core's kinds, in the order references need (the others are
# not in Casdoor's file); every kind of another extension follows, in the registry's order, its
# section named by its plural
SECTIONS = (("organizations", "organization"), ("certs", "cert"), ("providers", "provider"),
            ("applications", "application"), ("groups", "group"), ("users", "user"), ("roles", "role"),
            ("models", "model"), ("adapters", "adapter"), ("enforcers", "enforcer"), ("permissions", "permission"),
            ("ldaps", "ldap"), ("resources", "resource"), ("syncers", "syncer"), ("tokens", "token"),
            ("webhooks", "webhook"), ("invitations", "invitation"))


def sections() -> tuple[tuple[str, str], ...]:
    """Every section this server loads, as (section, kind), in the order they are loaded."""
    core = {kind.name for kind in built_in_kinds()}
    return SECTIONS + tuple((kind.plural_name, name) for name, kind in REGISTRY.items()
                            if name not in core and kind.writable and kind.named)


@dataclass
class Loaded:
    added: list[str] = field(default_factory=list)  # "kind owner/name"
    kept: list[str] = field(default_factory=list)  # existed already
    refused: list[tuple[str, str]] = field(default_factory=list)  # (record, reason)
    skipped: list[str] = field(default_factory=list)  # sections this server does not load

    def summary(self) -> str:
        text = f"{len(self.added)} added, {len(self.kept)} already there, {len(self.refused)} refused"
        return text + (f"; sections not loaded: {', '.join(self.skipped)}" if self.skipped else "")


def read(path: str | Path) -> dict[str, Any]:
    file = Path(path)
    if file.stat().st_size > MAX_BYTES:
        raise ServiceError("The init data file %s is larger than 50 MB", str(file))
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ServiceError("The init data file %s is not JSON: %s", str(file), str(exc)) from None
    if not isinstance(data, dict):
        raise ServiceError("The init data file %s must hold an object of sections", str(file))
    return data


def load(data: dict[str, Any]) -> Loaded:
    """Add the records of Casdoor's init data that do not exist yet, as the built-in admin."""
    loaded = Loaded()
    loading = sections()
    known = {section for section, _ in loading}
    loaded.skipped = sorted(k for k, v in data.items() if k not in known and v)
    for section, kind_name in loading:
        items = data.get(section) or []
        if not isinstance(items, list):
            loaded.refused.append((section, "The section must be a list of records"))
            continue
        for item in items:
            _add(loaded, kind_name, item)
    return loaded


def load_file(path: str | Path) -> Loaded:
    loaded = load(read(path))
    log.info("Init data %s: %s", path, loaded.summary())
    for record, reason in loaded.refused:
        log.warning("Init data %s: %s refused: %s", path, record, reason)
    return loaded


def _add(loaded: Loaded, kind_name: str, item: Any) -> None:
    kind = REGISTRY[kind_name]
    if not isinstance(item, dict):
        loaded.refused.append((kind_name, "A record must be an object"))
        return
    owner = str(item.get("owner") or "")
    if kind.ownership is Ownership.ADMIN:
        owner = owner or b.ADMIN_OWNER
    label = f"{kind_name} {owner}/{item.get('name', '')}"
    try:
        with session_scope() as db:
            if _exists(db, kind_name, owner, str(item.get("name") or "")):
                loaded.kept.append(label)
                return
            crud.add_record(db, _global_admin(db), kind, item)
    except ServiceError as exc:
        loaded.refused.append((label, str(exc)))
        return
    except IntegrityError:  # a record of that key added meanwhile (another worker's start)
        loaded.kept.append(label)
        return
    loaded.added.append(label)


def _exists(db: Session, kind_name: str, owner: str, name: str) -> bool:
    model = REGISTRY[kind_name].model
    return db.exec(select(model.pk).where(model.owner == owner, model.name == name)).first() is not None


def _global_admin(db: Session) -> Actor:
    """An admin user of the built-in organization (built-in/admin unless it was removed)."""
    users = db.exec(select(m.User).where(m.User.owner == b.BUILT_IN_ORG, m.User.is_admin, ~m.User.is_forbidden,
                                         ~m.User.is_deleted)
                    .order_by((m.User.name == "admin").desc(), m.User.name)).all()
    if not users:
        raise ServiceError("The built-in organization has no admin to load the init data as")
    return Actor(user=users[0])
