"""Reading Casdoor JSON objects into rows, as tolerantly as the SDKs need and as
strictly as the database deserves.

Unknown keys are ignored, keys match without case, `[null]`/`[""]` list junk is
dropped, `***` keeps a stored secret; a value of the wrong type or too long for
its column is an error naming the field, and nothing is written."""

from __future__ import annotations

import functools
import math
import re
import sys
import typing
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from iam_console.core.errors import ServiceError
from iam_console.models.base import (
    MONEY_LIMIT,
    MONEY_SCALE,
    Money,
    Row,
    UTCDateTime,
    attributes_by_wire_name,
    money_of,
    wire_names,
)

MASK = "***"
# C0 and C1 control characters and DEL: names, ids and search values refuse them (NUL
# breaks PostgreSQL, the search index and file paths; the others hide in logs and
# screens); free text refuses only NUL, which no database column can keep everywhere
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# names and owners also refuse Unicode's bidirectional controls (Bidi_Control: the marks U+061C,
# U+200E, U+200F, the embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069): a name
# holding one is shown in another order than it is stored, so "evil\u202egnp.exe" reads as
# another name on every screen and in every log
NAME_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# the shape of an email address wherever one is given (verification codes, invoices)
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# what an integer column holds on every database: INTEGER is 32 bits on PostgreSQL and
# MariaDB, BIGINT 64 bits (keyed by "is BigInteger"); floats are finite doubles
INTEGER_RANGE = {False: (-(1 << 31), (1 << 31) - 1), True: (-(1 << 63), (1 << 63) - 1)}
FLOAT_MAX = sys.float_info.max
SERVER_MANAGED = frozenset({"pk"})


@functools.cache
def _columns(model: type[Row]) -> dict[str, sa.Column]:
    return {column.key: column for column in model.__table__.columns}


@functools.cache
def _flattened(model: type[Row]) -> tuple[str, dict[str, str]]:
    """The dict column whose keys travel as top-level fields, and {lower-cased key: key}."""
    column, keys = model.json_flatten or ("", ())
    return column, {key.lower(): key for key in keys}


def parse_time(value: str, wire: str) -> datetime | None:
    if value == "":
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ServiceError("The field %s must be a time in RFC 3339 format", wire) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _whole(value: int | float) -> bool:
    return isinstance(value, int) or (math.isfinite(value) and value.is_integer())


def _clean_list(value: list) -> list:
    return [item for item in value if item is not None and item != ""]


def _coerce(model: type[Row], column: sa.Column, value: Any, wire: str) -> Any:
    kind = column.type
    if isinstance(kind, UTCDateTime):
        if isinstance(value, datetime):
            return value
        if not isinstance(value, str):
            raise ServiceError("The field %s must be a time in RFC 3339 format", wire)
        return parse_time(value, wire)
    if isinstance(kind, sa.JSON):
        annotation = model.model_fields[column.key].annotation
        expected = dict if (typing.get_origin(annotation) or annotation) is dict else list
        if not isinstance(value, expected):
            raise ServiceError("The field %s must be %s", wire, "a list" if expected is list else "an object")
        return _clean_list(value) if isinstance(value, list) else value
    if isinstance(kind, Money):
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
            raise ServiceError("The field %s must be a number", wire)
        try:
            return money_of(value)
        except (ValueError, ArithmeticError):
            raise ServiceError("The field %s must be an amount below %s with at most %d decimal places", wire,
                               str(MONEY_LIMIT), MONEY_SCALE) from None
    if isinstance(kind, sa.Boolean):
        if not isinstance(value, bool):
            raise ServiceError("The field %s must be true or false", wire)
        return value
    if isinstance(kind, sa.Integer):
        if isinstance(value, bool) or not isinstance(value, int | float) or not _whole(value):
            raise ServiceError("The field %s must be an integer", wire)
        low, high = INTEGER_RANGE[isinstance(kind, sa.BigInteger)]
        if not low <= value <= high:
            raise ServiceError("The field %s must be between %d and %d", wire, low, high)
        return int(value)
    if isinstance(kind, sa.Float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ServiceError("The field %s must be a number", wire)
        if not -FLOAT_MAX <= value <= FLOAT_MAX:  # also false for NaN
            raise ServiceError("The field %s must be a finite number", wire)
        return float(value)
    if isinstance(kind, sa.String):
        if not isinstance(value, str):
            raise ServiceError("The field %s must be a string", wire)
        if "\x00" in value:
            raise ServiceError("The field %s cannot contain a NUL character", wire)
        if kind.length is not None and len(value) > kind.length:
            raise ServiceError("The field %s is too long (at most %d characters)", wire, kind.length)
        return value
    return value


def apply(row: Row, data: dict[str, Any], *, keep: frozenset[str] = frozenset()) -> set[str]:
    """Copy the wire object's fields onto the row; returns the attributes that changed.

    `keep` names attributes the caller may not set (they keep their values)."""
    model = type(row)
    if not isinstance(data, dict):
        raise ServiceError("The request body must be a JSON object")
    by_wire = attributes_by_wire_name(model)
    names = wire_names(model)
    columns = _columns(model)
    flatten_column, flat = _flattened(model)
    changed: set[str] = set()
    for key, value in data.items():
        lowered = str(key).lower()
        if lowered in flat and flatten_column:
            if value is None:
                continue
            if not isinstance(value, str):
                raise ServiceError("The field %s must be a string", key)
            stored = dict(getattr(row, flatten_column) or {})
            if stored.get(flat[lowered], "") != value:
                if value:
                    stored[flat[lowered]] = value
                else:
                    stored.pop(flat[lowered], None)
                setattr(row, flatten_column, stored)
                changed.add(flatten_column)
            continue
        attribute = by_wire.get(lowered)
        if attribute is None or attribute in SERVER_MANAGED or attribute in model.json_server_set \
                or attribute in keep or value is None:
            continue
        if value == MASK and (attribute in model.json_secrets or attribute in model.json_admin_secrets):
            continue  # the masked value sent back: keep what is stored
        new = _coerce(model, columns[attribute], value, names[attribute])
        if new is None and not columns[attribute].nullable:
            continue  # an empty time where one is required (createdTime: ""): keep what is there
        if getattr(row, attribute) != new:
            setattr(row, attribute, new)
            changed.add(attribute)
    return changed
