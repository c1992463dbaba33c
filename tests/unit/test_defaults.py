"""Every kind's new record passes the same rules as any other add."""

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.core import crud, kinds
from iam_console.core.access import Actor
from iam_console.core.defaults import new_record
from iam_console.core.kinds.common import answer_name
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope

CONSOLE_KINDS = sorted(name for name, kind in REGISTRY.items() if kind.writable and kind.named
                       and name not in ("resource",))


def god() -> Actor:
    """The built-in admin, as in the console (new records are the console's Add button)."""
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())


@pytest.mark.parametrize("kind_name", CONSOLE_KINDS)
def test_new_records_are_valid_and_named_by_prefix(database, make_org, kind_name):
    org = make_org()
    actor = god()
    kind = REGISTRY[kind_name]
    with session_scope() as db:
        record = new_record(db, actor, kind_name, org.name)
        answer = crud.add_record(db, actor, kind, record)
    name = record[m.wire_name(kind.model, "name")]
    assert answer == (name if kinds.of(kind_name).answer is answer_name else "Affected")
    assert name.startswith(f"{kind.name_prefix}_")


def test_spec_defaults(database, make_org):
    org = make_org(init_score=77, country_codes=["FR"])
    actor = god()
    with session_scope() as db:
        user = new_record(db, actor, "user", org.name)
        group = new_record(db, actor, "group", org.name)
        invitation = new_record(db, actor, "invitation", org.name)
        permission = new_record(db, actor, "permission", org.name)
        product = new_record(db, actor, "product", org.name)
        webhook = new_record(db, actor, "webhook", org.name)
    assert (user["type"], user["affiliation"], user["tag"], user["score"], user["countryCode"],
            user["isAdmin"]) == ("normal-user", "Example Inc.", "staff", 77, "FR", False)
    assert user["email"].endswith("@example.com") and user["displayName"].startswith("New User - ")
    assert (group["type"], group["isEnabled"], group["parentId"]) == ("Virtual", True, org.name)
    assert (invitation["quota"], invitation["usedCount"], invitation["application"], invitation["state"]) == (
        1, 0, "All", "Active")
    assert len(invitation["code"]) == 10 and invitation["code"].isalnum()
    assert permission["state"] == "Approved" and permission["resources"] == ["app-built-in"]
    assert (product["price"], product["quantity"], product["sold"], product["currency"], product["state"]) == (
        300.0, 99, 10, "USD", "Published")
    assert (webhook["owner"], webhook["organization"], webhook["method"]) == ("admin", org.name, "POST")
    assert webhook["events"] == ["signup", "login", "logout", "update-user"]
