"""An extension written by `python -m iam_console new-extension` works as written, the way its
author meets it (docs/extending.md, "Start from the scaffold"): the project is written, installed,
its own tests pass, and a server started with it (migrate, build, serve) shows its menu entry,
list and edit pages to the admin in Chromium, where a record is added and listed; both pages pass
axe's WCAG checks.

The package is installed with `pip install --no-deps --target` into a temporary folder, which the
subprocesses find on PYTHONPATH (importlib.metadata reads entry points from every sys.path entry):
the shared environment is left as it was. The server is this module's own, built once, with its
own SQLite database, as tests/e2e/conftest.py starts the browser tests' one; this folder runs in a
pytest run of its own (Makefile `test`), since a build rewrites the project's one .web, which the
other browser tests' server serves."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.conftest import (
    ADMIN,
    LOG_TAIL_LINES,
    PROJECT_DIR,
    STARTUP_TIMEOUT,
    VENV_BIN,
    Server,
    Visitor,
    _check_build_targets_port,
    _free_port,
    _server_env,
    _stop,
    chromium,
    console_context,
    wait_serving,
)
from tests.e2e.steps import save

NAME = "note"  # the extension and its kind: /notes, "Notes" in the Admin group
PYTHON = str(VENV_BIN / "python")


@dataclass(frozen=True)
class Project:
    folder: Path  # the written project
    site: Path  # where it is installed
    env: dict[str, str]  # the environment of the processes that use it


def _tail(text: str) -> str:
    return "\n".join(text.splitlines()[-LOG_TAIL_LINES:])


def _run(command: list[str], env: dict[str, str], timeout: float, what: str) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}):\n{_tail(done.stdout + done.stderr)}")
    return done


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """The scaffold's project, written by the command and installed out of the shared environment."""
    tmp = tmp_path_factory.mktemp("scaffold")
    env = {**os.environ, "PYTHONPATH": str(tmp / "site")}
    env.pop("IAM_EXTENSIONS_DISABLED", None)
    _run([PYTHON, "-m", "iam_console", "new-extension", NAME, "--into", str(tmp)], env, 120, "the scaffold")
    folder = tmp / f"iam-{NAME}"
    _run([PYTHON, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(tmp / "site"), str(folder)],
         env, 300, "pip install --target")
    return Project(folder, tmp / "site", env)


def test_the_extension_is_found_by_its_entry_point_from_pythonpath(project):
    listing = [PYTHON, "-c", "from iam_console.extension import extensions; "
               "print(' '.join(e.name for e in extensions()))"]
    found = _run(listing, project.env, 120, "discovery").stdout.split()
    # and not from the shared environment: the same interpreter without the PYTHONPATH finds what
    # it has (the built-in features, and the extensions `make setup` installed) but it
    bare = {key: value for key, value in project.env.items() if key != "PYTHONPATH"}
    without = _run(listing, bare, 120, "discovery").stdout.split()
    assert without[:2] == ["core", "commerce"] and NAME not in without
    assert found == [*without[:2], *sorted([*without[2:], NAME])]  # installed ones come by name


def test_the_generated_tests_pass(project):
    """Its own tests, run as its README says (from the console's folder, with its interpreter)."""
    ran = _run([PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(project.folder / "tests")],
               project.env, 300, "the generated tests")
    assert re.search(r"\b5 passed\b", ran.stdout), ran.stdout


@pytest.fixture(scope="module")
def server(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the extension: migrated, built and serving, as `make run` does."""
    tmp = tmp_path_factory.mktemp("scaffold-server")
    port = _free_port()
    database_url = f"sqlite:///{tmp / 'iam.db'}"
    env = {**_server_env(port, database_url, tmp / "files"), "PYTHONPATH": str(project.site)}
    env.pop("IAM_EXTRA_PAGES")  # the product's pages and the extension's, nothing of the tests
    env.pop("IAM_EXTENSIONS_DISABLED", None)
    _run([PYTHON, "-m", "iam_console.startup"], env, 180, "iam_console.startup")
    _run([PYTHON, "-m", "iam_console.serve", "build"], env, STARTUP_TIMEOUT, "the front end's build")
    log_path = tmp / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([PYTHON, "-m", "iam_console.serve"], cwd=PROJECT_DIR, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    running = Server(f"http://localhost:{port}", port, log_path, database_url)
    try:
        wait_serving(process, running)
        mismatch = _check_build_targets_port(running.base_url, port)
        if mismatch:
            pytest.fail(mismatch)
        yield running
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser, server):
    context = console_context(browser, server.base_url)
    try:
        yield context.new_page()
    finally:
        context.close()


def test_the_server_migrated_the_extensions_table_on_its_branch(server):
    from iam_console.db import make_engine

    engine = make_engine(server.database_url)
    try:
        with engine.connect() as connection:
            assert {NAME, f"alembic_version_{NAME}"} <= set(sa.inspect(connection).get_table_names())
            versions = connection.execute(sa.text(f"SELECT version_num FROM alembic_version_{NAME}")).all()
    finally:
        engine.dispose()
    assert versions == [("0001",)]


def test_the_admin_adds_a_record_through_the_extensions_pages(page, server):
    visit = Visitor(page)
    signed_in = page.request.post("/api/login", data={
        "application": "", "organization": ADMIN.organization, "username": ADMIN.username,
        "password": ADMIN.password, "autoSignin": True, "type": "login", "signinMethod": "Password"}).json()
    assert signed_in["status"] == "ok", signed_in

    # the menu entry, in the built-in Admin group
    visit("/")
    expect(page.locator("#menu-group-admin")).to_be_visible(timeout=45_000)  # with the account's state
    page.click("#menu-group-admin")
    entry = page.locator(f"#menu-item-{NAME}s")
    expect(entry).to_have_text("Notes")
    entry.click()
    page.wait_for_url(re.compile(f"/{NAME}s$"))
    visit.live()
    expect(page.get_by_role("heading", name="Notes")).to_be_visible()
    expect(page.locator("#list-table")).to_be_visible()
    assert serious(page) == []

    # Add opens the edit page of a new record, with the rules' values (rules.py `new`)
    page.click("#list-add")
    page.wait_for_url(re.compile(f"/{NAME}s/built-in/{NAME}_\\w+\\?mode=add"))
    visit.live()
    expect(page.locator("#field-displayName")).to_have_value(re.compile("^New Note - "))
    name = page.locator("#field-name").input_value()
    assert name.startswith(f"{NAME}_")
    displayed = f"Written in Chromium {time.monotonic_ns()}"
    page.fill("#field-displayName", displayed)
    page.fill("#field-text", "The text of the note")
    page.mouse.move(0, 0)
    save(page)
    assert serious(page) == []
    stored = page.request.get(f"/api/get-{NAME}", params={"id": f"built-in/{name}"}).json()["data"]
    assert (stored["displayName"], stored["text"]) == (displayed, "The text of the note")

    # the kind's rule holds in the console too: an empty display name is refused, nothing written
    page.fill("#field-displayName", "")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile("The display name cannot be empty"))).to_be_visible()
    assert page.request.get(f"/api/get-{NAME}", params={"id": f"built-in/{name}"}).json()["data"]["displayName"] \
        == displayed

    # and listed
    visit(f"/{NAME}s")
    row = page.locator("#list-table tbody tr").filter(has_text=name)
    expect(row).to_have_count(1)
    expect(row).to_contain_text(displayed)
