"""Alembic environment: the project's own models and database URL."""

from sqlmodel import SQLModel

import iam_console.models  # noqa: F401  (registers every table)
from alembic import context
from iam_console.authorization import authz_version
from iam_console.db import make_engine
from iam_console.extension import extensions
from iam_console.settings import settings

config = context.config
target_metadata = SQLModel.metadata
# the product's revisions record their state in alembic_version, each extension's in a table of its
# own (iam_console/db.py alembic_config); each compares the models with the tables it owns (a
# built-in feature without migrations of its own, such as commerce, has its tables in the product's)
VERSION_TABLE = config.attributes.get("version_table", "alembic_version")
OWNER = config.attributes.get("extension", "core")
OWNERS = {model.__tablename__: extension.name for extension in extensions() if extension.migrations
          for model in (*(kind.model for kind in extension.kinds), *extension.tables)}


def include_name(name, type_, parent_names) -> bool:
    """Leave out what migrations make by hand for search: the FTS5 table with its
    shadow tables (SQLite) and the trigram indexes (PostgreSQL); and the tables another's
    revisions make (the product's, an extension's, and their version tables)."""
    if type_ == "table" and name and (name.startswith(("user_search", "alembic_version"))
                                      or OWNERS.get(name, "core") != OWNER):
        return False
    return not (type_ == "index" and name and name.endswith("_trgm"))


def include_object(obj, name, type_, reflected, compare_to) -> bool:
    """The models' side of the same rule: the tables (and their indexes) of another's models are
    not these revisions' to make (an installed extension's table is not the product's)."""
    table = name if type_ == "table" else getattr(getattr(obj, "table", None), "name", None)
    return table is None or OWNERS.get(table, "core") == OWNER


def run_migrations_offline() -> None:
    context.configure(url=config.attributes.get("database_url", settings.database_url),
                      target_metadata=target_metadata, literal_binds=True, render_as_batch=True,
                      version_table=VERSION_TABLE)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = make_engine(config.attributes.get("database_url", settings.database_url))
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata,
                          render_as_batch=True, compare_type=True, include_name=include_name,
                          include_object=include_object,
                          version_table=VERSION_TABLE)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
    authz_version.forget()  # the schema changed: whether the counters' table exists is read again


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
