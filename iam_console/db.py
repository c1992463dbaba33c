"""The engine, sessions and migrations."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlmodel import Session

from iam_console.authorization import authz_version
from iam_console.core.errors import ServiceError
from iam_console.extension import Extension, extensions
from iam_console.operations import webhooks
from iam_console.settings import PROJECT_ROOT, settings


def _holds_nul(parameters: object) -> bool:
    """Whether a statement's parameters (a row, rows, or values of an array) hold text with NUL."""
    values = parameters.values() if isinstance(parameters, dict) else parameters
    for value in values:
        if isinstance(value, str):
            if "\x00" in value:
                return True
        elif isinstance(value, list | tuple | dict) and _holds_nul(value):
            return True
    return False


def _refuse_nul(_connection, _cursor, _statement, parameters, _context, _executemany: bool) -> None:
    """No statement carries text holding NUL. PostgreSQL refuses it (an error the caller
    could only be answered with as a 500) and no column of any database is meant to keep
    one; input reaches queries by many doors (query parameters, forms, JSON, the console),
    and every one of them passes here."""
    if parameters and _holds_nul(parameters):
        raise ServiceError("The input cannot contain a NUL character")


def make_engine(url: str) -> sa.Engine:
    """hide_parameters: a database error's message (logged with its traceback) never
    carries the statement's values, which may be secrets or a caller's input."""
    engine = _make_engine(url)
    sa.event.listen(engine, "before_cursor_execute", _refuse_nul)
    return engine


def _make_engine(url: str) -> sa.Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        on_disk = bool(path) and path != ":memory:" and "///" in url
        if on_disk:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # an in-memory database has one connection per thread (SQLAlchemy's own pool for it)
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 30},
                                  hide_parameters=True, **(_pool_sizes() if on_disk else {}))

        @sa.event.listens_for(engine, "connect")
        def _pragmas(connection, _record):
            # WAL lets readers run beside the writer; foreign keys are off by default.
            cursor = connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return sa.create_engine(url, pool_pre_ping=True, hide_parameters=True, **_pool_sizes())


def _pool_sizes() -> dict[str, int]:
    """Every worker thread (iam_console/workers.py) may hold a connection: a request waiting on a
    slow destination inside its session keeps one, and the others must not queue behind it for
    the pool. Ten stay open; the rest are opened when needed and closed when given back."""
    return {"pool_size": 10, "max_overflow": settings.worker_threads}


engine = make_engine(settings.database_url)
authz_version.install()  # every Session of the process raises the authorization counters
webhooks.install()  # a commit that wrote webhook events wakes this process's delivery worker


@contextmanager
def session_scope(bind: sa.Engine | None = None) -> Iterator[Session]:
    """A unit of work: commits when the block succeeds, rolls back otherwise."""
    with Session(bind or engine, expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise


def alembic_config(url: str, extension: Extension | None = None):
    """The product's migrations, or an extension's: its own folder of revisions and its own version
    table (`alembic_version_<name>`), so that a database keeps the tables and the record of an
    extension that is uninstalled, and the product's migrations never look for its revisions."""
    from alembic.config import Config

    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "alembic"))
    config.attributes["database_url"] = url
    if extension is not None:
        config.set_main_option("version_locations", extension.migrations)
        config.attributes["version_table"] = f"alembic_version_{extension.name}"
        config.attributes["extension"] = extension.name
    return config


def migrate(url: str | None = None) -> None:
    """Bring the schema to the newest revision: the product's, then each extension's
    (iam_console/extension.py; an extension's revisions are on a branch of its own, labelled with
    its name)."""
    from alembic import command

    command.upgrade(alembic_config(url or settings.database_url), "head")
    for extension in extensions():
        if extension.migrations:
            command.upgrade(alembic_config(url or settings.database_url, extension), "heads")
