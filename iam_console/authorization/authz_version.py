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

from iam_console import models as m

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


def line_of(row: m.CasbinRule, old: bool = False) -> list[str]:
    values = [row.ptype, *[getattr(row, f"v{i}") for i in range(6)]]
    if old:  # the values before this flush's change
        state = inspect(row)
        for i, name in enumerate(("ptype", *[f"v{i}" for i in range(6)])):
            deleted = state.attrs[name].history.deleted
            if deleted:
                values[i] = deleted[0]
    while len(values) > 1 and values[-1] == "":
        values.pop()
    return values


Change = tuple[str, str, list[str]]  # (adapter key, add/remove/other, line)


def _changes_of_flush(session: OrmSession) -> dict[str, list[Change]]:
    """{scope: the changes of this flush}; a change that is not a policy line is ('', 'other', [])."""
    changes: dict[str, list[Change]] = {}
    for row, op in [*((r, "add") for r in session.new), *((r, "remove") for r in session.deleted)]:
        if isinstance(row, m.CasbinRule):
            changes.setdefault(scope_of(row), []).append((row.adapter, op, line_of(row)))
        elif isinstance(row, WATCHED) or (isinstance(row, m.User) and row.groups):
            changes.setdefault(scope_of(row), []).append(("", "other", []))
    for row in session.dirty:
        if isinstance(row, m.CasbinRule) and session.is_modified(row):
            changes.setdefault(scope_of(row), []).extend([(row.adapter, "remove", line_of(row, old=True)),
                                                           (row.adapter, "add", line_of(row))])
        elif isinstance(row, WATCHED) and session.is_modified(row):
            changes.setdefault(scope_of(row), []).append(("", "other", []))
        elif isinstance(row, m.User) and _groups_changed(row):
            for scope in {row.owner, *inspect(row).attrs.owner.history.deleted}:
                changes.setdefault(scope, []).append(("", "other", []))
    return changes


KEEP = 10000  # steps of change rows kept per scope: a worker further behind rebuilds


def record(connection: sa.Connection, scope: str, changes: list[Change]) -> None:
    """Raise the scope's counter by one step and write the lines that step changed."""
    raise_versions(connection, [scope])
    version = connection.execute(sa.select(_TABLE.c.version).where(_TABLE.c.scope == scope)).scalar_one()
    if any(op == "other" for _, op, _ in changes):
        changes = [("", "other", [])]
    table = m.AuthzChange.__table__
    connection.execute(table.insert(), [{"scope": scope, "version": version, "adapter": adapter, "op": op,
                                         "rule": line} for adapter, op, line in changes])
    if version % 100 == 0:
        connection.execute(table.delete().where(table.c.scope == scope, table.c.version <= version - KEEP))


def steps(connection: sa.Connection, scope: str, after: int, upto: int) -> list[Change] | None:
    """The line changes of steps after..upto, in order; None when one of them was something else
    (or is no longer kept)."""
    table = m.AuthzChange.__table__
    rows = connection.execute(sa.select(table.c.version, table.c.adapter, table.c.op, table.c.rule)
                              .where(table.c.scope == scope, table.c.version > after, table.c.version <= upto)
                              .order_by(table.c.version, table.c.pk)).all()
    if {row.version for row in rows} != set(range(after + 1, upto + 1)) or any(row.op == "other" for row in rows):
        return None
    return [(row.adapter, row.op, list(row.rule)) for row in rows]


_ready: set[str] = set()  # the databases known to hold the tables (by URL)


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
    changes = _changes_of_flush(session)
    if changes and _has_table(session.connection()):
        for scope, scope_changes in sorted(changes.items()):
            record(session.connection(), scope, scope_changes)


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

