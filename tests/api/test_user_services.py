"""The service rules behind the user page: API keys, the new password's checks,
one physical group, the user's roles and permissions, the group choices."""

import json

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.identity import users
from iam_console.identity.passwords import hash_secret
from iam_console.signin import credentials
from tests.api.conftest import sign_in
from tests.conftest import reload_user, unique


def _actor(owner: str, name: str) -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name)).one())


def _items(**rules: tuple[bool, str]) -> list[dict]:
    """The default account items with some changed: name -> (visible, modifyRule)."""
    items = b.default_account_items()
    for item in items:
        if item["name"] in rules:
            item["visible"], item["modifyRule"] = rules[item["name"]]
    return items


def test_an_admin_generates_keys_that_sign_in_and_never_reach_the_audit_trail(make_org, make_user):
    org = make_org()
    boss = make_user(owner=org.name, is_admin=True)
    target = make_user(owner=org.name)
    with session_scope() as db:
        key, secret = users.add_keys(db, _actor(org.name, boss.name), org.name, target.name)
    assert key and secret and key != secret
    stored = reload_user(org.name, target.name)
    assert (stored.access_key, stored.access_secret) == (key, hash_secret(secret))  # the secret: only its hash
    with session_scope() as db:
        assert credentials.from_access_key(db, key, secret).id == f"{org.name}/{target.name}"
        records = db.exec(select(m.Record).where(m.Record.organization == org.name,
                                                 m.Record.action == "update-user")).all()
    assert records and all(secret not in r.object for r in records)
    assert json.loads(records[-1].object)["accessSecret"] == "***"
    with session_scope() as db:  # a second call replaces both
        again = users.add_keys(db, _actor(org.name, boss.name), org.name, target.name)
    assert again[0] != key and again[1] != secret


def test_a_user_generates_their_own_keys_only_when_the_api_key_item_is_theirs(make_org, make_user):
    hidden = make_org()  # the default items: the API key item is not visible
    alice = make_user(owner=hidden.name)
    with session_scope() as db, pytest.raises(ServiceError, match="accessKey"):
        users.add_keys(db, _actor(hidden.name, alice.name), hidden.name, alice.name)
    open_org = make_org(account_items=_items(**{"API key": (True, "Self")}))
    bob, carol = make_user(owner=open_org.name), make_user(owner=open_org.name)
    with session_scope() as db:
        key, _ = users.add_keys(db, _actor(open_org.name, bob.name), open_org.name, bob.name)
    assert reload_user(open_org.name, bob.name).access_key == key
    with session_scope() as db, pytest.raises(ServiceError):  # never someone else's
        users.add_keys(db, _actor(open_org.name, bob.name), open_org.name, carol.name)
    admin_only = make_org(account_items=_items(**{"API key": (True, "Admin")}))
    dave = make_user(owner=admin_only.name)
    with session_scope() as db, pytest.raises(ServiceError):
        users.add_keys(db, _actor(admin_only.name, dave.name), admin_only.name, dave.name)


def test_keys_of_another_organization_or_a_missing_user_are_refused(make_org, make_user):
    mine, theirs = make_org(), make_org()
    boss = make_user(owner=mine.name, is_admin=True)
    victim = make_user(owner=theirs.name)
    # another organization's user is answered as a missing one
    with session_scope() as db, pytest.raises(ServiceError, match="doesn't exist"):
        users.add_keys(db, _actor(mine.name, boss.name), theirs.name, victim.name)
    assert reload_user(theirs.name, victim.name).access_key == ""
    with session_scope() as db, pytest.raises(ServiceError, match="doesn't exist"):
        users.add_keys(db, _actor(mine.name, boss.name), mine.name, "nobody")


def test_the_add_user_keys_route(admin, make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name)
    answer = admin.post("/api/add-user-keys", json={"owner": org.name, "name": user.name}).json()
    assert answer["status"] == "ok" and answer["data"] is True
    pair = answer["data2"]  # shown this once: only the hash is kept, every read masks it
    assert reload_user(org.name, user.name).access_secret == hash_secret(pair["accessSecret"])
    read = admin.get("/api/get-user", params={"id": f"{org.name}/{user.name}"}).json()["data"]
    assert (read["accessKey"], read["accessSecret"]) == (pair["accessKey"], "***")
    account = TestClient(api).get("/api/get-account", params=pair).json()
    assert account["status"] == "ok" and account["data"]["name"] == user.name
    assert admin.post("/api/add-user-keys", json={"owner": org.name}).json()["status"] == "error"


def test_the_new_password_checks_are_set_passwords(make_org, make_user):
    items = _items()
    for item in items:
        if item["name"] == "Password":
            item["regex"] = "^[^x]*$"
    org = make_org(password_options=["AtLeast8", "Aa123", "SpecialChar"], account_items=items)
    with session_scope() as db:
        checks = [("short", "at least 8"), ("longenough", "uppercase"), ("Longenough1", "special"),
                  ("Long-enough-x1", "pattern rule")]
        for password, message in checks:
            with pytest.raises(ServiceError, match=message):
                users.check_new_password(db, org.name, password)
        users.check_new_password(db, org.name, "Long-enough-1")
        with pytest.raises(ServiceError, match="organization is null"):
            users.check_new_password(db, unique("missing"), "Long-enough-1")
    user = make_user(owner=org.name)
    with session_scope() as db, pytest.raises(ServiceError, match="pattern rule"):
        users.set_password(db, _actor("built-in", "admin"), org.name, user.name, "", "Long-enough-x1")


def _group(owner: str, name: str, kind: str) -> None:
    with session_scope() as db:
        db.add(m.Group(owner=owner, name=name, type=kind, parent_id=owner, is_top_group=True, is_enabled=True))


def test_one_physical_group_of_the_users_own_organization(admin, make_org, make_user):
    """An organization admin names only their organization's groups; the global admin may name an
    existing group of any organization, as Casdoor's data does (docs/security.md, "References")."""
    first, second = make_org(), make_org()
    _group(first.name, "plant", "Physical")
    _group(first.name, "club", "Physical")
    _group(first.name, "chess", "Virtual")
    _group(second.name, "site", "Physical")
    boss = make_user(owner=first.name, is_admin=True)
    own_admin = sign_in(first.name, boss.name, "s3cret-pass")
    add = lambda groups, caller=own_admin: caller.post("/api/add-user", json={  # noqa: E731
        "owner": first.name, "name": unique("user"), "groups": groups}).json()
    assert add([f"{first.name}/plant", f"{first.name}/chess"])["status"] == "ok"
    assert add([f"{first.name}/plant", f"{first.name}/club"])["msg"] == "You can only select one physical group"
    foreign = add([f"{first.name}/chess", f"{second.name}/site"])
    assert foreign["msg"] == f"The field groups names {second.name}/site, which is not one of the groups of the " \
                             f"organization {first.name}", foreign
    assert add([f"{first.name}/chess", f"{second.name}/site"], admin)["status"] == "ok"
    assert add([f"{first.name}/chess", f"{second.name}/none-such"], admin)["status"] == "error"


def test_roles_permissions_and_group_choices_of_a_user(make_org, make_user):
    org = make_org()
    boss = make_user(owner=org.name, is_admin=True)
    user = make_user(owner=org.name, groups=[f"{org.name}/team"])
    _group(org.name, "team", "Virtual")
    _group(org.name, "hq", "Physical")
    with session_scope() as db:
        db.add(m.Role(owner=org.name, name="editor", users=[f"{org.name}/{user.name}"]))
        db.add(m.Role(owner=org.name, name="team-role", groups=[f"{org.name}/team"]))
        db.add(m.Role(owner=org.name, name="other", users=[f"{org.name}/{boss.name}"]))
        db.add(m.Permission(owner=org.name, name="edit-docs", roles=[f"{org.name}/editor"], resources=["x"],
                            actions=["Read"]))
        db.add(m.Permission(owner=org.name, name="boss-only", users=[f"{org.name}/{boss.name}"],
                            resources=["x"], actions=["Read"]))
    actor = _actor(org.name, boss.name)
    with session_scope() as db:
        roles, permissions = users.roles_and_permissions(db, actor, org.name, user.name)
        assert sorted(roles) == ["editor", "team-role"] and permissions == ["edit-docs"]
        assert users.group_choices(db, actor, org.name, "") == [(f"{org.name}/hq", "Physical"),
                                                                (f"{org.name}/team", "Virtual")]
        assert users.group_choices(db, actor, org.name, "te") == [(f"{org.name}/team", "Virtual")]
        assert users.group_types(db, actor, [f"{org.name}/hq", "bad", f"{org.name}/none"]) == {
            f"{org.name}/hq": "Physical"}
    # a user sees their own roles, and nobody else's
    me = _actor(org.name, user.name)
    with session_scope() as db:
        assert sorted(users.roles_and_permissions(db, me, org.name, user.name)[0]) == ["editor", "team-role"]
        with pytest.raises(ServiceError):
            users.roles_and_permissions(db, me, org.name, boss.name)


def test_a_signed_in_user_changes_keys_through_the_api_when_allowed(make_org, make_user):
    org = make_org(account_items=_items(**{"API key": (True, "Self")}))
    user = make_user(owner=org.name, password="first-pass")
    me = sign_in(org.name, user.name, "first-pass")
    assert me.post("/api/add-user-keys", json={"owner": org.name, "name": user.name}).json()["status"] == "ok"
