"""The authorization engine's change counters (docs/architecture.md, "Authorization engine").

Every write to what an organization's enforcers are built from raises that organization's
counter in the same transaction: an ORM flush of a model, adapter, enforcer, policy line,
permission, role or group, or of a user whose groups changed, and every bulk statement on
those tables (which raises the counter `*`, read by every enforcer). Installed once for every
Session of the process; the engine reads the counters on each call."""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy import event, inspect
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.orm import Session as OrmSession

from .. import models as m

ANY = "*"  # the scope every enforcer reads besides its organization's
WATCHED = (m.Role, m.Permission, m.CasbinModel, m.Adapter, m.Enforcer, m.Group, m.CasbinRule)
WATCHED_TABLES = frozenset(model.__tablename__ for model in (*WATCHED, m.User))
_TABLE = m.AuthzVersion.__table__


def scope_of(row: object) -> str:
    if isinstance(row, m.CasbinRule):
        return row.adapter.partition("/")[0]
    return row.owner


def raise_versions(connection: sa.Connection, scopes: Iterable[str]) -> None:
    """+1 on each scope's counter (created at 1), inside the caller's transaction."""
    dialect = connection.dialect.name
    for scope in sorted(set(scopes)):
        if dialect == "sqlite":
            stmt = sqlite.insert(_TABLE).values(scope=scope, version=1)
            stmt = stmt.on_conflict_do_update(index_elements=["scope"], set_={"version": _TABLE.c.version + 1})
        elif dialect == "postgresql":
            stmt = postgresql.insert(_TABLE).values(scope=scope, version=1)
            stmt = stmt.on_conflict_do_update(index_elements=["scope"], set_={"version": _TABLE.c.version + 1})
        else:
            stmt = mysql.insert(_TABLE).values(scope=scope, version=1)
            stmt = stmt.on_duplicate_key_update(version=_TABLE.c.version + 1)
        connection.execute(stmt)


def read(connection: sa.Connection, organization: str) -> tuple[int, int]:
    """(the organization's counter, the `*` counter); 0 for a counter never raised."""
    rows = dict(connection.execute(sa.select(_TABLE.c.scope, _TABLE.c.version)
                                   .where(_TABLE.c.scope.in_((organization, ANY)))).all())
    return rows.get(organization, 0), rows.get(ANY, 0)


def _groups_changed(user: m.User) -> bool:
    state = inspect(user)
    return any(state.attrs[name].history.has_changes() for name in ("groups", "owner"))


def _scopes_of_flush(session: OrmSession) -> set[str]:
    scopes: set[str] = set()
    for row in (*session.new, *session.deleted):
        if isinstance(row, WATCHED) or (isinstance(row, m.User) and row.groups):
            scopes.add(scope_of(row))
    for row in session.dirty:
        if isinstance(row, WATCHED) and session.is_modified(row):
            scopes.add(scope_of(row))
        elif isinstance(row, m.User) and _groups_changed(row):
            scopes.update({row.owner, *inspect(row).attrs.owner.history.deleted})
    return scopes


_ready: set[str] = set()  # the databases known to hold the table (by URL)


def _has_table(connection: sa.Connection) -> bool:
    """False while a database is older than the table (a migration's own writes, a test's old schema)."""
    url = connection.engine.url.render_as_string()
    if url not in _ready and sa.inspect(connection).has_table(_TABLE.name):
        _ready.add(url)
    return url in _ready


def forget() -> None:
    """Read again whether each database holds the table (after a migration)."""
    _ready.clear()


def _before_flush(session: OrmSession, _context, _instances) -> None:
    scopes = _scopes_of_flush(session)
    if scopes and _has_table(session.connection()):
        raise_versions(session.connection(), scopes)


def _bulk_scopes(state) -> set[str]:
    """The scopes a bulk statement on a watched table touches ({'*'} when it cannot tell)."""
    statement = state.statement
    table = getattr(statement, "table", None)
    if table is None or getattr(table, "name", None) not in WATCHED_TABLES:
        return set()
    params = state.parameters
    rows = params if isinstance(params, list) else [params] if isinstance(params, dict) else []
    if state.is_insert and rows and all("owner" in row for row in rows):
        if table.name == m.User.__tablename__:
            return {row["owner"] for row in rows if row.get("groups")}
        return {row["owner"] for row in rows}
    if table.name == m.User.__tablename__ and state.is_update:
        values = {getattr(c, "key", str(c)) for c in getattr(statement, "_values", None) or {}}
        if values and not values & {"groups", "owner"}:
            return set()
    return {ANY}


def _do_orm_execute(state) -> None:
    if not (state.is_insert or state.is_update or state.is_delete):
        return
    scopes = _bulk_scopes(state)
    if scopes and _has_table(state.session.connection()):
        raise_versions(state.session.connection(), scopes)


_installed = False


def install() -> None:
    """Watch every Session of the process (idempotent)."""
    global _installed
    if not _installed:
        event.listen(OrmSession, "before_flush", _before_flush)
        event.listen(OrmSession, "do_orm_execute", _do_orm_execute)
        _installed = True

