"""The extension contract (iam_console/extension.py): the built-in features register through it,
an installed extension joins every registry, a disabled one leaves no trace, and one that cannot
join stops the start with a message naming it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import extension, features, scheduler
from iam_console import models as m
from iam_console.commerce.extension import COMMERCE
from iam_console.core import kinds, navigation
from iam_console.core.kinds.common import KindRules
from iam_console.core.resources import REGISTRY, Kind
from iam_console.core.seed import ensure_first_start_data
from iam_console.db import make_engine, migrate
from iam_console.extension import Extension, ExtensionError, Job, MenuEntry, MenuGroup
from iam_console.i18n import catalog
from iam_console.operations.kinds.webhook import events

PROBE_RULES = KindRules()
# an installed extension as its entry point names it: a kind (an existing table will do here:
# the contract is what is tested), its rules, a menu group with an entry, a job and an event
PROBE = Extension(
    "probe",
    kinds=(Kind("probe", REGISTRY["adapter"].model, name_prefix="probe"),),
    rules={"probe": PROBE_RULES},
    menu_groups=(MenuGroup("/probes", "Probes"),),
    menu=(MenuEntry("/probes", "/probes", "Probes"), MenuEntry("/admin", "/probe-tools", "Probe tools",
                                                               "global admins")),
    jobs=(Job("probe", lambda: None),),
    webhook_events=("add-probe",),
    translations=str(Path(__file__).parent / "probe_catalogs"),
    migrations=str(Path(__file__).parent / "probe_migrations"),
)
CLASHING = Extension("clashing", kinds=(Kind("user", REGISTRY["user"].model),))
ASTRAY = Extension("astray", menu=(MenuEntry("/nowhere", "/astray", "Astray"),))
FOLLOWER = Extension("follower", menu_groups=(MenuGroup("/after-home", "After home", after="/home"),))
MISPLACED = Extension("misplaced", menu_groups=(MenuGroup("/late", "Late", after="/nowhere"),))
NOT_AN_EXTENSION = {"name": "dict"}


@pytest.fixture
def installed(monkeypatch):
    """Pretend these (name, "module:attribute") entry points are installed; rediscover after."""
    def install(*points: tuple[str, str]) -> None:
        monkeypatch.setattr(extension, "installed", lambda: sorted(points))
        extension.rediscover()
        catalog.cache_clear()

    yield install
    monkeypatch.undo()
    extension.rediscover()
    catalog.cache_clear()


def test_the_built_in_features_register_through_the_contract():
    # the built-in features first, then whatever this environment has installed (the tickets
    # extension under `make setup`)
    everything = extension.extensions()
    assert everything[:2] == (features.CORE, COMMERCE)
    assert {kind.name for e in everything[:2] for kind in e.kinds} >= {"user", "product", "webhook"}
    assert set(REGISTRY) == {kind.name for e in everything for kind in e.kinds}
    assert dict(kinds.RULES) == {name: rules for e in everything for name, rules in e.rules.items()}
    # commerce's group takes its place after the logs, as Casdoor's menu has it
    assert [group.key for group in navigation.menu()][:7] == ["/home", "/orgs", "/identity", "/auth", "/logs",
                                                              "/business", "/admin"]
    assert {job.name for job in (*features.CORE.jobs, *COMMERCE.jobs)} == {
        "LDAP auto sync", "syncer run", "subscription expiry", "record purge", "session expiry"}
    assert "add-product" in events() and "notify-payment" in events()


@pytest.fixture
def without_commerce(monkeypatch):
    """The product with the built-in features but commerce."""
    monkeypatch.setattr(extension, "BUILT_IN", ("iam_console.features:CORE",))
    extension.rediscover()
    yield
    monkeypatch.undo()
    extension.rediscover()


def test_nothing_outside_commerce_names_it():
    """Commerce joins through the contract alone: no module outside its package imports it."""
    root = Path(features.__file__).parent
    importers = set()
    for path in root.rglob("*.py"):
        if path.is_relative_to(root / "commerce"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(name.startswith("iam_console.commerce") for name in names):
                importers.add(str(path.relative_to(root)))
    assert importers == set()


def test_the_product_runs_without_commerce(without_commerce, tmp_path):
    from fastapi.testclient import TestClient

    from iam_console.api.app import create_api
    from iam_console.core import init_data, storage
    from iam_console.home import dashboard

    assert not {"product", "payment", "plan", "pricing", "subscription", "transaction", "order"} & set(REGISTRY)
    assert "/business" not in [group.key for group in navigation.menu()]
    assert "add-product" not in events() and "notify-payment" not in events() and "add-user" in events()
    assert "subscription expiry" not in {job.name for e in scheduler.extensions() for job in e.jobs}
    assert "subscription" not in dashboard.series() and "user" in dashboard.series()
    assert "payments" not in dict(init_data.sections()) and "users" in dict(init_data.sections())
    assert "invoice" not in storage.folders()
    with TestClient(create_api()) as client:
        for gone in ("get-products", "buy-product", "get-user-orders"):
            assert client.get(f"/api/{gone}").json()["msg"] == f"The API /api/{gone} does not exist"
        assert "does not exist" not in client.get("/api/get-users?owner=built-in").json()["msg"]
    # the first start adds the product's own shared providers, not commerce's payment providers
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    migrate(url)
    engine = make_engine(url)
    with Session(engine) as db:
        ensure_first_start_data(db, "first-start-1")
        assert set(db.exec(select(m.Provider.name).where(m.Provider.owner == "admin")).all()) == {
            "provider_captcha_default"}
    engine.dispose()


def test_the_api_serves_every_router_the_extensions_declare():
    from iam_console.api.app import extension_routers

    routers = extension_routers()
    declared = [path for e in extension.extensions() for path in e.routers]
    assert len(routers) == len(declared) >= len(features.CORE.routers) and all(hasattr(r, "routes") for r in routers)


def test_an_installed_extension_joins_every_registry(installed):
    installed(("probe", "tests.unit.test_extension:PROBE"))
    assert REGISTRY["probe"].name_prefix == "probe" and kinds.of("probe") is PROBE_RULES
    assert [g.key for g in navigation.menu()][-1] == "/probes"
    admin = {item.key: item for group in navigation.menu() if group.key == "/admin" for item in group.items}
    assert admin["/probe-tools"].seen_by == "global admins"
    organization_admin = navigation.Viewer("acme", is_admin=True)
    shown = {item.key for group in navigation.menu_for(organization_admin, {"/probes", "/probe-tools"})
             for item in group.items}
    assert shown == {"/probes"}  # a global admins' entry is theirs alone
    assert "probe" in [job.name for e in scheduler.extensions() for job in e.jobs]
    assert "add-probe" in events()
    assert catalog("zh")["Probes"] == "探针" and catalog("zh")["Users"] == "用户"  # with the built-in ones


def test_a_disabled_extension_leaves_no_trace(installed, monkeypatch):
    monkeypatch.setenv(extension.DISABLED_VARIABLE, "other, probe")
    installed(("probe", "tests.unit.test_extension:PROBE"))
    assert "probe" not in REGISTRY and "/probes" not in [g.key for g in navigation.menu()]
    assert [e.name for e in extension.extensions()] == ["core", "commerce"]


@pytest.mark.parametrize(("point", "message"), [
    (("broken", "tests.unit.no_such_module:EXTENSION"), r"The extension broken \(tests.unit.no_such_module:EXTENSION\) "
                                                          r"could not be loaded: ModuleNotFoundError"),
    (("dict", "tests.unit.test_extension:NOT_AN_EXTENSION"), r"The extension dict .* is a dict, not an Extension"),
    (("renamed", "tests.unit.test_extension:PROBE"), r"The extension renamed .* declares the name probe"),
    (("clashing", "tests.unit.test_extension:CLASHING"),
     r"The extension clashing declares the kind user, which core declares already"),
])
def test_an_extension_that_cannot_join_stops_the_start_naming_it(installed, point, message):
    installed(point)
    with pytest.raises(ExtensionError, match=message):
        dict(REGISTRY)


def test_a_menu_group_takes_its_place_after_the_group_it_names(installed):
    installed(("follower", "tests.unit.test_extension:FOLLOWER"))
    assert [group.key for group in navigation.menu()][:2] == ["/home", "/after-home"]
    installed(("misplaced", "tests.unit.test_extension:MISPLACED"))
    with pytest.raises(ExtensionError, match="The extension misplaced: menu group /late follows the group /nowhere"):
        navigation.menu()


def test_a_menu_entry_must_join_a_declared_group(installed):
    installed(("astray", "tests.unit.test_extension:ASTRAY"))
    with pytest.raises(ExtensionError, match="The extension astray: menu entry /astray joins the group /nowhere"):
        navigation.menu()


@pytest.mark.parametrize("name", ["", "Tickets", "1st", "a-b", "x" * 41])
def test_an_extension_name_is_a_lowercase_identifier(name):
    with pytest.raises(ExtensionError, match="must be lowercase letters"):
        Extension(name)


def test_a_menu_entry_is_seen_by_one_of_three_audiences():
    with pytest.raises(ExtensionError, match="is seen by 'owners'"):
        Extension("odd", menu=(MenuEntry("/admin", "/odd", "Odd", "owners"),))


def test_an_extensions_migrations_are_its_own_and_outlive_its_removal(installed, tmp_path):
    url = f"sqlite:///{tmp_path / 'extended.db'}"

    def state() -> tuple[set[str], list]:
        engine = make_engine(url)
        try:
            with engine.connect() as connection:
                tables = set(sa.inspect(connection).get_table_names())
                probe = (connection.execute(sa.text("SELECT version_num FROM alembic_version_probe")).all()
                         if "alembic_version_probe" in tables else [])
            return tables, probe
        finally:
            engine.dispose()

    installed(("probe", "tests.unit.test_extension:PROBE"))
    migrate(url)
    tables, probe = state()
    assert {"user", "probe_note", "alembic_version", "alembic_version_probe"} <= tables and probe == [("p001",)]
    installed()  # uninstalled: the product still migrates and starts on the same database, its table kept
    migrate(url)
    assert "probe_note" in state()[0]
    installed(("probe", "tests.unit.test_extension:PROBE"))  # and installed again: nothing to redo
    migrate(url)
    assert state()[1] == [("p001",)]


BROKEN_ROUTER = Extension("broken_router", routers=("tests.unit.no_such_module:router",))


def test_the_server_does_not_start_with_an_extension_that_cannot_join(installed, capsys):
    from iam_console import serve

    installed(("broken_router", "tests.unit.test_extension:BROKEN_ROUTER"))
    assert serve.main(["build"]) == 2  # before anything is built or served
    assert ("iam_console.serve: The extension broken_router (tests.unit.no_such_module:router) could not be loaded"
            in capsys.readouterr().err)


def _reads_a_registry_at_its_import() -> Extension:
    REGISTRY["user"]  # as a service module that kept a kind in a constant would
    return Extension("eager")


def test_a_declaration_that_reads_a_registry_as_it_loads_is_named(installed, monkeypatch):
    monkeypatch.setattr(extension, "_load", lambda path, source: _reads_a_registry_at_its_import()
                        if source == "eager" else features.CORE)
    installed(("eager", "tests.unit.test_extension:PROBE"))
    with pytest.raises(ExtensionError, match="A registry was read while the extensions were being loaded"):
        extension.extensions()
