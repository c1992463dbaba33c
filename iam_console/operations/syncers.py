"""Syncers: an organization's users copied from a table of another database, and changes made
here written back (docs/architecture.md, "Syncers").

- The connection: SQLAlchemy to mysql/MariaDB, postgres, sqlite3 (a file of the server's disk,
  the global admin's alone), mssql and oracle when their drivers are installed. The host is
  checked by the outbound guard and the connection goes to the address it checked; through SSH
  (password or a cert's private key, for mysql, mssql and postgres) the guard checks the SSH
  host, and the database host is the one the SSH server reaches.
- The table's columns map to user fields by `tableColumns` (name, type, casdoorName, isKey,
  isHashed, values); a name `A+B` reads the two columns joined by a space. Exactly one column is
  the key: it finds the user here. The hashed columns make the user's hash (MD5 of their values,
  as Casdoor's), kept in `preHash` after each sync: a side whose hash differs from it changed.
- A run reads the table a batch at a time by keyset on the key column (no cursor stays open, no
  transaction here is long, memory stays flat): a new row adds a user, a row changed upstream
  updates it (upstream wins when both changed), a user changed here is written upstream unless
  the syncer is read-only. Then the organization's users a batch at a time: a user that was
  synced (it has a preHash) and whose row is gone is deleted; one that never was is written
  upstream (not read-only syncers) once it has a key value, unless the table numbers its key
  (an integer primary key): an empty key is no row's. A row refused upstream fails that user
  only; a run that fails part-way says what its committed batches did. A Keycloak syncer reads
  Keycloak's schema (passwords from `credential`, the signup application from its group) and
  never writes back.
- A password column holds a hash: it is stored as it is, with the hash type of a column mapped
  to PasswordType, else the organization's, so users sign in with their upstream password."""

from __future__ import annotations

import hashlib
import io
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import DataError, IntegrityError, SQLAlchemyError
from sqlmodel import Session, select, update

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, outbound, policy, scheduled, wire
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity import uploads
from iam_console.models.base import Money, UTCDateTime, attributes_by_wire_name, money_of, utcnow
from iam_console.operations import metrics
from iam_console.operations.kinds import syncer as kind

log = logging.getLogger(__name__)
BATCH = 500
DRIVERS = {"mysql": "mysql+pymysql", "postgres": "postgresql+psycopg", "mssql": "mssql+pyodbc",
           "oracle": "oracle+oracledb"}
DRIVER_MODULES = {"mssql": "pyodbc", "oracle": "oracledb"}
KEYCLOAK_TABLE = "user_entity"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
ERROR_LINES = 20  # errorText keeps the last failures


def _column(name: str, casdoor: str, type_: str = "string", *, key: bool = False) -> dict[str, Any]:
    return {"name": name, "type": type_, "casdoorName": casdoor, "isKey": key, "isHashed": True, "values": []}


# Keycloak's user table, mapped as Casdoor's console presets it (with ID the key)
KEYCLOAK_COLUMNS = (
    _column("ID", "Id", key=True), _column("USERNAME", "Name"), _column("LAST_NAME+FIRST_NAME", "DisplayName"),
    _column("EMAIL", "Email"), _column("EMAIL_VERIFIED", "EmailVerified", "boolean"),
    _column("FIRST_NAME", "FirstName"), _column("LAST_NAME", "LastName"),
    _column("CREATED_TIMESTAMP", "CreatedTime"), _column("ENABLED", "IsForbidden", "boolean"),
)


@dataclass
class SyncResult:
    added: int = 0
    updated: int = 0  # users changed here from upstream rows
    deleted: int = 0
    written: int = 0  # rows added or changed upstream
    failed: int = 0
    # users here with no key value, not written upstream: the table does not number its key, and
    # rows with an empty key would collide (each user once they have a key value)
    skipped: int = 0

    def summary(self) -> tuple[str, ...]:
        """The counts, as the arguments of DONE_BEFORE."""
        return tuple(str(n) for n in (self.added, self.updated, self.deleted, self.written, self.skipped,
                                      self.failed))


# what a run that failed part-way had done (committed a batch at a time) before it failed
DONE_BEFORE = ("%s (done before the failure: %s added, %s updated, %s deleted, %s written upstream, %s not "
               "written for want of a key, %s failed)")


# --- reading a syncer ---

def syncer(db: Session, actor: Actor, owner: str, name: str) -> m.Syncer:
    """The syncer owner/name if the actor administers its organization."""
    policy.require_admin(actor)
    row = crud.readable_row(db, actor, REGISTRY["syncer"], owner, name)
    if row is None:
        raise ServiceError("The syncer: %s/%s does not exist", owner, name)
    return row


def from_body(db: Session, actor: Actor, data: Any) -> m.Syncer:
    """test-syncer-db's syncer, as the console's form shows it (never saved). A masked password
    is the stored one's, as Casdoor's test does."""
    policy.require_admin(actor)
    if not isinstance(data, dict):
        raise ServiceError("The request body must be a syncer")
    row = uploads.blank(m.Syncer)
    wire.apply(row, {k: v for k, v in data.items() if k not in ("createdTime", "errorText")})
    stored = (crud.readable_row(db, actor, REGISTRY["syncer"], row.owner or b.ADMIN_OWNER, row.name) if row.name
              else None)
    if stored is not None:
        for secret in ("password", "ssh_password"):
            if getattr(row, secret) in ("***", ""):
                setattr(row, secret, getattr(stored, secret))
        row.organization = row.organization or stored.organization
    elif not actor.is_global_admin:
        row.organization = row.organization or actor.organization
    if not actor.is_global_admin and row.organization != actor.organization:
        raise ServiceError("The syncer: %s/%s does not exist", row.owner, row.name)
    if row.database_type == "sqlite3" and not actor.is_global_admin:
        raise ServiceError("Only a global admin may use a sqlite3 database")
    return row


# --- the connection ---

def _private_key(db: Session, row: m.Syncer) -> Any:
    """The SSH key of a cert syncer: the private key of the cert it names, in its organization
    (or a shared one)."""
    import paramiko

    cert = db.exec(select(m.Cert).where(m.Cert.name == row.cert, m.Cert.owner.in_(
        [row.organization, b.ADMIN_OWNER]))).first()
    if cert is None or not cert.private_key:
        raise ServiceError("The cert: %s does not exist", row.cert)
    for loader in (paramiko.RSAKey, paramiko.ECDSAKey, paramiko.Ed25519Key):
        try:
            return loader.from_private_key(io.StringIO(cert.private_key))
        except (paramiko.SSHException, ValueError):
            continue
    raise ServiceError("The cert %s holds no private key SSH can use", row.cert)


def _url(row: m.Syncer, tunnel: outbound.SshTunnel | None) -> sa.URL:
    kind = row.database_type
    if kind == "sqlite3":
        return sa.URL.create("sqlite", database=row.database)
    if kind not in DRIVERS:
        raise ServiceError("The database type %s is not supported", kind)
    module = DRIVER_MODULES.get(kind)
    if module is not None:
        try:
            __import__(module)
        except ImportError:
            raise ServiceError("The driver of %s (%s) is not installed on this server", kind, module) from None
    query: dict[str, str] = {"sslmode": row.ssl_mode or "disable"} if kind == "postgres" else {}
    if tunnel is not None:
        host, port = "127.0.0.1", tunnel.port
    else:
        host, port = outbound.resolve(row.host, row.port)[0][4][0], row.port
        if kind == "postgres":  # libpq connects to the checked address and verifies the name (verify-full)
            host, query["hostaddr"] = row.host, host
    return sa.URL.create(DRIVERS[kind], username=row.user or None, password=row.password or None, host=host,
                         port=port or None, database=row.database or None, query=query)


def _connect_args(kind: str) -> dict[str, Any]:
    seconds = int(outbound.TIMEOUT_SECONDS)
    return {"postgres": {"connect_timeout": seconds}, "mysql": {"connect_timeout": seconds},
            "sqlite3": {"timeout": seconds}}.get(kind, {})


@contextmanager
def connected(db: Session, row: m.Syncer) -> Iterator[sa.Engine]:
    """An engine on the syncer's database (and its SSH tunnel), closed afterwards."""
    if row.database_type == "sqlite3" and not row.database:
        raise ServiceError("The database of a sqlite3 syncer is a file path")
    tunnel = None
    if row.ssh_type in ("password", "cert") and row.database_type in kind.SSH_DATABASES:
        key = _private_key(db, row) if row.ssh_type == "cert" else None
        tunnel = outbound.SshTunnel(row.ssh_host, row.ssh_port or 22, row.ssh_user, (row.host, row.port),
                                    password=row.ssh_password if key is None else None, key=key)
    engine = None
    try:
        engine = sa.create_engine(_url(row, tunnel), poolclass=sa.pool.NullPool,
                                  connect_args=_connect_args(row.database_type))
        yield engine
    except ModuleNotFoundError as exc:
        raise ServiceError("The driver of %s is not installed on this server: %s", row.database_type,
                           exc.name) from None
    finally:
        if engine is not None:
            engine.dispose()
        if tunnel is not None:
            tunnel.close()


def _failure(exc: SQLAlchemyError) -> str:
    return str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]


def test_db(db: Session, actor: Actor, data: Any) -> None:
    """test-syncer-db: connect to the database the form describes."""
    row = from_body(db, actor, data)
    try:
        with connected(db, row) as engine, engine.connect() as connection:
            connection.execute(sa.text("SELECT 1" + (" FROM DUAL" if row.database_type == "oracle" else "")))
    except SQLAlchemyError as exc:
        raise ServiceError("%s", _failure(exc)) from None


# --- the column mapping ---

@dataclass
class _Mapped:
    """One table column: the table's columns it reads, the user attribute it fills."""

    spec: dict[str, Any]
    sources: list[sa.Column]
    attribute: str
    hashed: bool

    def __post_init__(self) -> None:
        self.convert = _converter(self.attribute)
        self.settle = _settler(self.attribute)


class _Mapping:
    def __init__(self, row: m.Syncer, table: sa.Table) -> None:
        specs = [c for c in row.table_columns if isinstance(c, dict)]
        if not specs:
            raise ServiceError("The syncer table columns should not be empty")
        keys = [c for c in specs if c.get("isKey")]
        if len(keys) != 1:
            raise ServiceError("Exactly one table column must be the key")
        by_lower = {c.name.lower(): c for c in table.columns}
        attributes = attributes_by_wire_name(m.User)
        self.columns: list[_Mapped] = []
        for spec in specs:
            casdoor = str(spec.get("casdoorName") or "")
            # the upstream id is kept in externalId: this server's user id is unique across organizations
            attribute = "external_id" if casdoor.lower() == "id" else attributes.get(casdoor.lower())
            if attribute is None or attribute in ("owner", "pk"):
                raise ServiceError("%s is not a user field", casdoor)
            sources = []
            for part in str(spec.get("name") or "").split("+"):
                column = by_lower.get(part.strip().lower())
                if column is None:
                    raise ServiceError("The table %s has no column %s", table.name, part.strip())
                sources.append(column)
            self.columns.append(_Mapped(spec, sources, attribute, bool(spec.get("isHashed"))))
        self.key = next(c for c in self.columns if c.spec is keys[0])
        if len(self.key.sources) != 1:
            raise ServiceError("The key column must be one column of the table")
        self.key_column = self.key.sources[0]
        self.attributes = list(dict.fromkeys(c.attribute for c in self.columns))


def _converter(attribute: str):
    column = m.User.__table__.c[attribute]
    if isinstance(column.type, UTCDateTime):
        return _moment
    return uploads.converter(m.User, column)


def _moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    text = str(value or "").strip()
    if text.isdigit():  # epoch milliseconds (Keycloak) or seconds
        number = int(text)
        return datetime.fromtimestamp(number / 1000 if number > 10**11 else number, UTC)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _canon(value: Any) -> str:
    """A value as the hash sees it, whichever side it was read on."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat(timespec="seconds")
    if isinstance(value, list | dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def _hash(mapping: _Mapping, values: dict[str, Any]) -> str:
    joined = "|".join(_canon(values.get(c.attribute)) for c in mapping.columns if c.hashed)
    return hashlib.md5(joined.encode()).hexdigest()  # a change detector, as Casdoor's


def _typed(value: Any, kind: str) -> Any:
    """A user's value as the upstream column's declared type wants it; None for a number that
    is none (a new user's empty id: the table numbers the row itself)."""
    text = _canon(value)
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            return None
    if kind == "boolean":
        return text == "true"
    return text


# --- a run ---

class _Run:
    def __init__(self, db: Session, actor: Actor, row: m.Syncer, engine: sa.Engine) -> None:
        self.db, self.actor, self.engine = db, actor, engine
        self.row = m.detached_copy(row)
        self.keycloak = row.type == "Keycloak"
        self.writable = not row.is_read_only and not self.keycloak
        self.result = SyncResult()
        self.committed = SyncResult()  # what the run had committed here, a batch at a time
        organization = lookup.organization(db, row.organization)
        if organization is None:
            raise ServiceError("The organization: %s does not exist", row.organization)
        self.organization = m.detached_copy(organization)
        name = row.table or (KEYCLOAK_TABLE if self.keycloak else "")
        if not _NAME.match(name):
            raise ServiceError("The table name %s is not valid", name)
        try:
            self.table = sa.Table(name, sa.MetaData(), autoload_with=engine)
        except sa.exc.NoSuchTableError:
            raise ServiceError("The table %s does not exist", name) from None
        self.mapping = _Mapping(row, self.table)
        self.affiliations = self._affiliations()

    def _affiliations(self) -> dict[int, str]:
        """The affiliation table's names by id: a user's score names its affiliation."""
        name = self.row.affiliation_table
        if not name:
            return {}
        if not _NAME.match(name):
            raise ServiceError("The table name %s is not valid", name)
        try:
            table = sa.Table(name, sa.MetaData(), autoload_with=self.engine)
        except sa.exc.NoSuchTableError:
            raise ServiceError("The table %s does not exist", name) from None
        with self.engine.connect() as connection:
            return {int(i): str(n) for i, n in connection.execute(sa.select(table.c.id, table.c.name))}

    # reading upstream rows

    def _values(self, record: sa.RowMapping) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for mapped in self.mapping.columns:
            raw = [record[c.name] for c in mapped.sources]
            value = " ".join("" if v is None else str(v) for v in raw) if len(raw) > 1 else raw[0]
            if value is None:
                value = ""
            if self.keycloak and mapped.attribute == "is_forbidden":
                converted = uploads.converter(m.User, m.User.__table__.c.is_forbidden)(value)
                values["is_forbidden"] = not converted if isinstance(converted, bool) else False
                continue
            if mapped.attribute == "avatar" and value and self.row.avatar_base_url \
                    and not str(value).startswith("http"):
                value = self.row.avatar_base_url + str(value)
            if mapped.attribute == "address":
                values["address"] = [str(value)] if value != "" else []
                continue
            values[mapped.attribute] = mapped.settle(mapped.convert(value))
        if self.affiliations and values.get("score"):
            values["affiliation"] = self.affiliations.get(values["score"], "")
        return values

    def _batches(self) -> Iterator[list[dict[str, Any]]]:
        """The table's rows, a batch at a time in the key's order (keyset: no cursor stays open)."""
        key = self.mapping.key_column
        last = None
        while True:
            query = sa.select(self.table).order_by(key).limit(BATCH)
            if last is not None:
                query = query.where(key > last)
            with self.engine.connect() as connection:
                records = connection.execute(query).mappings().all()
            if not records:
                return
            last = records[-1][key.name]
            yield [self._values(r) for r in records]
            if len(records) < BATCH:
                return

    def _keycloak_extras(self, batch: list[dict[str, Any]]) -> None:
        """Passwords from Keycloak's credential table, signup applications from its groups."""
        ids = [v["external_id"] for v in batch if v.get("external_id")]
        if not ids:
            return
        meta = sa.MetaData()
        with self.engine.connect() as connection:
            credential = sa.Table("credential", meta, autoload_with=connection)
            cols = {c.name.lower(): c for c in credential.columns}
            secrets_by_user: dict[str, tuple[str, str, str]] = {}
            rows = connection.execute(sa.select(cols["user_id"], cols["secret_data"], cols["credential_data"])
                                      .where(cols["type"] == "password", cols["user_id"].in_(ids)))
            for user_id, secret, data in rows:
                try:
                    secret, data = json.loads(secret or "{}"), json.loads(data or "{}")
                except ValueError:
                    continue
                secrets_by_user[user_id] = (secret.get("value", ""), secret.get("salt", ""), _keycloak_type(data))
            groups: dict[str, str] = {}
            try:
                membership = sa.Table("user_group_membership", meta, autoload_with=connection)
                group = sa.Table("keycloak_group", meta, autoload_with=connection)
                mc = {c.name.lower(): c for c in membership.columns}
                gc = {c.name.lower(): c for c in group.columns}
                for user_id, name in connection.execute(sa.select(mc["user_id"], gc["name"]).join_from(
                        membership, group, mc["group_id"] == gc["id"]).where(mc["user_id"].in_(ids))):
                    groups.setdefault(user_id, name)
            except sa.exc.NoSuchTableError:
                pass
        if groups:  # a group names the signup application when the organization has one of that name
            known = set(self.db.exec(select(m.Application.name).where(
                m.Application.organization == self.row.organization,
                m.Application.name.in_(set(groups.values())))).all())
            groups = {k: v for k, v in groups.items() if v in known}
        for values in batch:
            found = secrets_by_user.get(values.get("external_id", ""))
            if found and found[2]:
                values["password"], values["password_salt"], values["password_type"] = found
            if values.get("external_id") in groups:
                values["signup_application"] = groups[values["external_id"]]

    # the users here

    def _locals(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        attribute = self.mapping.key.attribute
        column = getattr(m.User, attribute)
        wanted = [m.User.pk, m.User.name, m.User.pre_hash, *[getattr(m.User, a) for a in self.mapping.attributes]]
        rows = self.db.exec(select(*wanted).where(m.User.owner == self.row.organization, column.in_(keys))).all()
        return {_canon(r._mapping[attribute]): dict(r._mapping) for r in rows}

    def _new_user(self, values: dict[str, Any], digest: str) -> m.User | None:
        user = uploads.blank(m.User)
        secret = {k: values.pop(k) for k in ("password", "password_salt", "password_type") if k in values}
        # a blank record's own way (uploads.blank): its values straight into its dict, as a loaded row's
        fields = user.__dict__
        fields.update(values)
        fields.update(owner=self.row.organization, register_source=f"{self.row.organization}/{self.row.name}",
                      hash=digest, pre_hash=digest,
                      name=fields["name"] or fields["external_id"] or _canon(values.get(self.mapping.key.attribute)),
                      created_time=fields["created_time"] or utcnow(), type=fields["type"] or "normal-user",
                      register_type=fields["register_type"] or "Add Users")
        try:
            policy.check_write(self.actor, REGISTRY["user"], None, user)
            crud.complete_new(self.db, self.actor, REGISTRY["user"], user, set(values) | {"owner", "name"})
        except (ServiceError, ValueError) as exc:
            log.info("synced user %s not added: %s", user.name, exc)
            return None
        if "password" in secret:  # the upstream hash, stored as it is with its type (never hashed again)
            fields.update(password=secret["password"] or "", password_salt=secret.get("password_salt") or "",
                          password_type=secret.get("password_type") or self.organization.password_type)
        return user

    def _apply_batch(self, batch: list[dict[str, Any]]) -> None:
        if self.keycloak:
            self._keycloak_extras(batch)
        attribute = self.mapping.key.attribute
        rows: dict[str, dict[str, Any]] = {}
        for values in batch:
            key = _canon(values.get(attribute))
            if key:
                rows[key] = values
            else:
                self.result.failed += 1
        found = self._locals(list(rows))
        fresh, changes, upstream = [], [], []
        for key, values in rows.items():
            upstream_hash = _hash(self.mapping, values)
            here = found.get(key)
            if here is None:
                user = self._new_user(dict(values), upstream_hash)
                if user is None:
                    self.result.failed += 1
                else:
                    fresh.append(user)
                continue
            local_hash = _hash(self.mapping, here)
            previous = here["pre_hash"]
            if local_hash == previous or (previous != upstream_hash and local_hash != upstream_hash):
                if upstream_hash != previous:  # changed upstream (and here too: upstream wins)
                    changes.append((here["pk"], values, upstream_hash))
            elif previous == upstream_hash:  # changed here only
                if self.writable:
                    upstream.append(here)
                changes.append((here["pk"], {}, local_hash))
            else:  # both the same again
                changes.append((here["pk"], {}, local_hash))
        self._insert(fresh)
        self._update(changes)
        self._write_upstream(upstream, new=False)
        self._commit()

    def _insert(self, users: list[m.User]) -> None:
        if not users:
            return
        table = m.User.__table__
        keys = [c.key for c in table.columns if c.key != "pk"]
        values = [{key: fields[key] for key in keys} for fields in (u.__dict__ for u in users)]
        try:
            with self.db.begin_nested():
                self.db.exec(sa.insert(table), params=values)
            self.result.added += len(users)
            return
        except IntegrityError:
            pass
        for one in values:  # a name taken meanwhile: only that user fails
            try:
                with self.db.begin_nested():
                    self.db.exec(sa.insert(table).values(**one))
                self.result.added += 1
            except IntegrityError:
                self.result.failed += 1

    def _update(self, changes: list[tuple[int, dict[str, Any], str]]) -> None:
        now = utcnow()
        for pk, values, digest in changes:
            values = dict(values)
            values.pop("name", None)  # a user keeps their name: others refer to it
            if "password" in values:  # the upstream hash, with its type
                values["password_type"] = values.get("password_type") or self.organization.password_type
            fields = {**values, "hash": digest, "pre_hash": digest}
            if values:
                fields["updated_time"] = now
                self.result.updated += 1
            self.db.exec(update(m.User).where(m.User.pk == pk).values(**fields))

    def _upstream_row(self, user: dict[str, Any]) -> dict[str, Any]:
        row: dict[str, Any] = {}
        for mapped in self.mapping.columns:
            if len(mapped.sources) != 1:
                continue  # a joined column cannot be split again
            value = user.get(mapped.attribute)
            if mapped.attribute == "avatar" and self.row.avatar_base_url and str(value or "").startswith(
                    self.row.avatar_base_url):
                value = str(value)[len(self.row.avatar_base_url):]
            if mapped.attribute == "address":
                value = "|".join(value or [])
            typed = _typed(value, str(mapped.spec.get("type") or "string"))
            if typed is not None:
                row[mapped.sources[0].name] = typed
        return row

    def _write_upstream(self, users: list[dict[str, Any]], *, new: bool) -> list[dict[str, Any]]:
        """Rows for these users upstream; a new row whose key the table numbers gives the user
        that key here. The users written."""
        if not users:
            return []
        written: list[dict[str, Any]] = []
        key = self.mapping.key_column
        # a table that numbers its key (an integer primary key) gives a new row its key; any other
        # key is the user's value, and a user without one is not written (an empty key would collide)
        numbered = key.primary_key and isinstance(key.type, sa.Integer)
        with self.engine.begin() as connection:
            for user in users:
                row = self._upstream_row(user)
                if row.get(key.name) in (None, "") and not (new and numbered):
                    if new:
                        self.result.skipped += 1
                    continue  # a changed user's row is found by its key: without one there is none
                try:
                    # one row refused (a key taken upstream, a value too long): only that user fails
                    with connection.begin_nested():
                        self._write_row(connection, user, row, new)
                except (IntegrityError, DataError) as exc:
                    log.info("user %s not written upstream: %s", user.get("name"), _failure(exc))
                    self.result.failed += 1
                    continue
                self.result.written += 1
                written.append(user)
        return written

    def _write_row(self, connection: sa.Connection, user: dict[str, Any], row: dict[str, Any], new: bool) -> None:
        """One user's row upstream: inserted (taking the key the table gives it), or updated by its key."""
        key = self.mapping.key_column
        if not new:
            value = row.pop(key.name)
            connection.execute(self.table.update().where(key == value).values(**row))
            return
        done = connection.execute(self.table.insert().values(**row))
        if key.name not in row and key.primary_key and done.inserted_primary_key:
            attribute = self.mapping.key.attribute
            user[attribute] = _settled(attribute, _canon(done.inserted_primary_key[0]))
            self.db.exec(update(m.User).where(m.User.pk == user["pk"]).values(**{attribute: user[attribute]}))

    def _key_value(self, value: Any) -> Any:
        return _typed(value, str(self.mapping.key.spec.get("type") or "string"))

    def _sweep(self) -> None:
        """The users here whose row is gone upstream: deleted if this syncer added them, written
        upstream if no sync has seen them yet (not read-only syncers)."""
        attribute = self.mapping.key.attribute
        wanted = [m.User.pk, m.User.name, m.User.pre_hash, m.User.register_source,
                  *[getattr(m.User, a) for a in self.mapping.attributes]]
        source = f"{self.row.organization}/{self.row.name}"
        wanted += [m.User.created_time]
        after: list = []
        while True:
            # keyset on the (owner, created_time, pk) index every named table has: a range read
            # per batch, never a sort of the whole organization
            if after:
                moment, pk = after
                after = [m.User.created_time >= moment,
                         sa.or_(m.User.created_time > moment, m.User.pk > pk)]
            users = [dict(r._mapping) for r in self.db.exec(
                select(*wanted).where(m.User.owner == self.row.organization, *after)
                .order_by(m.User.created_time, m.User.pk).limit(BATCH)).all()]
            self._commit()
            if not users:
                return
            after = [users[-1]["created_time"], users[-1]["pk"]]
            keyed = [u for u in users if self._key_value(u.get(attribute)) not in (None, "")]
            values = [self._key_value(u[attribute]) for u in keyed]
            # a user with no key yet was never synced: new upstream (the table may number it)
            fresh = [u for u in users if u not in keyed and not u["pre_hash"]]
            key = self.mapping.key_column
            present: set[str] = set()
            if values:
                with self.engine.connect() as connection:
                    present = {_canon(v) for v in connection.execute(sa.select(key).where(key.in_(values))).scalars()}
            gone = []
            for user in keyed:
                if _canon(self._key_value(user[attribute])) in present:
                    continue
                if not user["pre_hash"]:
                    fresh.append(user)
                elif user["register_source"] == source:  # another syncer's users are its own to delete
                    gone.append(user)
            for user in gone:
                try:
                    crud.delete_record(self.db, self.actor, REGISTRY["user"], self.row.organization, user["name"])
                    self.result.deleted += 1
                except ServiceError as exc:  # a protected user stays
                    log.info("synced user %s not deleted: %s", user["name"], exc)
                    self.result.failed += 1
            if self.writable and fresh:
                # those not written (no key value yet, a row refused) are tried again next run
                for user in self._write_upstream(fresh, new=True):
                    digest = _hash(self.mapping, user)
                    self.db.exec(update(m.User).where(m.User.pk == user["pk"]).values(hash=digest, pre_hash=digest))
            self._commit()
            if len(users) < BATCH:
                return

    def _commit(self) -> None:
        self.db.commit()
        self.committed = replace(self.result)

    def run(self) -> SyncResult:
        self.db.info[lookup.ORGANIZATION_CACHE] = {}
        try:
            for batch in self._batches():
                self._apply_batch(batch)
            self._sweep()
        finally:
            self.db.info.pop(lookup.ORGANIZATION_CACHE, None)
        return self.result


def _amount(value: Any) -> Decimal:
    """An amount the column holds, or 0."""
    try:
        return money_of(value) if isinstance(value, int | float | Decimal | str) else Decimal(0)
    except (ValueError, ArithmeticError):
        return Decimal(0)


def _settler(attribute: str):
    """A value the user's column can hold: what does not convert is the column's empty value."""
    column = m.User.__table__.c[attribute]
    kind = column.type
    if isinstance(kind, sa.Boolean):
        return lambda value: value if isinstance(value, bool) else False
    if isinstance(kind, sa.Integer):
        return lambda value: value if isinstance(value, int) else 0
    if isinstance(kind, sa.Float):
        return lambda value: value if isinstance(value, int | float) else 0.0
    if isinstance(kind, Money):
        return _amount
    if isinstance(kind, UTCDateTime):
        return lambda value: value
    if isinstance(kind, sa.JSON):
        return lambda value: value if isinstance(value, list | dict) else []
    length = getattr(kind, "length", None) or None

    def text(value: Any) -> str:
        return (value if isinstance(value, str) else _canon(value))[:length]
    return text


def _settled(attribute: str, value: Any) -> Any:
    return _settler(attribute)(value)


def _keycloak_type(data: dict[str, Any]) -> str:
    """Keycloak's PBKDF2-SHA256 hash at 27,500 iterations is Casdoor's pbkdf2-salt; other
    algorithms have no type here, so those users keep no password."""
    if data.get("algorithm") == "pbkdf2-sha256" and int(data.get("hashIterations") or 0) == 27500:
        return "pbkdf2-salt"
    return ""


def _note_error(db: Session, row: m.Syncer, message: str) -> None:
    line = f"[{utcnow().isoformat(timespec='seconds')}] {message}"
    kept = [entry for entry in (row.error_text or "").splitlines() if entry][-(ERROR_LINES - 1):]
    db.exec(update(m.Syncer).where(m.Syncer.pk == row.pk).values(error_text="\n".join([*kept, line]) + "\n"))
    db.commit()


def sync(db: Session, actor: Actor, row: m.Syncer, request: crud.Request = crud.NO_REQUEST) -> SyncResult:
    """One run of a syncer; a failure is also appended to its errorText."""
    pk, owner, name = row.pk, row.owner, row.name
    copy = m.detached_copy(row)
    started: _Run | None = None
    try:
        if copy.type not in kind.EDITOR_TYPES:
            raise ServiceError("A syncer of type %s syncs no users on this server", copy.type)
        with metrics.counted_run("syncer"), connected(db, copy) as engine:
            started = _Run(db, actor, copy, engine)
            result = started.run()
    except SQLAlchemyError as exc:
        db.rollback()
        message = _failure(exc)
        _note_error(db, copy, message)
        if started is not None and any(n != "0" for n in started.committed.summary()):
            # the batches before the failure are committed: the answer says what they did
            raise ServiceError(DONE_BEFORE, message, *started.committed.summary()) from None
        raise ServiceError("%s", message) from None
    except ServiceError as exc:
        db.rollback()
        _note_error(db, copy, str(exc))
        raise
    audit(db, organization=copy.organization, user=actor.id, action="run-syncer", request_uri=request.uri,
          client_ip=request.client_ip, language=request.language,
          obj={"syncer": f"{owner}/{name}", "added": result.added, "updated": result.updated,
               "deleted": result.deleted, "written": result.written, "skipped": result.skipped,
               "failed": result.failed})
    db.commit()
    log.info("syncer %s/%s (pk %s): %s", owner, name, pk, result)
    return result


def run(db: Session, actor: Actor, owner: str, name: str, request: crud.Request = crud.NO_REQUEST) -> SyncResult:
    """run-syncer: sync now, if the actor administers the syncer's organization."""
    row = syncer(db, actor, owner, name)
    policy.check_write(actor, REGISTRY["syncer"], row, row)
    return sync(db, actor, row, request)


# --- the scheduler ---

def due(db: Session, now: datetime) -> list[tuple[int, datetime | None]]:
    rows = db.exec(select(m.Syncer.pk, m.Syncer.last_sync, m.Syncer.sync_interval)
                   .where(m.Syncer.is_enabled.is_(True), m.Syncer.sync_interval > 0)).all()
    return [(pk, last) for pk, last, minutes in rows
            if last is None or last + timedelta(minutes=minutes) <= now]


def claim(db: Session, pk: int, last: datetime | None, now: datetime) -> bool:
    """Take one run (core/scheduled.claim)."""
    return scheduled.claim(db, m.Syncer, pk, last, now)


def auto_sync(db: Session, now: datetime | None = None) -> list[tuple[str, SyncResult | None]]:
    """Every due syncer this worker wins; lastSync is set again when the run ends, so the next
    run is syncInterval minutes after this one finished."""
    now = now or utcnow()
    done: list[tuple[str, SyncResult | None]] = []
    for pk, last in due(db, now):
        if not claim(db, pk, last, now):
            continue
        row = db.get(m.Syncer, pk)
        ident = f"{row.owner}/{row.name}"
        try:
            result = sync(db, scheduled.system_actor(db), row)
        except ServiceError as exc:
            log.warning("sync of %s failed: %s", ident, exc)
            done.append((ident, None))
            result = None
        else:
            done.append((ident, result))
        db.exec(update(m.Syncer).where(m.Syncer.pk == pk).values(last_sync=max(utcnow(), now)))
        db.commit()
    return done

