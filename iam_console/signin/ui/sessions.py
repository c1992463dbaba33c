"""Sessions: one row per user and application, listing the ids of that user's live sign-ins.
A list without Add or edit page; Delete ends those sign-ins at once (signin/sessions.py)."""

from __future__ import annotations

from iam_console.signin import sessions
from iam_console.ui.screens import Column, Screen, screen


def _key(record) -> str:
    """A session is addressed by owner, name and application (sessionPkId)."""
    return f"{record.get('owner', '')}/{record.get('name', '')}/{record.get('application', '')}"


def _remove(db, actor, key: str) -> str:
    return sessions.remove(db, actor, *sessions.split_pk(key))


SESSIONS = screen(Screen(
    key="session", title="Sessions", list_route="/sessions", edit_route="", addable=False,
    row_key=_key, remove=_remove,
    columns=(
        Column("name", "Name", link="/users/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("application", "Application", link="/applications/{owner}/{application}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("sessionId", "Session ID", sortable=False),
    ),
    fields=(),
))
