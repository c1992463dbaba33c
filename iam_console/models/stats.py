"""Tables derived from others and kept by database triggers, so that every
write path (ORM, bulk Core inserts, raw SQL) keeps them right: the maintained
row counts, so a list's total never counts a million rows, and the group
membership, so the users of a group are an index range."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlmodel import Field, SQLModel

from iam_console.models.base import text

# the longest group id the membership table keeps: a group's owner and name are 100 each
GROUP_ID_LENGTH = 255


class RowCount(SQLModel, table=True):
    """How many rows a table holds per owner; kept by database triggers
    (migration 0002), so every write path, bulk SQL included, keeps it right."""

    __tablename__ = "row_count"

    table_name: str = text(64, primary_key=True)
    owner: str = text(100, primary_key=True)
    count: int = Field(default=0, sa_type=sa.BigInteger, nullable=False)


class UserGroup(SQLModel, table=True):
    """One row per entry of a user's `groups` list (Casdoor's "owner/name"), kept
    by triggers on "user" (migration 0007). The list stays the one source of
    truth: nothing writes here but the triggers. Not an API resource."""

    __tablename__ = "user_group"
    __table_args__ = (sa.Index("ix_user_group_user_pk", "user_pk"),)

    # case-sensitive on MySQL/MariaDB too, as the entries are on the other databases
    group_id: str = Field(primary_key=True, sa_type=sa.String(GROUP_ID_LENGTH).with_variant(
        mysql.VARCHAR(GROUP_ID_LENGTH, collation="utf8mb4_bin"), "mysql", "mariadb"))
    user_pk: int = Field(primary_key=True, sa_type=sa.Integer, sa_column_kwargs={"autoincrement": False})
