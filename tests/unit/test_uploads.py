"""The upload service without HTTP: blank records, typed cells, numbering, hashing on threads."""

from __future__ import annotations

import subprocess
import sys
import threading
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_console.identity import uploads
from iam_console.identity.passwords import verify_password
from tests.api.workbooks import workbook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def god(database) -> Actor:
    with session_scope() as db:
        return Actor(application=db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one())


@pytest.mark.parametrize("kind_name", sorted(REGISTRY))
def test_a_blank_record_is_the_record_the_model_makes(kind_name):
    model = REGISTRY[kind_name].model
    fast, slow = uploads.blank(model), model()
    one, other = fast.model_dump(), slow.model_dump()
    assert abs((one.pop("created_time") - other.pop("created_time")).total_seconds()) <= 1
    assert one == other
    for attribute, value in one.items():  # fresh lists and dicts, never shared between records
        if isinstance(value, list | dict):
            assert getattr(fast, attribute) is not getattr(uploads.blank(model), attribute)


def test_cells_are_typed_by_the_field_they_fill(tmp_path):
    path = tmp_path / "typed.xlsx"
    path.write_bytes(workbook(
        ["name", "isAdmin", "score", "balance", "phone", "groups", "lastSigninTime", "birthday", "properties",
         "password", "github"],
        [" padded ", "yes", "12", 3, 13800000000, '["a,b", "c"]', datetime(2024, 5, 6, 7, 8, 9),
         datetime(1990, 1, 2), '{"a": 1}', "  spaced  ", "octocat"],
        ["x", False, 4.0, "2.5", 12.5, "a, b;c", "2024-05-06T07:08:09Z", date(2000, 2, 3), "not json", 1234, None],
    ))
    with uploads.open_workbook(path, REGISTRY["user"]) as sheet:
        first, second = list(sheet.rows)
    assert first == {"name": "padded", "isAdmin": True, "score": 12, "balance": 3, "phone": "13800000000",
                     "groups": ["a,b", "c"], "lastSigninTime": datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC),
                     "birthday": "1990-01-02", "properties": {"a": 1}, "password": "  spaced  ", "github": "octocat"}
    assert second == {"name": "x", "isAdmin": False, "score": 4.0, "balance": 2.5, "phone": "12.5",
                      "groups": ["a", "b", "c"], "lastSigninTime": "2024-05-06T07:08:09Z", "birthday": "2000-02-03",
                      "properties": "not json", "password": "1234"}


def test_rows_are_numbered_from_the_header_and_blank_lines_count(god, make_org):
    org = make_org().name
    rows = [{"owner": org, "name": "one"}, {}, {"owner": org, "name": "two", "score": "x"}]
    with pytest.raises(uploads.RowError) as refused, session_scope() as db:
        uploads.import_rows(db, god, REGISTRY["user"], rows)
    assert refused.value.row == 4 and str(refused.value) == "Row 4: The field score must be an integer"
    with session_scope() as db:
        result = uploads.import_rows(db, god, REGISTRY["role"], rows[:2], first_row=10)
    assert (result.rows, result.added) == (1, 1)


def test_passwords_are_hashed_on_threads_with_the_organizations_type(god, make_org, monkeypatch):
    org = make_org().name
    threads = set()
    complete_new = uploads.crud.complete_new

    def spy(*args):
        threads.add(threading.current_thread().name)
        complete_new(*args)

    monkeypatch.setattr(uploads.crud, "complete_new", spy)
    rows = [{"owner": org, "name": f"u{i}", "password": f"Secret-{i}"} for i in range(12)]
    with session_scope() as db:
        result = uploads.import_rows(db, god, REGISTRY["user"], [*rows, {"owner": org, "name": "none"}])
    assert result.added == 13 and len(threads) == uploads._workers()
    with session_scope() as db:
        users = {u.name: u for u in db.exec(select(m.User).where(m.User.owner == org)).all()}
    for i in range(12):
        user = users[f"u{i}"]
        assert user.password_type == "argon2id" and verify_password(f"Secret-{i}", user.password, "argon2id")
        assert user.last_change_password_time is not None
    assert users["none"].password == "" and users["none"].last_change_password_time is None


def test_only_the_four_kinds_upload(god):
    with pytest.raises(uploads.ServiceError), session_scope() as db:
        uploads.import_rows(db, god, REGISTRY["application"], [])


def test_a_blank_record_works_in_a_fresh_process():
    """blank() configures the mappers itself (model() would; new_instance() does not)."""
    code = ("from iam_console.models import User; from iam_console.identity.uploads import blank; "
            "row = blank(User); row.display_name = 'x'; print(row.display_name, row.groups)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "x []", done.stderr
