"""Bulk uploads of users, roles, permissions and groups from .xlsx workbooks
(upload-users, upload-roles, upload-permissions, upload-groups).

Every row is added through the same rules as add-X (crud.parse_new and
crud.complete_new: wire parsing, access policy, the kind's defaults, password
hashing, validation), over the defaults the console's Add gives a new record
(KindRules.defaults: a permission's state, submitter and isEnabled). A record that already exists (same owner/name) is
skipped, as Casdoor does; any other bad row refuses the whole file with its
row number (the header is row 1), and nothing is written.

The work runs in two passes so that memory stays flat and the database's
write lock is held only while rows are inserted:
1. the workbook is read row by row (openpyxl, read-only) by a child process
   (identity/xlsx_rows.py), on another core and under a memory limit; each
   row is parsed, checked and completed in batches, and the finished column
   values go to a spool, a temporary SQLite file on disk that also catches
   names repeated in the file; password hashing (argon2id: ~25 ms a password)
   runs on a few threads, each with its own read-only session;
2. the spool is inserted in batches of BATCH rows inside the caller's
   transaction, which commits or rolls back as a whole.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import typing
import zipfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import configure_mappers
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import crud, kinds, lookup, policy, references
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json
from iam_console.core.resources import REGISTRY, Kind
from iam_console.identity import xlsx_rows
from iam_console.models.base import Money, UTCDateTime, attributes_by_wire_name, wire_names
from iam_console.settings import settings
from iam_console.workers import courtesy

UPLOADABLE = ("user", "role", "permission", "group")
MAX_UPLOAD_BYTES = 50 * 1024 * 1024
XLSX_ACCEPT = {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": [".xlsx"]}  # a file picker's
MAX_UNCOMPRESSED_BYTES = 1024 * 1024 * 1024
# the workbook reader's limits (docs/api.md, "Uploads"): its address space, the rows it
# reads after the header (twice the 100,000 users a bulk import is sized for) and its
# processor time (100,000 users of 8 columns take about 11 s to read here, of 30 columns 36 s)
READER_MEMORY_BYTES = xlsx_rows.MEMORY_LIMIT
MAX_ROWS = xlsx_rows.ROW_LIMIT
READER_CPU_SECONDS = xlsx_rows.CPU_SECONDS
BATCH = 1000
HEADER_ROW = 1
_KEYS = frozenset({"owner", "name"})


class RowError(ServiceError):
    """A row of the file that cannot be imported; the whole file is refused."""

    def __init__(self, row: int, message: str) -> None:
        super().__init__("Row %d: %s", row, message)
        self.row = row
        self.reason = message


@dataclass
class ImportResult:
    kind: str
    plural: str
    rows: int = 0  # data rows read (blank rows not counted)
    added: int = 0
    skipped: int = 0  # already existed: left as they were
    ignored_columns: list[str] = field(default_factory=list)

    @property
    def affected(self) -> str:
        return crud.AFFECTED if self.added else crud.UNAFFECTED

    def message(self) -> str:
        text = f"Added {self.added} {self.kind if self.added == 1 else self.plural}"
        if self.skipped:
            text += f"; skipped {self.skipped} that already existed"
        if self.ignored_columns:
            text += f"; ignored the unknown columns {', '.join(self.ignored_columns)}"
        return text


def uploadable(kind_name: str) -> Kind:
    if kind_name not in UPLOADABLE:
        raise ServiceError("Uploads are for users, roles, permissions and groups")
    return REGISTRY[kind_name]


# --- blank records ---

@functools.cache
def _template(model: type[m.Named]) -> tuple[dict[str, Any], tuple[tuple[str, Callable[[], Any]], ...]]:
    """A blank record's values: the constants, and the fields whose default comes from a factory."""
    configure_mappers()  # what the first `model()` would do; new_instance() does not
    static: dict[str, Any] = {}
    factories: list[tuple[str, Callable[[], Any]]] = []
    for attribute, info in model.model_fields.items():
        if info.default_factory is not None:
            factories.append((attribute, info.default_factory))
        else:
            static[attribute] = info.default
    return static, tuple(factories)


def blank(model: type[m.Named]) -> m.Named:
    """The same record as `model()`, ~50 times faster: built the way SQLAlchemy builds
    a row it loads (SQLModel supports that path), with every field at its default.
    `model()` costs ~0.9 ms for a user (pydantic initialises 97 fields one by one),
    which alone would take 90 s of a 100,000-row upload."""
    static, factories = _template(model)
    row = model.__mapper__.class_manager.new_instance()
    values = row.__dict__
    values.update(static)
    for attribute, factory in factories:
        values[attribute] = factory()
    return row


# --- reading workbooks ---

_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}
_LIST_SEPARATORS = re.compile(r"[,;]")


def _boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return value  # wire.apply refuses it, naming the field


def _integer(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            parsed = float(value)
        except ValueError:
            return value
        return parsed if math.isfinite(parsed) else value
    return value


def _amount(value: Any) -> Any:
    """Money from a cell: a text as the decimal it spells (never through a float)."""
    if isinstance(value, str):
        try:
            parsed = Decimal(value.strip())
        except ArithmeticError:
            return value
        return parsed if parsed.is_finite() else value
    return value


def _text(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time() else value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    return value


def _moment(value: Any) -> Any:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value  # text: RFC 3339, parsed by wire.apply


def _list(value: Any) -> Any:
    """A JSON array as is; otherwise items separated by commas (or Casdoor's semicolons)."""
    if not isinstance(value, str):
        return [_text(value)]
    if value.startswith("["):
        with contextlib.suppress(ValueError):
            parsed = parse_json(value)
            if isinstance(parsed, list):
                return parsed
    return [item.strip() for item in _LIST_SEPARATORS.split(value) if item.strip()]


def _object(value: Any) -> Any:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return parse_json(value)
    return value  # wire.apply refuses what is not an object


def _converter(model: type[m.Named], column: sa.Column) -> Callable[[Any], Any]:
    kind = column.type
    if isinstance(kind, UTCDateTime):
        return _moment
    if isinstance(kind, sa.JSON):
        annotation = model.model_fields[column.key].annotation
        return _object if (typing.get_origin(annotation) or annotation) is dict else _list
    if isinstance(kind, sa.Boolean):
        return _boolean
    if isinstance(kind, sa.Integer):
        return _integer
    if isinstance(kind, sa.Float):
        return _number
    if isinstance(kind, Money):
        return _amount
    return _text


converter = _converter  # the same conversions for a syncer's rows (operations/syncers.py)


@dataclass
class Column:
    index: int
    wire: str
    convert: Callable[[Any], Any]
    strip: bool  # secrets (passwords) keep their spaces


@dataclass
class Sheet:
    """The first worksheet of a workbook: `rows` yields one wire object per line
    after the header (an empty one for a blank line, so that numbering holds)."""

    columns: list[Column]
    ignored: list[str]
    rows: Iterator[dict[str, Any]]


def _columns(model: type[m.Named], header: tuple) -> tuple[list[Column], list[str]]:
    by_wire = attributes_by_wire_name(model)
    names = wire_names(model)
    table = {c.key: c for c in model.__table__.columns}
    flat = {key.lower(): key for key in (model.json_flatten or ("", ()))[1]}
    columns: list[Column] = []
    ignored: list[str] = []
    seen: dict[str, int] = {}
    for index, cell in enumerate(header):
        title = str(_text(cell)).strip() if cell is not None else ""
        if not title:
            continue
        key = title.lower()
        attribute = by_wire.get(key)
        if attribute is not None:
            column = Column(index, names[attribute], _converter(model, table[attribute]),
                            attribute not in model.json_secrets)
        elif key in flat:
            column = Column(index, flat[key], _text, True)
        else:
            ignored.append(title)
            continue
        if column.wire in seen:
            raise ServiceError("The column %s appears twice in the first row", column.wire)
        seen[column.wire] = index
        columns.append(column)
    name = names["name"]
    if name not in seen:
        raise ServiceError("The first row must name the columns, and one of them must be %s", name)
    return columns, ignored


def _wire_rows(columns: list[Column], rows: Iterator[list]) -> Iterator[dict[str, Any]]:
    for values in rows:
        data: dict[str, Any] = {}
        width = len(values)
        for column in columns:
            if column.index >= width:
                continue
            value = values[column.index]
            if isinstance(value, str):
                if column.strip:
                    value = value.strip()
                if not value.strip():
                    continue
            elif value is None:
                continue
            data[column.wire] = column.convert(value)
        yield data


INVALID = "The file is not a valid .xlsx workbook"
READER_ERRORS = {
    "invalid": INVALID,
    "no-sheet": "The workbook has no worksheet",
    "too-large": "The workbook is too large to read",
}


def _reader_error(code: object) -> ServiceError:
    if code == "too-many-rows":
        return ServiceError("The workbook has more than %d rows after the first", MAX_ROWS)
    if code == "too-slow":
        return ServiceError("The workbook takes more than %d seconds of processor time to read", READER_CPU_SECONDS)
    return ServiceError(READER_ERRORS.get(code, INVALID))


def _check_archive(path: str) -> None:
    """A zip whose parts, uncompressed, stay under MAX_UNCOMPRESSED_BYTES (zipfile
    stops at the sizes the archive declares, so a zip bomb cannot lie past this)."""
    try:
        with zipfile.ZipFile(path) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ServiceError(INVALID) from None
    if total > MAX_UNCOMPRESSED_BYTES:
        raise ServiceError("The workbook is too large (over %d MB uncompressed)", MAX_UNCOMPRESSED_BYTES >> 20)


def _reader_rows(stream: BinaryIO) -> Iterator[list]:
    for line in stream:
        try:
            message = xlsx_rows.decode(line)
        except ValueError:
            break  # a line cut short: the reader died writing it
        if "rows" in message:
            yield from message["rows"]
        elif message.get("end"):
            return
        else:
            raise _reader_error(message.get("error"))
    raise ServiceError("The workbook could not be read")  # the reader died


@contextlib.contextmanager
def _worksheet_rows(path: str) -> Iterator[Iterator[list]]:
    """The rows of the first worksheet, read by a child process (identity/xlsx_rows.py)."""
    limits = (READER_MEMORY_BYTES, MAX_ROWS, READER_CPU_SECONDS, settings.cpu_nice)
    child = subprocess.Popen([sys.executable, "-I", xlsx_rows.__file__, path, *map(str, limits)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        yield _reader_rows(child.stdout)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()


@contextlib.contextmanager
def _as_path(source: BinaryIO | str | Path) -> Iterator[str]:
    if isinstance(source, str | Path):
        yield str(source)
        return
    with tempfile.TemporaryDirectory(prefix="iam-upload-") as directory:
        path = os.path.join(directory, "upload.xlsx")
        with open(path, "wb") as copy:
            shutil.copyfileobj(source, copy, 1 << 20)
        yield path


@contextlib.contextmanager
def open_workbook(source: BinaryIO | str | Path, kind: Kind) -> Iterator[Sheet]:
    """The first worksheet of an .xlsx file, read lazily (openpyxl, read-only, in a
    child process): the first row names the fields (wire names, any case); cells
    are typed by the field they fill."""
    with _as_path(source) as path:
        _check_archive(path)
        with _worksheet_rows(path) as rows:
            header = next(rows, None)
            if header is None:
                raise ServiceError("The workbook is empty")
            columns, ignored = _columns(kind.model, tuple(header))
            yield Sheet(columns, ignored, _wire_rows(columns, rows))


def check_file_name(filename: str) -> None:
    if not filename.lower().endswith(".xlsx"):
        raise ServiceError("Only .xlsx files can be uploaded")


# --- importing ---

def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class _Readers:
    """One read-only session per worker thread (Sessions are not thread-safe); each
    remembers the organizations it found, so validation asks once per organization."""

    def __init__(self, bind: sa.Engine | sa.Connection) -> None:
        self.bind = bind.engine if isinstance(bind, sa.Connection) else bind  # a connection is one thread's
        self.local = threading.local()
        self.sessions: list[Session] = []
        self.lock = threading.Lock()
        self.found: dict = {}  # the references every session found, the workbook's own rows among them

    def session(self) -> Session:
        db = getattr(self.local, "db", None)
        if db is None:
            db = Session(self.bind, expire_on_commit=False, autoflush=False)
            db.info[lookup.ORGANIZATION_CACHE] = {}
            db.info[references.FOUND] = self.found
            self.local.db = db
            with self.lock:
                self.sessions.append(db)
        return db

    def close(self) -> None:
        for db in self.sessions:
            db.close()


class _Spool:
    """Finished rows on disk: one pickled list a batch, in file order, and every
    row's owner/name with its line, unique across the file."""

    def __init__(self, directory: str) -> None:
        self.db = sqlite3.connect(os.path.join(directory, "spool.db"), isolation_level=None)
        self.db.executescript("""
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE batch (number INTEGER PRIMARY KEY, rows BLOB);
            CREATE TABLE line (owner TEXT, name TEXT, line INTEGER, PRIMARY KEY (owner, name));
        """)

    def line_of(self, owner: str, name: str) -> int | None:
        found = self.db.execute("SELECT line FROM line WHERE owner = ? AND name = ?", (owner, name)).fetchone()
        return found[0] if found else None

    def put(self, lines: list[tuple[str, str, int]], rows: list[tuple[int, dict[str, Any]]]) -> None:
        """A batch: its keys (an IntegrityError if one is on an earlier batch), then its rows."""
        self.db.execute("BEGIN")
        try:
            self.db.executemany("INSERT INTO line VALUES (?, ?, ?)", lines)
        except sqlite3.IntegrityError:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("INSERT INTO batch (rows) VALUES (?)", (pickle.dumps(rows, pickle.HIGHEST_PROTOCOL),))
        self.db.execute("COMMIT")

    def batches(self) -> Iterator[list[tuple[int, dict[str, Any]]]]:
        for (rows,) in self.db.execute("SELECT rows FROM batch ORDER BY number"):
            yield pickle.loads(rows)

    def close(self) -> None:
        self.db.close()


def _owner_given(data: dict[str, Any]) -> bool:
    if "owner" in data:  # as the workbook reader spells it
        return data["owner"] not in (None, "")
    return any(str(key).lower() == "owner" and value not in (None, "") for key, value in data.items())


def _existing(db: Session, kind: Kind, keys: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of these owner/name pairs exist already: one query per owner."""
    model = kind.model
    by_owner: dict[str, list[str]] = {}
    for owner, name in keys:
        by_owner.setdefault(owner, []).append(name)
    found: set[tuple[str, str]] = set()
    for owner, names in by_owner.items():
        rows = db.exec(select(model.name).where(model.owner == owner, model.name.in_(names))).all()
        found.update((owner, name) for name in rows)
    return found


@dataclass
class _Pending:
    line: int
    row: m.Named
    changed: set[str]


def _complete(readers: _Readers, actor: Actor, kind: Kind, chunk: list[_Pending]) -> None:
    db = readers.session()
    for item in chunk:
        courtesy()
        try:
            crud.complete_new(db, actor, kind, item.row, item.changed)
        except ServiceError as exc:
            raise RowError(item.line, str(exc)) from None


def _slow(kind: Kind, batch: list[_Pending]) -> bool:
    """Worth spreading over threads: password hashing releases the GIL."""
    return kind.name == "user" and sum(1 for item in batch if item.row.password) >= 8


class _Importer:
    def __init__(self, db: Session, actor: Actor, kind: Kind, spool: _Spool, pool: ThreadPoolExecutor,
                 workers: int, readers: _Readers, result: ImportResult) -> None:
        self.db, self.actor, self.kind = db, actor, kind
        self.spool, self.pool, self.workers, self.readers, self.result = spool, pool, workers, readers, result
        self.columns = [c.key for c in kind.model.__table__.columns if c.key != "pk"]
        values = blank(kind.model).__dict__
        self.reference = {column: values[column] for column in self.columns}

    def parse(self, line: int, data: dict[str, Any]) -> _Pending:
        if not _owner_given(data):
            data = {**data, "owner": self.actor.organization}
        data = self._with_defaults(data)
        try:
            row, changed = crud.parse_new(self.actor, self.kind, data, blank(self.kind.model))
        except ServiceError as exc:
            raise RowError(line, str(exc)) from None
        return _Pending(line, row, changed)

    def _with_defaults(self, data: dict[str, Any]) -> dict[str, Any]:
        """The row over the kind's defaults for a new record (a permission's state, submitter and
        isEnabled), as the console's Add has them: a column the row leaves empty takes its default."""
        defaults = kinds.of(self.kind.name).defaults
        if defaults is None:
            return data
        given = {str(key).lower(): value for key, value in data.items()}
        owner = given.get("owner")
        missing = {key: value for key, value in defaults(self.db, self.actor, str(owner)).items()
                   if key.lower() not in given}
        return {**missing, **data}

    def stage(self, batch: list[_Pending]) -> None:
        """Pass 1 for one batch: skip what exists, refuse repeats, complete, spool."""
        existing = _existing(self.db, self.kind, ((item.row.owner, item.row.name) for item in batch))
        fresh: list[_Pending] = []
        lines: dict[tuple[str, str], int] = {}
        for item in batch:
            key = (item.row.owner, item.row.name)
            if key in existing:
                self.result.skipped += 1
                continue
            if key in lines:
                self._repeated(item, lines[key])
            lines[key] = item.line
            fresh.append(item)
        # a row may name a record that this batch or an earlier one adds (a group's parent, a sub-role)
        references.known(self.readers.found, self.kind, [item.row for item in fresh])
        workers = self.workers if _slow(self.kind, fresh) else 1
        size = math.ceil(len(fresh) / workers) if fresh else 1
        chunks = [fresh[i:i + size] for i in range(0, len(fresh), size)]
        for _ in self.pool.map(functools.partial(_complete, self.readers, self.actor, self.kind), chunks):
            pass
        reference, columns, rows = self.reference, self.columns, []
        for item in fresh:
            values = item.row.__dict__
            rows.append((item.line, {k: values[k] for k in columns if values[k] != reference[k] or k in _KEYS}))
        try:
            self.spool.put([(owner, name, line) for (owner, name), line in lines.items()], rows)
        except sqlite3.IntegrityError:
            for item in fresh:  # which one is on an earlier batch
                earlier = self.spool.line_of(item.row.owner, item.row.name)
                if earlier is not None:
                    self._repeated(item, earlier)
            raise

    def _repeated(self, item: _Pending, earlier: int) -> None:
        raise RowError(item.line, f"The {self.kind.name} {item.row.owner}/{item.row.name} is also on row {earlier}")

    def insert(self) -> None:
        """Pass 2: every spooled row, in batches, in the caller's transaction."""
        inserter = _Inserter(self.db.connection(), self.kind.model.__table__, self.reference)
        for rows in self.spool.batches():
            # added meanwhile by someone else: skipped like the rest
            existing = _existing(self.db, self.kind, ((row["owner"], row["name"]) for _, row in rows))
            if existing:
                kept = [(line, row) for line, row in rows if (row["owner"], row["name"]) not in existing]
                self.result.skipped += len(rows) - len(kept)
                rows = kept
            if not rows:
                continue
            try:
                inserter.insert([row for _, row in rows])
            except IntegrityError:
                raise ServiceError("Rows %d to %d conflict with existing %s (a unique field such as id is "
                                   "already taken)", rows[0][0], rows[-1][0], self.kind.plural_name) from None
            self.result.added += len(rows)


class _Inserter:
    """INSERT through the driver. Every column is sent; the values of the blank
    record are converted for the database once, and per row only the row's own
    values (SQLAlchemy would convert all ~100 columns of every user). Where the
    driver takes positional parameters (SQLite, MariaDB), one statement carries
    up to ROWS_PER_STATEMENT rows: row by row, SQLite's per-statement work
    (the FTS5 search index's flush in its trigger) made inserting 2.5 times slower."""

    ROWS_PER_STATEMENT = 100

    def __init__(self, connection: sa.Connection, table: sa.Table, reference: dict[str, Any]) -> None:
        dialect = connection.dialect
        self.connection = connection
        columns = list(reference)
        compiled = table.insert().compile(dialect=dialect, column_keys=columns)
        self.sql = str(compiled)
        self.order = list(compiled.positiontup) if compiled.positional else None
        if sorted(self.order or compiled.binds) != sorted(columns):
            raise RuntimeError(f"unexpected parameters in {self.sql}")
        self.processors: dict[str, Callable[[Any], Any] | None] = {
            column.key: column.type.dialect_impl(dialect).bind_processor(dialect)
            for column in table.columns if column.key in reference}
        self.reference = {key: self._convert(key, value) for key, value in reference.items()}
        self.per_statement = 1
        if self.order is not None:
            limit = 32766 if dialect.name != "sqlite" or sqlite3.sqlite_version_info >= (3, 32) else 999
            self.per_statement = max(1, min(self.ROWS_PER_STATEMENT, limit // len(columns)))
            head, _, values = self.sql.rpartition(" VALUES ")
            self.head, self.values = head + " VALUES ", values
            self.statements: dict[int, str] = {}

    def _convert(self, key: str, value: Any) -> Any:
        processor = self.processors[key]
        return processor(value) if processor is not None else value

    def _multi_row(self, count: int) -> str:
        if count not in self.statements:
            self.statements[count] = self.head + ", ".join([self.values] * count)
        return self.statements[count]

    def insert(self, rows: list[dict[str, Any]]) -> None:
        params = []
        for row in rows:
            courtesy()
            values = dict(self.reference)
            for key, value in row.items():
                values[key] = self._convert(key, value)
            params.append(tuple(values[key] for key in self.order) if self.order is not None else values)
        if self.per_statement == 1:
            self.connection.exec_driver_sql(self.sql, params)
            return
        for start in range(0, len(params), self.per_statement):
            chunk = params[start:start + self.per_statement]
            self.connection.exec_driver_sql(self._multi_row(len(chunk)), tuple(v for row in chunk for v in row))


def import_rows(db: Session, actor: Actor, kind: Kind, rows: Iterable[dict[str, Any]],
                request: crud.Request = crud.NO_REQUEST, *, first_row: int = HEADER_ROW + 1,
                ignored_columns: Iterable[str] = ()) -> ImportResult:
    """Add every row (wire objects, camelCase keys) through the rules of add-X, or none.

    Rows are numbered from `first_row` (the sheet's row 2); an empty dict is a blank
    line, counted but not imported. A row without an owner goes to the actor's
    organization; a row naming another one is the policy's to refuse. The caller's
    session writes the rows and the caller commits; validation reads through
    sessions of its own, so it sees what is committed, not the caller's pending work."""
    policy.require_admin(actor)
    uploadable(kind.name)
    result = ImportResult(kind.name, kind.plural_name, ignored_columns=list(ignored_columns))
    readers = _Readers(db.get_bind())
    workers = _workers()
    with tempfile.TemporaryDirectory(prefix="iam-upload-") as directory, \
            ThreadPoolExecutor(workers, thread_name_prefix="upload") as pool:
        spool = _Spool(directory)
        try:
            importer = _Importer(db, actor, kind, spool, pool, workers, readers, result)
            batch: list[_Pending] = []
            for line, data in enumerate(rows, start=first_row):
                if not data:
                    continue
                result.rows += 1
                courtesy()  # the import gives way to the server's other requests (workers.courtesy)
                batch.append(importer.parse(line, data))
                if len(batch) >= BATCH:
                    importer.stage(batch)
                    batch = []
            if batch:
                importer.stage(batch)
            readers.close()
            importer.insert()
        finally:
            readers.close()
            spool.close()
    audit(db, organization=actor.organization, user=actor.id, action=f"upload-{kind.plural_name}",
          request_uri=request.uri, client_ip=request.client_ip, language=request.language,
          obj={"rows": result.rows, "added": result.added, "skipped": result.skipped})
    return result


def import_workbook(db: Session, actor: Actor, kind: Kind, source: BinaryIO | str | Path, filename: str,
                    request: crud.Request = crud.NO_REQUEST) -> ImportResult:
    """An uploaded .xlsx file: its name, then its content, then every row (see import_rows)."""
    policy.require_admin(actor)
    uploadable(kind.name)
    check_file_name(filename)
    with open_workbook(source, kind) as sheet:
        return import_rows(db, actor, kind, sheet.rows, request, ignored_columns=sheet.ignored)
