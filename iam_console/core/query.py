"""Paging, sorting and searching lists in SQL: Casdoor's p, pageSize, field,
value, sortField and sortOrder parameters.

`field` and `sortField` must name a scalar column of the kind, in camelCase or
snake_case (the SDKs send both); they are never pasted into SQL. Sorting always ends with the
primary key, so pages never repeat or drop a row."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql import visitors
from sqlmodel import Session, func, select

from iam_console.core.errors import ServiceError
from iam_console.core.wire import CONTROL_CHARACTERS
from iam_console.models.base import Named, Row, attribute_named

# A list asked for without p/pageSize (the SDKs' get_Xs) still stops here:
# nothing answers with a whole million-row table.
UNPAGED_LIMIT = 10_000
MAX_PAGE_SIZE = 1_000
MAX_VALUE_LENGTH = 200
_SCALAR_TYPES = (sa.String, sa.Integer, sa.Boolean, sa.Float, sa.DateTime, sa.types.TypeDecorator)


@dataclass(frozen=True)
class ListQuery:
    page: int | None = None
    page_size: int | None = None
    field: str = ""
    value: str = ""
    sort_field: str = ""
    sort_order: str = ""
    # the 1-based row a page starts at instead of a page number (SCIM's startIndex, RFC 7644 §3.4.2.4):
    # never clamped, a start past the end finds no rows
    start: int | None = None

    @property
    def paged(self) -> bool:
        return (self.page is not None or self.start is not None) and self.page_size is not None


@dataclass(frozen=True)
class Page:
    rows: list[Any]
    total: int | None  # None when the list was not paged (Casdoor's data2 is then null)
    page: int | None = None


def _int_or_none(raw: str | None, name: str) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ServiceError("The parameter %s must be an integer", name) from None
    if value < 1:
        raise ServiceError("The parameter %s must be at least 1", name)
    return value


def parse_list_query(params: dict[str, str]) -> ListQuery:
    """From query parameters as Casdoor names them."""
    size = _int_or_none(params.get("pageSize"), "pageSize")
    if size is not None and size > MAX_PAGE_SIZE:
        raise ServiceError("The parameter pageSize must be at most %d", MAX_PAGE_SIZE)
    value = params.get("value", "") or ""
    if len(value) > MAX_VALUE_LENGTH:
        raise ServiceError("The search value is too long (at most %d characters)", MAX_VALUE_LENGTH)
    if CONTROL_CHARACTERS.search(value):
        raise ServiceError("The search value cannot contain control characters")
    return ListQuery(
        page=_int_or_none(params.get("p"), "p"), page_size=size,
        field=params.get("field", "") or "", value=value,
        sort_field=params.get("sortField", "") or "", sort_order=params.get("sortOrder", "") or "",
    )


def scalar_column(model: type[Row], wire_name: str, purpose: str) -> sa.ColumnElement:
    """The column a wire name stands for, if it is one a list can search or sort on."""
    attribute = attribute_named(model, wire_name)
    if attribute in model.json_secrets | model.json_admin_secrets | model.json_own_admin_secrets:
        attribute = None  # a LIKE on a secret would let a caller guess it a character at a time
    column = model.__table__.columns.get(attribute) if attribute else None
    if column is not None and purpose == "search" and attribute in model.json_text_search:
        return getattr(model, attribute)  # a list searched as its JSON text
    if column is None or not isinstance(column.type, _SCALAR_TYPES):
        raise ServiceError("The %s field %s is not a column of this list", purpose, wire_name[:100])
    return getattr(model, attribute)


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# Columns with a trigram index (migration 0002): an FTS5 table on SQLite; on
# PostgreSQL pg_trgm indexes serve ILIKE directly.
FTS_TABLES = {"user": ("user_search", frozenset({"name", "display_name", "email", "phone"}))}
TRIGRAM = 3


# Above this many matches, a page is found fastest by walking the list's order and
# stopping at the first matches; below it, by starting from the matches.
DENSE_MATCHES = 5_000


@dataclass(frozen=True)
class Search:
    """A condition on the list beyond its scope: a search, or a caller's filter
    such as the users of a group."""
    clause: sa.ColumnElement
    indexed: bool  # served by an index of its own (FTS5, user_group): it drives the count and sparse pages
    probe: sa.ColumnElement | None = None  # the same test row by row, for walking the list's order
    few: sa.ColumnElement | None = None  # the same again, for driving a page when matches are known to be few

    @property
    def tested(self) -> sa.ColumnElement:
        return self.clause if self.probe is None else self.probe


def _fts_match(model: type[Row], column: sa.ColumnElement, value: str) -> sa.ColumnElement:
    table, _ = FTS_TABLES[model.__tablename__]
    phrase = '"' + value.replace('"', '""') + '"'
    matches = sa.select(sa.literal_column("rowid")).select_from(sa.table(table)).where(
        sa.literal_column(table).op("MATCH")(f"{column.key} : {phrase}"))
    return model.pk.in_(matches)


def _truthy(value: str) -> bool:
    """A boolean column's searched or filtered value."""
    return value.lower() in ("1", "true", "yes")


def search_clause(model: type[Row], query: ListQuery, dialect: str = "") -> Search | None:
    if not query.field or query.value == "":
        return None
    column = scalar_column(model, query.field, "search")
    if isinstance(column.type, sa.Boolean):
        return Search(column == _truthy(query.value), False)
    if column.key in model.json_exact_search:
        return Search(column == query.value, False)
    indexed = FTS_TABLES.get(model.__tablename__, ("", frozenset()))[1]
    if dialect == "sqlite" and column.key in indexed and len(query.value) >= TRIGRAM:
        return Search(_fts_match(model, column, query.value), True)  # case-insensitive, like ILIKE
    if not isinstance(column.type, sa.String):
        column = sa.cast(column, sa.String)
    pattern = f"%{_escape_like(query.value)}%"
    # SQLite's LIKE ignores ASCII case already; ILIKE would lower() every row first
    like = column.like if dialect == "sqlite" else column.ilike
    return Search(like(pattern, escape="\\"), False)


def equal_to(model: type[Row], wire_name: str, value: str) -> sa.ColumnElement[bool]:
    """A column filter of the console: the column holds exactly this value (a filter offers
    the values a column holds, so unlike a search it does not match a part)."""
    if len(value) > MAX_VALUE_LENGTH or CONTROL_CHARACTERS.search(value):
        raise ServiceError("The filter value of %s is not one the list offers", wire_name[:100])
    column = scalar_column(model, wire_name, "filter")
    if isinstance(column.type, sa.Boolean):
        return column == _truthy(value)
    if not isinstance(column.type, sa.String):
        column = sa.cast(column, sa.String)
    return column == value


def _off_index(model: type[Row], clause: sa.ColumnElement) -> sa.ColumnElement:
    """The clause with the table's columns written +"t"."c": SQLite's way of keeping
    a term from choosing the plan, so the FTS match drives the query instead."""
    table = model.__table__

    def swap(element):
        if isinstance(element, sa.Column) and element.table is table:
            return sa.literal_column(f'+"{table.name}"."{element.name}"', type_=element.type)
        return None

    return visitors.replacement_traverse(clause, {}, swap)


def order_by(model: type[Row], query: ListQuery) -> list[sa.ColumnElement]:
    column = scalar_column(model, query.sort_field, "sort") if query.sort_field else model.created_time
    descending = query.sort_order != "ascend"
    direction = sa.desc if descending else sa.asc
    return [direction(column), direction(model.pk)]


def run(db: Session, model: type[Row], where: list[sa.ColumnElement], query: ListQuery,
        counted: Callable[[], int | None] | None = None, filters: Sequence[Search] = ()) -> Page:
    """One page of rows (and the total), or the unpaged list up to UNPAGED_LIMIT.

    `counted` gives the total (from the maintained counts when `where` is a plain
    owner filter, or from the membership table for a group's users); it is used
    only when there is no search. `filters` are the caller's conditions with an
    index of their own, used as the search's are."""
    dialect = db.get_bind().dialect.name
    found = search_clause(model, query, dialect)
    conditions = [*filters, found] if found else list(filters)
    clauses = [*where, *(c.tested for c in conditions)]
    # with an indexed condition: it drives the count, and the page when matches are few
    # (on SQLite the scope's terms are kept from choosing the plan; PostgreSQL's planner weighs them)
    keep = (lambda c: _off_index(model, c)) if dialect == "sqlite" else (lambda c: c)
    indexed = any(c.indexed for c in conditions)
    driven = [*(keep(c) for c in where), *(c.clause for c in conditions)] if indexed else clauses
    ordering = order_by(model, query)
    if not query.paged:
        return Page(list(db.exec(select(model).where(*driven).order_by(*ordering).limit(UNPAGED_LIMIT))), None)
    total = counted() if counted is not None and found is None else None
    if total is None:
        total = db.exec(select(func.count()).select_from(model).where(*driven)).one()
    if total == 0:
        return Page([], 0, 1)  # no page to look for (without an index, that look is a whole scan)
    if total <= DENSE_MATCHES:
        few = [*(keep(c) for c in where), *(c.clause if c.few is None else c.few for c in conditions)]
        statement = select(model).where(*(few if indexed else clauses))
    else:
        statement = select(model).where(*clauses)
    statement = statement.order_by(*ordering)
    if query.start is not None:
        return Page(list(db.exec(statement.offset(query.start - 1).limit(query.page_size))), total)
    last_page = max(1, math.ceil(total / query.page_size))
    page = min(query.page, last_page)  # Casdoor clamps an out-of-range page to the last one
    rows = db.exec(statement.offset((page - 1) * query.page_size).limit(query.page_size))
    return Page(list(rows), total, page)


def named(model: type[Named], pairs: list[tuple[str, str]]) -> sa.ColumnElement[bool]:
    """The rows of these (owner, name) pairs."""
    return sa.or_(*(sa.and_(model.owner == owner, model.name == name) for owner, name in pairs))
