"""One Alembic history upgrades an empty database on SQLite, PostgreSQL and MariaDB,
matches the models exactly, and takes the first-start data."""

import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from alembic import command
from iam_console.core.seed import ensure_first_start_data
from iam_console.db import alembic_config, make_engine, migrate, session_scope
from iam_console.extension import extensions
from iam_console.models import Cert, User
from tests.conftest import require_service

POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432"
MARIADB = "mysql+pymysql://root@127.0.0.1:3306"


def _reachable(url: str) -> bool:
    try:
        with sa.create_engine(url).connect():
            return True
    except Exception:
        return False


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def empty_database(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    server, admin_db = (POSTGRES, "test") if request.param == "postgresql" else (MARIADB, "test")
    require_service(_reachable(f"{server}/{admin_db}"), request.param)
    name = f"iam_mig_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{server}/{admin_db}", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    try:
        yield f"{server}/{name}"
    finally:
        with admin.connect() as connection:
            if request.param == "postgresql":
                connection.execute(sa.text(f"DROP DATABASE {name} WITH (FORCE)"))
            else:
                connection.execute(sa.text(f"DROP DATABASE {name}"))
        admin.dispose()


def test_history_upgrades_an_empty_database(empty_database):
    migrate(empty_database)
    command.check(alembic_config(empty_database))  # raises if the models and the schema differ
    for extension in extensions():  # and each installed extension's, on its own branch
        if extension.migrations:
            command.check(alembic_config(empty_database, extension))
    engine = make_engine(empty_database)
    try:
        with session_scope(engine) as db:
            ensure_first_start_data(db, "pw-for-migration-test")
        with session_scope(engine) as db:
            assert ensure_first_start_data(db, "") is None  # idempotent here too
        with Session(engine) as db:
            admin = db.exec(select(User).where(User.owner == "built-in", User.name == "admin")).one()
            assert admin.created_time.tzinfo is not None
            assert db.exec(select(Cert.bit_size).where(Cert.name == "cert-built-in")).one() == 4096
        inspector = sa.inspect(engine)
        uniques = {tuple(u["column_names"]) for u in inspector.get_unique_constraints("user")}
        assert ("owner", "name") in uniques
    finally:
        engine.dispose()


def test_downgrade_to_base_and_up_again(tmp_path):
    url = f"sqlite:///{tmp_path / 'cycle.db'}"
    config = alembic_config(url)
    command.upgrade(config, "head")
    command.downgrade(config, "base")
    assert sa.inspect(make_engine(url)).get_table_names() == ["alembic_version"]
    command.upgrade(config, "head")
    assert "user" in sa.inspect(make_engine(url)).get_table_names()


def test_row_counts_and_search_stay_right(empty_database):
    """The triggers of migration 0002 keep row_count equal to count(*) through
    inserts, deletes and owner changes; search finds substrings case-insensitively."""
    from sqlmodel import func

    from iam_console.core import counts, query
    from iam_console.models import RowCount

    migrate(empty_database)
    engine = make_engine(empty_database)
    try:
        with Session(engine) as db:
            db.add_all([User(owner=owner, name=f"{owner}-user{i}", uuid=str(uuid.uuid4()), display_name=f"Person {i}")
                        for owner in ("one", "two") for i in range(5)])
            db.commit()
            doomed = db.exec(select(User).where(User.owner == "one", User.name == "one-user0")).one()
            db.delete(doomed)
            moved = db.exec(select(User).where(User.owner == "one", User.name == "one-user1")).one()
            moved.owner = "two"
            db.add(moved)
            db.commit()
            for owner in ("one", "two"):
                real = db.exec(select(func.count()).select_from(User).where(User.owner == owner)).one()
                assert counts.total(db, "user", owner) == real == {"one": 3, "two": 6}[owner]
            assert counts.total(db, "user", None) == 9
            assert db.exec(select(RowCount.count).where(RowCount.table_name == "user",
                                                        RowCount.owner == "two")).one() == 6
            found = query.run(db, User, [User.owner == "two"],
                              query.ListQuery(page=1, page_size=10, field="displayName", value="PERSON 3"))
            assert [u.name for u in found.rows] == ["two-user3"] and found.total == 1
            renamed = db.exec(select(User).where(User.name == "two-user3")).one()
            renamed.display_name = "Someone Else"
            db.add(renamed)
            db.commit()
            again = query.run(db, User, [User.owner == "two"],
                              query.ListQuery(page=1, page_size=10, field="displayName", value="person 3"))
            assert again.total == 0
    finally:
        engine.dispose()


def test_group_membership_is_backfilled_and_kept(empty_database):
    """Migration 0007 fills user_group from the users already there, and its
    triggers keep it after the upgrade: an insert, an update of the list, a delete."""
    from iam_console.models import UserGroup

    config = alembic_config(empty_database)
    command.upgrade(config, "0006")
    engine = make_engine(empty_database)
    try:
        with Session(engine) as db:
            db.add_all([User(owner="one", name="old", uuid=str(uuid.uuid4()), groups=["one/a", "one/b", 3, "two/a"]),
                        User(owner="one", name="none", uuid=str(uuid.uuid4()))])
            db.commit()
        command.upgrade(config, "head")

        def rows(db: Session) -> set[tuple[str, str]]:
            db.commit()  # a fresh snapshot (MariaDB reads repeatably within a transaction)
            return set(db.exec(select(UserGroup.group_id, User.name).join(User, User.pk == UserGroup.user_pk)))

        with Session(engine) as db:
            assert rows(db) == {("one/a", "old"), ("one/b", "old")}
            db.add(User(owner="one", name="new", uuid=str(uuid.uuid4()), groups=["one/b"]))
            old = db.exec(select(User).where(User.name == "old")).one()
            old.groups = ["one/c"]
            db.add(old)
            db.commit()
            assert rows(db) == {("one/c", "old"), ("one/b", "new")}
            db.delete(old)
            db.commit()
            assert rows(db) == {("one/b", "new")}
        command.downgrade(config, "0006")
        assert "user_group" not in sa.inspect(engine).get_table_names()
        with Session(engine) as db:  # the triggers went with the table: users still write
            db.add(User(owner="one", name="after", uuid=str(uuid.uuid4()), groups=["one/a"]))
            db.commit()
    finally:
        engine.dispose()


def _insert(engine: sa.Engine, *rows) -> None:
    """Model rows written with only the columns their table has at the current revision."""
    for row in rows:
        model = type(row).__table__
        present = {column["name"] for column in sa.inspect(engine).get_columns(model.name)}
        columns = [c for c in model.columns if c.name in present and c.key != "pk"]
        table = sa.table(model.name, *(sa.column(c.name, c.type) for c in columns))  # no other column's default
        with engine.begin() as connection:
            connection.execute(table.insert().values({c.name: getattr(row, c.key) for c in columns}))


def test_secrets_at_rest_are_replaced(empty_database):
    """Migration 0008: a token row keeps its token's fingerprint instead of the token, a
    user's access secret its hash (an empty one stays empty; a hashed one is left alone)."""
    import hashlib

    from iam_console.identity.passwords import hash_secret
    from iam_console.models import Token
    from iam_console.oauth.oauth import digest, fingerprint

    config = alembic_config(empty_database)
    command.upgrade(config, "0007")
    engine = make_engine(empty_database)
    try:
        _insert(engine, Token(owner="admin", name="issued", access_token="eyJ.access",
                              access_token_hash=digest("eyJ.access"), refresh_token="eyJ.refresh",
                              refresh_token_hash=digest("eyJ.refresh")),
                Token(owner="admin", name="added", access_token="typed by hand"),
                *(User(owner="one", name=name, uuid=str(uuid.uuid4()), access_secret=secret)
                  for name, secret in (("clear", "s3cret"), ("none", ""), ("hashed", hash_secret("x")))))
        command.upgrade(config, "0008")
        with engine.connect() as connection:
            token, user = Token.__table__, User.__table__
            tokens = {r.name: (r.access_token, r.refresh_token) for r in connection.execute(
                sa.select(token.c.name, token.c.access_token, token.c.refresh_token))}
            assert tokens == {"issued": (fingerprint("eyJ.access"), fingerprint("eyJ.refresh")),
                              "added": ("typed by hand", "")}
            secrets = dict(connection.execute(sa.select(user.c.name, user.c.access_secret).where(
                user.c.owner == "one")).all())
            assert secrets == {"clear": "sha256:" + hashlib.sha256(b"s3cret").hexdigest(), "none": "",
                               "hashed": hash_secret("x")}
    finally:
        engine.dispose()


def test_token_families_are_backfilled(empty_database):
    """Migration 0009 starts a refresh family at each token row already there (a rotated
    refresh token's replay revokes its family), and takes them as confidential clients'."""
    from iam_console.models import Token

    config = alembic_config(empty_database)
    command.upgrade(config, "0008")
    engine = make_engine(empty_database)
    try:
        _insert(engine, *(Token(owner="admin", name=name, application="app", expires_in=3600)
                          for name in ("t1", "t2")))
        command.upgrade(config, "head")
        with Session(engine) as db:
            rows = db.exec(select(Token.name, Token.family, Token.public_client).order_by(Token.name)).all()
        assert [tuple(r) for r in rows] == [("t1", "t1", False), ("t2", "t2", False)]
        command.downgrade(config, "0008")
        assert "family" not in {c["name"] for c in sa.inspect(engine).get_columns("token")}
    finally:
        engine.dispose()


def test_times_keep_fractions_of_a_second(empty_database):
    """A createdTime a client gives keeps its microseconds on every database."""
    migrate(empty_database)
    engine = make_engine(empty_database)
    given = datetime(2026, 11, 23, 10, 20, 30, 123456, tzinfo=UTC)
    try:
        with session_scope(engine) as db:
            db.add(User(owner="o", name="precise", created_time=given))
        with Session(engine) as db:
            assert db.exec(select(User.created_time).where(User.name == "precise")).one() == given
    finally:
        engine.dispose()


def test_record_user_is_widened_and_keeps_the_row_counts(empty_database):
    """Migration 0012 widens record.user to a whole owner/name id (201 characters), keeping
    the record table's row-count triggers (SQLite copies the table to change a column)."""
    from iam_console.core import counts
    from iam_console.models import Record

    config = alembic_config(empty_database)
    command.upgrade(config, "0011")
    engine = make_engine(empty_database)
    longest = f"{'o' * 100}/{'u' * 100}"
    try:
        _insert(engine, Record(owner="one", name="before", organization="one", user="one/alice"))
        command.upgrade(config, "head")
        columns = {c["name"]: c["type"] for c in sa.inspect(engine).get_columns("record")}
        assert columns["user"].length == 255
        _insert(engine, Record(owner="one", name="after", organization="one", user=longest))
        with Session(engine) as db:
            assert counts.total(db, "record", "one") == 2
            assert db.exec(select(Record.user).where(Record.name == "after")).one() == longest
        command.downgrade(config, "0011")
        command.upgrade(config, "head")
        _insert(engine, Record(owner="one", name="again", organization="one", user="one/bob"))
        with Session(engine) as db:
            assert counts.total(db, "record", "one") == 3
    finally:
        engine.dispose()
