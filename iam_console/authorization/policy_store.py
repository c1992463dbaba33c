"""Where an adapter keeps its policy lines (docs/architecture.md, "Authorization engine").

- useSameDb: the server's own database, table `casbin_rule`, the lines of the adapter's table
  within its organization (`adapter` = `owner/table`), so that an adapter never names one of
  the server's own tables;
- otherwise: the table the adapter names on the external database it names (mysql, postgres,
  sqlite3; mssql and oracle when their drivers are installed), Casbin's usual layout (`id`,
  `ptype`, `v0`...`v5`), created when missing. The host is checked by the outbound guard and
  the connection goes to the address it checked.

A line is a list `[ptype, v0, ..., vN]` without trailing empty values. Every write goes
through this module, whoever asks: the policy routes and pycasbin's adapter alike; each is Core
statements (a batch of 10,000 lines is one insert) and one counter step recording the lines it
changed, which the engines apply in place (authorization/authz_version.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.authorization import authz_version
from iam_console.core import outbound
from iam_console.core.errors import ServiceError

FIELDS = 6
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
DRIVERS = {"mysql": "mysql+pymysql", "postgres": "postgresql+psycopg", "mssql": "mssql+pyodbc",
           "oracle": "oracle+oracledb"}
DEFAULT_TABLE = "permission_rule"  # the table of a permission that names no adapter


def key(adapter: m.Adapter) -> str:
    return f"{adapter.owner}/{adapter.table or DEFAULT_TABLE}"


def trimmed(line: list[str]) -> list[str]:
    while len(line) > 1 and line[-1] == "":
        line = line[:-1]
    return line


def _values(line: list[str]) -> dict[str, str]:
    ptype, *values = line
    if len(values) > FIELDS:
        raise ServiceError("A policy rule has at most %d values", FIELDS)
    values = [str(v) for v in values] + [""] * (FIELDS - len(values))
    return {"ptype": ptype, **{f"v{i}": v for i, v in enumerate(values)}}


# --- the external table ---

def _table(name: str) -> sa.Table:
    if not _NAME.match(name):
        raise ServiceError("The table name %s is not valid", name)
    return sa.Table(name, sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
                    sa.Column("ptype", sa.String(100), nullable=False, server_default=""),
                    *[sa.Column(f"v{i}", sa.String(100), nullable=False, server_default="") for i in range(FIELDS)])


def external_url(adapter: m.Adapter) -> sa.URL:
    kind = adapter.database_type
    if kind == "sqlite3":
        return sa.URL.create("sqlite", database=adapter.database)
    if kind not in DRIVERS:
        raise ServiceError("The database type %s is not supported", kind)
    entries = outbound.resolve(adapter.host, adapter.port)
    return sa.URL.create(DRIVERS[kind], username=adapter.user or None, password=adapter.password or None,
                         host=entries[0][4][0], port=adapter.port or None, database=adapter.database or None)


@lru_cache(maxsize=32)
def _engine(url: sa.URL) -> sa.Engine:
    try:
        return sa.create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=2) if url.drivername != "sqlite" \
            else sa.create_engine(url)
    except ModuleNotFoundError as exc:
        raise ServiceError("The driver of %s is not installed on this server: %s", url.drivername, exc.name) from None


def external(adapter: m.Adapter) -> tuple[sa.Engine, sa.Table]:
    table = _table(adapter.table)
    engine = _engine(external_url(adapter))
    try:
        table.create(engine, checkfirst=True)
    except sa.exc.SQLAlchemyError as exc:
        raise ServiceError("Failed to connect: %s", str(exc.orig or exc).strip()) from None
    return engine, table


# --- reading and writing ---

def lines(db: Session, adapter: m.Adapter) -> list[list[str]]:
    """Every line of the adapter, in the order they were added."""
    if adapter.use_same_db:
        rule = m.CasbinRule
        rows = db.exec(select(rule.ptype, rule.v0, rule.v1, rule.v2, rule.v3, rule.v4, rule.v5)
                       .where(rule.adapter == key(adapter)).order_by(rule.pk)).all()
    else:
        engine, table = external(adapter)
        with engine.connect() as connection:
            rows = connection.execute(sa.select(*[table.c[c] for c in ("ptype", *[f"v{i}" for i in range(FIELDS)])])
                                      .order_by(table.c.id)).all()
    return [trimmed(list(row)) for row in rows]


def page(db: Session, adapter: m.Adapter, offset: int, limit: int) -> tuple[list[list[str]], int]:
    """(the lines from `offset`, at most `limit` of them, in the order they were added; how many
    the adapter holds): the enforcer page's table reads one page, not the whole table."""
    columns = ("ptype", *[f"v{i}" for i in range(FIELDS)])
    if adapter.use_same_db:
        rule = m.CasbinRule
        mine = rule.adapter == key(adapter)
        total = db.exec(select(sa.func.count()).select_from(rule).where(mine)).one()
        rows = db.exec(select(*[getattr(rule, c) for c in columns]).where(mine).order_by(rule.pk)
                       .offset(offset).limit(limit)).all()
    else:
        engine, table = external(adapter)
        with engine.connect() as connection:
            total = connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            rows = connection.execute(sa.select(*[table.c[c] for c in columns]).order_by(table.c.id)
                                      .offset(offset).limit(limit)).all()
    return [trimmed(list(row)) for row in rows], int(total)


def _where(columns, line: list[str]) -> list:
    return [columns[k] == v for k, v in _values(line).items()]


def _rule_table() -> sa.Table:
    return m.CasbinRule.__table__


def add(db: Session, adapter: m.Adapter, new_lines: Iterable[list[str]]) -> None:
    """The lines appended, in one statement, and recorded as one counter step (authorization/authz_version.py)."""
    new_lines = list(new_lines)
    rows = [_values(line) for line in new_lines]
    if not rows:
        return
    if adapter.use_same_db:
        db.connection().execute(_rule_table().insert(), [{"adapter": key(adapter), **row} for row in rows])
    else:
        engine, table = external(adapter)
        with engine.begin() as connection:
            connection.execute(table.insert(), rows)
    authz_version.record(db.connection(), adapter.owner, [(key(adapter), "add", trimmed(line)) for line in new_lines])


def _same_db_rows(db: Session, adapter: m.Adapter, old_lines: list[list[str]]) -> list[tuple[int, list[str]]]:
    """(pk, line) of the rows equal to one of the lines: a query per line (the table's index is on
    adapter and ptype), or for many lines one read of the adapter's lines."""
    table, mine = _rule_table(), _rule_table().c.adapter == key(adapter)
    columns = [table.c.pk, table.c.ptype, *[table.c[f"v{i}"] for i in range(FIELDS)]]
    connection = db.connection()
    if len(old_lines) <= 10:
        rows = [row for line in old_lines
                for row in connection.execute(sa.select(*columns).where(mine, *_where(table.c, line))).all()]
    else:
        wanted = {tuple(_values(line).values()) for line in old_lines}
        rows = [row for row in connection.execute(sa.select(*columns).where(mine)).all() if tuple(row[1:]) in wanted]
    return [(row[0], trimmed(list(row[1:]))) for row in rows]


def remove(db: Session, adapter: m.Adapter, old_lines: Iterable[list[str]]) -> None:
    """Every row equal to one of the lines deleted, recorded as one counter step."""
    old_lines = list(old_lines)
    if not old_lines:
        return
    if adapter.use_same_db:
        found = _same_db_rows(db, adapter, old_lines)
        keys = [pk for pk, _ in found]
        for start in range(0, len(keys), 500):
            db.connection().execute(_rule_table().delete().where(_rule_table().c.pk.in_(keys[start:start + 500])))
        if found:
            authz_version.record(db.connection(), adapter.owner, [(key(adapter), "remove", line) for _, line in found])
        return
    engine, table = external(adapter)
    with engine.begin() as connection:
        for line in old_lines:
            connection.execute(table.delete().where(*_where(table.c, line)))
    authz_version.record(db.connection(), adapter.owner, [(key(adapter), "remove", trimmed(line))
                                                          for line in old_lines])


def remove_filtered(db: Session, adapter: m.Adapter, ptype: str, index: int, values: list[str]) -> None:
    """pycasbin's remove_filtered_policy: the lines of ptype whose values from `index` on equal `values`
    (an empty value matches anything)."""
    conditions = {f"v{index + i}": v for i, v in enumerate(values) if v != ""}
    if adapter.use_same_db:
        c = m.CasbinRule.__table__.c
        for row in db.exec(select(m.CasbinRule).where(m.CasbinRule.adapter == key(adapter), c.ptype == ptype,
                                                      *[c[k] == v for k, v in conditions.items()])).all():
            db.delete(row)
        db.flush()
        return
    engine, table = external(adapter)
    with engine.begin() as connection:
        connection.execute(table.delete().where(table.c.ptype == ptype,
                                                *[table.c[k] == v for k, v in conditions.items()]))
    authz_version.record(db.connection(), adapter.owner, [("", "other", [])])


def update(db: Session, adapter: m.Adapter, old: list[str], new: list[str]) -> bool:
    """The first line equal to `old` becomes `new`, in place; False when there is none."""
    values = _values(new)
    if adapter.use_same_db:
        table = _rule_table()
        found = db.connection().execute(sa.select(table.c.pk).where(
            table.c.adapter == key(adapter), *_where(table.c, old)).order_by(table.c.pk)).first()
        if found is None:
            return False
        db.connection().execute(table.update().where(table.c.pk == found[0]).values(**values))
    else:
        engine, table = external(adapter)
        with engine.begin() as connection:
            found = connection.execute(sa.select(table.c.id).where(*_where(table.c, old)).order_by(table.c.id)).first()
            if found is None:
                return False
            connection.execute(table.update().where(table.c.id == found[0]).values(**values))
    authz_version.record(db.connection(), adapter.owner, [(key(adapter), "remove", trimmed(old)),
                                                          (key(adapter), "add", trimmed(new))])
    return True
