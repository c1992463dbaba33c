"""Column helpers and the base every table builds on.

Every table keeps a surrogate integer key `pk` (never sent on the wire) and, for
named kinds, the Casdoor identity `owner/name` with a unique constraint. Python
attributes are snake_case; the wire uses Casdoor's camelCase names, derived by
`camel()` unless a table lists an exception in `json_aliases`.
"""

from __future__ import annotations

import copy
import functools
import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class UTCDateTime(sa.types.TypeDecorator):
    """Timezone-aware datetimes on every backend: stored as UTC, read back aware.

    SQLite and MySQL keep no zone, so values are normalised to naive UTC on the
    way in and tagged UTC on the way out; PostgreSQL keeps `timestamptz`.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def load_dialect_impl(self, dialect):
        # MySQL's DATETIME drops fractions of a second unless told to keep them;
        # a createdTime a client gives is kept to the microsecond everywhere
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(self.impl)

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime; use timezone-aware values")
        value = value.astimezone(timezone.utc)
        return value if dialect.name == "postgresql" else value.replace(tzinfo=None)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


# --- field helpers: short names keep the long table declarations readable ---

def text(length: int = 100, default: str = "", **kw: Any) -> Any:
    """A bounded string (MySQL needs a length for VARCHAR and for indexes)."""
    return Field(default=default, sa_type=sa.String(length), **kw)


def long_text(default: str = "") -> Any:
    """Unbounded text: HTML, PEM blocks, model definitions."""
    return Field(default=default, sa_type=sa.Text)


# Plain functions rather than `list`/`dict`: pydantic inspects a default
# factory's signature on every instantiation, and for a builtin that costs
# ~0.2 ms (a User has 13 of them; see bench/upload_users.py).
def _empty_list() -> list:
    return []


def _empty_dict() -> dict:
    return {}


def json_list() -> Any:
    return Field(default_factory=_empty_list, sa_type=sa.JSON)


def json_dict() -> Any:
    return Field(default_factory=_empty_dict, sa_type=sa.JSON)


# Money is exact: a Decimal in Python, an integer count of millionths in the database
# (docs/architecture.md, "Money"). Every amount is a whole number of millionths and below
# MONEY_LIMIT, so that every database adds, subtracts and compares amounts exactly (SQLite's
# REAL column keeps whole numbers below 2**53 exactly) and a wire number (a double) carries it
# without loss: at most 15 significant digits.
MONEY_SCALE = 6
MONEY_UNIT = Decimal(10) ** -MONEY_SCALE
MONEY_LIMIT = Decimal(10) ** 9


def money_of(value: Any) -> Decimal:
    """An amount as a Decimal: from a Decimal, an int, a str, or a float as written (its repr,
    the shortest decimal that is that double). Refuses more than MONEY_SCALE decimals, and
    amounts of MONEY_LIMIT or more."""
    if isinstance(value, bool):
        raise ValueError("an amount is a number")
    if isinstance(value, float):
        value = repr(value)
    amount = Decimal(value)
    if not amount.is_finite():
        raise ValueError("an amount is a finite number")
    if amount != amount.quantize(MONEY_UNIT):
        raise ValueError(f"an amount has at most {MONEY_SCALE} decimal places")
    if abs(amount) >= MONEY_LIMIT:
        raise ValueError(f"an amount is below {MONEY_LIMIT}")
    return amount.quantize(MONEY_UNIT)


def millionths(amount: Decimal) -> int:
    """The stored form of an amount (SQL that does money arithmetic binds these)."""
    return int(money_of(amount).scaleb(MONEY_SCALE))


class Money(sa.types.TypeDecorator):
    """An amount of money: a Decimal in Python, stored as an integer count of millionths."""

    impl = sa.BigInteger
    cache_ok = True

    def load_dialect_impl(self, dialect):
        # SQLite: the column stays REAL (migration 0024 changed the values, not the table, which
        # keeps its triggers); whole numbers below 2**53 are exact there
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.Double())
        return dialect.type_descriptor(sa.BigInteger())

    def process_bind_param(self, value, dialect):
        return None if value is None else millionths(value)

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        return Decimal(int(value)).scaleb(-MONEY_SCALE)

    @property
    def python_type(self):
        return Decimal


def money() -> Any:
    """An amount of money (Casdoor's float64 on the wire): exact, see Money."""
    return Field(default=Decimal(0), sa_type=Money)


def big_int() -> Any:
    """Unix times and byte sizes outgrow 32 bits."""
    return Field(default=0, sa_type=sa.BigInteger)


def moment(**kw: Any) -> Any:
    """An optional point in time; serialised as RFC 3339, or "" when unset."""
    return Field(default=None, sa_type=UTCDateTime, **kw)


def created() -> Any:
    return Field(default_factory=utcnow, sa_type=UTCDateTime, nullable=False)


def named_keys(table: str, *extra: sa.SchemaItem) -> tuple:
    """Unique (owner, name) and the index behind the lists' default order
    (owner filter, newest first, unique tiebreaker)."""
    return (
        sa.UniqueConstraint("owner", "name", name=f"uq_{table}_owner_name"),
        sa.Index(f"ix_{table}_owner_created", "owner", "created_time", "pk"),
        sa.Index(f"ix_{table}_created", "created_time", "pk"),
        *extra,
    )


class Row(SQLModel):
    """Base of every table: a surrogate key and the camelCase wire mapping."""

    pk: int | None = Field(default=None, primary_key=True)

    # attribute -> wire name, where camel() would be wrong
    json_aliases: ClassVar[dict[str, str]] = {}
    # attributes never serialised
    json_hidden: ClassVar[frozenset[str]] = frozenset({"pk"})
    # attributes always sent as "***" (or an empty list)
    json_secrets: ClassVar[frozenset[str]] = frozenset()
    # attributes sent as "***" to all but the admins of the record's organization
    json_admin_secrets: ClassVar[frozenset[str]] = frozenset()
    # False: the secrets are hashes or second-factor seeds, shown to nobody, even with withSecret=1
    json_secrets_revealable: ClassVar[bool] = True
    # (dict column, keys): the keys travel as top-level wire fields
    json_flatten: ClassVar[tuple[str, tuple[str, ...]] | None] = None
    # attributes only the server writes: shown, never read from a client's object
    json_server_set: ClassVar[frozenset[str]] = frozenset()
    # attributes a list's search matches exactly rather than as a substring: each leads an
    # index, so the search is an index range however large the table (the records' filters)
    json_exact_search: ClassVar[frozenset[str]] = frozenset()
    # JSON lists a list's search matches in their JSON text (a webhook's events)
    json_text_search: ClassVar[frozenset[str]] = frozenset()
    # secrets shown only to the admins of the record's own organization: not even a global
    # admin reads them in another organization's records (a verification's live code)
    json_own_admin_secrets: ClassVar[frozenset[str]] = frozenset()


class Named(Row):
    """A Casdoor object addressed as owner/name."""

    owner: str = text(100)
    name: str = text(100)
    created_time: datetime = created()


_CAMEL = re.compile(r"_([a-z0-9])")


def camel(attr: str) -> str:
    return _CAMEL.sub(lambda m: m.group(1).upper(), attr)


@functools.cache
def wire_names(model: type[Row]) -> dict[str, str]:
    """{attribute: wire name} for every serialised column of a table."""
    return {
        attr: model.json_aliases.get(attr, camel(attr))
        for attr in model.model_fields
        if attr not in model.json_hidden
    }


@functools.cache
def attributes_by_wire_name(model: type[Row]) -> dict[str, str]:
    """{lower-cased wire name: attribute}; Casdoor matches JSON keys without case."""
    return {wire.lower(): attr for attr, wire in wire_names(model).items()}


@functools.cache
def _time_columns(model: type[Row]) -> frozenset[str]:
    return frozenset(c.key for c in model.__table__.columns if isinstance(c.type, UTCDateTime))


def attribute_named(model: type[Row], name: str) -> str | None:
    """The attribute a client names, in the wire's camelCase or the database's
    snake_case (the SDKs send sortField=created_time and columns=display_name)."""
    by_wire = attributes_by_wire_name(model)
    lowered = name.lower()
    return by_wire.get(lowered) or by_wire.get(camel(lowered).lower())


def wire_name(model: type[Row], attribute: str) -> str:
    return wire_names(model).get(attribute, attribute)


def detached_copy(row: Row) -> Row:
    """A copy of a row's values, outside any session (the state before an update)."""
    return type(row)(**copy.deepcopy(row.model_dump()))


def format_time(value: datetime | None) -> str:
    """RFC 3339 in UTC, with as many digits of a second as the value has (none
    for the server's own whole-second times)."""
    if value is None:
        return ""
    value = value.astimezone(timezone.utc)
    fraction = f".{value.microsecond:06d}".rstrip("0") if value.microsecond else ""
    return value.strftime("%Y-%m-%dT%H:%M:%S") + fraction + "Z"


def wire_money(amount: Decimal) -> float:
    """An amount as a JSON number, as Casdoor sends it: exact (at most 15 significant digits)."""
    return float(amount)


def to_wire(row: Row) -> dict[str, Any]:
    """The Casdoor JSON object of a row."""
    model = type(row)
    times = _time_columns(model)
    out: dict[str, Any] = {}
    for attr, wire in wire_names(model).items():
        value = getattr(row, attr)
        out[wire] = format_time(value) if attr in times else wire_money(value) if isinstance(value, Decimal) else value
    if row.json_flatten:
        column, keys = row.json_flatten
        stored = getattr(row, column) or {}
        out.update({key: stored.get(key, "") for key in keys})
    return out


def masked(wire: dict[str, Any], model: type[Row]) -> dict[str, Any]:
    """A wire object with the table's secrets replaced: "***" keeps its place, so
    a client that sends it back leaves the stored value unchanged."""
    names = wire_names(model)
    for attr in model.json_secrets:
        key = names[attr]
        if wire.get(key):
            wire[key] = [] if isinstance(wire[key], list) else "***"
    return wire
