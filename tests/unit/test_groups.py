"""Groups and invitations in the service layer: the tree, the users of a group,
what a rename takes along, the checks on a group's parent, the refused delete of
a group with children, and the invitation's signup link."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import crud, query
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import migrate, session_scope
from iam_console.identity import groups, invitations, users
from tests.conftest import require_service

GROUP, USER, INVITATION = REGISTRY["group"], REGISTRY["user"], REGISTRY["invitation"]


def god() -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())


def add_group(actor: Actor, owner: str, name: str, parent: str = "", **fields) -> None:
    with session_scope() as db:
        crud.add_record(db, actor, GROUP, {"owner": owner, "name": name, "parentId": parent or owner,
                                           "type": "Virtual", **fields})


def stored_group(owner: str, name: str) -> m.Group | None:
    with session_scope() as db:
        return db.exec(select(m.Group).where(m.Group.owner == owner, m.Group.name == name)).first()


@pytest.fixture
def org_tree(make_org):
    """org: top 'eng' with children 'dev' and 'devops' (and 'dev' has 'web'), top 'sales'."""
    org = make_org()
    actor = god()
    add_group(actor, org.name, "eng", type="Physical")
    add_group(actor, org.name, "dev", "eng")
    add_group(actor, org.name, "devops", "eng")
    add_group(actor, org.name, "web", "dev")
    add_group(actor, org.name, "sales")
    return org.name


def test_column_filters_hold_together_with_the_search(org_tree):
    """The console's column filters match a value exactly, on top of the search and of each other."""
    actor = god()
    add_group(actor, org_tree, "engines", type="Virtual")
    with session_scope() as db:
        def names(params, equal):
            page = crud.list_records(db, actor, GROUP, {"p": "1", "pageSize": "10", **params}, owner=org_tree,
                                     equal=equal)
            return sorted(row["name"] for row in page.rows), page.total
        searched = {"field": "name", "value": "eng"}
        assert names(searched, {}) == (["eng", "engines"], 2)
        assert names(searched, {"type": "Physical"}) == (["eng"], 1)
        assert names({}, {"type": "Physical"}) == (["eng"], 1)
        assert names(searched, {"type": "Physic"}) == ([], 0)  # a filter does not match a part
        assert names(searched, {"type": "Virtual", "parentId": org_tree}) == (["engines"], 1)
        with pytest.raises(ServiceError, match="not a column"):
            names({}, {"nonsense": "x"})
        with pytest.raises(ServiceError, match="not one the list offers"):
            names({}, {"type": "a\x00"})


def test_the_tree_is_depth_first_with_depths(org_tree):
    with session_scope() as db:
        nodes = groups.tree(db, god(), org_tree)
    assert [(n.name, n.depth, n.have_children) for n in nodes] == [
        ("eng", 0, True), ("dev", 1, True), ("web", 2, False), ("devops", 1, False), ("sales", 0, False)]
    assert nodes[0].type == "Physical"


def test_lists_say_which_groups_have_children_and_name_the_parent(org_tree):
    actor = god()
    with session_scope() as db:
        page = crud.list_records(db, actor, GROUP, {"p": "1", "pageSize": "10"}, owner=org_tree)
        one = crud.get_record(db, actor, GROUP, org_tree, "web")
    rows = {row["name"]: row for row in page.rows}
    assert rows["eng"]["haveChildren"] and rows["dev"]["haveChildren"] and not rows["web"]["haveChildren"]
    assert rows["eng"]["isTopGroup"] and not rows["dev"]["isTopGroup"]
    assert rows["dev"]["parentName"] == "eng" and rows["eng"]["parentName"] == ""
    assert one["parentId"] == "dev" and one["haveChildren"] is False


def test_a_group_with_children_cannot_be_deleted(org_tree):
    actor = god()
    with pytest.raises(ServiceError) as refused, session_scope() as db:
        crud.delete_record(db, actor, GROUP, org_tree, "dev")
    assert str(refused.value.template % refused.value.args_) == (
        "The group dev has child groups: delete or move them first")
    assert stored_group(org_tree, "dev") is not None
    with session_scope() as db:  # a leaf goes, then its parent may go too
        assert crud.delete_record(db, actor, GROUP, org_tree, "web") == "Affected"
        assert crud.delete_record(db, actor, GROUP, org_tree, "dev") == "Affected"


def test_users_of_a_group_are_listed_exactly(org_tree, make_user):
    actor = god()
    make_user(owner=org_tree, name="ann", groups=[f"{org_tree}/dev"])
    make_user(owner=org_tree, name="bob", groups=[f"{org_tree}/devops", f"{org_tree}/sales"])
    make_user(owner=org_tree, name="cid", groups=[f"{org_tree}/Dev"])  # another group: names are case-sensitive
    with session_scope() as db:
        def names(group: str) -> list[str]:
            page = crud.list_records(db, actor, USER, {"p": "1", "pageSize": "10", "groupName": group}, owner=org_tree)
            return sorted(row["name"] for row in page.rows)
        assert names("dev") == ["ann"]  # not bob of 'devops'
        assert names("devops") == ["bob"]
        assert names(f"{org_tree}/sales") == ["bob"]
        assert names("web") == []
        page = crud.list_records(db, actor, USER, {"p": "1", "pageSize": "1", "groupName": "dev"}, owner=org_tree)
        assert page.total == 1
        assert groups.members(db, actor, org_tree, "devops", 20) == [f"{org_tree}/bob"]


def test_both_strategies_page_alike_and_a_search_combines(org_tree, make_user, monkeypatch):
    """Driven from user_group (few members) or walking the list probing it (many):
    the same pages in the same order; a search narrows the group's users."""
    actor = god()
    for i in range(7):
        make_user(owner=org_tree, name=f"m{i}", display_name=f"Member {i}", groups=[f"{org_tree}/dev"] * (i % 2 == 0))

    def listed(**params) -> tuple[list[list[str]], int]:
        with session_scope() as db:
            found = [crud.list_records(db, actor, USER, {"pageSize": "2", "groupName": "dev", **params, "p": str(p)},
                                       owner=org_tree) for p in (1, 2)]
        return [[row["name"] for row in page.rows] for page in found], found[0].total

    few = listed()
    monkeypatch.setattr(query, "DENSE_MATCHES", 0)
    assert listed() == few == ([["m6", "m4"], ["m2", "m0"]], 4)
    assert listed(field="displayName", value="Member 4") == ([["m4"], ["m4"]], 1)
    assert listed(field="displayName", value="Member 3") == ([[], []], 0)
    assert listed(sortField="name", sortOrder="ascend") == ([["m0", "m2"], ["m4", "m6"]], 4)


def test_an_organization_admin_lists_only_their_own_groups_users(org_tree, make_user, make_org):
    boss = make_user(owner=org_tree, is_admin=True)
    other = make_org()
    with pytest.raises(ServiceError), session_scope() as db:
        crud.list_records(db, Actor(user=boss), USER, {"groupName": "dev"}, owner=other.name)


def test_a_rename_takes_children_and_members_along(org_tree, make_user):
    actor = god()
    make_user(owner=org_tree, name="ann", groups=[f"{org_tree}/dev", f"{org_tree}/sales"])
    with session_scope() as db:
        crud.update_record(db, actor, GROUP, org_tree, "dev", {"owner": org_tree, "name": "developers"})
    assert stored_group(org_tree, "web").parent_id == "developers"
    with session_scope() as db:
        ann = db.exec(select(m.User).where(m.User.owner == org_tree, m.User.name == "ann")).one()
    assert ann.groups == [f"{org_tree}/developers", f"{org_tree}/sales"]
    with session_scope() as db:  # the membership table follows the rewritten list
        assert groups.members(db, actor, org_tree, "developers", 10) == [f"{org_tree}/ann"]
        assert groups.members(db, actor, org_tree, "dev", 10) == []
        assert db.exec(select(m.UserGroup.group_id).where(m.UserGroup.user_pk == ann.pk)).all() == [
            f"{org_tree}/developers", f"{org_tree}/sales"]


def test_a_failed_rename_changes_nothing(org_tree, make_user):
    actor = god()
    make_user(owner=org_tree, name="ann", groups=[f"{org_tree}/dev"])
    with pytest.raises(ServiceError, match="already exists"), session_scope() as db:
        crud.update_record(db, actor, GROUP, org_tree, "dev", {"owner": org_tree, "name": "sales"})
    with pytest.raises(ServiceError), session_scope() as db:
        crud.update_record(db, actor, GROUP, org_tree, "dev", {"owner": org_tree, "name": "a/b"})
    assert stored_group(org_tree, "web").parent_id == "dev"
    with session_scope() as db:
        assert db.exec(select(m.User).where(m.User.owner == org_tree, m.User.name == "ann")).one().groups == [
            f"{org_tree}/dev"]


@pytest.mark.parametrize(("parent", "message"), [
    ("dev", "under itself"), ("web", "under itself"), ("nowhere", "does not exist")])
def test_a_parent_must_exist_and_not_be_below(org_tree, parent, message):
    with pytest.raises(ServiceError) as refused, session_scope() as db:
        crud.update_record(db, god(), GROUP, org_tree, "dev", {"parentId": parent})
    assert message in refused.value.template % refused.value.args_
    assert stored_group(org_tree, "dev").parent_id == "eng"


def test_moving_a_group_recomputes_is_top_group(org_tree):
    with session_scope() as db:
        crud.update_record(db, god(), GROUP, org_tree, "devops", {"parentId": org_tree})
        crud.update_record(db, god(), GROUP, org_tree, "sales", {"parentId": "eng"})
    assert stored_group(org_tree, "devops").is_top_group and not stored_group(org_tree, "sales").is_top_group


def test_group_types(org_tree):
    with pytest.raises(ServiceError, match="Virtual or Physical"), session_scope() as db:
        crud.update_record(db, god(), GROUP, org_tree, "dev", {"type": "Imaginary"})


def test_remove_from_group(org_tree, make_user):
    make_user(owner=org_tree, name="ann", groups=[f"{org_tree}/dev", f"{org_tree}/sales"])
    with session_scope() as db:
        assert users.remove_from_group(db, god(), org_tree, "ann", "dev") == "Affected"
        assert users.remove_from_group(db, god(), org_tree, "ann", "dev") == "Unaffected"
        page = crud.list_records(db, god(), USER, {"groupName": "dev"}, owner=org_tree)
        sales = crud.list_records(db, god(), USER, {"groupName": "sales", "p": "1", "pageSize": "5"}, owner=org_tree)
    assert page.rows == [] and [u["name"] for u in sales.rows] == ["ann"] and sales.total == 1


# --- invitations ---

def test_the_signup_link(make_org):
    actor = god()
    with_app = make_org(default_application="app-acme")
    without = make_org()
    with session_scope() as db:
        assert invitations.signup_url(db, actor, with_app.name, "All", "abc 1") == (
            "http://testserver/signup/app-acme?invitationCode=abc%201")
        assert invitations.signup_url(db, actor, without.name, "app-x", "c").endswith("/signup/app-x?invitationCode=c")
        assert invitations.signup_url(db, actor, "built-in", "All", "c").endswith(
            "/signup/app-built-in?invitationCode=c")
        with pytest.raises(ServiceError) as refused:
            invitations.signup_url(db, actor, without.name, "All", "c")
    assert refused.value.template % refused.value.args_ == (
        f"You need to specify a default application for {without.name}")


def test_the_signup_link_is_for_the_organizations_admins(make_org, make_user):
    org, other = make_org(default_application="a"), make_org(default_application="b")
    boss, alice = make_user(owner=org.name, is_admin=True), make_user(owner=org.name)
    with session_scope() as db:
        assert invitations.signup_url(db, Actor(user=boss), org.name, "All", "c").endswith("/signup/a?invitationCode=c")
        for actor, owner in ((Actor(user=boss), other.name), (Actor(user=alice), org.name)):
            with pytest.raises(ServiceError):
                invitations.signup_url(db, actor, owner, "All", "c")


def test_invitation_rules(make_org):
    org = make_org()
    actor = god()
    with session_scope() as db:
        crud.add_record(db, actor, INVITATION, {"owner": org.name, "name": "inv", "quota": 2, "state": "Active"})
        crud.add_record(db, actor, INVITATION, {"owner": org.name, "name": "plan-inv", "quota": 1,
                                                "tag": "auto_created_invitation_for_plan"})
    for changes, message in (({"usedCount": 3}, "used count must be between 0 and 2"),
                             ({"quota": -1}, "quota must be at least 0"),
                             ({"state": "Paused"}, "Active or Suspended")):
        with pytest.raises(ServiceError) as refused, session_scope() as db:
            crud.update_record(db, actor, INVITATION, org.name, "inv", changes)
        assert message in refused.value.template % refused.value.args_
    with pytest.raises(ServiceError, match="created for a plan"), session_scope() as db:
        crud.update_record(db, actor, INVITATION, org.name, "plan-inv", {"name": "renamed"})
    with session_scope() as db:
        assert crud.update_record(db, actor, INVITATION, org.name, "plan-inv", {"displayName": "ok"}) == "Affected"


# --- the membership clause on every database ---

SERVERS = {"postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432",
           "mariadb": "mysql+pymysql://root@127.0.0.1:3306"}


def _reachable(url: str) -> bool:
    try:
        with sa.create_engine(url).connect():
            return True
    except Exception:
        return False


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def migrated(request, tmp_path):
    """An engine on a database at the head of the migrations (the membership
    triggers included), on each database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'members.db'}"
        migrate(url)
        engine = sa.create_engine(url)
        yield engine
        engine.dispose()
        return
    server = SERVERS[request.param]
    require_service(_reachable(f"{server}/test"), request.param)
    name = f"iam_groups_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{server}/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    charset = "?charset=utf8mb4" if request.param == "mariadb" else ""
    engine = sa.create_engine(f"{server}/{name}{charset}")
    try:
        migrate(f"{server}/{name}{charset}")
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as connection:
            force = " WITH (FORCE)" if request.param == "postgresql" else ""
            connection.execute(sa.text(f"DROP DATABASE {name}{force}"))
        admin.dispose()


def _members(db: Session, owner: str, group: str) -> list[str]:
    """Through both forms of the filter: driven from the table, and probed user by user."""
    found = groups.member_filter(owner, group, db.get_bind().dialect.name)
    driven, probed, few = (sorted(db.exec(select(m.User.name).where(m.User.owner == owner, clause)).all())
                           for clause in (found.clause, found.probe, found.few or found.clause))
    assert driven == probed == few
    return driven


def test_membership_is_exact_and_case_sensitive_everywhere(migrated):
    with Session(migrated) as db:
        for name, member_of in (("ann", ["acme/dev"]), ("bob", ["acme/devops", "acme/sales"]),
                                ("cid", ["acme/Dev"]), ("eve", ["acme/dév_1%"]), ("fay", ["other/dev"]),
                                ("gus", ["acme/dev", "acme/dev", 7, None, {"a": 1}, ["acme/x"], "acme/" + "z" * 300])):
            db.add(m.User(owner="acme", name=name, uuid=str(uuid.uuid4()), groups=member_of))
        db.commit()
        found = {group: _members(db, "acme", group)
                 for group in ("dev", "Dev", "devops", "sales", "dév_1%", "dév_10", "x", "other/dev", "nobody")}
    # a group's users are users of its organization: fay of acme listing other/dev is in neither
    assert found == {"dev": ["ann", "gus"], "Dev": ["cid"], "devops": ["bob"], "sales": ["bob"],
                     "dév_1%": ["eve"], "dév_10": [], "x": [], "other/dev": [], "nobody": []}


def _rows(db: Session) -> set[tuple[str, str]]:
    """(group, user name) of the membership table."""
    return set(db.exec(select(m.UserGroup.group_id, m.User.name).join(m.User, m.User.pk == m.UserGroup.user_pk)))


def _listed(db: Session) -> set[tuple[str, str]]:
    """The same from the users' lists: what the table must equal."""
    return {(g, u.name) for u in db.exec(select(m.User)) for g in u.groups
            if isinstance(g, str) and g.startswith(f"{u.owner}/")}


def test_the_table_follows_every_write_everywhere(migrated):
    """Inserts (ORM and bulk Core), updates of the list and of the owner, deletes:
    the triggers keep user_group equal to the lists, on each database."""
    with Session(migrated) as db:
        ann = m.User(owner="acme", name="ann", uuid=str(uuid.uuid4()), groups=["acme/dev", "acme/ops"])
        db.add(ann)
        db.commit()
        with migrated.begin() as connection:
            connection.execute(sa.insert(m.User), [
                {"owner": "acme", "name": f"bulk{i}", "uuid": str(uuid.uuid4()), "groups": ["acme/dev"] * (i + 1)}
                for i in range(3)])
        db.commit()  # a new transaction sees the other connection's rows (MariaDB reads repeatably)
        assert _rows(db) == _listed(db) and ("acme/dev", "bulk2") in _rows(db)
        ann.groups = ["acme/ops", "acme/qa"]
        db.add(ann)
        db.commit()
        assert {g for g, u in _rows(db) if u == "ann"} == {"acme/ops", "acme/qa"}
        ann.display_name = "Ann"  # an update that leaves the list alone
        db.add(ann)
        db.commit()
        assert {g for g, u in _rows(db) if u == "ann"} == {"acme/ops", "acme/qa"}
        ann.owner = "other"  # the entries name acme's groups: no longer a member
        db.add(ann)
        db.commit()
        assert {g for g, u in _rows(db) if u == "ann"} == set()
        db.exec(sa.update(m.User).where(m.User.name == "bulk0").values(groups=["acme/sql"]))
        db.exec(sa.delete(m.User).where(m.User.name == "bulk1"))
        db.commit()
        assert _rows(db) == _listed(db) == {("acme/sql", "bulk0"), ("acme/dev", "bulk2")}
