"""The pickers' names (core/choices.py): one page at a time, narrowed by what was typed, in
the referring field's form, and through the list's access rules: an organization admin is never
offered another organization's records."""

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.core import choices
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from tests.conftest import unique


def _actor(owner: str, name: str) -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name)).one())


def _names(actor: Actor, kind: str, organization: str, typed: str = "", **options) -> choices.Choices:
    with session_scope() as db:
        return choices.names(db, actor, kind, organization, typed, **options)


def test_pages_search_and_forms(make_org, make_user):
    org = make_org()
    boss = make_user(owner=org.name, is_admin=True)
    members = sorted(make_user(owner=org.name, name=f"member-{i:02d}").name for i in range(25))
    actor = _actor(org.name, boss.name)

    first = _names(actor, "user", org.name, size=10)
    assert first.names == members[:10] and first.more  # sorted by name, one page only
    third = _names(actor, "user", org.name, size=10, page=3)
    assert third.names == [*members[20:], boss.name][:10] and not third.more
    assert _names(actor, "user", org.name, "member-1").names == members[10:20]  # the name contains it
    assert _names(actor, "user", org.name, "nobody-has-this").names == []
    as_ids = _names(actor, "user", org.name, "member-0", form="id")
    assert as_ids.names == [f"{org.name}/{name}" for name in members[:10]]
    assert len(_names(actor, "user", org.name, size=500).names) == 26  # a page holds 100 at most, here all


def test_an_org_admin_never_sees_another_organizations_names(make_org, make_user):
    mine, theirs = make_org(), make_org()
    boss = make_user(owner=mine.name, is_admin=True)
    make_user(owner=theirs.name, name="secret-member")
    actor = _actor(mine.name, boss.name)
    with session_scope() as db, pytest.raises(ServiceError):
        choices.names(db, actor, "user", theirs.name)  # refused, as the list is
    assert "secret-member" not in _names(actor, "user", mine.name, "secret").names
    # an ordinary member is offered what the list shows them: their own record only
    alice = make_user(owner=mine.name, name="alice-member")
    assert _names(_actor(mine.name, alice.name), "user", mine.name).names == ["alice-member"]


def test_categories_and_shared_records(make_org, make_user):
    org = make_org()
    boss = make_user(owner=org.name, is_admin=True)
    shared = unique("shared-mail")
    with session_scope() as db:
        db.add(m.Provider(owner=org.name, name="own-mail", category="Email"))
        db.add(m.Provider(owner=org.name, name="own-sms", category="SMS"))
        db.add(m.Provider(owner="admin", name=shared, category="Email"))
    try:
        actor = _actor(org.name, boss.name)
        email = _names(actor, "provider", org.name, category="Email").names
        assert "own-mail" in email and shared in email and "own-sms" not in email
        with session_scope() as db, pytest.raises(ServiceError, match="no category"):
            choices.names(db, actor, "user", org.name, category="Email")
    finally:  # a shared provider reaches every organization: the other tests must not meet it
        with session_scope() as db:
            db.delete(db.exec(select(m.Provider).where(m.Provider.owner == "admin", m.Provider.name == shared)).one())


def test_bad_input_is_refused():
    with session_scope() as db, pytest.raises(ServiceError, match="Unknown kind"):
        choices.names(db, Actor(user=None), "nothing", "acme")
    with session_scope() as db, pytest.raises(ServiceError, match="Unknown value form"):
        choices.names(db, Actor(user=None), "user", "acme", form="both")
