"""The identity screens at scale: the applications and providers lists and the application edit
page with 10,000 applications and 5,000 providers in one organization, timed on the service calls
the console's states make, in this process (SQLite).

    .venv/bin/python bench/identity_screens.py
    .venv/bin/python bench/identity_screens.py --applications 20000 --providers 10000 --runs 30

(a) A list click is what `Lists._refresh` does (ui/state/listing.py): the viewer's session
lookup, `crud.list_records` with the list's filters (the global admin's list is unscoped, an
organization admin's is their organization's) and the page's display strings. Clicks: the next
page, a jump to the last pages, a sort on Name, a search on Name. (b) Opening an application's
edit page is what `Editing._read` does (ui/state/editing.py): the session lookup, `crud.get_record`,
the screen's restrictions and record-read choices, then the first page (20) of the provider and
cert pickers (`core/choices.names`), which the page fetches when a picker opens. Where the
applications or providers screen is not declared yet, its list columns are the usual ones (name,
created time, display name, logo, organization, providers; name, organization, created time,
display name, category, type, client ID, provider URL) and the display strings are made from them.

Bounds (docs/performance.md): a list click ≤ 100 ms, the edit page ≤ 300 ms of server time.
Seeding (bulk inserts, triggers included) is cached in bench/.data/."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from timing import timed  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG = "bench-org"
LIST_BOUND_MS = 100
EDIT_BOUND_MS = 300
PASSWORD = "Bench-admin-pass-1"


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--applications", type=int, default=10_000)
    parser.add_argument("--providers", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=20)
    return parser.parse_args()


def _columns(model, wire: dict) -> dict:
    """The column values of a record built from a wire object, as the service would store it."""
    from iam_console.core import wire as wire_module

    row = model()
    wire_module.apply(row, wire)
    return {column.key: getattr(row, column.key) for column in model.__table__.columns if column.key != "pk"}


def seed(url: str, applications: int, providers: int) -> None:
    """Migrate, first-start data, the organization and its admin, then the records in batches."""
    import sqlalchemy as sa
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.core import defaults
    from iam_console.core.access import Actor
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.identity.passwords import hash_password

    migrate(url)
    engine = make_engine(url)
    with session_scope(engine) as db:
        ensure_first_start_data(db, PASSWORD)
        if not db.exec(select(m.Organization).where(m.Organization.name == ORG)).first():
            db.add(m.Organization(owner="admin", name=ORG, display_name="Bench", password_type="argon2id"))
            db.add(m.User(owner=ORG, name="boss", uuid="bench-boss", display_name="Boss", is_admin=True,
                          type="normal-user", password=hash_password(PASSWORD), password_type="argon2id"))
        admin = Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())
        application = _columns(m.Application, defaults.new_record(db, admin, "application", ORG) | {
            "organization": ORG, "cert": "cert-built-in"})
        provider = _columns(m.Provider, defaults.new_record(db, admin, "provider", ORG))
    started = time.perf_counter()
    with engine.begin() as connection:
        for model, template, total, prefix, where in (
                (m.Application, application, applications, "app", m.Application.organization == ORG),
                (m.Provider, provider, providers, "provider", m.Provider.owner == ORG)):
            have = connection.execute(sa.select(sa.func.count()).select_from(model).where(where)).scalar()
            for start in range(have, total, 5_000):
                rows = []
                for i in range(start, min(start + 5_000, total)):
                    row = {**template, "name": f"{prefix}{i:06d}", "display_name": f"{prefix.title()} {i}"}
                    if model is m.Application:
                        row |= {"client_id": f"bench{i:014d}", "client_secret": f"secret{i:034d}",
                                # two of the organization's providers, as an application lists them
                                "providers": [{"name": f"provider{i % max(providers, 1):06d}", "canSignUp": True,
                                               "canSignIn": True, "canUnlink": True, "prompted": False,
                                               "signupGroup": "", "rule": "None", "countryCodes": []},
                                              {"name": f"provider{(i + 1) % max(providers, 1):06d}",
                                               "canSignUp": True, "canSignIn": True, "canUnlink": True,
                                               "prompted": False, "signupGroup": "", "rule": "None",
                                               "countryCodes": []}]}
                    else:
                        row |= {"client_id": f"client{i:06d}", "category": ("OAuth", "Email", "SMS")[i % 3],
                                "type": ("GitHub", "Default", "Twilio SMS")[i % 3]}
                    rows.append(row)
                connection.execute(sa.insert(model), rows)
                print(f"  seeded {start + len(rows):,} {model.__tablename__}s "
                      f"({time.perf_counter() - started:.0f} s)", flush=True)
    engine.dispose()


def _screens() -> dict:
    """The applications and providers screens: the declared ones, else the usual list columns."""
    from iam_console.ui import pages  # noqa: F401  (declares the screens)
    from iam_console.ui.screens import SCREENS, Column, Screen

    fallback = {
        "application": Screen(key="application", title="Applications", list_route="/applications",
                              edit_route="/applications/{organization}/{name}", fields=(), columns=(
                                  Column("name", "Name", link="/applications/{organization}/{name}"),
                                  Column("createdTime", "Created time", "time"), Column("displayName", "Display name"),
                                  Column("logo", "Logo", "avatar"),
                                  Column("organization", "Organization", link="/organizations/{organization}"),
                                  Column("providers", "Providers"))),
        "provider": Screen(key="provider", title="Providers", list_route="/providers",
                           edit_route="/providers/{owner}/{name}", fields=(), columns=(
                               Column("name", "Name", link="/providers/{owner}/{name}"),
                               Column("owner", "Organization"),
                               Column("createdTime", "Created time", "time"), Column("displayName", "Display name"),
                               Column("category", "Category"), Column("type", "Type"), Column("clientId", "Client ID"),
                               Column("providerUrl", "Provider URL"))),
    }
    return {key: (SCREENS.get(key), SCREENS.get(key) or screen) for key, screen in fallback.items()}


def main() -> None:
    args = parse()
    (ROOT / "bench" / ".data").mkdir(exist_ok=True)
    url = f"sqlite:///{ROOT / 'bench' / '.data' / f'identity-{args.applications}-{args.providers}.db'}"
    os.environ["IAM_DATABASE_URL"] = url
    print(f"database: {url}  applications: {args.applications:,}  providers: {args.providers:,}")
    seed(url, args.applications, args.providers)

    from sqlmodel import select

    from iam_console import models as m
    from iam_console.core import choices, crud
    from iam_console.core.access import Actor
    from iam_console.db import session_scope
    from iam_console.i18n import translate
    from iam_console.signin import auth
    from iam_console.ui.state.editing import _choices, _restrictions
    from iam_console.ui.state.listing import _display

    screens = _screens()
    for key, (declared, _) in screens.items():
        print(f"{key} screen: {'declared' if declared else 'not declared yet: the usual list columns'}")

    tokens = {}
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()
        for who, (owner, name) in {"global admin": ("built-in", "admin"), "organization admin": (ORG, "boss")}.items():
            user = db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name)).one()
            organization = db.exec(select(m.Organization).where(m.Organization.name == owner)).one()
            tokens[who] = auth.complete_sign_in(db, user, organization, app).token

    def viewer(db, token: str) -> Actor:
        """The signed-in account behind the session cookie, as the console's states read it for every event."""
        user, session = auth.account_for_token(db, token)
        return Actor(user=user, session_id=session.session_id)

    def list_click(key: str, who: str, params: dict):
        screen = screens[key][1]

        def call():
            with session_scope() as db:
                actor = viewer(db, tokens[who])
                owner = "" if actor.is_global_admin else actor.organization
                filters = ({"owner": "", "organization": owner} if key == "application"
                           else {"owner": owner, "organization": ""})
                page = crud.list_records(db, actor, screen.kind, params, **filters)
                rows = [_display(screen, row, actor.id) for row in page.rows]
            assert rows and page.total
        return call

    class Say:
        """What the edit state's choices need of the viewer's preferences: the catalog in English."""

        def say(self, template: str, *args: object) -> str:
            return translate(template, "en", *args)

    prefs = Say()

    def open_application(who: str, name: str):
        declared = screens["application"][0]

        def call():
            with session_scope() as db:
                actor = viewer(db, tokens[who])
                record = crud.get_record(db, actor, screens["application"][1].kind, "admin", name)
                assert record is not None
                if declared is not None:
                    _restrictions(db, actor, declared, record)
                    _choices(db, actor, declared, record, prefs)
                organization = record["organization"]
                found = [choices.names(db, actor, kind, organization) for kind in ("provider", "cert")]
            assert found[0].names and found[0].more and found[1].names
        return call

    with session_scope() as db:
        actor = viewer(db, tokens["organization admin"])
        totals = {key: crud.list_records(db, actor, screens[key][1].kind, {"p": "1", "pageSize": "10"}, **filters).total
                  for key, filters in (("application", {"organization": ORG}), ("provider", {"owner": ORG}))}
    print(f"the organization admin's lists: {totals['application']:,} applications, "
          f"{totals['provider']:,} providers (with the shared ones)")
    last_app, last_provider = -(-totals["application"] // 10), -(-totals["provider"] // 10)
    cases = []
    for who in ("global admin", "organization admin"):
        for key, total_pages in (("application", last_app), ("provider", last_provider)):
            for label, params in (
                    ("next page (2)", {"p": "2", "pageSize": "10"}),
                    (f"jump to page {total_pages:,}", {"p": str(total_pages), "pageSize": "10"}),
                    ("sort on Name", {"p": "1", "pageSize": "10", "sortField": "name", "sortOrder": "ascend"}),
                    ("sort on Name, descending", {"p": "1", "pageSize": "10", "sortField": "name",
                                                  "sortOrder": "descend"}),
                    ("search on Name", {"p": "1", "pageSize": "10", "field": "name", "value": "0042"})):
                cases.append((f"{key}s list, {who}: {label}", list_click(key, who, params), LIST_BOUND_MS))
        middle = f"app{args.applications // 2:06d}"
        cases.append((f"application edit page, {who}", open_application(who, middle), EDIT_BOUND_MS))

    print(f"\n{'call':<66}{'median':>10}{'p95':>10}{'bound':>8}{'median/bound':>14}")
    worst = 0.0
    for label, call, bound in cases:
        median, p95 = timed(call, args.runs)
        worst = max(worst, median / bound)
        print(f"{label:<66}{median:>8.1f}ms{p95:>8.1f}ms{bound:>6}ms{median / bound:>14.2f}", flush=True)
    print(f"worst median/bound: {worst:.2f}")
    print(f"(load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
