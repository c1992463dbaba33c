"""Installed with pip (`make setup` installs it editable), the extension brings its routes, its
OpenAPI operations, its menu entry, its pages, its catalogs and its table; with
IAM_EXTENSIONS_DISABLED=tickets its routes answer "does not exist" and the server starts on the
same database, its table kept; enabled again, its tickets are there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import sqlalchemy as sa

from iam_console import extension
from iam_console.api.app import api, route_table
from iam_console.core import navigation
from iam_console.i18n import catalog
from tests.conftest import ADMIN_PASSWORD

ROOT = Path(__file__).resolve().parents[3]  # the repository: iam_console is imported from there
ROUTES = {"/api/get-tickets", "/api/get-ticket", "/api/add-ticket", "/api/update-ticket", "/api/delete-ticket",
          "/api/add-ticket-message"}


def test_the_distribution_declares_the_extension_by_its_entry_point():
    assert ("tickets", "iam_tickets:EXTENSION") in extension.installed()
    assert "tickets" in [e.name for e in extension.extensions()]


def test_it_brings_its_routes_menu_entry_pages_and_catalogs():
    assert {path for _, path in route_table()} >= ROUTES
    document = api.openapi()
    assert set(document["paths"]) >= ROUTES
    ticket = document["components"]["schemas"]["TicketInput"]["properties"]
    assert ticket["state"]["enum"] == ["", "Open", "In Progress", "Resolved", "Closed"]
    admin = {item.key: item for group in navigation.menu() if group.key == "/admin" for item in group.items}
    assert admin["/tickets"].seen_by == "everyone"
    user = navigation.Viewer("acme", is_admin=False)
    assert "/tickets" in {item.key for group in navigation.menu_for(user, {"/tickets", "/webhooks"})
                          for item in group.items}
    from iam_console.ui import pages  # noqa: F401  (declares every screen)
    from iam_console.ui.screens import SCREENS

    assert (SCREENS["ticket"].list_route, SCREENS["ticket"].edit_pattern) == ("/tickets", "/tickets/[p0]/[p1]")
    assert catalog("zh")["Tickets"] == "工单" and catalog("zh")["Users"] == "用户"


def test_its_table_is_migrated_on_its_own_branch(database):
    with database.connect() as connection:
        assert "ticket" in sa.inspect(connection).get_table_names()
        versions = connection.execute(sa.text("SELECT version_num FROM alembic_version_tickets")).all()
        assert versions == [("t001",)]
        assert ("t001",) not in connection.execute(sa.text("SELECT version_num FROM alembic_version")).all()


# One start of the server in a process of its own, on the database of IAM_DATABASE_URL: what the
# production command does before it serves (python -m iam_console.serve: every extension checked,
# then iam_console.startup: migrations and first-start data), then calls through the API.
PROBE = """
import json, sys
from iam_console import extension, startup
extension.check()
startup.prepare_database()
from fastapi.testclient import TestClient
from iam_console.api.app import api
client = TestClient(api)
client.headers["Origin"] = "http://testserver"
signed = client.post("/api/login", json={"organization": "built-in", "username": "admin",
                                         "password": sys.argv[1]}).json()
assert signed["status"] == "ok", signed
answers = {"extensions": [e.name for e in extension.extensions()],
           "add": client.post("/api/add-ticket", json={"owner": "built-in", "name": sys.argv[2], "title": "t"}).json(),
           "get": client.get("/api/get-ticket", params={"id": "built-in/kept"}).json(),
           "message": client.post("/api/add-ticket-message", params={"id": "built-in/kept"},
                                  json={"text": "hello"}).json(),
           "users": client.get("/api/get-users", params={"owner": "built-in"}).json()["status"],
           "documented": sorted(p for p in api.openapi()["paths"] if "ticket" in p)}
print(json.dumps(answers))
"""


def _start(database_url: str, tmp: Path, ticket: str, disabled: str = "") -> dict:
    env = {**os.environ, "IAM_DATABASE_URL": database_url, "IAM_ADMIN_PASSWORD": ADMIN_PASSWORD,
           "IAM_FILES_DIR": str(tmp / "files"), "IAM_ORIGIN": "http://testserver",
           "IAM_EXTENSIONS_DISABLED": disabled}
    done = subprocess.run([sys.executable, "-c", PROBE, ADMIN_PASSWORD, ticket], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_disabled_its_routes_do_not_exist_and_the_server_starts_on_the_same_database(tmp_path):
    url = f"sqlite:///{tmp_path / 'one.db'}"
    enabled = _start(url, tmp_path, "kept")
    assert "tickets" in enabled["extensions"] and enabled["add"]["data"] == "Affected"
    assert enabled["get"]["data"]["name"] == "kept" and enabled["message"]["data"] == "Affected"
    assert set(enabled["documented"]) == ROUTES

    disabled = _start(url, tmp_path, "refused", disabled="tickets")
    assert "tickets" not in disabled["extensions"] and disabled["users"] == "ok"
    for answer, route in ((disabled["add"], "add-ticket"), (disabled["get"], "get-ticket"),
                          (disabled["message"], "add-ticket-message")):
        assert answer["status"] == "error" and answer["msg"] == f"The API /api/{route} does not exist", answer
    assert disabled["documented"] == []
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:  # its table and its version stay, as they were
            assert connection.execute(sa.text("SELECT name FROM ticket")).all() == [("kept",)]
            assert connection.execute(sa.text("SELECT version_num FROM alembic_version_tickets")).all() == [("t001",)]
    finally:
        engine.dispose()

    again = _start(url, tmp_path, "again")
    assert again["get"]["data"]["name"] == "kept" and [m["text"] for m in again["get"]["data"]["messages"]] == [
        "hello"]
    assert again["add"]["data"] == "Affected"
