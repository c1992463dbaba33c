"""The applications screen at scale: 10,000 applications and 5,000 providers, in this process.

    .venv/bin/python bench/applications.py
    .venv/bin/python bench/applications.py --applications 10000 --providers 5000 --runs 30

What the console's states do outside Reflex, through the same service calls and the same
declaration: a list click (`crud.list_records` of a page, then the rows' display strings, as
`Listing._fetch` does, for the global admin over every organization and for one organization);
opening the edit page (`Editing._read`'s record, restrictions and select choices); a picker's page of
providers, of certs and of organizations (`choices.names`: one page of 20 names with the next-page
flag), and saving an application with 20 provider rows (`crud.update_record`, whose rules look the
providers up). The seeding is cached under bench/.data/. Prints the median and p95 of each and the
ratio to its target (a list click 100 ms, the edit page's reads 300 ms: docs/performance.md)."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORGS = 50  # the applications and providers are spread over these organizations
ADMIN_PASSWORD = "bench-admin-password"


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--applications", type=int, default=10_000)
    parser.add_argument("--providers", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=30)
    return parser.parse_args()


def seed(url: str, applications: int, providers: int) -> None:
    import sqlalchemy as sa

    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.models import Application, Organization, Provider
    from iam_console.services.seed import ensure_first_start_data

    migrate(url)
    engine = make_engine(url)
    with session_scope(engine) as db:
        ensure_first_start_data(db, ADMIN_PASSWORD)
    with engine.begin() as connection:
        if connection.execute(sa.select(sa.func.count()).select_from(Application)).scalar() >= applications:
            engine.dispose()
            return
        connection.execute(sa.insert(Organization), [
            {"owner": "admin", "name": f"org{o:02d}", "display_name": f"Org {o}", "password_type": "argon2id"}
            for o in range(ORGS)])
        connection.execute(sa.insert(Provider), [
            {"owner": f"org{i % ORGS:02d}", "name": f"provider{i:05d}", "category": "OAuth", "type": "GitHub",
             "display_name": f"Provider {i}"} for i in range(providers)])
        per_org = providers // ORGS
        connection.execute(sa.insert(Application), [{
            "owner": "admin", "name": f"app{i:05d}", "organization": f"org{i % ORGS:02d}",
            "display_name": f"App {i}", "client_id": f"client{i:05d}", "client_secret": "s" * 40,
            "cert": "cert-built-in", "token_format": "JWT", "expire_in_hours": 168, "refresh_expire_in_hours": 168,
            "failed_signin_limit": 5, "failed_signin_frozen_time": 15, "grant_types": ["authorization_code"],
            "signin_methods": [{"name": "Password", "displayName": "Password", "rule": "All"}],
            "providers": [{"name": f"provider{(i % ORGS) + ORGS * k:05d}", "canSignUp": True, "canSignIn": True,
                           "canUnlink": True, "prompted": False, "signupGroup": "", "rule": "None"}
                          for k in range(min(20, per_org))],
        } for i in range(applications)])
    engine.dispose()


def measure(label: str, call, runs: int, target_ms: float) -> None:
    call()  # warm-up
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    ordered = sorted(samples)
    median, p95 = statistics.median(ordered), ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]
    print(f"| {label} | {median:.1f} ms | {p95:.1f} ms | {target_ms:.0f} ms | {median / target_ms:.2f} |", flush=True)


def main() -> None:
    args = parse()
    (ROOT / "bench" / ".data").mkdir(exist_ok=True)
    url = f"sqlite:///{ROOT / 'bench' / '.data' / f'applications-{args.applications}-{args.providers}.db'}"
    os.environ["IAM_DATABASE_URL"] = url  # before iam_console is imported
    seed(url, args.applications, args.providers)

    from iam_console.db import session_scope
    from iam_console.services import choices, crud, lookup
    from iam_console.services.access import Actor
    from iam_console.services.resources import REGISTRY
    from iam_console.ui import pages  # noqa: F401  (declares the screens)
    from iam_console.ui.screens import SCREENS
    from iam_console.ui.state.editing import _choices, _restrictions
    from iam_console.ui.state.listing import _display

    screen, kind = SCREENS["application"], REGISTRY["application"]
    with session_scope() as db:
        admin = lookup.user(db, "built-in", "admin")
        db.expunge(admin)
    actor = Actor(user=admin)

    class Prefs:  # the labels of the select choices, untranslated
        @staticmethod
        def say(text: str, *args) -> str:
            return text

    def list_click(organization: str, page: int, search: str = ""):
        def run():
            params = {"p": str(page), "pageSize": "10"} | ({"field": "name", "value": search} if search else {})
            with session_scope() as db:
                listed = crud.list_records(db, actor, kind, params, owner="", organization=organization)
                [_display(screen, row, actor.id) for row in listed.rows]
        return run

    def open_edit():
        with session_scope() as db:
            record = crud.get_record(db, actor, kind, "admin", "app04242")
            _restrictions(db, actor, screen, record)
            _choices(db, actor, screen, record, Prefs)

    def picker(kind_name: str):
        def run():
            with session_scope() as db:
                choices.names(db, actor, kind_name, "org42", "")
        return run

    def save():
        with session_scope() as db:
            record = crud.get_record(db, actor, kind, "admin", "app04242")
            crud.update_record(db, actor, kind, "admin", "app04242",
                               {**record, "description": f"saved {time.perf_counter()}"})

    print(f"{args.applications:,} applications, {args.providers:,} providers over {ORGS} organizations; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    print("| action | median | p95 | target | median/target |\n|---|---|---|---|---|")
    measure("list click: every organization, page 2", list_click("", 2), args.runs, 100)
    measure("list click: every organization, page 500", list_click("", 500), args.runs, 100)
    measure("list click: one organization, page 2", list_click("org07", 2), args.runs, 100)
    measure("list click: search name `app0424`", list_click("", 1, "app0424"), args.runs, 100)
    measure("edit page: record, restrictions, choices", open_edit, args.runs, 300)
    measure("picker: a page of providers", picker("provider"), args.runs, 300)
    measure("picker: a page of certs", picker("cert"), args.runs, 300)
    measure("picker: a page of organizations", picker("organization"), args.runs, 300)
    measure("save with 20 provider rows", save, args.runs, 300)


if __name__ == "__main__":
    main()
